"""Turn paths into LlamaIndex Documents, with errors that name the file.

PDFs go through LlamaIndex's PDFReader (pypdf), one Document per file, without what every printed page
repeats (``pdf_reader``); text formats are decoded as UTF-8, falling back to cp1252 with a warning; HTML pages
are decoded the same way and converted to Markdown (``html_reader``), so their links survive as
``[text](href)``; Markdown is read without what its page does not show (``markdown_reader``); Word documents
and e-books are read through the HTML they hold (``docx_reader``, ``epub_reader``). The document id is the
path relative to the indexed root, so ids and the ``file_path`` metadata (which LlamaIndex embeds) are the same
on every checkout.
"""

from __future__ import annotations

import codecs
import gzip
import re
import warnings
import zipfile
import zlib
from collections import Counter
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass, field
from fnmatch import fnmatchcase
from pathlib import Path
from typing import NamedTuple

from llama_index.core import Document
from llama_index.core.readers.file.base import default_file_metadata_func

from ragplugins import trace
from ragplugins.anchors import PAGE_ANCHORS_KEY, page_anchors
from ragplugins.docx_reader import read_docx
from ragplugins.epub_reader import EpubError, read_epub
from ragplugins.errors import InputError
from ragplugins.html_reader import HTML_SUFFIXES, HtmlPage, read_html
from ragplugins.markdown_reader import MARKDOWN_SUFFIXES, read_markdown
from ragplugins.markup_lines import only_headings, only_rules
from ragplugins.nodes import hide_metadata
from ragplugins.pdf_reader import read_pdf
from ragplugins.pod_reader import read_pod
from ragplugins.printed_pages import without_page_furniture

# ".text": texinfo's plain-text renderings as GNU ships them (gnu-standards' maintain.text.gz). AsciiDoc (git's
# Documentation since 2.50, Antora sites), Perl's POD and Org files are prose in a light markup, read as text with
# their titles (``ragplugins.splitting``; POD as perldoc shows it): skipped as an unknown type, a project's whole
# manual was nothing.
TEXT_SUFFIXES = {".md", ".markdown", ".txt", ".text", ".rst", ".adoc", ".asciidoc", ".pod", ".org"}
PDF_SUFFIXES = {".pdf"}
# Text in a markup read as its page shows it; any other text as written, without a printed page's furniture.
TEXT_READERS: dict[str, Callable[[str], HtmlPage]] = {**dict.fromkeys(MARKDOWN_SUFFIXES, read_markdown),
                                                     ".pod": read_pod}
# Formats read from the file itself (a PDF, a zip of XML), not decoded as text first.
FILE_READERS: dict[str, Callable[[Path], HtmlPage]] = {
    ".pdf": lambda path: HtmlPage(read_pdf(path)),
    ".docx": read_docx,
    ".epub": read_epub,
}
KNOWN_SUFFIXES = TEXT_SUFFIXES | HTML_SUFFIXES | set(FILE_READERS)
GZIP_SUFFIX = ".gz"
# Files a project or a Debian package ships as plain text without a type in their name: README,
# README.Debian, README.source, NEWS.Debian.gz, changelog.Debian.gz, LICENSE.MIT. What follows such a name is a
# qualifier (a capital, or Debian's "source"), not a type: install.sh and changes.json are not read as text.
PLAIN_TEXT_NAMES = {"authors", "bugs", "changelog", "changes", "contributing", "copying", "copyright", "faq",
                    "hacking", "history", "install", "licence", "license", "news", "notice", "readme", "thanks",
                    "todo"}
PLAIN_TEXT_QUALIFIERS = {".source", ".debian"}
PLAIN_TEXT = ".txt"
# nroff's bold and underline in text it wrote: a letter, a backspace, the letter again ("N\bNA\bAM\bME\bE") or
# "_\bX" (11.5 % of the characters of Postfix's READMEs). A printer struck both; a reader sees the last, as col -b.
# grotty writes them as a terminal's escapes instead ("\x1b[1mman-db\x1b[0m": man-db's manual), which read as the
# words "1mman", "0m".
TERMINAL_MARKUP = re.compile(r"[^\n]\x08|\x1b\[[0-9;]*m")
SUPPORTED = [*sorted(KNOWN_SUFFIXES),
             "text files without an extension (README, changelog.Debian)",
             "and the text and HTML ones gzip-compressed, as .md.gz"]
