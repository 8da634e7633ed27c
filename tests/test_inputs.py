"""Bad input: a clear error that names the path, and nothing already indexed is lost."""

import gzip
import re
from pathlib import Path

import pytest

from ragplugins import InputError
from ragplugins.readers import read_documents
from ragplugins.testing import make_rag


@pytest.fixture
def rag(tiny_corpus, tmp_path, bundled_embed_model):
    rag = make_rag([], embed_model=bundled_embed_model, persist_dir=tmp_path / "idx")
    rag.index_paths([tiny_corpus])
    return rag


def _count(rag):
    return len(rag.context(rag.index()).all_nodes())


def test_missing_path(rag, tmp_path):
    before = _count(rag)
    with pytest.raises(InputError, match=f"path '{tmp_path / 'nope'}' does not exist"):
        rag.index_paths([tmp_path / "nope"])
    assert _count(rag) == before


def test_empty_directory(rag, tmp_path):
    (tmp_path / "empty").mkdir()
    with pytest.raises(
        InputError,
        match="directory '.*empty' is empty; supported files: .adoc, .asciidoc, .docx, .epub, .htm, .html, .markdown, "
              ".md, .org, .pdf, .pod",
    ):
        rag.index_paths([tmp_path / "empty"])


def test_unsupported_file_is_skipped_with_a_warning(rag, tmp_path):
    folder = tmp_path / "mixed"
    folder.mkdir()
    (folder / "table.xlsx").write_bytes(b"PK\x03\x04")
    (folder / "ok.md").write_text("A supported note about espresso grind size.")
    with pytest.warns(UserWarning, match=r"skipped '.*table.xlsx': unsupported file type '.xlsx'"):
        _, report = rag.index_paths([folder])
    assert report.added == ["ok.md"] and report.skipped[0][0].endswith("table.xlsx")


def test_files_skipped_for_one_reason_are_one_warning(rag, tmp_path):
    # A documentation folder's images: one line for all of them, not one per image.
    folder = tmp_path / "manual"
    (folder / "images").mkdir(parents=True)
    for name in ("a.gif", "b.gif", "c.gif"):
        (folder / "images" / name).write_bytes(b"GIF89a")
    (folder / "ok.md").write_text("A supported note about espresso grind size.")
    with pytest.warns(UserWarning) as caught:
        _, report = rag.index_paths([folder])
    said = [str(w.message) for w in caught if "skipped" in str(w.message)]
    assert len(said) == 1 and re.search(r"skipped '.*a.gif' and 2 more files: unsupported file type '.gif'", said[0])
    assert len(report.skipped) == 3 and report.added == ["ok.md"]


def test_files_of_several_unsupported_types_are_one_warning_that_counts_each(rag, tmp_path):
    # A Sphinx build's images, scripts and styles: one line, each type counted, the supported types said once.
    folder = tmp_path / "html"
    (folder / "_static").mkdir(parents=True)
    for name in ("a.png", "b.png", "c.png", "d.js", "e.css", "f.js"):
        (folder / "_static" / name).write_bytes(b"\x00")
    (folder / "ok.md").write_text("A supported note about espresso grind size.")
    with pytest.warns(UserWarning) as caught:
        _, report = rag.index_paths([folder])
    said = [str(w.message) for w in caught if "skipped" in str(w.message)]
    assert len(said) == 1, said
    assert re.search(r"skipped '.*a\.png' and 5 more files: unsupported file types '\.png' \(3\), '\.js' \(2\), "
                     r"'\.css' \(1\) \(supported: \.adoc, \.asciidoc, \.docx, ", said[0]), said
    assert said[0].count("supported:") == 1 and len(report.skipped) == 6


def test_a_file_linked_under_other_names_is_indexed_once_under_its_own(rag, tmp_path):
    # Apache's manual: each language folder links the pages it has no translation of to the English ones.
    folder = tmp_path / "manual"
    (folder / "en").mkdir(parents=True)
    (folder / "en" / "bind.md").write_text("Listen sets the addresses and ports the server binds to.")
    for lang in ("da", "de"):
        (folder / lang).mkdir()
        (folder / lang / "bind.md").symlink_to(Path("..") / "en" / "bind.md")
    (folder / "de" / "only.md").write_text("A page in German only, about espresso.")
    with pytest.warns(UserWarning) as caught:
        _, report = rag.index_paths([folder])
    assert sorted(report.added) == ["de/only.md", "en/bind.md"]
    assert [(Path(p).parent.name, why) for p, why in report.skipped] == [
        ("da", "it is a symbolic link to a file indexed under another id"),
        ("de", "it is a symbolic link to a file indexed under another id")]
    said = [str(w.message) for w in caught if "skipped" in str(w.message)]
    assert len(said) == 1 and "and 1 more file:" in said[0]


