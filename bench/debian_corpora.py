"""Build the real-documentation bench corpora from Debian's documentation packages.

Nothing third-party is committed: this script copies the selected files of an installed package
into a cache folder (default ``bench/corpora-debian/<corpus>/``, git-ignored; not a hidden folder, which
LlamaIndex's SimpleDirectoryReader would skip) and records there,
in ``SOURCE.json``, which package and version it read and by which rule it chose the files.

    apt-get update && apt-get install git-doc postgresql-doc-15 python3.11-doc debian-policy manpages \\
        sqlite3-doc exim4-doc-html docutils-doc
    # nodejs: the machine's own Node.js 20 (NodeSource's build here), whose package ships the API's Markdown
    python bench/debian_corpora.py                 # every corpus
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

Added 2026-12-02 as held-out corpora (chosen before any question was written; nothing was tuned on them
before their dev/test split was committed):

- ``policy``: the Debian Policy Manual's HTML chapters and appendices,
  ``/usr/share/doc/debian-policy/policy.html/{ch,ap}-*.html`` (Sphinx HTML, one file per chapter; they cite
  each other as "Section 10.4" hyperlinks into another chapter's file). The index, search and general-index
  pages are left out.
- ``manpages``: the Linux man-pages project's sections 5 and 7 (package ``manpages``), every page under
  ``/usr/share/man/man5`` and ``man7`` that the package installs as a real page (not a symbolic link or a
  ``.so`` include), rendered to plain text by man-db (``man --nh --nj -l``, 100 columns, ``col -b``) as
  ``<name>.<section>.txt``; they cite each other as ``signal(7)``.
- ``nodejs`` (added the same day, after the two above had run): Node.js's API reference in Markdown,
  every ``/usr/share/doc/nodejs/api/*.md`` (64 files of package ``nodejs``; Markdown reference links such as
  ``[`fs.readFile()`]: fs.md#...`` between them). The HTML and JSON renderings beside them are left out.

Added 2026-12-02 (night) as a held-out corpus (rule written before the package was read for questions):

- ``sqlite``: SQLite 3.40's documentation as its HTML pages (package ``sqlite3-doc``), every top-level
  ``/usr/share/doc/sqlite3/*.html`` except the pages generated from the others: the four
  ``doc_*_crossref.html`` and ``keyword_index.html`` indexes, ``sitemap.html`` and ``requirements.html``
  (every requirement sentence of the other pages, collected). The ``c3ref/``, ``releaselog/``, ``session/``
  and ``syntax/`` folders are left out (one page per C function or release, 550 pages). Pages cite each other
  by hyperlinks (``lang_select.html#...``); many omit the optional end tags of ``<li>`` and ``<p>``.

Added 2026-12-03 as a held-out corpus (rule written before the package was read for questions):

- ``exim``: the Exim 4.96 specification and its filter specification as HTML chapter pages (package
  ``exim4-doc-html``), every ``/usr/share/doc/exim4-doc-html/spec_html/ch-*.html`` and ``filter_ch-*.html``
  (one page per chapter: 62 of the specification, 3 of the filter specification) except the three index
  chapters generated from the others, ``ch-concept_index.html``, ``ch-option_index.html`` and
  ``ch-variable_index.html`` (lists of links to sections). Left out: the ``chNN.html`` and
  ``filter_chNN.html`` symbolic links (a second name for each chapter page) and the generated tables of
  contents ``index.html`` and ``filter.html``. Chapters cite each other as "see section 9.3" and
  "chapter 34" hyperlinks into another chapter's file (``ch-file_and_database_lookups.html#SECT...``).

Added 2026-12-04 from a new user's walkthrough (rule written before its reference catalogue):

- ``docutils``: docutils' reStructuredText documentation as its plain-text sources (package ``docutils-doc``),
  every ``*.txt`` under ``/usr/share/doc/docutils-doc/docs/{ref,user,howto}``, folders kept (27 files: the
  markup specification, directives, roles, the user guides). They cite each other with reStructuredText
  hyperlink references, ```Directives`_`` and ``sectnum_``, whose targets (``.. _Directives: directives.html``)
  name the rendered page of another source, usually at the end of the file.

Added 2026-12-05 for reading Word documents (rule written before any run; the questions are ``policy``'s):

- ``policy-docx``: the ``policy`` corpus saved as Word documents, one ``.docx`` per chapter, the way a team keeps a
  handbook: each page's chapter (Sphinx's ``div[role=main]``, without the site's navigation bars) converted by
  pandoc (``pandoc -f html -t docx``; ``apt-get install pandoc``). Headings become Word's "Heading N" styles,
  links between chapters hyperlinks to the other chapter's ``.html`` page, as pandoc writes them.
- ``policy-epub``: the Policy Manual as the one EPUB book the package ships, ``/usr/share/doc/debian-policy/
  policy.epub`` (Sphinx's epub builder: the same chapters, plus its title page, index and search pages).

Added 2026-12-07 for reading text formatted as printed pages (rule written before any run; the questions are
``manpages``'s):

- ``manpages-printed``: the ``manpages`` corpus's pages as groff prints them to a text file, pages of 66 lines
  with each page's running header ("signal(7)  Miscellaneous Information Manual  signal(7)") and footer (the
  package, its date, the page number), the way a team keeps a manual it printed to text (``groff -man -Tutf8
  -rcR=0 -P-cbu``: printed pages, no bold or underline).
"""