_EXCLUDED = ["file_name", "file_type", "file_size", "creation_date", "last_modified_date",
             "last_accessed_date"]


@dataclass
class ReadReport:
    documents: list[Document] = field(default_factory=list)
    skipped: list[tuple[str, str]] = field(default_factory=list)
    # Per path given (resolved): the id of every file found under it, read or skipped. A document
    # indexed from there before whose id is missing here was removed.
    found: dict[str, list[str]] = field(default_factory=dict)

    def skip(self, path: Path | str, why: str) -> None:
        self.skipped.append((str(path), why))

    def warn_skipped(self) -> None:
        """One warning per reason: a documentation folder's 120 images are one line, not 120."""
        for line in skipped_lines(self.skipped):
            warnings.warn(SKIPPED_WARNING + line, stacklevel=3)


def skipped_lines(skipped: Iterable[tuple[str, str]]) -> list[str]:
    """"'first file' and N more files: why", one per reason, in the order first met (a documentation
    folder's 120 images are one line, not 120). Files of types no reader reads are one line whatever their
    suffixes, each suffix counted and the supported types said once (a Sphinx build's .png, .js, .css, .inv and
    .svg were five lines, each repeating the whole supported list)."""
    by_reason: dict[str, list[str]] = {}
    suffixes: Counter[str] = Counter()
    for path, why in skipped:
        if why.startswith(UNSUPPORTED_TYPE):
            suffixes[why.removeprefix(UNSUPPORTED_TYPE)] += 1
            why = UNSUPPORTED_TYPE
        by_reason.setdefault(why, []).append(path)
    return [f"'{paths[0]}'" + _and_more(len(paths) - 1) + ": "
            + (_unsupported(suffixes) if why == UNSUPPORTED_TYPE else why) for why, paths in by_reason.items()]


def _unsupported(suffixes: Counter[str]) -> str:
    """The reason files of types no reader reads were skipped: each type (counted when there are several), then
    the supported ones."""
    if len(suffixes) == 1:
        said = f"{UNSUPPORTED_TYPE}{next(iter(suffixes))}"
    else:
        said = "unsupported file types " + ", ".join(f"{s} ({n})" for s, n in suffixes.most_common())
    return f"{said} (supported: {', '.join(SUPPORTED)})"


def _say_read(done: int, of: int) -> None:
    """Announce reading progress to LlamaIndex's instrumentation (ragplugins.progress shows it)."""
    trace.dispatcher.event(trace.RagPluginsEvent(plugin="core", action="read", data={"files": done, "of": of}))


def _and_more(more: int) -> str:
    return "" if not more else " and 1 more file" if more == 1 else f" and {more} more files"


# What every warning about skipped files starts with (the index command says them in its own words).
SKIPPED_WARNING = "ragplugins: skipped "
# The reason a file no reader reads is skipped, its suffix after it: skipped_lines says them all in one line.
UNSUPPORTED_TYPE = "unsupported file type "
# What a site names the page its server shows for a missing address: Sphinx themes' and Jekyll's "404.html".
_NOT_FOUND_FILE = "404."
NOT_FOUND_PAGE = "it is the page a web server shows for an address it does not have (404)"
# One reason for every such page: texinfo writes one for every old name of a node.
REDIRECT = 'it only sends the reader to another page (<meta http-equiv="refresh">) and has no text of its own'
# One reason for every such file, so a manual's language folders of links to its English pages are one line.
SAME_FILE = "it is a symbolic link to a file indexed under another id"
# ... and one for links to nothing (FRRouting's build: eight _static/*.js links were eight lines, each naming its
# target).
DANGLING = "it is a symbolic link to a file that does not exist (`ls -l` shows where it points)"
# Sphinx copies every page's source beside the HTML it built from it ("_sources/faq/x.rst.txt" for "faq/x.html",
# "_sources/x.txt" before Sphinx 1.5) for its "Show Source" link: the same text again, without its links. Read both,
# and every page was twice in the index (a new user's rsyslog folder: 316 of 634 documents; a question's answer third,
# behind a page and its twin).
SPHINX_SOURCE = "it is the copy of a page's source that Sphinx keeps in '_sources'; the page itself is read as HTML"
SPHINX_SOURCES = "_sources"
PAGE_TEXT = "it is the text of the HTML page of its name beside it; the page is read as HTML"
SPHINX_SOURCE_SUFFIXES = {".rst", ".md", ".txt", ".ipynb"}