def test_the_page_sources_a_sphinx_build_keeps_are_not_indexed_beside_their_pages(rag, tmp_path):
    # rsyslog's manual as Debian installs it: every page also as _sources/<page>.rst.txt (older Sphinx:
    # _sources/<page>.txt). A source whose page is not in the folder is the only copy, and is read.
    folder = tmp_path / "html"
    (folder / "_sources" / "faq").mkdir(parents=True)
    (folder / "faq").mkdir()
    (folder / "faq" / "queue.html").write_text("<html><body><h1>Queues</h1><p>A disk queue spools "
                                                "messages to files.</p></body></html>")
    (folder / "_sources" / "faq" / "queue.rst.txt").write_text("Queues\n======\n\nA disk queue spools messages.")
    (folder / "index.html").write_text("<html><body><h1>rsyslog</h1><p>The rocket-fast system.</p></body></html>")
    (folder / "_sources" / "index.txt").write_text("rsyslog\n=======\n\nThe rocket-fast system.")
    (folder / "_sources" / "orphan.rst.txt").write_text("Orphan\n======\n\nA page built to no HTML here.")
    # Debian compresses a large page: changelog.html.gz is the page of _sources/changelog.rst.txt.
    (folder / "changelog.html.gz").write_bytes(gzip.compress(b"<html><body><h1>Changes</h1><p>8.2302: fixes."
                                                             b"</p></body></html>"))
    (folder / "_sources" / "changelog.rst.txt").write_text("Changes\n=======\n\n8.2302: fixes.")
    with pytest.warns(UserWarning, match=r"and 2 more files: it is the copy of a page's source that Sphinx keeps"):
        _, report = rag.index_paths([folder])
    assert sorted(report.added) == ["_sources/orphan.rst.txt", "changelog.html.gz", "faq/queue.html", "index.html"]
    assert sorted(Path(p).name for p, _ in report.skipped) == ["changelog.rst.txt", "index.txt", "queue.rst.txt"]
    # A source indexed while its page was not there goes once the page comes: the page holds its text.
    (folder / "orphan.html").write_text("<html><body><h1>Orphan</h1><p>A page built at last.</p></body></html>")
    with pytest.warns(UserWarning, match="and 3 more files"):
        _, report = rag.index_paths([folder])
    assert report.added == ["orphan.html"] and report.deleted == ["_sources/orphan.rst.txt"]


def test_the_files_the_config_excludes_are_not_indexed_and_leave_the_index_once_excluded(tmp_path,
                                                                                         bundled_embed_model):
    # A new user's Sphinx build: viewcode's listings (_modules/, 27 % of the chunks) and the general index took a
    # fifth of the top 10 places, and nothing but listing every wanted file kept them out.
    folder = tmp_path / "html"
    (folder / "_modules" / "sphinx").mkdir(parents=True)
    (folder / "usage").mkdir()
    (folder / "usage" / "theming.html").write_text("<h1>HTML Theming</h1><p>A theme is a collection of templates.</p>")
    (folder / "_modules" / "sphinx" / "application.html").write_text("<h1>Source code for sphinx.application</h1>"
                                                                     "<pre>class Sphinx: pass</pre>")
    (folder / "genindex.html").write_text("<h1>Index</h1><p>add_directive() (Sphinx method)</p>")
    persist = tmp_path / "idx"
    _, report = make_rag([], embed_model=bundled_embed_model, persist_dir=persist).index_paths([folder])
    assert sorted(report.added) == ["_modules/sphinx/application.html", "genindex.html", "usage/theming.html"]
    excluding = make_rag([], {"exclude": ["_modules/*", "genindex.html", "*.pdf"]}, embed_model=bundled_embed_model,
                         persist_dir=persist)
    with pytest.warns(UserWarning, match=r"application.html': the config's exclude names it \('_modules/\*'\)"):
        _, report = excluding.index_paths([folder])
    assert report.added == [] and sorted(report.deleted) == ["_modules/sphinx/application.html", "genindex.html"]
    assert sorted(excluding.context(excluding.index()).list_documents()) == ["usage/theming.html"]
    # A pattern matches a file's id as query shows it, whole: usage/genindex.html is not genindex.html.
    (folder / "usage" / "genindex.html").write_text("<h1>Usage index</h1><p>theming</p>")
    with pytest.warns(UserWarning, match="exclude names it"):
        _, report = excluding.index_paths([folder])
    assert report.added == ["usage/genindex.html"]
    with pytest.raises(InputError, match=r"no file could be read: .*exclude names it \('\*'\)"):
        make_rag([], {"exclude": ["*"]}, embed_model=bundled_embed_model,
                 persist_dir=tmp_path / "other").index_paths([folder])


