"""Which files the readers' text changes for, against an earlier commit: every readable file of the given folders
read by ``ragplugins.readers`` as it is and as it was at ``ref`` (a temporary git worktree), the files whose text
differs named (the first few per folder). For a change outside the HTML reader (plain text, PDF, Markdown);
``compare_html_reader.py`` is the quicker check for HTML pages.

    python bench/compare_reader.py HEAD~1 bench/corpora-debian/git /usr/share/doc --suffix .txt .rst
"""

from __future__ import annotations

import argparse
import json
import subprocess
import sys
import tempfile
from pathlib import Path

HERE = Path(__file__).resolve().parent

_READ = """
import json, sys, warnings
warnings.simplefilter("ignore")
from ragplugins.readers import file_type, list_files, read_files
folders, suffixes, out = json.loads(sys.argv[1])
texts = {}
for folder in folders:
    files = [t for t in list_files([folder]).files if not suffixes or file_type(t[0])[0] in suffixes]
    texts.update({folder + "::" + d.id_: d.text for d in read_files(files).documents})
json.dump(texts, open(out, "w"))
"""


def read_all(code: Path, folders: list[str], suffixes: list[str], out: Path) -> dict[str, str]:
    """Every document's text as the readers of the checkout at ``code`` read it, keyed ``folder::id``."""
    plugins = [str(p) for p in sorted((code / "plugins").iterdir()) if p.is_dir()]
    env = {"PYTHONPATH": ":".join([str(code), *plugins]), "PATH": "/usr/bin:/bin"}
    subprocess.run([sys.executable, "-c", _READ, json.dumps([folders, suffixes, str(out)])], env=env, check=True,
                   cwd=tempfile.gettempdir(), stderr=subprocess.DEVNULL)
    return json.loads(out.read_text())


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("ref", help="the commit whose readers to compare with")
    p.add_argument("folders", nargs="+")
    p.add_argument("--suffix", nargs="*", default=[], help="only files of these types (.txt for text without one)")
    args = p.parse_args(argv)
    folders = [str(Path(f).resolve()) for f in args.folders]
    with tempfile.TemporaryDirectory() as tmp:
        then = Path(tmp) / "then"
        subprocess.run(["git", "worktree", "add", "--detach", "-q", str(then), args.ref], cwd=HERE.parent, check=True)
        try:
            before = read_all(then, folders, args.suffix, Path(tmp) / "before.json")
        finally:
            subprocess.run(["git", "worktree", "remove", "--force", str(then)], cwd=HERE.parent, check=True)
        after = read_all(HERE.parent, folders, args.suffix, Path(tmp) / "after.json")
    for folder in folders:
        ids = sorted(k for k in before.keys() | after.keys() if k.startswith(folder + "::"))
        changed = [k.split("::", 1)[1] for k in ids if before.get(k) != after.get(k)]
        print(f"{folder}: {len(ids)} files, {len(changed)} changed {changed[:5]}", flush=True)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