class FileList(NamedTuple):
    files: list[tuple[Path, str, str]]  # (file, id, root)
    skipped: list[tuple[str, str]]  # (file, why): second names of a listed file, Sphinx's page sources, excluded


def list_files(paths: Iterable[str | Path], skip_dirs: Iterable[Path] = (), exclude: Sequence[str] = ()) -> FileList:
    """(file, id, root) triples; ids are relative to the directory given, or the file name. Hidden files
    and folders, and ``skip_dirs`` (the index's own directory), are not walked into. Dangling symlinks are
    kept: read_files lists them as skipped. A file reached under several ids through symbolic links is
    listed once, under its own path where the walk finds it (else its first id), and its other ids skipped; so is
    the copy of a page's source a Sphinx build keeps in ``_sources`` when the page is listed. A file whose id an
    ``exclude`` pattern matches (fnmatch's, case-sensitive: ``*`` crosses folders) is skipped, said with the
    pattern."""
    out: list[tuple[Path, str, str]] = []
    skip = [Path(d).resolve() for d in skip_dirs]
    for raw in paths:
        path = Path(raw)
        if not path.exists():
            raise InputError(f"path '{raw}' does not exist; check the path and try again")
        root = str(path.resolve())
        if path.is_dir():
            files = sorted(p for p in path.rglob("*") if (p.is_file() or (p.is_symlink() and not p.exists()))
                           and not any(part.startswith(".") for part in p.relative_to(path).parts)
                           and not any(p.resolve().is_relative_to(d) for d in skip))
            if not files:
                raise InputError(f"directory '{raw}' is empty; supported files: {', '.join(SUPPORTED)}")
            out.extend((f, f.relative_to(path).as_posix(), root) for f in files)
        else:
            out.append((path, path.name, root))
    seen: dict[str, Path] = {}
    for f, doc_id, _ in out:
        if doc_id in seen and seen[doc_id].resolve() != f.resolve():
            raise InputError(f"two files would get the id '{doc_id}': '{seen[doc_id]}' and '{f}'; "
                             "index them from a common parent directory")
        seen[doc_id] = f
    listed = _without_excluded(out, exclude)
    once = _one_id_per_file(listed.files)
    return _without_page_sources(FileList(once.files, listed.skipped + once.skipped))


def _without_excluded(listed: list[tuple[Path, str, str]], exclude: Sequence[str]) -> FileList:
    kept, dropped = [], []
    for f, doc_id, root in listed:
        pattern = next((p for p in exclude if fnmatchcase(doc_id, p)), None)
        if pattern is None:
            kept.append((f, doc_id, root))
        else:
            dropped.append((str(f), f"the config's exclude names it ('{pattern}')"))
    return FileList(kept, dropped)


def _one_id_per_file(listed: list[tuple[Path, str, str]]) -> FileList:
    by_target: dict[Path, list[int]] = {}
    for i, (f, _, _) in enumerate(listed):
        if f.exists():
            by_target.setdefault(f.resolve(), []).append(i)
    dropped: set[int] = set()
    for target, places in by_target.items():
        if len(places) > 1:
            own = [i for i in places if target in (Path(listed[i][2]), Path(listed[i][2]) / listed[i][1])]
            keep = own[0] if own else places[0]
            dropped.update(i for i in places if i != keep)
    return FileList([t for i, t in enumerate(listed) if i not in dropped],
                    [(str(listed[i][0]), SAME_FILE) for i in sorted(dropped)])


