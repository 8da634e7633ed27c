"""Build the real-documentation bench corpora from Debian's documentation packages.

Nothing third-party is committed: this script copies the selected files of an installed package
into a cache folder (default ``bench/corpora-debian/<corpus>/``, git-ignored; not a hidden folder, which
LlamaIndex's SimpleDirectoryReader would skip) and records there,
in ``SOURCE.json``, which package and version it read and by which rule it chose the files.

    apt-get install git-doc postgresql-doc-15 python3.11-doc
    python bench/debian_corpora.py                 # all three corpora
    python bench/debian_corpora.py git --out DIR   # one corpus, elsewhere

The subset rules were written down before any question was written or any code ran on them:

- ``git``: every AsciiDoc manual page source ``/usr/share/doc/git-doc/*.txt`` (247 files; they
  cite each other as ``linkgit:git-config[1]``). No subset.
- ``postgres``: the HTML pages of two parts of the PostgreSQL 15 manual, "The SQL Language"
  (``sql.html``) and "Server Administration" (``admin.html``): each part's own page plus every
  page its table of contents links to (about 280 pages; they cite each other as "Section 25.1.3"
  hyperlinks). The full manual (1,173 pages, 18 MB) is too slow to embed here.
- ``python``: the Sphinx sources of the Library Reference,
  ``/usr/share/doc/python3.11/html/_sources/library/*.rst.txt`` (317 files; they cite each other
  with ``:mod:``/``:ref:`` roles). The other parts of the manual are left out.
"""

from __future__ import annotations

import argparse
import json
import shutil
import subprocess
import sys
from html.parser import HTMLParser
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
DEFAULT_OUT = ROOT / "bench" / "corpora-debian"

GIT_DOC = Path("/usr/share/doc/git-doc")
POSTGRES_HTML = Path("/usr/share/doc/postgresql-doc-15/html")
PYTHON_SOURCES = Path("/usr/share/doc/python3.11/html/_sources/library")

CORPORA = {
    "git": ("git-doc", "every *.txt in /usr/share/doc/git-doc"),
    "postgres": ("postgresql-doc-15", "sql.html and admin.html and every page their tables of contents link to"),
    "python": ("python3.11-doc", "every _sources/library/*.rst.txt of /usr/share/doc/python3.11/html"),
}


class _TocLinks(HTMLParser):
    """The local pages a DocBook part page's table of contents (``<div class="toc">``) links to."""

    def __init__(self) -> None:
        super().__init__()
        self.depth = 0
        self.links: list[str] = []

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        values = dict(attrs)
        if self.depth:
            self.depth += 1
            href = values.get("href")
            if tag == "a" and href and "://" not in href:
                self.links.append(href.split("#", 1)[0])
        elif tag == "div" and values.get("class") == "toc":
            self.depth = 1

    def handle_endtag(self, tag: str) -> None:
        if self.depth:
            self.depth -= 1


def _postgres_files() -> list[Path]:
    chosen: dict[str, Path] = {}
    for part in ("sql.html", "admin.html"):
        page = POSTGRES_HTML / part
        toc = _TocLinks()
        toc.feed(page.read_text(encoding="utf-8", errors="replace"))
        chosen[part] = page
        for link in toc.links:
            if link and (POSTGRES_HTML / link).is_file():
                chosen[link] = POSTGRES_HTML / link
    return [chosen[name] for name in sorted(chosen)]


def selected_files(corpus: str) -> list[Path]:
    if corpus == "git":
        return sorted(GIT_DOC.glob("*.txt"))
    if corpus == "postgres":
        return _postgres_files()
    if corpus == "python":
        return sorted(PYTHON_SOURCES.glob("*.rst.txt"))
    raise SystemExit(f"unknown corpus '{corpus}'; known: {', '.join(CORPORA)}")


def package_version(package: str) -> str:
    result = subprocess.run(["dpkg-query", "-W", "-f=${Version}", package], capture_output=True, text=True)
    if result.returncode != 0:
        raise SystemExit(f"{package} is not installed: apt-get install {package}")
    return result.stdout.strip()


def build(corpus: str, out: Path) -> Path:
    package, rule = CORPORA[corpus]
    version = package_version(package)
    files = selected_files(corpus)
    if not files:
        raise SystemExit(f"{package} {version} is installed but the rule for '{corpus}' selected no file")
    target = out / corpus
    if target.exists():
        shutil.rmtree(target)
    target.mkdir(parents=True)
    for path in files:
        shutil.copy2(path, target / path.name)
    source = {"corpus": corpus, "package": package, "version": version, "rule": rule, "files": len(files),
              "bytes": sum(p.stat().st_size for p in files)}
    # Kept beside the corpus, not inside it, so the indexer never reads it as a document.
    (out / f"{corpus}.SOURCE.json").write_text(json.dumps(source, indent=2) + "\n")
    return target


def corpus_dir(corpus: str, out: Path = DEFAULT_OUT) -> Path:
    """The extracted corpus, built on first use."""
    target = out / corpus
    if not (out / f"{corpus}.SOURCE.json").is_file():
        build(corpus, out)
    return target


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("corpora", nargs="*", default=list(CORPORA), help=f"any of {', '.join(CORPORA)}")
    p.add_argument("--out", type=Path, default=DEFAULT_OUT, help=f"default {DEFAULT_OUT}")
    args = p.parse_args(argv)
    for corpus in args.corpora:
        target = build(corpus, args.out)
        info = json.loads((args.out / f"{corpus}.SOURCE.json").read_text())
        print(f"{corpus}: {info['files']} files, {info['bytes'] / 1e6:.1f} MB from {info['package']} "
              f"{info['version']} -> {target}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