from __future__ import annotations

import argparse
import gzip
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
POLICY_HTML = Path("/usr/share/doc/debian-policy/policy.html")
NODEJS_API = Path("/usr/share/doc/nodejs/api")
SQLITE_HTML = Path("/usr/share/doc/sqlite3")
SQLITE_GENERATED = ("keyword_index.html", "sitemap.html", "requirements.html")
EXIM_HTML = Path("/usr/share/doc/exim4-doc-html/spec_html")
EXIM_GENERATED = ("ch-concept_index.html", "ch-option_index.html", "ch-variable_index.html")
DOCUTILS_DOCS = Path("/usr/share/doc/docutils-doc/docs")

CORPORA = {
    "git": ("git-doc", "every *.txt in /usr/share/doc/git-doc"),
    "postgres": ("postgresql-doc-15", "sql.html and admin.html and every page their tables of contents link to"),
    "python": ("python3.11-doc", "every _sources/library/*.rst.txt of /usr/share/doc/python3.11/html"),
    "policy": ("debian-policy", "every ch-*.html and ap-*.html of /usr/share/doc/debian-policy/policy.html"),
    "manpages": ("manpages", "every real page of man5 and man7 the package installs, rendered by man-db to text"),
    "nodejs": ("nodejs", "every *.md (or *.md.gz, as Debian's nodejs-doc ships them) of /usr/share/doc/nodejs/api"),
    "sqlite": ("sqlite3-doc", "every top-level *.html of /usr/share/doc/sqlite3 but the generated doc_*_crossref.html, "
                              "keyword_index.html, sitemap.html and requirements.html"),
    "exim": ("exim4-doc-html", "every ch-*.html and filter_ch-*.html of /usr/share/doc/exim4-doc-html/spec_html "
                               "but the generated index chapters ch-concept_index.html, ch-option_index.html and "
                               "ch-variable_index.html (not the chNN.html symbolic links, index.html or filter.html)"),
    "docutils": ("docutils-doc", "every *.txt under /usr/share/doc/docutils-doc/docs/ref, docs/user and docs/howto, "
                                 "folders kept"),
    "policy-docx": ("debian-policy", "policy's chapters, each page's div[role=main] saved as .docx by pandoc"),
    "policy-epub": ("debian-policy", "/usr/share/doc/debian-policy/policy.epub, the book the package ships"),
    "manpages-printed": ("manpages", "manpages' pages printed to text by groff, pages of 66 lines with their "
                                     "running headers and footers"),
}
# Corpora made from another one's files, asked the other one's questions.
DERIVED = {"policy-docx": "policy", "policy-epub": "policy", "manpages-printed": "manpages"}


# Other packages that install the same files: Node.js's API pages come with NodeSource's nodejs, and with
# Debian's nodejs-doc (another major version, gzipped).
ALSO_FROM = {"nodejs": ("nodejs-doc",)}

