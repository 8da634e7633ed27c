"""The Debian corpora script says when an installed package is not the version the questions were written
on (a point release moves chunk boundaries, and a question or two with them)."""

from __future__ import annotations

import re
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "bench"))

import debian_corpora  # noqa: E402


def test_every_corpus_records_the_version_its_question_set_names():
    assert set(debian_corpora.WRITTEN_ON) == set(debian_corpora.CORPORA)
    for corpus, version in debian_corpora.WRITTEN_ON.items():
        # The question set's README says which version its writer read (a version differing only in
        # Debian's epoch prefix, "1:", is written without it there).
        # (A corpus made from another one's files is asked that one's questions.)
        questions = debian_corpora.DERIVED.get(corpus, corpus)
        readme = (ROOT / "bench" / "goldsets" / "debian" / f"{questions}.md").read_text()
        assert re.sub(r"^\d+:", "", version) in readme, corpus


def test_a_different_version_is_named_with_the_command_that_installs_the_right_one():
    assert debian_corpora.version_note("python", debian_corpora.WRITTEN_ON["python"]) is None
    note = debian_corpora.version_note("python", "3.11.2-6+deb12u8")
    assert note is not None
    assert "python3.11-doc 3.11.2-6+deb12u8" in note
    assert "apt-get install python3.11-doc=3.11.2-6+deb12u9" in note


def test_a_corpus_read_from_another_package_says_so():
    # Debian's nodejs-doc installs Node.js 18's pages where NodeSource's nodejs installed 20's.
    note = debian_corpora.version_note("nodejs", "18.20.4+dfsg-1~deb12u3", "nodejs-doc")
    assert note is not None and "read from nodejs-doc 18.20.4+dfsg-1~deb12u3" in note
    assert "written on nodejs 20.20.2-1nodesource1+repack1" in note