def _without_page_sources(listed: FileList) -> FileList:
    """``listed`` without the files of a Sphinx build's ``_sources`` folder whose page is listed as HTML, and without a
    text file that stands beside an HTML page of its name ("FAQ.txt" and "FAQ.html"): the page's source or its
    plain-text rendering, the same words again. Debian's documentation packages ship 378 such pairs (docutils' every
    page; the GNU Coding Standards as standards.html and standards.text.gz, whose copies took the places of the
    pages' own chunks in a new user's top 10). A site's ``404.html`` goes too, known by its name before it is read."""
    ids = {doc_id for _, doc_id, _ in listed.files}

    def page_listed(stem: str) -> bool:
        return any(stem + suffix + gz in ids for suffix in HTML_SUFFIXES for gz in ("", GZIP_SUFFIX))

    kept, dropped = [], []
    for f, doc_id, root in listed.files:
        suffix, compressed = file_type(f)
        if suffix in HTML_SUFFIXES and f.name.lower().startswith(_NOT_FOUND_FILE):
            dropped.append((str(f), NOT_FOUND_PAGE))
            continue
        if suffix in TEXT_SUFFIXES:
            name = doc_id.removesuffix(GZIP_SUFFIX) if compressed else doc_id
            # "README" and "FAQ.txt" name a page's text; "README.Debian" is notes of its own.
            written = Path(name).suffix
            if page_listed(name.removesuffix(written) if written.lower() in TEXT_SUFFIXES else name):
                dropped.append((str(f), PAGE_TEXT))
                continue
        parts = doc_id.split("/")
        if SPHINX_SOURCES in parts[:-1] and doc_id.endswith(".txt"):
            at = parts.index(SPHINX_SOURCES)
            page = "/".join(parts[:at] + parts[at + 1:]).removesuffix(".txt")
            source_suffix = Path(page).suffix
            if source_suffix in SPHINX_SOURCE_SUFFIXES:
                page = page.removesuffix(source_suffix)
            if page_listed(page):
                dropped.append((str(f), SPHINX_SOURCE))
                continue
        kept.append((f, doc_id, root))
    return FileList(kept, listed.skipped + dropped)


def _utf16_without_bom(head: bytes) -> str | None:
    """'utf-16-le' or 'utf-16-be' when ``head`` looks like UTF-16 text written without a byte-order mark
    (mostly Latin text: nearly every other byte is NUL, the rest are not), else None."""
    pairs = len(head) // 2
    if pairs < 4:
        return None
    zero_even = head[0:pairs * 2:2].count(0) / pairs
    zero_odd = head[1:pairs * 2:2].count(0) / pairs
    for codec, zeros, text in (("utf-16-le", zero_odd, zero_even), ("utf-16-be", zero_even, zero_odd)):
        if zeros > 0.7 and text < 0.05:
            try:
                head[:pairs * 2].decode(codec)
            except UnicodeDecodeError:
                return None
            return codec
    return None


def file_type(path: Path) -> tuple[str, bool]:
    """(the file's type by its name, lower case: ".md" for both "a.md" and "a.md.gz", ".txt" for a name
    without an extension or a plain-text name such as README.Debian; whether it is gzip-compressed, as
    Debian ships most of /usr/share/doc)."""
    compressed = path.suffix.lower() == GZIP_SUFFIX
    name = Path(path.stem if compressed else path.name)
    suffix = name.suffix.lower()
    qualifier = name.suffix[1:2].isupper() or suffix in PLAIN_TEXT_QUALIFIERS
    if not suffix or (qualifier and name.name.split(".")[0].lower() in PLAIN_TEXT_NAMES):
        return PLAIN_TEXT, compressed
    return suffix, compressed


def _as_written(text: str) -> HtmlPage:
    return HtmlPage(without_page_furniture(text))


def _read_bytes(path: Path, compressed: bool, max_file_mb: float) -> bytes:
    """The file's bytes, uncompressed; of a compressed file at most one byte past ``max_file_mb`` (a small
    file can inflate to any size)."""
    if not compressed:
        return path.read_bytes()
    with gzip.open(path, "rb") as f:
        return f.read(int(max_file_mb * 1_000_000) + 1)


# NUL bytes that a text can hold and still be text: a Javadoc page showing the NUL character writes it as is (a new
# user's Commons Lang CharUtils.html: 2 in 55 KB, skipped as a binary file).
STRAY_NULS = 8


def _is_binary(data: bytes) -> bool:
    """git's test: a NUL byte in the first 8000 bytes. Text in any 8-bit encoding has none; UTF-16
    text has many, but starts with its byte-order mark, or (without one) has them in every other byte. A few
    (:data:`STRAY_NULS`) in what is otherwise UTF-8 are text's."""
    head = data[:8000]
    if b"\0" not in head or head.startswith((codecs.BOM_UTF16_LE, codecs.BOM_UTF16_BE)) \
            or _utf16_without_bom(head) is not None:
        return False
    if head.count(b"\0") <= STRAY_NULS:
        try:   # a character the 8000 bytes cut in two is no error
            codecs.getincrementaldecoder("utf-8")().decode(head.replace(b"\0", b""), final=False)
            return False
        except UnicodeDecodeError:
            pass
    return True