def test_a_link_to_a_file_outside_the_folder_is_indexed_under_the_link(rag, tmp_path):
    elsewhere = tmp_path / "shared.md"
    elsewhere.write_text("A note kept outside the folder, about grinder burrs.")
    folder = tmp_path / "notes"
    folder.mkdir()
    for name in ("b.md", "a.md"):
        (folder / name).symlink_to(elsewhere)
    with pytest.warns(UserWarning, match=r"skipped '.*b.md': it is a symbolic link to a file indexed under"):
        _, report = rag.index_paths([folder])
    assert report.added == ["a.md"]


def test_links_to_nothing_are_one_warning(rag, tmp_path):
    folder = tmp_path / "html"
    (folder / "_static").mkdir(parents=True)
    (folder / "page.md").write_text("Zebra installs routes into the kernel.")
    for name in ("jquery.js", "doctools.js", "underscore.js"):
        (folder / "_static" / name).symlink_to(tmp_path / "gone" / name)
    with pytest.warns(UserWarning) as said:
        _, report = rag.index_paths([folder])
    lines = [str(w.message) for w in said if "symbolic link" in str(w.message)]
    assert len(lines) == 1 and lines[0].endswith("and 2 more files: it is a symbolic link to a file that does not "
                                                 "exist (`ls -l` shows where it points)"), lines
    assert report.added == ["page.md"]


def test_plain_text_files_without_an_extension_are_read_and_binaries_are_not(rag, tmp_path):
    # A Debian package's doc folder: README, README.Debian, changelog.Debian.gz, copyright, and things
    # that are not text whatever their name says.
    folder = tmp_path / "nginx"
    folder.mkdir()
    (folder / "README").write_text("Nginx serves static files from the document root.")
    (folder / "README.Debian").write_text("On Debian the default site lives in /etc/nginx/sites-enabled.")
    (folder / "changelog.Debian.gz").write_bytes(gzip.compress(b"nginx (1.22.1-9) bookworm; fix CVE-2023-44487."))
    (folder / "copyright").write_text("Copyright 2002 Igor Sysoev. BSD-2-clause license.")
    # GNU ships texinfo's plain-text rendering of a manual as .text (gnu-standards' maintain.text.gz).
    (folder / "maintain.text.gz").write_bytes(gzip.compress(b"Information for Maintainers of GNU Software."))
    (folder / "helper").write_bytes(b"\x7fELF\x02\x01\x01\x00\x00" * 20)       # a program
    (folder / "changelog.gz").write_bytes(b"\x1f\x8b\x08")                     # cut short
    (folder / "python3.11").write_text("not a plain-text name, and '.11' is not a type")
    (folder / "install.sh").write_text("#!/bin/sh\nmake install\n")                 # a script, not a README
    with pytest.warns(UserWarning) as caught:
        _, report = rag.index_paths([folder])
    said = " ".join(str(w.message) for w in caught)
    assert sorted(report.added) == ["README", "README.Debian", "changelog.Debian.gz", "copyright", "maintain.text.gz"]
    assert "helper': it is a binary file, not text" in said
    assert "changelog.gz': it is not a readable gzip file" in said
    # Both unsupported files in one line, each type counted, the supported types said once.
    assert re.search(r"(python3\.11|install\.sh)' and 1 more file: unsupported file types '\.(11|sh)' \(1\), "
                     r"'\.(sh|11)' \(1\) \(supported: .*text files without an extension \(README, changelog\.Debian\), "
                     r"and the text and HTML ones gzip-compressed", said), said
    texts = {n.ref_doc_id: n.get_content() for n in rag.context().all_nodes()}
    assert texts["changelog.Debian.gz"] == "nginx (1.22.1-9) bookworm; fix CVE-2023-44487."
    assert "sites-enabled" in rag.search("where is the default site on Debian").final[0].node.get_content()