# The package version each question set and catalogue was written on (bench/goldsets/debian/<corpus>.md).
# Another version is another corpus: a point release moves a chunk boundary, and with it a question or two
# (2026-12-02: python3.11-doc deb12u8, what a machine whose package lists were never updated installs,
# instead of deb12u9 took python dev R@10 from 0.786 to 0.750; deb12u9 gave 0.786 again).
WRITTEN_ON = {
    "git": "1:2.39.5-0+deb12u3",
    "postgres": "15.20-0+deb12u1",
    "python": "3.11.2-6+deb12u9",
    "policy": "4.6.2.0",
    "manpages": "6.03-2",
    "nodejs": "20.20.2-1nodesource1+repack1",
    "sqlite": "3.40.1-2+deb12u2",
    "exim": "4.96-1",
    "docutils": "0.19+dfsg-6",
    "policy-docx": "4.6.2.0",
    "policy-epub": "4.6.2.0",
    "manpages-printed": "6.03-2",
}


def version_note(corpus: str, version: str, read_from: str | None = None) -> str | None:
    """What a reader of this corpus's numbers must know when ``version`` (of the package ``read_from``,
    by default the corpus's own) is not the one its questions were written on; None when it is."""
    written = WRITTEN_ON.get(corpus)
    package = CORPORA[corpus][0]
    if written is None or (written == version and read_from in (None, package)):
        return None
    return (f"note: {corpus} is read from {read_from or package} {version}; its questions were written on "
            f"{package} {written}, so its numbers may differ from docs/benchmarks.md by a question or two, more "
            f"for another major version (apt-get update && apt-get install {package}={written})")


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


def _manual_pages() -> list[Path]:
    listed = subprocess.run(["dpkg", "-L", "manpages"], capture_output=True, text=True, check=True).stdout
    pages = []
    for line in listed.splitlines():
        path = Path(line)
        if path.parent.name in ("man5", "man7") and path.parent.parent == Path("/usr/share/man") \
                and path.is_file() and not path.is_symlink():
            pages.append(path)
    return sorted(pages)


def _render_manual_page(page: Path) -> str | None:
    """The page as man-db shows it, in plain text (None for a page that only includes another)."""
    env = {"PATH": "/usr/bin:/bin", "MANWIDTH": "100", "LANG": "C.UTF-8", "MAN_KEEP_FORMATTING": ""}
    head = subprocess.run(["zcat", "-f", str(page)], capture_output=True, text=True, check=True).stdout
    if head.lstrip().startswith(".so "):
        return None
    shown = subprocess.run(["man", "--nh", "--nj", "-l", str(page)], capture_output=True, text=True, env=env,
                           check=True).stdout
    return subprocess.run(["col", "-b"], input=shown, capture_output=True, text=True, check=True).stdout


def _print_manual_page(page: Path) -> str | None:
    """The page as groff prints it to text, in pages of 66 lines with their headers and footers (None for a page
    that only includes another)."""
    source = subprocess.run(["zcat", "-f", str(page)], capture_output=True, text=True, check=True).stdout
    if source.lstrip().startswith(".so "):
        return None
    env = {"PATH": "/usr/bin:/bin", "LANG": "C.UTF-8"}
    return subprocess.run(["groff", "-man", "-Tutf8", "-rcR=0", "-P-cbu"], input=source, capture_output=True,
                          text=True, env=env, check=True).stdout


def selected_files(corpus: str) -> list[Path]:
    if corpus == "git":
        return sorted(GIT_DOC.glob("*.txt"))
    if corpus == "postgres":
        return _postgres_files()
    if corpus == "python":
        return sorted(PYTHON_SOURCES.glob("*.rst.txt"))
    if corpus == "policy-epub":
        return [POLICY_HTML.parent / "policy.epub"]
    if corpus in ("policy", "policy-docx"):
        return sorted([*POLICY_HTML.glob("ch-*.html"), *POLICY_HTML.glob("ap-*.html")])
    if corpus in ("manpages", "manpages-printed"):
        return _manual_pages()
    if corpus == "nodejs":
        return sorted([*NODEJS_API.glob("*.md"), *NODEJS_API.glob("*.md.gz")])
    if corpus == "sqlite":
        return sorted(p for p in SQLITE_HTML.glob("*.html")
                      if not p.name.startswith("doc_") and p.name not in SQLITE_GENERATED)
    if corpus == "exim":
        return sorted(p for p in [*EXIM_HTML.glob("ch-*.html"), *EXIM_HTML.glob("filter_ch-*.html")]
                      if not p.is_symlink() and p.name not in EXIM_GENERATED)
    if corpus == "docutils":
        return sorted(p for part in ("ref", "user", "howto") for p in (DOCUTILS_DOCS / part).rglob("*.txt"))
    raise SystemExit(f"unknown corpus '{corpus}'; known: {', '.join(CORPORA)}")