def _decode(data: bytes, path: Path, html: bool = False) -> str | None:
    if data.startswith((codecs.BOM_UTF16_LE, codecs.BOM_UTF16_BE)):
        return data.decode("utf-16", errors="replace")
    if b"\0" in data[:8000] and (codec := _utf16_without_bom(data[:8000])):
        return data.decode(codec, errors="replace")
    data = data.replace(b"\0", b"")   # a stray NUL (:data:`STRAY_NULS`), which a browser does not show either
    try:
        return data.decode("utf-8-sig")
    except UnicodeDecodeError:
        # A page that says what it is written in is read so, without a word (SCons' user guide: 148 warnings for
        # pages each declaring ISO-8859-1, which buried the messages that said something).
        if html and (declared := _declared_encoding(data)):
            return data.decode(declared, errors="replace")
        warnings.warn(f"ragplugins: '{path}' is not valid UTF-8; read it as cp1252 "
                      "(convert it to UTF-8 to silence this)", stacklevel=4)
        return data.decode("cp1252", errors="replace")


def _declared_encoding(page: bytes) -> str | None:
    """The encoding an HTML page declares (``<meta charset>``, its ``http-equiv`` Content-Type, an XML
    declaration), as a browser takes it: ISO-8859-1 and ASCII as windows-1252 (the WHATWG Encoding Standard).
    None for none, an unknown name, or UTF-8 (which the page is not)."""
    from bs4.dammit import EncodingDetector

    name = EncodingDetector.find_declared_encoding(page[:8000], is_html=True)
    try:
        codec = codecs.lookup(name).name if name else ""
    except LookupError:
        return None
    if codec in ("iso8859-1", "ascii"):
        return "cp1252"
    return codec if codec and codec != "utf-8" else None


def _pdf_problem(exc: BaseException) -> str:
    """Why a PDF could not be read, in words (PDFReader retries, so pypdf's error arrives inside a RetryError)."""
    last = getattr(exc, "last_attempt", None)
    if last is not None and last.exception() is not None:
        exc = last.exception()
    name = type(exc).__name__
    if name in ("FileNotDecryptedError", "DependencyError") or "decrypt" in str(exc).lower() \
            or "encrypt" in str(exc).lower():
        return "encrypted PDF (decrypt it to index it)"
    if name in ("PdfReadError", "PdfStreamError", "EmptyFileError", "ParseError") or "pypdf" in type(exc).__module__:
        return f"not a valid PDF ({name}: {exc})"
    return f"cannot parse it: {name}: {exc}"


def _container_problem(suffix: str, exc: BaseException) -> str:
    """Why a Word document or an e-book could not be read, in words."""
    if isinstance(exc, EpubError):
        return f"not a readable EPUB book: {exc}"
    if suffix == ".docx" and isinstance(exc, (zipfile.BadZipFile, KeyError)):
        return ("not a Word .docx document (an old .doc, or one saved with a password, is another format: save "
                "it as .docx without a password to index it)")
    if isinstance(exc, zipfile.BadZipFile):
        return f"not a readable '{suffix}' file: it is not the zip archive that format is ({exc})"
    return f"cannot parse it: {type(exc).__name__}: {exc}"


def read_documents(paths: Iterable[str | Path], max_file_mb: float = 25.0,
                   skip_dirs: Iterable[Path] = (), exclude: Sequence[str] = ()) -> ReadReport:
    """Read every supported file under ``paths`` but those ``exclude`` names (:func:`list_files`). Unsupported,
    binary, empty and too large files are skipped with a warning that names them; missing paths raise."""
    listing = list_files(paths, skip_dirs, exclude)
    report = read_files(listing.files, max_file_mb, skipped=listing.skipped)
    if not report.documents and (listing.files or listing.skipped):
        raise InputError("no file could be read: " + "; ".join(skipped_lines(report.skipped)))
    return report