def test_asciidoc_pod_and_org_files_are_read_as_text(rag, tmp_path):
    # Prose in a light markup: skipped as unknown types, a project's whole manual was nothing.
    folder = tmp_path / "manual"
    folder.mkdir()
    (folder / "install.adoc").write_text("= Installing\n\n== Proxies\n\nSet HTTPS_PROXY before the first sync.\n")
    (folder / "guide.asciidoc").write_text("= Guide\n\nThe guide explains the espresso grind size.\n")
    (folder / "perlfunc.pod").write_text("=head1 NAME\n\nperlfunc - Perl builtin functions\n\n=cut\n")
    (folder / "notes.org").write_text("* Tasks\n\nWater the ficus every Tuesday.\n")
    _, report = rag.index_paths([folder])
    assert sorted(report.added) == ["guide.asciidoc", "install.adoc", "notes.org", "perlfunc.pod"]
    assert not report.skipped
    assert rag.search("which variable sets the proxy").final[0].node.ref_doc_id == "install.adoc"


def test_a_folder_of_nothing_readable_is_an_error_said_once(rag, tmp_path):
    folder = tmp_path / "images"
    folder.mkdir()
    for name in ("logo", "icon", "banner"):
        (folder / name).write_bytes(b"\x89PNG\r\n\x1a\n\x00\x00\x00\rIHDR")
    (folder / "photo.jpg").write_bytes(b"\xff\xd8\xff")
    before = _count(rag)
    with pytest.warns(UserWarning):
        with pytest.raises(InputError) as caught:
            rag.index_paths([folder])
    message = str(caught.value)
    assert re.fullmatch(r"no file could be read: '.*banner' and 2 more files: it is a binary file, not text "
                        r"\(the config's exclude leaves it out without a word\); "
                        r"'.*photo\.jpg': unsupported file type '\.jpg' \(supported: .*, as \.md\.gz\)",
                        message), message
    assert _count(rag) == before


def test_empty_document_and_only_bad_files(rag, tmp_path):
    folder = tmp_path / "blank"
    folder.mkdir()
    (folder / "blank.md").write_text("   \n\n")
    before = _count(rag)
    with pytest.warns(UserWarning, match="blank.md': it has no text"):
        with pytest.raises(InputError, match="no file could be read: '.*blank.md': it has no text"):
            rag.index_paths([folder])
    assert _count(rag) == before


def test_non_utf8_text_is_read_with_a_warning(rag, tmp_path):
    path = tmp_path / "latin.txt"
    path.write_bytes("Caf\xe9 menu: cr\xe8me br\xfbl\xe9e costs 7 euros.".encode("cp1252"))
    with pytest.warns(UserWarning, match="latin.txt' is not valid UTF-8"):
        rag.index_paths([path])
    assert any("Café menu" in n.get_content() for n in rag.context().all_nodes())


def test_a_page_declaring_its_encoding_is_read_so_without_a_warning(tmp_path):
    # SCons' user guide: every page declares ISO-8859-1, and 148 warnings buried the two messages that said
    # something. A browser reads ISO-8859-1 as windows-1252 (its quotes in 0x93 and 0x94); a Shift_JIS page as that.
    (tmp_path / "ch04.html").write_bytes(b'<html><head><meta http-equiv="Content-Type" content="text/html; charset='
                                         b'ISO-8859-1"><title>Libraries</title></head><body><h1>Chapter\xa04. '
                                         b'Libraries</h1><p>A \x93static\x94 library.</p></body></html>')
    japanese = '<meta charset="shift_jis"><h1>\u8aac\u660e</h1><p>Text.</p>'
    (tmp_path / "jp.html").write_bytes(japanese.encode("shift_jis"))
    (tmp_path / "bare.html").write_bytes(b"<h1>Caf\xe9</h1><p>No declaration.</p>")
    with pytest.warns(UserWarning) as caught:
        texts = {doc.metadata["file_name"]: doc.text for doc in read_documents([tmp_path]).documents}
    assert "Chapter\xa04. Libraries" in texts["ch04.html"] and "A \u201cstatic\u201d library." in texts["ch04.html"]
    assert "\u8aac\u660e" in texts["jp.html"] and "Caf\xe9" in texts["bare.html"]
    assert [str(w.message) for w in caught if "UTF-8" in str(w.message)] == [
        f"ragplugins: '{tmp_path / 'bare.html'}' is not valid UTF-8; read it as cp1252 (convert it to UTF-8 to "
        "silence this)"]