def _pandoc_version() -> str:
    if shutil.which("pandoc") is None:
        raise SystemExit("pandoc is not installed: apt-get install pandoc")
    return subprocess.run(["pandoc", "--version"], capture_output=True, text=True, check=True).stdout.splitlines()[0]


def _save_as_word(page: Path, out: Path) -> None:
    """A Sphinx page's chapter as a Word document: its main block (not the site's navigation), by pandoc."""
    from bs4 import BeautifulSoup

    _pandoc_version()
    soup = BeautifulSoup(page.read_text(encoding="utf-8"), "lxml")
    main = soup.select_one("div[role=main]")
    if main is None:
        raise SystemExit(f"{page}: no div[role=main] (not a Sphinx page?)")
    subprocess.run(["pandoc", "-f", "html", "-t", "docx", "-o", str(out)], input=str(main), text=True, check=True)


def package_version(package: str) -> str:
    # A package dpkg once knew but removed still answers, with an empty version.
    result = subprocess.run(["dpkg-query", "-W", "-f=${Version}", package], capture_output=True, text=True)
    if result.returncode != 0 or not result.stdout.strip():
        raise SystemExit(f"{package} is not installed: apt-get update && apt-get install {package}")
    return result.stdout.strip()


def installed_package(corpus: str) -> tuple[str, str]:
    """The package the corpus is read from and its version: the first of its packages that is installed."""
    first = CORPORA[corpus][0]
    for package in (first, *ALSO_FROM.get(corpus, ())):
        try:
            return package, package_version(package)
        except SystemExit:
            continue
    return first, package_version(first)   # says which package to install


def build(corpus: str, out: Path) -> Path:
    rule = CORPORA[corpus][1]
    package, version = installed_package(corpus)
    files = selected_files(corpus)
    if not files:
        raise SystemExit(f"{package} {version} is installed but the rule for '{corpus}' selected no file")
    target = out / corpus
    if target.exists():
        shutil.rmtree(target)
    target.mkdir(parents=True)
    written = 0
    for path in files:
        if corpus == "manpages":
            text = _render_manual_page(path)
            if text is not None:
                (target / (path.name.removesuffix(".gz") + ".txt")).write_text(text, encoding="utf-8")
                written += 1
        elif corpus == "manpages-printed":   # the same file names as manpages', which its questions name
            text = _print_manual_page(path)
            if text is not None:
                (target / (path.name.removesuffix(".gz") + ".txt")).write_text(text, encoding="utf-8")
                written += 1
        elif path.suffix == ".gz":
            (target / path.name.removesuffix(".gz")).write_bytes(gzip.decompress(path.read_bytes()))
            written += 1
        elif corpus == "policy-docx":
            _save_as_word(path, target / (path.stem + ".docx"))
            written += 1
        elif corpus == "docutils":   # relative links between the sources name their folders
            (target / path.relative_to(DOCUTILS_DOCS)).parent.mkdir(parents=True, exist_ok=True)
            shutil.copy2(path, target / path.relative_to(DOCUTILS_DOCS))
            written += 1
        else:
            shutil.copy2(path, target / path.name)
            written += 1
    if corpus == "policy-docx":
        rule += f" ({_pandoc_version()})"
    source = {"corpus": corpus, "package": package, "version": version, "rule": rule, "files": written,
              "bytes": sum(p.stat().st_size for p in target.rglob("*") if p.is_file())}
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
        if note := version_note(corpus, info["version"], info["package"]):
            print(note)
    return 0


if __name__ == "__main__":
    sys.exit(main())