def read_files(files: Iterable[tuple[Path, str, str]], max_file_mb: float = 25.0,
               skipped: Iterable[tuple[str, str]] = ()) -> ReadReport:
    """Read the (file, id, root) triples of :func:`list_files` (a part of them: an indexing worker reads its
    share), skipping with a warning what cannot be indexed (and the ``skipped`` the listing gave)."""
    report = ReadReport(skipped=list(skipped))
    files = list(files)
    for done, (path, doc_id, root) in enumerate(files):
        # Said as each file is read: 125 pages of a Sphinx site took minutes to read before the first chunk
        # was split, and progress said nothing all that time (a new user's SQLAlchemy walkthrough).
        _say_read(done, len(files))
        report.found.setdefault(root, []).append(doc_id)
        suffix, compressed = file_type(path)
        if path.is_symlink() and not path.exists():
            report.skip(path, DANGLING)
            continue
        if compressed and suffix not in TEXT_SUFFIXES | HTML_SUFFIXES:
            readable = ", ".join(s + GZIP_SUFFIX for s in sorted(TEXT_SUFFIXES | HTML_SUFFIXES))
            report.skip(path, f"a gzip-compressed '{suffix}' file: only text and HTML are read compressed ({readable})")
            continue
        if suffix not in KNOWN_SUFFIXES:
            report.skip(path, f"{UNSUPPORTED_TYPE}'{suffix}'")
            continue
        try:
            # stat and the binary sniff are reads too: a file removed or locked meanwhile is skipped, not fatal
            size_mb = path.stat().st_size / 1_000_000
            if size_mb > max_file_mb:
                report.skip(path, f"{size_mb:.1f} MB is over max_file_mb = {max_file_mb}; raise "
                                  "[ragplugins] max_file_mb to index it")
                continue
            if suffix in FILE_READERS:
                page = FILE_READERS[suffix](path)
            else:
                data = _read_bytes(path, compressed, max_file_mb)
                if compressed and len(data) > max_file_mb * 1_000_000:
                    report.skip(path, f"uncompressed it is over max_file_mb = {max_file_mb}; raise [ragplugins] "
                                      "max_file_mb to index it")
                    continue
                if _is_binary(data):
                    named = path.name.lower().removesuffix(GZIP_SUFFIX).endswith(suffix)
                    report.skip(path, "it is a binary file, not " + (f"{suffix} text" if named else "text") +
                                " (the config's exclude leaves it out without a word)")
                    continue
                text = _decode(data, path, html=suffix in HTML_SUFFIXES) or ""
                if suffix in HTML_SUFFIXES and text:
                    page = read_html(text)
                else:
                    plain = TERMINAL_MARKUP.sub("", text)
                    page = TEXT_READERS.get(suffix, _as_written)(plain)
            if page.redirect:
                report.skip(path, REDIRECT)
                continue
            if page.search_form:
                report.skip(path, "it is the site's search page: a form whose results a script draws")
                continue
            text, anchors = page.text, page.anchors
        except FileNotFoundError:
            report.skip(path, "it was removed while being read")
            continue
        except (gzip.BadGzipFile, EOFError, zlib.error) as exc:
            report.skip(path, f"it is not a readable gzip file ({exc or 'cut short'})")
            continue
        except PermissionError:
            report.skip(path, "permission denied (make it readable to index it)")
            continue
        except OSError as exc:
            report.skip(path, f"cannot read it: {exc}")
            continue
        except Exception as exc:  # noqa: BLE001 - a broken file must not stop the batch
            report.skip(path, _pdf_problem(exc) if suffix in PDF_SUFFIXES else _container_problem(suffix, exc))
            continue
        if only_rules(text):   # nothing, or rules alone
            report.skip(path, "it has no text")
            continue
        # texinfo's index nodes once their index is not read, and its chapters that are only a menu: a title alone
        # matched questions on its words and took a place in their top 10 from a page that answers them.
        if (suffix in HTML_SUFFIXES or suffix in MARKDOWN_SUFFIXES) and (title := only_headings(text)) is not None:
            report.skip(path, f"it has no text but its title ('{title}')")
            continue
        meta = default_file_metadata_func(str(path))
        meta["file_path"] = doc_id
        if anchors:
            meta[PAGE_ANCHORS_KEY] = page_anchors(text, anchors)
        document = Document(text=text, id_=doc_id, metadata=meta)
        hide_metadata(document, [*_EXCLUDED, PAGE_ANCHORS_KEY] if anchors else _EXCLUDED)
        report.documents.append(document)
    _say_read(len(files), len(files))
    report.warn_skipped()
    return report