def test_text_nroff_wrote_reads_without_its_bold_and_underline(tmp_path):
    # Postfix's READMEs: bold is each letter struck twice, underline "_" struck under a letter.
    bold = "".join(f"{c}\b{c}" for c in "LDAP Support")
    (tmp_path / "LDAP_README").write_text(f"{bold}\n\nUse _\bp_\bo_\bs_\bt_\bc_\bo_\bn_\bf -m to list them.\n")
    [doc] = read_documents([tmp_path]).documents
    assert doc.text == "LDAP Support\n\nUse postconf -m to list them.\n"


def test_text_grotty_wrote_reads_without_its_terminal_escapes(tmp_path):
    # man-db's manual as Debian ships it: grotty's bold as a terminal's escapes read as the words "1mman", "0m".
    (tmp_path / "manual.txt").write_text("\x1b[1mman-db\x1b[0m is a \x1b[4mpager\x1b[24m suite.\n")
    [doc] = read_documents([tmp_path]).documents
    assert doc.text == "man-db is a pager suite.\n"


def _printed_pages(lines_per_page: int, header: str, footer: str, form_feed: bool) -> tuple[str, list[str]]:
    """A text formatted for a printer, and its sentences: each page's words, a sentence running over each break."""
    sentences = [f"Rule {n} says that the widget number {n} must be painted blue before it ships." for n in range(60)]
    words = " ".join(sentences).split()
    pages: list[list[str]] = []
    for n in range(1, 6):
        body = [header] if n > 1 else []
        body += ["", ""]
        while len(body) < lines_per_page - 4 and words:
            body.append("   " + " ".join(words[:9]))
            del words[:9]
        body += [""] * (lines_per_page - len(body) - 1) + [footer.format(n)]
        pages.append(body if form_feed else body + ["", "", ""])
    # a word the printer hyphenated at a line's end, the next line indented: "wid-", "   get number"
    at = next(i for i, line in enumerate(pages[1]) if line.endswith(" widget") and pages[1][i + 1].strip())
    pages[1][at] = pages[1][at].removesuffix("get") + "-"
    pages[1][at + 1] = "   get " + pages[1][at + 1].strip()
    # An RFC's form feed stands between a page's footer line and the next page's header line.
    joined = ("\f" if form_feed else "").join("\n".join(page) + "\n" for page in pages)
    return joined, sentences


@pytest.mark.parametrize("form_feed", [True, False], ids=["rfc-with-form-feeds", "nroff-fixed-length-pages"])
def test_a_text_printed_as_pages_reads_without_their_headers_footers_and_margins(tmp_path, form_feed):
    # An IETF RFC ends each page with a form feed; nroff's output has pages of 66 lines. Their running header and
    # footer sat between the halves of each sentence a page break cut.
    header, footer = "RFC 9999                      Widgets                      June 2020", \
        "Doe, et al.                 Standards Track                  [Page {}]"
    text, sentences = _printed_pages(58 if form_feed else 63, header, footer, form_feed)
    (tmp_path / "rfc9999.txt").write_text(text)
    [doc] = read_documents([tmp_path]).documents
    assert "RFC 9999" not in doc.text and "Standards Track" not in doc.text and "\f" not in doc.text
    assert "wid-" not in doc.text
    flowing = " ".join(doc.text.split())
    assert all(sentence in flowing for sentence in sentences[:40])
    # a page break inside a sentence: the next line goes on, no blank line between
    lines = doc.text.strip().split("\n")
    assert all(line.endswith(".") for line, after in zip(lines, lines[1:]) if line and not after)


def test_a_text_with_a_recurring_line_that_is_no_page_s_reads_as_it_is(tmp_path):
    # A recurring line at an irregular distance, and form feeds between sections without headers: no pages' furniture.
    text = "".join(f"Section {n}\n\n" + "Some words of the section.\n" * (30 + 7 * n) + "See the FAQ for details.\n\n"
                   for n in range(5))
    with_feeds = "\f\n".join(f"Part {n}\n\nIts own words, number {n}.\n" for n in range(4))
    (tmp_path / "a.txt").write_text(text)
    (tmp_path / "b.txt").write_text(with_feeds)
    docs = {d.id_: d.text for d in read_documents([tmp_path]).documents}
    assert docs == {"a.txt": text, "b.txt": with_feeds}


def test_large_file_is_skipped_and_names_the_key(rag, tmp_path):
    big = tmp_path / "big.txt"
    with open(big, "wb") as f:
        f.write(b"lorem ipsum dolor sit amet " * (50 * 1024 * 1024 // 27 + 1))
    before = _count(rag)
    with pytest.warns(
        UserWarning, match=r"big.txt': 5\d\.\d MB is over max_file_mb = 25.0; raise \[ragplugins\] max_file_mb"
    ):
        with pytest.raises(InputError):
            rag.index_paths([big])
    assert _count(rag) == before


def test_duplicate_ids_across_roots(rag, tmp_path):
    for d in ("one", "two"):
        (tmp_path / d).mkdir()
        (tmp_path / d / "same.md").write_text(f"Note from {d}.")
    with pytest.raises(InputError, match="two files would get the id 'same.md'"):
        rag.index_paths([tmp_path / "one", tmp_path / "two"])


def test_a_second_folder_does_not_replace_the_firsts_document_of_the_same_name(rag, tmp_path):
    # Two manuals indexed one after the other, both with an index.html: ids are relative to each folder.
    for name in ("exim", "bind"):
        (tmp_path / name).mkdir()
        (tmp_path / name / "index.md").write_text(f"The {name} manual's contents page.")
    rag.index_paths([tmp_path / "exim"])
    before = _count(rag)
    with pytest.raises(InputError, match=r"'.*bind/index.md' would replace '.*exim/index.md', indexed as 'index.md' "
                                         r"from '.*exim'.*common parent folder.*nothing was written"):
        rag.index_paths([tmp_path / "bind"])
    assert _count(rag) == before
    assert "exim" in rag.search("contents page").final[0].node.get_content()
    # A folder that moved is no conflict: its files are not there any more.
    (tmp_path / "exim").rename(tmp_path / "exim-old")
    assert rag.index_paths([tmp_path / "bind"])[1].updated == ["index.md"]


def test_a_file_indexed_again_on_its_own_is_the_same_document(rag, tmp_path):
    folder = tmp_path / "docs"
    folder.mkdir()
    (folder / "chapter2.md").write_text("Chapter two: zone transfers.")
    (folder / "chapter3.md").write_text("Chapter three: views.")
    rag.index_paths([folder])
    before = _count(rag)
    # Refused before as "'docs/chapter2.md' would replace 'docs/chapter2.md'": it is the same file.
    assert rag.index_paths([folder / "chapter2.md"])[1].unchanged == ["chapter2.md"]
    (folder / "chapter2.md").write_text("Chapter two: zone transfers and NOTIFY.")
    _, report = rag.index_paths([folder / "chapter2.md"])
    assert report.updated == ["chapter2.md"] and _count(rag) == before
    # The folder indexed again finds both as they are.
    _, report = rag.index_paths([folder])
    assert sorted(report.unchanged) == ["chapter2.md", "chapter3.md"] and not report.added and not report.deleted


def test_a_parent_folder_indexed_after_its_subfolder_takes_its_files_over_under_new_ids(rag, tmp_path):
    # What the refusal above advises ("index both from their common parent folder"): the subfolder's files
    # arrive again under ids relative to the parent, and must not stay twice under their old ids.
    for name in ("a", "b"):
        (tmp_path / "small" / name).mkdir(parents=True)
        (tmp_path / "small" / name / "index.md").write_text(f"The {name} manual's contents page.")
    (tmp_path / "small" / "a" / "extra.md").write_text("An extra page of manual a about resolvers.")
    rag.index_paths([tmp_path / "small" / "a"])
    with pytest.warns(UserWarning, match=r"2 document\(s\) indexed before from '.*a' are in '.*small' too and are "
                                         r"indexed again under ids relative to it; their old ids \(extra.md, "
                                         r"index.md\) are removed"):
        _, report = rag.index_paths([tmp_path / "small"])
    assert sorted(report.added) == ["a/extra.md", "a/index.md", "b/index.md"]
    assert sorted(report.deleted) == ["extra.md", "index.md"]
    indexed = set(rag.context(rag.index()).list_documents())
    assert {"a/extra.md", "a/index.md", "b/index.md"} <= indexed and not {"extra.md", "index.md"} & indexed
    hits = rag.search("resolvers page of manual a").final
    assert [n.node.ref_doc_id for n in hits].count("a/extra.md") == 1 and "extra.md" not in \
        [n.node.ref_doc_id for n in hits]


def test_documents_are_found_by_their_file_name_whatever_their_folder(rag, tmp_path):
    # What a question typing "usr_12.txt" names (crossref's hop, retry's respelling): every document of that
    # name, by the file name alone, lower case; an index written again is listed again.
    for name in ("a", "b"):
        (tmp_path / "man" / name).mkdir(parents=True)
        (tmp_path / "man" / name / "Index.md").write_text(f"The {name} manual's contents page.")
    rag.index_paths([tmp_path / "man"])
    ctx = rag.context(rag.index())
    files = ctx.documents_by_file_name()
    assert files["index.md"] == frozenset({"a/Index.md", "b/Index.md"}) and "Index.md" not in files
    assert all(docs == {doc_id} for doc_id, docs in files.items() if doc_id != "index.md")   # the fixture's
    (tmp_path / "man" / "a" / "usr_12.txt").write_text("Clever tricks.")
    rag.index_paths([tmp_path / "man"])
    assert rag.context(rag.index()).documents_by_file_name()["usr_12.txt"] == frozenset({"a/usr_12.txt"})


def test_binary_file_with_a_text_suffix_is_skipped(rag, tmp_path):
    folder = tmp_path / "bin"
    folder.mkdir()
    (folder / "binary.md").write_bytes(bytes(range(256)) * 40)
    (folder / "ok.md").write_text("A note about grinder burrs.")
    (folder / "windows.txt").write_text("Notes saved by Notepad in UTF-16 about descaling.", encoding="utf-16")
    with pytest.warns(UserWarning, match=r"skipped '.*binary.md': it is a binary file, not .md text"):
        _, report = rag.index_paths([folder])
    assert sorted(report.added) == ["ok.md", "windows.txt"]
    assert "descaling" in rag.search("Notepad descaling notes").final[0].node.get_content()


def test_a_text_that_shows_a_nul_character_is_text(rag, tmp_path):
    # A new user's Javadoc page of Commons Lang's CharUtils writes the NUL character itself (2 bytes in 55 KB): it was
    # skipped as a binary file. A few NULs in UTF-8 text are the text's, read as a browser shows it, without them;
    # many, or NULs beside bytes that are no UTF-8, are a binary file's.
    folder = tmp_path / "api"
    folder.mkdir()
    (folder / "CharUtils.html").write_bytes("<h1>Class CharUtils</h1><p><code>\0</code> null control character, "
                                            "abbreviated NUL. Résumé of the escape rules.</p>".encode())
    (folder / "blob.html").write_bytes(b"<p>header</p>" + b"\0\xff" * 4 + b"<p>grinder</p>")
    (folder / "many.txt").write_bytes(b"text\0" * 20)
    with pytest.warns(UserWarning) as said:
        _, report = rag.index_paths([folder])
    assert report.added == ["CharUtils.html"]
    text = rag.search("null control character").final[0].node.get_content()
    assert "null control character, abbreviated NUL. Résumé" in text and "\0" not in text
    skipped = " ".join(str(w.message) for w in said)
    assert "blob.html': it is a binary file" in skipped and "many.txt': it is a binary file" in skipped


def test_gzip_compressed_text_and_html_are_read_as_they_would_be_uncompressed(tmp_path, bundled_embed_model):
    # Debian ships most of /usr/share/doc compressed: README.md.gz, FAQ.html.gz.
    folder = tmp_path / "doc"
    folder.mkdir()
    (folder / "README.md.gz").write_bytes(gzip.compress(b"# Grinder\n\nBurrs are cleaned monthly with rice."))
    (folder / "FAQ.html.gz").write_bytes(gzip.compress(
        b"<html><body><ul class='nav'><li><a href='index.html'>Home</a></li></ul>"
        b"<h1>FAQ</h1><p>Descale the kettle with citric acid.</p></body></html>"))
    (folder / "manual.pdf.gz").write_bytes(gzip.compress(b"%PDF-1.4 not read"))
    (folder / "broken.txt.gz").write_bytes(b"\x1f\x8b\x08\x00 not really gzip")
    (folder / "bomb.txt.gz").write_bytes(gzip.compress(b"a" * 3_000_001))   # 3 KB that inflate past the limit
    app = make_rag([], {"max_file_mb": 3}, embed_model=bundled_embed_model, persist_dir=tmp_path / "idx")
    with pytest.warns(UserWarning) as caught:
        _, report = app.index_paths([folder])
    said = " ".join(str(w.message) for w in caught)
    assert sorted(report.added) == ["FAQ.html.gz", "README.md.gz"]
    assert "manual.pdf.gz': a gzip-compressed '.pdf' file: only text and HTML are read compressed" in said
    assert "broken.txt.gz': it is not a readable gzip file" in said
    assert "bomb.txt.gz': uncompressed it is over max_file_mb = 3" in said
    texts = {n.ref_doc_id: n.get_content() for n in app.context().all_nodes()}
    assert texts["README.md.gz"].startswith("# Grinder") and "with rice" in texts["README.md.gz"]
    assert texts["FAQ.html.gz"] == "# FAQ\n\nDescale the kettle with citric acid."          # read as HTML
    assert "burrs" in app.search("how are burrs cleaned").final[0].node.get_content().lower()


def test_hidden_folders_and_the_index_itself_are_not_walked(tmp_path, bundled_embed_model):
    folder = tmp_path / "project"
    (folder / ".git").mkdir(parents=True)
    (folder / ".git" / "notes.md").write_text("Not a document of the project.")
    (folder / "doc.md").write_text("The project's only document, about espresso.")
    rag = make_rag([], embed_model=bundled_embed_model, persist_dir=folder / "index_here")
    assert rag.index_paths([folder])[1].added == ["doc.md"]
    (folder / "index_here" / "stray.md").write_text("Written into the index directory by accident.")
    _, again = rag.index_paths([folder])
    assert again.unchanged == ["doc.md"] and not again.added and not again.skipped


def test_the_same_files_indexed_from_another_folder_are_flagged(rag, tiny_corpus):
    # From a folder holding the first one, the same files take new ids and their old ids go (said once).
    before = set(rag.context(rag.index()).list_documents())
    with pytest.warns(UserWarning, match=r"document\(s\) indexed before from '.*corpus' are in .* too and are "
                                         r"indexed again under ids relative to it"):
        _, report = rag.index_paths([tiny_corpus.parent])
    assert sorted(report.deleted) == sorted(before) and sorted(report.added) == sorted(f"corpus/{d}" for d in before)
    # From a folder beside it, where the ids cannot tell: flagged.
    (tiny_corpus.parent / "copy").mkdir()
    name = sorted(before)[0]
    (tiny_corpus.parent / "copy" / name).write_text((tiny_corpus / name).read_text())
    with pytest.warns(UserWarning, match=rf"'{re.escape(name)}' was added next to the already indexed "
                                         rf"'corpus/{re.escape(name)}'.*ragplugins delete"):
        rag.index_paths([tiny_corpus.parent / "copy"])


@pytest.mark.parametrize("question", ["", "   \n"])
def test_an_empty_question_is_refused_before_any_plugin(rag, question):
    with pytest.raises(InputError, match="the question is empty"):
        rag.search(question)


def test_a_filter_on_a_key_no_chunk_has_is_an_error_that_names_it(rag):
    from llama_index.core.vector_stores.types import FilterCondition, MetadataFilter, MetadataFilters

    misspelt = MetadataFilters(filters=[MetadataFilter(key="file_paht", value="espresso_manual.md")])
    with pytest.raises(InputError, match=r"cannot filter on metadata key 'file_paht': no indexed chunk has it "
                                         r"\(their keys: .*file_path.*\); check the filter's key"):
        rag.search("How often is the boiler descaled?", filters=misspelt)
    # Inside a nested group too; a key the chunks have filters as before.
    nested = MetadataFilters(filters=[MetadataFilters(filters=[MetadataFilter(key="author", value="x")]),
                                      MetadataFilter(key="file_path", value="espresso_manual.md")],
                             condition=FilterCondition.OR)
    with pytest.raises(InputError, match="'author'"):
        rag.search("How often is the boiler descaled?", filters=nested)
    good = MetadataFilters(filters=[MetadataFilter(key="file_path", value="espresso_manual.md")])
    hits = rag.search("How often is the boiler descaled?", filters=good).final
    assert hits and {h.node.metadata["file_path"] for h in hits} == {"espresso_manual.md"}
