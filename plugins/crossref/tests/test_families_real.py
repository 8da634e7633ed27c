"""The reference conventions of real documentation: hyperlinks, manual pages, sections that are
separate files, reference lists, Sphinx roles; and the rule that a document's mention of itself
never resolves to another document. Small fixtures written in each convention."""

from __future__ import annotations

import time

import pytest

from ragplugins_crossref.families import BUILTIN_FAMILIES
from ragplugins_crossref.resolve import annotate, cap_refs


def run(docs: dict[str, str], families=BUILTIN_FAMILIES):
    chunks = {d: [(f"{d}#0", text)] for d, text in docs.items()}
    ann = annotate(chunks, {d: {"file_name": d.rsplit("/", 1)[-1]} for d in docs}, families, max_refs=50)
    return {d: {(r["kind"], r["ref"], r["target"]) for r in ann.refs[f"{d}#0"]} for d in docs}, ann


def resolved(records):
    return {(ref, target) for _, ref, target in records if target}


def test_hyperlinks_resolve_relative_to_the_citing_file_and_drop_fragments():
    refs, _ = run({
        "manual/backup.html": "## Backup and Restore\n[SQL dump](backup-dump.html#BACKUP-DUMP-RESTORE), "
                              "[tables](../reference/sql-createtable.html), [PostgreSQL](https://www.postgresql.org/), "
                              "[mail](mailto:x@example.org), [this page](backup.html#TOP), [top](#TOP), "
                              "[gone](missing.html) and <a class=\"xref\" href=\"backup-file.html\">file copies</a>.",
        "manual/backup-dump.html": "## 25.1. SQL Dump\ntext",
        "manual/backup-file.html": "## 25.2. File System Level Backup\ntext",
        "reference/sql-createtable.html": "## CREATE TABLE\ntext",
    })
    assert resolved(refs["manual/backup.html"]) == {
        ("backup-dump.html", "manual/backup-dump.html"),
        ("../reference/sql-createtable.html", "reference/sql-createtable.html"),
        ("backup-file.html", "manual/backup-file.html")}
    # Other sites, mail, the page itself and files not indexed leave no record at all.
    assert {kind for kind, _, _ in refs["manual/backup.html"]} == {"link"}
    assert len(refs["manual/backup.html"]) == 3


def test_a_link_naming_its_own_page_lands_on_the_place_its_fragment_names():
    # DocBook's chunked HTML (a new user's Debian Administrator's Handbook) writes a cross-reference to a section of
    # the same page with the page's file name: 42 such links named nothing.
    _, ann = run({
        "manual/apt.html": "# Chapter 6. APT\n\nSee [Section 6.2.3, System Upgrade](apt.html#system-upgrade), "
                           "[the top](apt.html) and [Section 6.3](sect.apt-cache.html#apt-cache).\n\n"
                           "## System Upgrade\n\nUpgrade.",
        "manual/sect.apt-cache.html": "## 6.3. apt-cache\n\nSearch.",
    })
    links = [(r["text"], r["target"], r["how"], r.get("chunk")) for r in ann.refs["manual/apt.html#0"]
             if r["kind"] == "link"]
    assert links == [("[Section 6.3](sect.apt-cache.html#apt-cache)", "manual/sect.apt-cache.html", "link", None),
                     ("[Section 6.2.3, System Upgrade](apt.html#system-upgrade)", None, "internal",
                      "manual/apt.html#0")]
    # Under the cap it comes last, as a "#place" link does: a contents list of them crowds out no other reference.
    capped = cap_refs(ann.refs["manual/apt.html#0"], 3)
    assert [r["how"] for r in capped] == ["link", "qualifier", None]


def test_a_link_into_a_folder_that_was_not_indexed_names_no_other_document():
    # SQLite's pages link to its C interface pages as c3ref/stmt.html; with c3ref/ not indexed, the
    # top-level stmt.html (a virtual table) is another document, and so is git's manual page gitweb.txt
    # for an include of config/gitweb.txt. A link whose folders match still finds its file elsewhere.
    refs, _ = run({
        "compile.html": "[prepared statements](c3ref/stmt.html) and [the VFS](c3ref/vfs.html)",
        "stmt.html": "## The SQLITE_STMT Virtual Table\ntext",
        "vfs.html": "## The SQLite OS Interface or VFS\ntext",
        "guide/backup.html": "[tables](../reference/sql-createtable.html)",
        "site/reference/sql-createtable.html": "## CREATE TABLE\ntext",
    })
    assert resolved(refs["compile.html"]) == set()
    assert resolved(refs["guide/backup.html"]) == {
        ("../reference/sql-createtable.html", "site/reference/sql-createtable.html")}


def test_a_link_that_leaves_the_indexed_folder_names_no_document_of_it():
    # A new user indexed usage/extensions/ of Sphinx's documentation: every page's logo links "../../index.html",
    # the site's welcome page, which went to the subfolder's own index.html. A link that stays inside still resolves.
    refs, _ = run({
        "intersphinx.html": "[![SPHINX](../../_static/logo.png)](../../index.html) See [the list](index.html) "
                            "and [configuration](../configuration.html).",
        "index.html": "## Extensions\ntext",
        "configuration.html": "## Configuration\ntext",
        "sub/todo.html": "[back](../intersphinx.html)",
    })
    assert resolved(refs["intersphinx.html"]) == {("index.html", "index.html")}
    assert resolved(refs["sub/todo.html"]) == {("../intersphinx.html", "intersphinx.html")}


def test_a_link_that_shows_only_a_picture_is_no_reference():
    # SQLite's logo on each of its 203 pages, Sphinx's on every page of its documentation: the site's home, weighed as
    # the best pointer of some questions. A picture beside words in the link stays a reference.
    refs, ann = run({
        "lang.html": "[![SQLite](images/sqlite370_banner.gif)](index.html)\n\n# SQL As Understood By SQLite\n\n"
                     "See [![diagram](img/vdbe.png) the VDBE](opcode.html) and [the home page](index.html).",
        "index.html": "## SQLite Home Page\ntext",
        "opcode.html": "## The SQLite Bytecode Engine\ntext",
    })
    assert resolved(refs["lang.html"]) == {("opcode.html", "opcode.html"), ("index.html", "index.html")}
    assert [r["text"] for r in ann.refs["lang.html#0"] if r["ref"] == "index.html"] == ["[the home page](index.html)"]


def test_manual_pages_by_name_and_linkgit():
    refs, ann = run({
        "git-config.txt": "git-config(1)\n=============\n\nNAME\n----\ngit-config - Get and set options\n\n"
                          "See linkgit:git-config[1] (this page) and linkgit:git-commit[1].",
        "git-commit.txt": "git-commit(1)\n=============\n\nNAME\n----\ngit-commit - Record changes\n\n"
                          "The editor is set with linkgit:git-config[1]; see also git-config(1), stat(2) and "
                          "linkgit:git-log[1].",
    })
    assert ann.profiles["git-config.txt"].ids == ["git-config(1)"]       # the page's setext title declares it
    assert resolved(refs["git-commit.txt"]) == {("git-config(1)", "git-config.txt")}
    assert ("identifier", "stat(2)", None) in refs["git-commit.txt"]      # outside the corpus: kept, null
    assert resolved(refs["git-config.txt"]) == {("git-commit(1)", "git-commit.txt")}   # never itself


def test_manual_pages_without_a_title_resolve_through_their_file_names():
    # Postfix's HTML manual pages: no title naming the page, files named name.section.html.
    refs, ann = run({
        "postconf.5.html": "## Postfix Configuration Parameters\n\nThe main.cf file format.",
        "postlogd.8.html": "## NAME\n\npostlogd - Postfix internal log server\n\nSee postconf(5) for "
                           "maillog_file, and postlogd(8) (this page), master(8), syslogd(8).",
        "notes.txt": "Release 3.2.txt notes; see postlogd(8).",
    })
    assert "postconf(5)" in ann.profiles["postconf.5.html"].ids
    assert resolved(refs["postlogd.8.html"]) == {("postconf(5)", "postconf.5.html")}
    assert ("identifier", "master(8)", None) in refs["postlogd.8.html"]
    assert resolved(refs["notes.txt"]) == {("postlogd(8)", "postlogd.8.html")}
    assert not [i for i in ann.profiles["notes.txt"].ids if "(" in i]


def test_a_manual_page_s_name_in_mixed_case_keeps_its_case():
    # Tcl's manual: Load(3tcl) is the C function's page, load(3tcl) the command's (not indexed here); RegExp
    # and regexp likewise. Linux's headers are in capitals (STAT(2)) and say nothing of the name's case, and
    # hostname(7) cites ASCII(7), the page ascii.7.
    refs, ann = run({
        "Tcl_LoadFile.3tcl.txt": "Load(3tcl)\t\tTcl Library Procedures\t\tLoad(3tcl)\n\nNAME\nTcl_LoadFile - load",
        "regexp.3tcl.txt": "regexp(3tcl)\t\tTcl Built-In Commands\t\tregexp(3tcl)\n\nNAME\nregexp - match",
        "stat.2.txt": "STAT(2)\t\tLinux Programmer's Manual\t\tSTAT(2)\n\nNAME\nstat - file status",
        "ascii.7.txt": "NAME\nascii - ASCII character set encoded in octal, decimal, and hexadecimal",
        "file.3tcl.txt": "SEE ALSO\nload(3tcl), RegExp(3tcl), Tcl_LoadFile(3tcl), stat(2), ASCII(7)",
        "info.3tcl.txt": "SEE ALSO\nLoad(3tcl), regexp(3tcl)",
    })
    assert resolved(refs["file.3tcl.txt"]) == {("tcl_loadfile(3)", "Tcl_LoadFile.3tcl.txt"), ("stat(2)", "stat.2.txt"),
                                               ("ascii(7)", "ascii.7.txt")}
    assert {("identifier", "load(3)", None), ("identifier", "regexp(3)", None)} <= refs["file.3tcl.txt"]
    assert resolved(refs["info.3tcl.txt"]) == {("load(3)", "Tcl_LoadFile.3tcl.txt"), ("regexp(3)", "regexp.3tcl.txt")}


def test_a_manual_page_is_found_by_every_name_its_name_section_gives():
    # Debian links Tcl_Free.3tcl to Tcl_Alloc.3tcl and oo_objdefine.3tcl to oo_define.3tcl: the names before the
    # dash in NAME. A page of its own keeps its name (lstat(2) here), and a page's other names in its own text
    # are mentions of itself.
    refs, _ = run({
        "Tcl_Alloc.3tcl.txt": "Tcl_Alloc(3tcl)\t\tTcl Library Procedures\t\tTcl_Alloc(3tcl)\n\nNAME\n"
                              "       Tcl_Alloc, Tcl_Free, Tcl_Realloc,\n"
                              "       ckalloc, ckfree - allocate or free heap\n"
                              "       memory\n\nDESCRIPTION\nFree it with ckfree(3tcl).",
        "oo_define.3tcl.txt": "define(3tcl)\t\t\t\t  TclOO Commands\t\t\t     define(3tcl)\n\nNAME\n"
                              "       oo::define, oo::objdefine - define and configure classes and objects",
        "stat.2.txt": "STAT(2)\t\tLinux Programmer's Manual\t\tSTAT(2)\n\nNAME\n"
                      "       stat, fstat, lstat - get file status",
        "lstat.2.txt": "LSTAT(2)\t\tLinux Programmer's Manual\t\tLSTAT(2)\n\nNAME\n       lstat - status of a link",
        "file.3tcl.txt": "SEE ALSO\n       Tcl_Free(3tcl), ckalloc(3tcl), oo::define(3tcl), oo::objdefine(3tcl), "
                         "define(3tcl), fstat(2), lstat(2)",
    })
    assert resolved(refs["file.3tcl.txt"]) == {
        ("tcl_free(3)", "Tcl_Alloc.3tcl.txt"), ("ckalloc(3)", "Tcl_Alloc.3tcl.txt"),
        ("oo::define(3)", "oo_define.3tcl.txt"), ("oo::objdefine(3)", "oo_define.3tcl.txt"),
        ("define(3)", "oo_define.3tcl.txt"), ("fstat(2)", "stat.2.txt"), ("lstat(2)", "lstat.2.txt")}
    assert resolved(refs["Tcl_Alloc.3tcl.txt"]) == set()


def test_a_page_docutils_wrote_for_a_manual_section_is_that_manual_page():
    # libvirt's HTML manual pages come from rst2man sources: the title is the bare name, the volume a field under
    # it (read from a definition list; docutils' own HTML writer makes it a docinfo table row). A page without
    # the field, or whose title is not one name, is no manual page.
    refs, ann = run({
        "manpages/virsh.html": "# virsh\n\nmanagement user interface\n\nManual section:\n:   1\n\n"
                               "Manual group:\n:   Virtualization Support\n\n## SYNOPSIS\n\nvirsh [*OPTION*]...",
        "manpages/libvirtd.html": "# libvirtd\n\n| Manual section: | 8 |\n|---|---|\n\nSee virsh(1) and libvirtd(8).",
        "virtlogd.rst": "========\nvirtlogd\n========\n\n:Manual section: 8\n:Manual group: Virtualization Support",
        "uri.html": "# Connection URIs\n\nSee virsh(1), libvirtd(8), virtlogd(8) and virt-admin(1).",
        "kbase/secure.html": "# Secure usage of libvirt\n\nManual section:\n:   3\n\nSee secure(3).",
    })
    assert "virsh(1)" in ann.profiles["manpages/virsh.html"].ids
    assert resolved(refs["uri.html"]) == {("virsh(1)", "manpages/virsh.html"),
                                          ("libvirtd(8)", "manpages/libvirtd.html"), ("virtlogd(8)", "virtlogd.rst")}
    assert resolved(refs["manpages/libvirtd.html"]) == {("virsh(1)", "manpages/virsh.html")}   # never itself
    assert not [i for i in ann.profiles["kbase/secure.html"].ids if "(" in i]


def test_a_page_that_other_pages_links_give_a_manual_page_name_is_that_page():
    # NTPsec's HTML pages are its manual pages, named ntpd.html and ntp_conf.html, without a volume; its index
    # lists "[`ntp.conf(5)` - ntpd Configuration File](ntp_conf.html)", and 81 mentions of ntpd(8), ntp.conf(5)
    # and ntpq(1) were left unresolved (a new user's walkthrough, walk94). A page that declares the name itself
    # keeps it; links that give one name to two pages name neither; a link in a code block names nothing.
    refs, ann = run({
        "index.html": "# NTPsec\n\n- [`ntp.conf(5)` - ntpd Configuration File](ntp_conf.html)\n"
                      "- [`ntpd(8)` - Network Time Protocol (NTP) daemon](ntpd.html)\n- [ntpq(1)](ntpq.html)\n"
                      "- [`stat(2)`](stat.html)\n- [`cron(8)`](cron.html)\n\n```\n[`ls(1)`](ls.html)\n```",
        "ntp_conf.html": "# ntp.conf - Network Time Protocol (NTP) server configuration file\n\nRead by ntpd(8).",
        "ntpd.html": "# ntpd - Network Time Protocol (NTP) Daemon\n\nReads ntp.conf(5); see also ntpd(8).",
        "ntpq.html": "# ntpq - standard NTP query program\n\nQueries ntpd(8).",
        "stat.html": "# Status\n\ntext",
        "stat.2.txt": "STAT(2)\t\tLinux Programmer's Manual\t\tSTAT(2)\n\nNAME\n       stat - get file status",
        "cron.html": "# cron\n\ntext",
        "crontab.html": "# crontab\n\nSee [cron(8)](cron-old.html) and cron(8).",
        "cron-old.html": "# cron, the old one\n\ntext",
        "ls.html": "# ls\n\ntext",
        "rollover.html": "# Rollover\n\nntpd(8) reads ntp.conf(5) at start; ntpq(1), stat(2), cron(8) and ls(1).",
    })
    assert resolved(refs["rollover.html"]) == {("ntpd(8)", "ntpd.html"), ("ntp.conf(5)", "ntp_conf.html"),
                                               ("ntpq(1)", "ntpq.html"), ("stat(2)", "stat.2.txt")}
    assert resolved(refs["ntp_conf.html"]) == {("ntpd(8)", "ntpd.html")}
    assert resolved(refs["ntpd.html"]) == {("ntp.conf(5)", "ntp_conf.html")}   # its own name is itself
    assert ann.profiles["index.html"].named_links == {"ntp.conf(5)": "ntp_conf.html", "ntpd(8)": "ntpd.html",
                                                      "ntpq(1)": "ntpq.html", "stat(2)": "stat.html",
                                                      "cron(8)": "cron.html"}


def test_a_title_naming_a_manual_page_after_its_words_is_not_that_page():
    # Linux-PAM's Module Writers' Guide titles a section "5.2. Use of syslog(3)": the C library's syslog(3), which
    # every module page of the folder cites, resolved to that section (a new user's walkthrough, walk81). A page
    # titled by the name itself, numbered or as a manual page's header line, is that page.
    refs, ann = run({
        "html/mwg-see-programming-syslog.html": "## 5.2.\u00a0Use of syslog(3)\n\nErrors go to syslog(3).",
        "html/sag-pam_time.html": "## 6.30. pam_time - time controlled access\n\nMessages are logged with syslog(3)"
                                  " and described in pam_time.conf(5).",
        "man/pam_time.conf.html": "## 1. pam_time.conf(5)\n\nThe configuration file.",
        "man/tzfile.5.txt": "tzfile(5)\t\t\t    Linux Programmer's Manual\t\t\t\ttzfile(5)\n\nNAME\n       tzfile",
        "tz.txt": "Zones\n\nSee tzfile(5).",
    })
    assert resolved(refs["html/sag-pam_time.html"]) == {("pam_time.conf(5)", "man/pam_time.conf.html")}
    assert not [i for i in ann.profiles["html/mwg-see-programming-syslog.html"].ids if "(" in i]
    assert resolved(refs["tz.txt"]) == {("tzfile(5)", "man/tzfile.5.txt")}


def test_a_heading_defines_its_label_whatever_its_words_and_never_resolves_elsewhere():
    # texinfo's "## Appendix C The command-line editor" (R's manuals): marked as a heading, it is this manual's
    # Appendix C, though its words are not title case; another manual's Appendix C is not it.
    refs, ann = run({
        "R-intro.html": "- [Appendix C The command-line editor](#editor)\n\n"
                        "## Appendix C The command-line editor\n\nText.",
        "R-admin.html": "## Appendix C Platform notes\n\nText.",
    })
    assert "appendix c" in ann.profiles["R-intro.html"].labels
    assert ("label", "appendix c", None) in refs["R-intro.html"]
    assert not resolved(refs["R-intro.html"])


def test_a_web_address_names_the_one_page_of_its_file_name_holding_the_place_its_fragment_names():
    # R's manuals link each other by their CRAN addresses; the copy indexed is in manual/, not doc/manuals/.
    docs = {"manual/R-FAQ.html": ["See [Finding entry points](https://cran.r-project.org/doc/manuals/R-exts.html"
                                  "#Finding-entry-points) and [the appendix](https://cran.r-project.org/doc/manuals/"
                                  "R-exts.html#No-such-place), [news](https://example.org/R-exts.html), [the other "
                                  "manual](https://www.gnu.org/software/bison/manual/html_node/index.html#Top) and "
                                  "[its introduction](https://cran.r-project.org/doc/manuals/R-exts.html#Preface)."],
            "manual/R-exts.html": ["# Writing R Extensions\n\n## Preface\n\nThis manual.",
                                   "## Finding entry points\n\nUse the debugger."],
            "manual/index.html": ["# The R manuals\n\nRead them.", "## Licence\n\nGPL."],
            "old/R-exts.html": ["## Other\n\nOlder copy."]}
    chunks = {d: [(f"{d}#{i}", text) for i, text in enumerate(texts)] for d, texts in docs.items()}
    ann = annotate(chunks, {d: {"file_name": d.rsplit("/", 1)[-1]} for d in docs}, BUILTIN_FAMILIES, max_refs=50,
                   anchors={"manual/R-exts.html#1": ["Finding-entry-points"], "manual/index.html#0": ["Top"]})
    # The place held: that page, at that place. No place held, another site's file name alone, or a place in the
    # page's opening (its title, a texinfo manual's "Top", which every page of that name holds): no record.
    found = [(r["target"], r.get("chunk")) for r in ann.refs["manual/R-FAQ.html#0"]]
    assert found == [("manual/R-exts.html", "manual/R-exts.html#1")]


def test_a_numbered_comment_in_code_starts_no_section():
    # Python's profile docs: "   # 1. Apply computed bias ..." in an indented example made the page section 1, 2
    # and 3, and "section 3.13 of the Unicode standard" (stdtypes) a pointer to it.
    refs, ann = run({
        "profile.rst": "Calibration\n===========\n\n::\n\n   # 1. Apply computed bias to all instances.\n"
                       "   pr.bias = 1\n\n```\n# 2. Specify it in the constructor.\n```\n",
        "stdtypes.rst": "The casefolding algorithm is described in section 3.13 of the Unicode Standard; see "
                        "also section 2.",
        "leave.md": "# 4. Leave\n\nAnnual leave is 25 days.",
    })
    assert ann.profiles["profile.rst"].headings == []
    assert resolved(refs["stdtypes.rst"]) == set()
    assert ann.profiles["leave.md"].headings == ["section 4"]   # a heading, where headings are written


def test_sections_that_are_separate_files_resolve_through_their_titles():
    refs, ann = run({
        "07_leave.md": "# Section 7: Leave\nAnnual leave is 25 days. Overtime is in Section 8.3.",
        "08_overtime.md": "# Section 8: Overtime\nIntro.\n\n## 8.3 Approval\n"
                          "A manager approves. See Section 8.3 above.",
        "02_pay.md": "# Section 2: Pay\nSee Section 8.3, Section 7.2, Section 4 and Section 2.1.\n\n"
                     "## 2.1 Pay dates\nMonthly.",
        "contract.pdf": "SUPPLY CONTRACT\n1.1 Scope\nGoods. Fees are set in Section 1.5.\n2.1 Term\nOne year.",
        "api.md": "# API\n## 1.5 Errors\nCodes.",
        "backup-dump.html": "## 25.1. SQL Dump\nText.\n\n### 25.1.3. Restoring the Dump\nUse psql.",
        "backup.html": "## Chapter 25. Backup and Restore\nSee Section 25.1.3 and Chapter 21.",
        "client-auth.html": "## Chapter 21. Client Authentication\nText.",
    })
    assert resolved(refs["02_pay.md"]) == {("section 8.3", "08_overtime.md"), ("section 7.2", "07_leave.md")}
    assert ("section", "section 4", None) in refs["02_pay.md"]             # no file has it
    assert ("section", "section 2.1", None) in refs["02_pay.md"]           # its own section: internal
    assert resolved(refs["08_overtime.md"]) == set()                       # its own section 8.3
    assert resolved(refs["contract.pdf"]) == set()                         # its own numbering (1.1, 2.1)
    assert resolved(refs["backup.html"]) == {("section 25.1.3", "backup-dump.html"),
                                             ("chapter 21", "client-auth.html")}
    rec = next(r for r in ann.refs["07_leave.md#0"] if r["ref"] == "section 8.3")
    assert rec["how"] == "heading" and rec["chunk"] == "08_overtime.md#0"


def test_word_chapters_resolve_section_numbers_and_file_names_through_their_heading_styles(tmp_path,
                                                                                        bundled_embed_model):
    # A handbook kept in Word, a chapter per file, indexed as a user would: the reader makes "Heading 1" a heading,
    # so "Section 8.3" finds the chapter whose heading starts it; a file name names that file.
    import docx

    import ragplugins_crossref.plugin as plugin
    from ragplugins.testing import make_rag
    from ragplugins_crossref.resolve import REFS_KEY, load_refs

    def chapter(name: str, heading: str, body: str, sub: str = "") -> None:
        document = docx.Document()
        document.add_heading(heading, 1)
        document.add_paragraph(body)
        if sub:
            document.add_heading(sub, 2)
            document.add_paragraph("A manager approves overtime in advance.")
        document.save(str(tmp_path / "docs" / name))

    (tmp_path / "docs").mkdir()
    chapter("07_leave.docx", "Section 7: Leave", "Annual leave is 25 days. Overtime is in Section 8.3.")
    chapter("08_overtime.docx", "Section 8: Working time", "Core hours run from ten to four.", "8.3 Overtime")
    chapter("09_pay.docx", "Section 9: Pay", "Pay dates are in the pay calendar; 07_leave.docx says how to book.")
    rp = make_rag([plugin], {"crossref": {}}, embed_model=bundled_embed_model, persist_dir=tmp_path / "idx")
    rp.index_paths([tmp_path / "docs"])
    refs: dict[str, set] = {}
    for node in rp.context().all_nodes():
        refs.setdefault(node.ref_doc_id, set()).update(
            (r["ref"], r["target"]) for r in load_refs(node.metadata.get(REFS_KEY)) if r["target"])
    assert refs["07_leave.docx"] == {("section 8.3", "08_overtime.docx")}
    assert refs["09_pay.docx"] == {("07_leave.docx", "07_leave.docx")}


def test_markdown_reference_links_resolve_through_the_pages_link_definitions():
    refs, _ = run({
        "api/stream.md": (
            "# Stream\n\nStreams are instances of [`EventEmitter`][]; see [TCP sockets][net socket], "
            "[the `Readable` class][], [a reader][Unknown] and [Node.js][].\n\n"
            "[`EventEmitter`]: events.md#class-eventemitter\n"
            "[NET  Socket]: <net.md#class-netsocket>\n"
            "[the `readable` class]: #class-streamreadable\n"
            "[Node.js]: https://nodejs.org/\n"),
        "api/events.md": "# Events\n\ntext",
        "api/net.md": "# Net\n\ntext",
    })
    # Full and collapsed forms; labels match without regard to case or runs of spaces; the angle brackets
    # of a destination are not part of it.
    citations = {(ref, target) for kind, ref, target in refs["api/stream.md"] if kind == "citation" and target}
    assert citations == {("`eventemitter`", "api/events.md"), ("net socket", "api/net.md")}
    # A link to a place in the same page or to another site names no other document; an undefined label is
    # not a reference.
    assert ("citation", "the `readable` class", None) in refs["api/stream.md"]
    assert not any(ref == "unknown" for _, ref, _ in refs["api/stream.md"])


def test_restructuredtext_references_resolve_through_the_files_own_targets():
    # docutils' documentation: `Name`_ and name_ in the prose, the targets at the file's end (another chunk),
    # naming the rendered page of another source, one with its path on the next line.
    chunks = {
        "user/tools.txt": [
            ("user/tools.txt#0", "Tools\n=====\n\nSettings are read from `Docutils\nConfiguration`_ files; "
                                 'the html5_ writer, the `"sectnum" directive`_, `the demo <rst/demo.html>`_, '
                                 "Python_ and the local_ section. A ``literal``_ and :ref:`label` are none.\n"),
            ("user/tools.txt#1", ".. _Docutils Configuration: config.html\n"
                                 ".. _html5: html.html#html5-polyglot\n"
                                 ".. _`\"sectnum\" directive`:\n   ../ref/rst/directives.html#sectnum\n"
                                 ".. _Python: https://www.python.org/\n"
                                 ".. _local:\n\nLocal\n-----\n")],
        "user/config.txt": [("user/config.txt#0", "Docutils Configuration\n======================\n\ntext")],
        "user/html.txt": [("user/html.txt#0", "HTML writers\n============\n\nintro\n"),
                          ("user/html.txt#1", "html5_polyglot\n--------------\n\nThe HTML5 writer.\n")],
        "user/rst/demo.txt": [("user/rst/demo.txt#0", "Demo\n====\n\ntext")],
        "ref/rst/directives.txt": [("ref/rst/directives.txt#0", "Directives\n==========\n\nintro\n"),
                                   ("ref/rst/directives.txt#1",
                                    "Section Numbering\n=================\n\n:Directive Type: \"sectnum\"\n")],
    }
    ann = annotate(chunks, {d: {"file_name": d.rsplit("/", 1)[-1]} for d in chunks}, BUILTIN_FAMILIES, max_refs=50)
    got = {(r["ref"], r["target"], r.get("chunk")) for r in ann.refs["user/tools.txt#0"] if r["target"]}
    assert got == {("docutils configuration", "user/config.txt", None),
                   ("html5", "user/html.txt", "user/html.txt#1"),          # the fragment names its heading's chunk
                   ('"sectnum" directive', "ref/rst/directives.txt", None),
                   ("rst/demo.html", "user/rst/demo.txt", None)}
    # Another site names no document here; a label of this file (local_) and a literal are no reference at all
    # (the role is Sphinx's family's); the targets' own lines point nowhere.
    assert not any(r["target"] for r in ann.refs["user/tools.txt#1"])
    assert {r["ref"] for r in ann.refs["user/tools.txt#0"] if not r["target"]} == {"python", "ref:label"}


def test_restructuredtext_anonymous_references_chained_targets_and_the_project_s_web_copy():
    # docutils' demo and directives pages: anonymous references take the targets after them in order, a target
    # chained to the next one takes its path, and an address of the project's web copy names the indexed source
    # whose folders end its path (a page at the folder's top, or another site's, names nothing).
    docs = {
        "user/rst/demo.txt": (
            "Meta\n````\n\nThe `\u201cmeta\u201d directive`__ is used in HTML META__ tags. See\n"
            "https://docutils.sourceforge.io/docs/ref/rst/roles.html for roles and the HTML4_ writer.\n\n"
            "__ https://docutils.sourceforge.io/docs/ref/rst/directives.html#metadata\n"
            "__ https://developer.mozilla.org/en-US/docs/Web/HTML/Viewport_meta_tag\n"
            ".. _HTML4:\n.. _html4 writer: ../html.html#html4css1\n\n"
            "A lone__ reference whose target this text does not hold, and https://example.org/index.html.\n"),
        "ref/rst/directives.txt": "Directives\n==========\n\ntext",
        "ref/rst/roles.txt": "Roles\n=====\n\ntext",
        "user/html.txt": "HTML writers\n============\n\ntext",
        "index.txt": "Docutils\n========\n\ntext",
    }
    refs, ann = run(docs)
    by_text = {r["text"]: r["target"] for r in ann.refs["user/rst/demo.txt#0"]}
    assert by_text["`\u201cmeta\u201d directive`__"] == "ref/rst/directives.txt"
    assert by_text["https://docutils.sourceforge.io/docs/ref/rst/roles.html"] == "ref/rst/roles.txt"
    assert by_text["HTML4_"] == "user/html.txt"
    # META__ goes to another site; the target lines define, they refer to nothing; a lone anonymous reference's
    # target is not guessed; index.html at the site's top is no more this folder's index than any other's.
    assert set(by_text) == {"`\u201cmeta\u201d directive`__", "https://docutils.sourceforge.io/docs/ref/rst/roles.html",
                            "HTML4_"}


def test_link_words_with_brackets_and_file_names_written_with_their_folders():
    # Django's pages: a link whose words hold brackets is still the link (not the bare file name "settings.html",
    # which two folders have); a template written with its folders names no page of other folders, while a path
    # from the project's top names the indexed file whose folders it ends with.
    refs, _ = run({
        "ref/databases.html": "Set [`TEST['TEMPLATE']`](settings.html#std-setting-TEST_TEMPLATE) and read "
                              "[[source]](../_modules/django/db/base.html#X). `{% extends \"admin/base.html\" %}`, "
                              "see docs/topics/checks.html and path/to/template/file.html.",
        "ref/settings.html": "# Settings\ntext",
        "topics/settings.html": "# Django settings\ntext",
        "ref/class-based-views/base.html": "# Base views\ntext",
        "topics/checks.html": "# System check framework\ntext",
        "ref/files/file.html": "# The File object\ntext",
    })
    assert resolved(refs["ref/databases.html"]) == {("settings.html", "ref/settings.html"),
                                                    ("checks.html", "topics/checks.html")}


def test_a_tex_source_names_the_document_typeset_from_it():
    # LaTeX's guides cite each other by their sources; the PDFs are what was indexed. Other file names do not go
    # by their stems: "index.html" a web server serves is no index.rst.
    refs, _ = run({
        "modguide.pdf": "See the file cfgguide.tex for how to achieve this; a server sends index.html.",
        "cfgguide.pdf": "Configuration options for LaTeX\ntext",
        "index.rst": "Contents\n========\n",
    })
    assert refs["modguide.pdf"] == {("document", "cfgguide tex", "cfgguide.pdf"), ("document", "index html", None)}


def test_a_package_s_notes_named_without_an_extension_are_found_where_the_words_send_the_reader():
    # Autoconf's folder: AUTHORS.gz and THANKS point at each other. A file the sentence is about is no pointer
    # ("generating the ChangeLog file", the GNU Coding Standards on every package's change log), and a file the
    # index does not hold ("the WAL file": SQLite's log, not wal.html) names nothing.
    refs, _ = run({
        "AUTHORS.gz": "Authors of GNU Autoconf.\nMany others contributed, as listed in the file THANKS.",
        "THANKS": "Thanks to many people.\nAlso see the AUTHORS file for the list of authors.",
        "ChangeLog.gz": "2022-01-01  A. Person\n\tUpdate the manual.",
        "wal.html": "# Write-Ahead Logging\n\nThe WAL file grows.",
        "standards.html": "# GNU Coding Standards\n\nThe method of generating the `ChangeLog` file from the VCS "
                          "history; see the file NEWS. Read the file `THANKS' too. A checkpoint resets the WAL file.",
    })
    assert refs["AUTHORS.gz"] == {("document", "thanks", "THANKS")}
    assert refs["THANKS"] == {("document", "authors", "AUTHORS.gz")}
    assert refs["standards.html"] == {("document", "thanks", "THANKS")}


def test_a_section_s_title_may_stand_between_it_and_the_file_it_belongs_to():
    # LaTeX's Cyrillic guide: "Section 6.4 Naming conventions of the file fntguide.tex" is fntguide's 6.4, which
    # the guide itself does not have. A sentence that goes on after the number names no owner.
    refs, _ = run({
        "fntguide.pdf": "LaTeX2e font selection\n\n6.4 Naming conventions\nFont names are short.",
        "cyrguide.pdf": "Cyrillic languages support in LaTeX\n\n6 Fonts\nPlease consult Section 6.4 Naming "
                        "conventions of the file fntguide.tex for details. Section 6 Fonts lists the names.",
    })
    assert ("section", "section 6.4", "fntguide.pdf") in refs["cyrguide.pdf"]
    assert ("section", "section 6", "fntguide.pdf") not in refs["cyrguide.pdf"]


def test_bracket_keys_through_a_wrapped_reference_list():
    refs, _ = run({
        "rfc2119.txt": "RFC 2119: Key words for use in RFCs to Indicate Requirement Levels\ntext",
        "rfc9000.txt": "RFC 9000: QUIC: A UDP-Based Multiplexed and Secure Transport\ntext",
        "rfc9001.txt": (
            "RFC 9001: Using TLS to Secure QUIC\n\nThe key words are used as in [RFC2119]. Transport is\n"
            "described in [QUIC-TRANSPORT] and [TLS13].\n\n9.  References\n\n"
            "   [QUIC-TRANSPORT]\n              Iyengar, J., Ed. and M. Thomson, Ed., \"QUIC: A UDP-Based\n"
            "              Multiplexed and Secure Transport\", RFC 9000,\n              May 2021.\n\n"
            "   [RFC2119]  Bradner, S., \"Key words for use in RFCs to Indicate\n"
            "              Requirement Levels\", BCP 14, RFC 2119,\n              March 1997.\n\n"
            "   [TLS13]    Rescorla, E., \"The Transport Layer Security (TLS) Protocol\n"
            "              Version 1.3\", RFC 8446, August 2018.\n"),
    })
    got = resolved(refs["rfc9001.txt"])
    assert ("quic-transport", "rfc9000.txt") in got and ("rfc2119", "rfc2119.txt") in got
    assert ("citation", "tls13", None) in refs["rfc9001.txt"]             # RFC 8446 is not indexed


def test_a_file_s_name_written_with_its_underscores_names_it():
    # Postfix's READMEs cite each other by file name; an identifier holding a name is still no mention of it.
    refs, _ = run({
        "SMTPD_PROXY_README": "Postfix before-queue Content Filter\n\nFor details see the FILTER_README document "
                              "and POST_FILTER_README_X.",
        "FILTER_README": "Postfix After-Queue Content Filter\n\ntext",
        "git-filter-branch.txt": "git-filter-branch(1)\n\nThe environment variable GIT_COMMIT holds the commit id.",
        "git-commit.txt": "git-commit(1)\n\ntext",
        # bash's examples: a file named Bash_aliases, and the shell variable BASH_ALIASES in the manual.
        "examples/Bash_aliases": "# Some useful aliases.\nalias texclean='rm -f *.aux'",
        "bashref.html": "# Bash Variables\n\nBASH_ALIASES is an associative array variable.",
    })
    assert resolved(refs["SMTPD_PROXY_README"]) == {("filter readme", "FILTER_README")}
    assert not resolved(refs["git-filter-branch.txt"])   # a file named with "-" is not written with "_"
    # Joined by "_", a name is the file's only as the file writes it, case and all.
    assert not refs["bashref.html"]


def test_a_file_name_that_is_also_a_page_s_name_without_its_suffix_names_neither():
    # lxml's Sphinx reference has the package's page lxml.html and the module lxml.html's page lxml.html.html;
    # its guides write "lxml.html" for the module (a new user's set: 37 of 160 resolved references).
    docs = {"apidoc/lxml.html": "# lxml package\n\nSubmodules.",
            "apidoc/lxml.html.html": "# lxml.html package\n\nThe HTML tools.",
            "apidoc/lxml.etree.html": "# lxml.etree module\n\nThe tree.",
            "performance.html": "# Benchmarks\n\nParsing with lxml.html is fast; see lxml.etree.html for the API."}
    refs, _ = run(docs)
    got = resolved(refs["performance.html"])
    assert not any(target.startswith("apidoc/lxml.html") for _, target in got)
    # A name of one page only still names it.
    assert ("lxml.etree.html", "apidoc/lxml.etree.html") in got
    del docs["apidoc/lxml.html.html"]
    refs, _ = run(docs)
    assert ("lxml.html", "apidoc/lxml.html") in resolved(refs["performance.html"])


def test_a_link_reaches_a_page_debian_installed_compressed():
    # The Securing Debian Manual links "changelog.html", which Debian installs as changelog.html.gz.
    refs, _ = run({"ch01s03.html": "# 1.3. Feedback\n\nSee [where to get the manual](changelog.html#where).",
                   "changelog.html.gz": "# 1.2. Where to get the manual\n\ntext",
                   "intro.html": "# 1. Introduction\n\nSee [feedback](ch01s03.html)."})
    assert resolved(refs["ch01s03.html"]) == {("changelog.html", "changelog.html.gz")}
    # Both indexed: the link names the page it names.
    refs, _ = run({"ch01s03.html": "# 1.3. Feedback\n\nSee [where to get the manual](changelog.html#where).",
                   "changelog.html.gz": "# An older copy\n\ntext", "changelog.html": "# 1.2. Where\n\ntext"})
    assert resolved(refs["ch01s03.html"]) == {("changelog.html", "changelog.html")}


def test_a_footnote_s_mark_is_no_citation():
    # DocBook's text marks a footnote "^[1]" (X.Org's font service protocol): resolved through the reference
    # list further on, the trademark footnote's chunk cited the protocol specification listed there as [1].
    chunks = {"fsproto.txt": [("fsproto.txt#0", "The X Font Service Protocol\n\nA font server for the X Window "
                                                "System ^[1] is described.\n\n^[1] X Window System is a trademark."),
                              ("fsproto.txt#1", "References\n\n[1]  Scheifler, R., \"X Window System Protocol\", "
                                                "X Consortium Standard.\n")],
              "x11protocol.txt": [("x11protocol.txt#0", "X Window System Protocol\n\ntext")]}
    ann = annotate(chunks, {d: {"file_name": d} for d in chunks}, BUILTIN_FAMILIES, max_refs=50)
    assert not [r for r in ann.refs["fsproto.txt#0"] if r["kind"] == "citation"]
    assert [r["target"] for r in ann.refs["fsproto.txt#1"] if r["kind"] == "citation"] == ["x11protocol.txt"]


def test_a_footnote_s_mark_at_a_line_s_start_is_no_entry_and_an_entry_may_start_on_the_next_line():
    # DocBook's HTML as read (a new user's Debian New Maintainers' Guide): the wrapped source puts a body mark at a
    # line's start ("files" over "[57] are"), which was taken for footnote 57's text; a footnote whose text is a
    # paragraph of its own reads "[87]" over it, and was missed.
    page = ("These scripts are the package's `postrm` and `prerm` files\n[57] are run by dpkg; see [1] and [87].\n\n"
            "Notes\n\n[57] See [Section 4.1](dreq.html#control) for the control file.\n\n"
            "[87]\nAlternatively read [the upload page](upload.html).\n\n"
            "[1] Another footnote, see\n[the start](start.html).\n\n"
            # AsciiDoc's admonition over its paragraph: "[NOTE]" is a label, its paragraph no entry of a list.
            "[NOTE] Uploads are signed; see\n[the upload page](upload.html) for the keys.")
    refs, _ = run({"dother.html": page, "dreq.html": "# 4. Required files\n\ntext",
                   "upload.html": "# 9. Uploading\n\ntext", "start.html": "# 1. Getting started\n\ntext"})
    cited = {ref: target for kind, ref, target in refs["dother.html"] if kind == "citation"}
    resolved_ = {key: target for key, target in cited.items() if target}
    assert resolved_ == {"57": "dreq.html", "87": "upload.html", "1": "start.html"}, cited   # [1]: on its next line


def test_an_array_s_subscript_is_no_citation():
    # The zsh FAQ: its one footnote "[1]" made every "array[1]" and "$argv[1]" of the page a citation of it.
    chunks = {"FAQ02.html": [("FAQ02.html#0", "In zsh `array[0]` refers to `array[1]`, and `$a[1] == ${a[1]}`."),
                             ("FAQ02.html#1", "Globbing as ksh does it [1].\n\n[1] See question 3.27 in "
                                              "[FAQ03](FAQ03.html).")],
              "FAQ03.html": [("FAQ03.html#0", "3.27 Why does my array start at one?")]}
    ann = annotate(chunks, {d: {"file_name": d} for d in chunks}, BUILTIN_FAMILIES, max_refs=50)
    assert not [r for r in ann.refs["FAQ02.html#0"] if r["kind"] == "citation"]
    assert [r["target"] for r in ann.refs["FAQ02.html#1"] if r["kind"] == "citation"] == ["FAQ03.html"]


def test_a_document_never_resolves_a_mention_of_itself_elsewhere():
    refs, _ = run({
        "rfc9000.txt": "QUIC Transport Protocol\n\nThis document, RFC 9000, defines QUIC. See also RFC 9001.",
        "rfc9001.txt": "# Using TLS to Secure QUIC (RFC 9001, which updates RFC 9000)\ntext",
    })
    assert resolved(refs["rfc9000.txt"]) == {("rfc9001", "rfc9001.txt")}



def test_a_page_naming_the_work_it_is_part_of_names_itself():
    # The Guide for Debian Maintainers (DocBook, one page per chapter): its chapters call the guide by its title, the
    # title of the folder's front page; that is the chapter's own work, not a page to go to. A page outside the
    # folder that names the guide names it.
    refs, _ = run({
        "guide/index.en.html": "# Guide for Debian Maintainers\n\nContents.",
        "guide/ch02.en.html": "# Chapter 2. Overview\n\nThis updated \u201cGuide for Debian Maintainers\u201d "
                              "replaces the old one.",
        "guide/part/ch09.en.html": "# Chapter 9. More\n\nAs the Guide for Debian Maintainers says, build.",
        "policy/ch-source.html": "# Source packages\n\nThe Guide for Debian Maintainers shows examples.",
    })
    assert resolved(refs["guide/ch02.en.html"]) == set()
    assert resolved(refs["guide/part/ch09.en.html"]) == set()
    assert resolved(refs["policy/ch-source.html"]) == {("guide for debian maintainers", "guide/index.en.html")}

def test_cmake_pages_own_words_and_encoded_links():
    # CMake's manual: a tutorial's links are percent-encoded; a code example's "POST_BUILD\n COMMAND" is no
    # mention of the page titled build_command; "See CMake Policy [CMP0036](...)" names the linked policy,
    # not the page titled cmake_policy; build_command's "the `PROJECT_NAME` option" is its own signature's,
    # though ctest_build defines an option of that name.
    refs, ann = run({
        "tutorial/index.html": "# Tutorial\n[Step 2: Adding a Library](Adding%20a%20Library.html#exercise-1)",
        "tutorial/Adding a Library.html": "# Step 2: Adding a Library\n\n## Exercise 1\ntext",
        "command/add_custom_command.html": "# add_custom_command\n\n```\nadd_custom_command(TARGET myExe POST_BUILD"
                                           "\n  COMMAND someHasher)\n```\nSee the Build Command page.",
        "command/build_command.html": "# build_command\n\n```\nbuild_command(<variable>\n"
                                      "              [PROJECT_NAME <projname>] # legacy\n             )\n```\n\n"
                                      "Their implementation of the `PROJECT_NAME` option had no useful effects.",
        "command/build_name.html": "# build_name\n\nDisallowed since version 3.0. See CMake Policy "
                                   "[`CMP0036`](../policy/CMP0036.html#policy:CMP0036).",
        "command/cmake_policy.html": "# cmake_policy\n\nManage CMake Policy settings.",
        "command/ctest_build.html": "# ctest_build\n\n`PROJECT_NAME <project-name>`\n:   Ignored.\n\n"
                                    "See the `PROJECT_NAME` option.",
        "command/ctest_test.html": "# ctest_test\n\nAs the `PROJECT_NAME` option of ctest_build.",
    })
    assert resolved(refs["tutorial/index.html"]) == {("Adding a Library.html", "tutorial/Adding a Library.html")}
    assert [r["text"] for r in ann.refs["command/add_custom_command.html#0"] if r["target"]] == ["Build Command"]
    assert resolved(refs["command/build_command.html"]) == set()
    assert resolved(refs["command/build_name.html"]) == set()
    assert resolved(refs["command/ctest_test.html"]) == {("term:PROJECT_NAME", "command/ctest_build.html")}


def test_ffmpeg_pages_own_command_line_options_are_their_own():
    # FFmpeg's manuals: ffprobe's "the `print_format` option" is its own "-of, -print_format" option (a
    # definition-list term written with dashes), not the loudnorm filter's `print_format` on the filters page;
    # on a third page the name is now two pages' (no guess), and a name only the filters page defines is its.
    refs, _ = run({
        "ffprobe.html": "# ffprobe Documentation\n\nThe output is printed by the writer, which is specified by the "
                        "`print_format` option.\n\n`-of, -print_format writer_name[=writer_options]`\n:   Set the "
                        "output printing format.\n",
        "ffmpeg-filters.html": "# FFmpeg Filters Documentation\n\n## loudnorm\n\n`print_format`\n:   Set print "
                               "format for stats.\n\n`dual_mono`\n:   Treat mono input files as dual-mono.\n",
        "ffmpeg.html": "# ffmpeg Documentation\n\nloudnorm's statistics follow the `print_format` option; see "
                       "the `dual_mono` option.\n",
    })
    assert resolved(refs["ffprobe.html"]) == set()
    assert resolved(refs["ffmpeg.html"]) == {("term:dual_mono", "ffmpeg-filters.html")}


def test_a_file_name_in_quotes_of_its_own_is_a_value_in_code():
    # Django's pages: `{% extends "base.html" %}` and `template_name = 'index.html'` name the reader's templates,
    # not Django's pages base.html and index.html; the same names in prose still point at them.
    refs, _ = run({
        "intro/overview.html": "# Overview\n\n```\n{% extends \"base.html\" %}\ntemplate_name = 'index.html'\n```\n\n"
                               "The generic views are in base.html.\n",
        "ref/class-based-views/base.html": "# Base views\n\ntext\n",
        "ref/contrib/admin/index.html": "# The Django admin site\n\ntext\n",
    })
    assert resolved(refs["intro/overview.html"]) == {("base.html", "ref/class-based-views/base.html")}
    assert len([r for r in refs["intro/overview.html"] if r[0] == "document"]) == 1


def test_a_source_file_s_path_names_the_page_rendered_from_it():
    # The kernel's rendered admin guide: "Documentation/admin-guide/cgroup-v1/cpusets.rst" is the page built from
    # that source; an old name no page has ("binfmt_misc.txt", now binfmt-misc) names nothing, nor does a page's
    # file name with another extension than a source's ("index.json").
    refs, _ = run({
        "admin-guide/mm/numa_memory_policy.html": "# NUMA Memory Policy\n\nSee "
                                                  "Documentation/admin-guide/cgroup-v1/cpusets.rst for cpusets; "
                                                  "binfmt_misc.txt and index.json too.\n",
        "admin-guide/cgroup-v1/cpusets.html": "# CPUSETS\n\ntext\n",
        "admin-guide/binfmt-misc.html": "# Kernel Support for miscellaneous Binary Formats\n\ntext\n",
        "admin-guide/index.html": "# The Linux kernel user's and administrator's guide\n\ntext\n",
    })
    assert resolved(refs["admin-guide/mm/numa_memory_policy.html"]) == {
        ("cpusets rst", "admin-guide/cgroup-v1/cpusets.html")}


def test_a_source_file_s_name_names_no_source_of_another_format():
    # Docker's Dockerfile reference: 'ADD test.txt relativeDir/' adds a file of the example to the image; the
    # contributors' guide test.md is another source, not a page rendered from test.txt. "os.path.rst" still names
    # the copy of that source that Sphinx ships (os.path.rst.txt).
    refs, _ = run({
        "reference/builder.md": "# Dockerfile reference\n\nThe example adds test.txt to the image; see "
                                "os.path.rst for paths.\n",
        "contributing/test.md": "# Run tests\n\ntext\n",
        "library/os.path.rst.txt": "os.path --- Common pathname manipulations\n=====\n\ntext\n",
    })
    assert resolved(refs["reference/builder.md"]) == {("os path rst", "library/os.path.rst.txt")}


def test_a_name_alone_on_its_line_is_a_banner_not_a_reference():
    # The Haskell 98 Report's pages (haskell98-report) open and close with the report's name in italics; its
    # bibliography page has no heading, so that line titles it: 57 of the pages' banners resolved to it. A
    # sentence or a list's item naming it still points at it.
    refs, _ = run({
        "haskell.html": "*The Haskell 98 Report*\n\n---\n\n[1]\nJ. Backus. Can programming be liberated?\n",
        "decls.html": "*The Haskell 98 Report*\n\n---\n\n## 4 Declarations\n\nText.\n\n*The Haskell 98 Report*\n",
        "exps.html": "*THE HASKELL 98 REPORT*\n\n## 3 Expressions\n\nAs The Haskell 98 Report lists.\n",
        "intro.html": "# 1 Introduction\n\nRead next:\n- The Haskell 98 Report\n",
    })
    assert resolved(refs["decls.html"]) == set()
    assert resolved(refs["exps.html"]) == resolved(refs["intro.html"]) == {("the haskell 98 report", "haskell.html")}


def test_haproxy_manuals_headings_with_anchors_paths_on_a_server_and_aliases_in_lower_case():
    # HAProxy's manuals: a heading's number links to its anchor, a numbered list stands before the heading of
    # the same number, a log example requests "/index.html", and the manuals call each other "the management
    # guide" (all are titled "HAProxy": the user declares the alias).
    chunks = {
        "html/configuration.html": [
            ("c#0", "# HAProxy\n\n1. Any active, non-backup server is used.\n2. If the option is set, all are.\n"),
            ("c#1", "# [2.](#2) Configuring HAProxy\n\nText.\n\n## [2.1.](#2.1) Configuration file format\n\n"
                    "## [9.3.](#9.3) Local statistics\n"),
            ("c#2", "```\n{} \"GET /index.html HTTP/1.1\"\n```\nSee https://www.haproxy.org/download/index.html, "
                    "the management guide and section 9.3 above. Please consult section 9.3 \"Unix Socket commands\" "
                    "of Management Guide."),
        ],
        "html/management.html": [("m#0", "# HAProxy\n\n## [9.3.](#9.3) Unix Socket commands\n\nText.")],
        "lua/index.html": [("l#0", "# How Lua runs in HAProxy\n\nText.")],
    }
    metadata = {d: {"file_name": d.rsplit("/", 1)[-1]} for d in chunks}
    ann = annotate(chunks, metadata, BUILTIN_FAMILIES, max_refs=50,
                   aliases={"html/management.html": ["management guide"]})
    prof = ann.profiles["html/configuration.html"]
    assert prof.sections["section 2"] == "c#1" and prof.sections["section 2.1"] == "c#1"
    assert {"section 2", "section 2.1"} <= set(prof.headings)
    assert ann.profiles["html/management.html"].sections == {"section 9.3": "m#0"}
    found = [(r["text"], r["target"], r.get("chunk")) for r in ann.refs["c#2"] if r["target"]]
    assert found == [("management guide", "html/management.html", None),   # its own 9.3 above is internal
                     ("section 9.3", "html/management.html", "m#0"), ("Management Guide", "html/management.html", None)]
    # Without the alias (a new user's walkthrough, walk80) the Management Guide's 9.3 is no document's: it was taken
    # for the configuration manual's own 9.3. A section of the work the page is titled by is its own.
    chunks["html/management.html"] = [("m#0", "# HAProxy Management Guide\n\n## [9.3.](#9.3) Unix Socket commands\n\n"
                                              "Text.\n\n## [9.4.](#9.4) Master CLI\n\nAs section 9.3 of the "
                                              "Management Guide says.")]
    chunks["html/configuration.html"].append(("c#3", "Please consult section 9.3 \"Unix Socket commands\" of "
                                                     "Management Guide."))
    ann = annotate(chunks, metadata, BUILTIN_FAMILIES, max_refs=50)
    sections = [(r["text"], r["target"], r["how"], r.get("chunk")) for r in ann.refs["c#3"] if r["kind"] == "section"]
    assert sections == [("section 9.3", None, None, None)], sections
    assert [(r["how"], r.get("chunk")) for r in ann.refs["c#2"] if r["kind"] == "section"] == [("internal", "c#1")]
    assert [(r["target"], r["how"], r.get("chunk")) for r in ann.refs["m#0"] if r["kind"] == "section"] == [
        (None, "internal", "m#0")]


def test_a_word_manuals_italic_paths_longer_file_names_and_linked_contents_heading_name_nothing():
    # A new user's Debian Live manual saved as Word: its first heading is a contents entry linking to a bookmark, a
    # path on the web server is set in italics, and a template's file name holds another file's name.
    refs, ann = run({
        "live-manual.docx": "# [About](#anchor-1)\n\nAdd a file as *\"/var/www/index.html\"* or "
                            "*/var/www/index.html* to the image; translate **index.html.in.pot** first. "
                            "The start page is index.html.",
        "index.html": "# Welcome\n\ntext",
    })
    assert ann.profiles["live-manual.docx"].titles == ["About"]
    # Only the bare mention is the indexed page; the paths on a server and the template's name are not.
    assert [r["text"] for r in ann.refs["live-manual.docx#0"] if r["target"]] == ["index.html"]


def test_zsh_navigation_links_are_no_references():
    # zsh's FAQ: "[Next Chapter](FAQ02.html)" and texinfo's "[ [Up](...) ]" buttons only move the reader.
    refs, _ = run({
        "FAQ01.html": "- [Table of Contents](FAQ.html)\n- [Next Chapter](FAQ02.html)\n\n"
                      "# Chapter 1: Introducing zsh\n\n"
                      "| [ [<<](FAQ.html) ] | [ [Up](FAQ.html) ] | [ [>](FAQ02.html) ] |\n\n"
                      "For the mailing lists see [question 6.2](FAQ06.html#l62).",
        "FAQ.html": "# Z-Shell Frequently-Asked Questions\ntext",
        "FAQ02.html": "# Chapter 2: How does zsh differ from...?\ntext",
        "FAQ06.html": "# Chapter 6: The future of zsh\ntext",
        "vdbe.html": "# The VDBE\n\nThe [Next](opcode.html#Next) opcode advances [ [Up](FAQ.html) ].",
        "opcode.html": "# The SQLite Bytecode Engine\ntext",
    })
    assert resolved(refs["FAQ01.html"]) == {("FAQ06.html", "FAQ06.html")}
    assert resolved(refs["vdbe.html"]) == {("opcode.html", "opcode.html")}   # a word in prose, not a button


def test_a_heading_that_links_a_whole_page_names_the_page_its_section_is_about():
    # npm's scripts page heads each command's section with a link to that command's page; the heading's link
    # back to its line in the contents has a place (gettext's, above), this one a page.
    refs, _ = run({
        "using-npm/scripts.md": "# scripts\n\n### Life Cycle Operation Order\n\n#### [`npm ci`](/commands/npm-ci)\n\n"
                                "* `preinstall`\n* `install`\n",
        "commands/npm-ci.md": "# npm-ci\n\nClean install a project",
    })
    assert {target for _, target in resolved(refs["using-npm/scripts.md"])} == {"commands/npm-ci.md"}


def test_gettext_headings_linking_back_to_the_contents_and_bold_manual_page_names():
    # texi2html links every heading back to its line in the manual's contents; the hop followed 6 of 12 such
    # links on gettext's manual. groff's HTML sets SEE ALSO names in bold and makes NAME a heading.
    refs, _ = run({
        "gettext_10.html": "## [10.1 Invoking the `msgfmt` Program](gettext_toc.html#TOC167)\n\n"
                           "The output is a binary catalog; see [Files](gettext_11.html#SEC197).\n\n"
                           "### **[10.1.1 Input file location](gettext_toc.html#TOC168)**\n\ntext",
        "gettext_toc.html": "# GNU gettext utilities\n\n- [10.1 Invoking the msgfmt Program](gettext_10.html#SEC173)",
        "gettext_11.html": "# 11. The Programmer's View\ntext",
        "bindtextdomain.3.html": "# BINDTEXTDOMAIN\n\n## SEE ALSO\n\n**gettext**(3), **dcgettext**(3), "
                                 "*textdomain*(3), **realpath**(3), and the *msgfmt(1)* page",
        "msgfmt.1.html": "# MSGFMT\n\n## NAME\n\nmsgfmt - compile message catalog to binary format",
        "gettext.3.html": "# GETTEXT\n\n## NAME\n\ngettext,\ndgettext, dcgettext - translate message\n\n"
                          "## SYNOPSIS\n\ntext",
        "textdomain.3.html": "# TEXTDOMAIN\n\n## NAME\n\ntextdomain - set domain for future gettext() calls",
    })
    assert resolved(refs["gettext_10.html"]) == {("gettext_11.html", "gettext_11.html")}
    assert resolved(refs["gettext_toc.html"]) == {("gettext_10.html", "gettext_10.html")}   # a list, not a heading
    assert {target for _, target in resolved(refs["bindtextdomain.3.html"])} == {"gettext.3.html",
                                                                                "textdomain.3.html", "msgfmt.1.html"}
    # gettext, dcgettext (its NAME section), textdomain, msgfmt
    assert len(resolved(refs["bindtextdomain.3.html"])) == 4


def test_a_link_cut_at_a_chunk_s_start_is_read_as_the_link_it_is():
    # The splitter cuts index pages' long table rows anywhere: a chunk starting "...location](gettext_5.html#SEC36)"
    # named the page by its file name and lost the place (107 of gettext's references).
    chunks = {"gettext_22.html": [("gettext_22.html#0", "| `--input` | [1.1 Input"),
                                  ("gettext_22.html#1", "file location](gettext_5.html#SEC36) |\n| `-o` | see "
                                                        "gettext_7.html too")],
              "gettext_5.html": [("gettext_5.html#0", "# 5. Making the PO Template File\ntext")],
              "gettext_7.html": [("gettext_7.html#0", "# 7. Updating Existing PO Files\ntext")]}
    ann = annotate(chunks, {d: {"file_name": d} for d in chunks}, BUILTIN_FAMILIES, max_refs=50)
    refs = [(r["kind"], r["text"], r["target"]) for r in ann.refs["gettext_22.html#1"]]
    assert refs == [("link", "file location](gettext_5.html#SEC36)", "gettext_5.html"),
                    ("document", "gettext_7.html", "gettext_7.html")]
    assert ann.refs["gettext_22.html#0"] == []


SPHINX = {
    "os.rst.txt": ":mod:`os` --- Miscellaneous interfaces\n===\n\n.. module:: os\n\n.. class:: PathLike\n\n"
                  "   An abstract base class.\n\n.. function:: stat(path)\n\n   Get the status.\n",
    "os.path.rst.txt": ":mod:`os.path` --- Pathnames\n===\n\n.. module:: os.path\n\n"
                       ".. function:: join(path, *paths)\n\n"
                       "   Join paths; see :func:`join` here, :func:`os.path.join`, :func:`open`, "
                       ":func:`os.stat`, :mod:`os` and :class:`~os.PathLike`.\n",
    "functions.rst.txt": "Built-in Functions\n==================\n\n.. function:: open(file)\n\n   Open a file.\n",
    "io.rst.txt": ".. _io-overview:\n\nOverview\n========\n\n.. module:: io\n\nText I/O. See "
                  ":func:`os.path.join`, :ref:`the overview <io-overview>`, :ref:`tut-files`, :meth:`str.join` "
                  "and :class:`io.TextIOWrapper`.\n",
    "tutorial.rst.txt": ".. _tut-files:\n\nReading and Writing Files\n=========================\n\n"
                        ":func:`open` returns a :term:`file object`; :mod:`!io` has the details.\n",
}


def test_sphinx_roles_resolve_through_declarations():
    refs, ann = run(SPHINX)
    assert ann.profiles["os.path.rst.txt"].scope == "os.path"
    assert "py:os.path.join" in ann.profiles["os.path.rst.txt"].anchors
    assert resolved(refs["os.path.rst.txt"]) == {("py:open", "functions.rst.txt"), ("py:os.stat", "os.rst.txt"),
                                                 ("py:os", "os.rst.txt"), ("py:os.PathLike", "os.rst.txt")}
    assert resolved(refs["io.rst.txt"]) == {("py:os.path.join", "os.path.rst.txt"),
                                            ("ref:tut-files", "tutorial.rst.txt")}
    assert ("anchor", "py:str.join", None) in refs["io.rst.txt"]          # undeclared: kept, null
    assert resolved(refs["tutorial.rst.txt"]) == {("py:open", "functions.rst.txt"), ("py:io", "io.rst.txt")}


def test_config_families_run_in_linear_time_or_are_refused():
    from ragplugins_crossref.config import FamilySpec

    slow = FamilySpec(name="slow", kind="identifier", pattern=r"(?P<id>(a+)+b)").build()
    start = time.perf_counter()
    run({"a.md": "a" * 200_000}, families=[*BUILTIN_FAMILIES, slow])   # Python's re: exponential here
    assert time.perf_counter() - start < 5.0
    with pytest.raises(ValueError, match="'peek'.*cannot run in linear time"):
        FamilySpec(name="peek", kind="identifier", pattern=r"(?<=x)(?P<id>T-\d+)")


def test_a_linked_section_belongs_to_the_link_and_list_items_are_not_headings():
    refs, ann = run({
        "datatype-numeric.html": "## 8.1. Numeric Types\nSee [Section\u00a09.17](functions-sequence.html) and\n"
                                 "[Section 9.3.1](functions-math.html), then "
                                 "[sequence\nobjects](functions-sequence.html).",
        "functions-sequence.html": "## 9.17.\u00a0Sequence Manipulation Functions\nText.",
        "functions-math.html": "## 9.3. Mathematical Functions\nText.",
        "continuous-archiving.html": "## 26.3. Continuous Archiving\nSteps:\n\n9. Start the server.\n",
    })
    # a heading after a no-break space
    assert "section 9.17" in ann.profiles["functions-sequence.html"].headings
    assert "section 9" not in ann.profiles["continuous-archiving.html"].headings       # a numbered step
    got = {(k, ref, t) for k, ref, t in refs["datatype-numeric.html"] if t}
    assert ("section", "section 9.17", "functions-sequence.html") in got
    assert ("section", "section 9.3.1", "functions-math.html") in got                  # the link owns it
    assert all(t != "continuous-archiving.html" for _, _, t in got)
    assert any(k == "link" and t == "functions-sequence.html" and ref == "functions-sequence.html"
               for k, ref, t in got)                                                    # link text over a line break
    recs = [r for r in ann.refs["datatype-numeric.html#0"] if r["target"] == "functions-sequence.html"
            and r["kind"] == "link"]
    assert len(recs) == 2                                                               # two texts, two records


def test_asciidoc_include_and_links_to_rendered_pages():
    refs, _ = run({
        "git-diff.txt": "git-diff(1)\n===========\n\nOPTIONS\n-------\ninclude::diff-options.txt[]\n\n"
                        "See link:user-manual.html[the Git User Manual] and link:https://git-scm.com/[the site].",
        "diff-options.txt": "--stat::\n\tGenerate a diffstat.",
        "user-manual.txt": "Git User Manual\n===============\n\nText.",
    })
    assert resolved(refs["git-diff.txt"]) == {("diff-options.txt", "diff-options.txt"),
                                              ("user-manual.html", "user-manual.txt")}


def test_asciidoctor_cross_references_to_other_files():
    refs, _ = run({
        "index.adoc": "= Guide\n\n== Start\n\nRead xref:install.adoc#proxy[Proxies] first, then\n"
                      "<<config/settings.adoc#timeouts,the timeouts>>; <<start>> is this page's own.\n",
        "install.adoc": "= Installing\n\n[[proxy]]\n== Proxies\n\nText.",
        "config/settings.adoc": "= Settings\n\n[[timeouts]]\n== Timeouts\n\nText.",
    })
    assert resolved(refs["index.adoc"]) == {("install.adoc", "install.adoc"),
                                            ("config/settings.adoc", "config/settings.adoc")}
    assert {k for k, _, _ in refs["index.adoc"]} == {"link"}     # "<<start>>" is no reference to a file


def test_sphinx_looks_up_a_name_as_written_before_the_citing_module():
    refs, _ = run({
        "exceptions.rst.txt": "Built-in Exceptions\n===================\n\n"
                              ".. exception:: BlockingIOError\n\n   Raised.\n",
        "io.rst.txt": "io\n==\n\n.. module:: io\n\n.. exception:: BlockingIOError\n\n   A compatibility alias.\n\n"
                      "Methods raise :exc:`BlockingIOError`; see :data:`the list of\n"
                      "   names <io.DEFAULT_BUFFER_SIZE>`.\n",
    })
    assert resolved(refs["io.rst.txt"]) == {("py:BlockingIOError", "exceptions.rst.txt")}


def test_a_leading_dot_looks_in_the_citing_module_first():
    refs, _ = run({
        "functions.rst.txt": "Built-in Functions\n==================\n\n.. function:: open(file)\n",
        "tokenize.rst.txt": "tokenize\n========\n\n.. module:: tokenize\n\n.. function:: open(filename)\n\n"
                            "   Like :func:`.open`; the built-in is :func:`open`.\n",
    })
    assert resolved(refs["tokenize.rst.txt"]) == {("py:open", "functions.rst.txt")}   # .open is its own


def test_default_cap_keeps_a_dense_page_s_references():
    from ragplugins_crossref.config import CrossrefConfig

    targets_ = [f"m{i}" for i in range(12)]
    docs = {f"{m}.rst.txt": f"{m}\n====\n\n.. module:: {m}\n" for m in targets_}
    docs["index.rst.txt"] = "Index\n=====\n\n" + ", ".join(f":mod:`{m}`" for m in targets_) + ".\n"
    chunks = {d: [(f"{d}#0", text)] for d, text in docs.items()}
    ann = annotate(chunks, {d: {"file_name": d} for d in docs}, BUILTIN_FAMILIES,
                   max_refs=CrossrefConfig().max_refs_per_chunk)
    assert len([r for r in ann.refs["index.rst.txt#0"] if r["target"]]) == 12


CONFIG_REFERENCE = {
    "main_configuration.html": "## Main configuration\n\n| Option | Use |\n| --- | --- |\n"
                               "| tls_dhparam | Use: main | Type: string |\n| `queue_only` | Use: main |\n\n"
                               "The value of tls_dhparam names a file. The queue_only option is described here.",
    "string_expansions.html": "## Expansion variables\n\n$sender_host_name\n:   This variable is set after a "
                              "reverse lookup.\n\ncore.editor::\n\tThe editor to use.",
    "tls.html": "## TLS\n\nSee the documentation for tls_dhparam. See also the $sender_host_name variable, "
                "the generic queue_only option and the core.editor configuration variable. The tls_dhparam "
                "value is read once; the unknown_thing option is defined nowhere.",
    "routers.html": "## Routers\n\n| tls_dhparam | Use: routers |\n\nSee the tls_dhparam option.",
}


def test_configuration_names_resolve_to_the_one_document_that_defines_them():
    refs, ann = run(CONFIG_REFERENCE)
    # Definitions: a table's first column, a Markdown or AsciiDoc definition list; not a use in running text.
    assert set(ann.profiles["main_configuration.html"].terms) == {"tls_dhparam", "queue_only"}
    assert set(ann.profiles["string_expansions.html"].terms) == {"$sender_host_name", "core.editor"}
    assert not ann.profiles["tls.html"].terms
    # tls_dhparam has two definers (main and routers): ambiguous, never a guess; a name used without
    # "option", "variable", "documentation" ("The tls_dhparam value") is not a reference.
    assert resolved(refs["tls.html"]) == {("term:$sender_host_name", "string_expansions.html"),
                                          ("term:queue_only", "main_configuration.html"),
                                          ("term:core.editor", "string_expansions.html")}
    assert ("anchor", "term:tls_dhparam", None) in refs["tls.html"]
    assert ("anchor", "term:unknown_thing", None) in refs["tls.html"]
    # A document's own definition is not a reference to another document.
    assert not resolved(refs["routers.html"])


def test_a_name_two_pages_define_resolves_to_the_one_beside_the_citing_page():
    # nginx defines $remote_addr in its http and its stream core pages: a page under http/ means the http one.
    definition = "## Embedded variables\n\n$remote_addr\n:   client address\n"
    docs = {"http/core.html": definition, "stream/core.html": definition,
            "http/geo.html": "## geo\n\nThe address is taken from the $remote_addr variable.",
            "stream/geo.html": "## geo\n\nThe address is taken from the $remote_addr variable.",
            "geo.html": "## geo\n\nThe address is taken from the $remote_addr variable.",
            "misc/a.html": "## a\n\nSee the $remote_addr variable.", "misc/b.html": definition,
            "misc/c.html": definition}
    refs, _ = run(docs)
    assert resolved(refs["http/geo.html"]) == {("term:$remote_addr", "http/core.html")}
    assert resolved(refs["stream/geo.html"]) == {("term:$remote_addr", "stream/core.html")}
    # Neither beside it, or two beside it: left unresolved, never a guess.
    assert ("anchor", "term:$remote_addr", None) in refs["geo.html"]
    assert ("anchor", "term:$remote_addr", None) in refs["misc/a.html"]


VIM_HELP = {
    "options.txt": "*'textwidth'* *'tw'*\n'textwidth' 'tw'\tnumber\t(default 0)\n\tMaximum width of text.\n",
    "change.txt": "6. Formatting text\t\t\t\t\t*formatting*\n\nText is formatted with gq.\n",
    "usr_25.txt": "Set the width with |'textwidth'| (short: |'tw'|); see |formatting| and |no-such-tag|.\n",
}


def test_a_config_family_declares_where_its_names_are_defined():
    from ragplugins_crossref.config import FamilySpec

    # Vim's help: "|'textwidth'|" points at the file holding "*'textwidth'*". Without "defines" a config family
    # had nothing to look its names up in (a new user's vim-doc walkthrough: 1,387 tags extracted, none resolved).
    bar = r"\|(?P<key>[^\s|*]{1,60})\|"
    tag = FamilySpec(name="vimtag", kind="anchor", pattern=bar, defines=r"\*(?P<key>[^\s*|]{1,60})\*").build()
    refs, ann = run(VIM_HELP, families=(*BUILTIN_FAMILIES, tag))
    assert resolved(refs["usr_25.txt"]) == {("vimtag:'textwidth'", "options.txt"), ("vimtag:'tw'", "options.txt"),
                                            ("vimtag:formatting", "change.txt")}
    assert ("anchor", "vimtag:no-such-tag", None) in refs["usr_25.txt"]
    assert ann.refs["usr_25.txt#0"][0]["chunk"] == "options.txt#0"    # the chunk holding the declaration
    assert not resolved(refs["options.txt"])                          # its own tags are no reference
    plain = FamilySpec(name="vimtag", kind="anchor", pattern=bar).build()
    refs, _ = run(VIM_HELP, families=(*BUILTIN_FAMILIES, plain))
    assert not resolved(refs["usr_25.txt"])
    with pytest.raises(ValueError, match="'vimtag'.*'defines' is for kind 'anchor'"):
        FamilySpec(name="vimtag", kind="identifier", pattern=r"\|(?P<id>\w+)\|", defines=r"\*(?P<key>\w+)\*")
    with pytest.raises(ValueError, match="'vimtag'.*'defines' pattern needs the named group key"):
        FamilySpec(name="vimtag", kind="anchor", pattern=bar, defines=r"\*(?P<name>\w+)\*")
    with pytest.raises(ValueError, match="'vimtag'.*defines.*cannot run in linear time"):
        FamilySpec(name="vimtag", kind="anchor", pattern=bar, defines=r"\*(?P<key>\w+)(?=\*)")


def test_vim_s_help_files_resolve_their_tags_without_a_config_family_and_no_other_document_does():
    # Each of Vim's help files ends with its modeline; only such files are read for *tag* and |tag| (new users'
    # Vim help, as .txt and as vim-doc's HTML: without a family crossref stored no |tag| reference).
    modeline = "\n vim:tw=78:ts=8:noet:ft=help:norl:\n"
    help_files = {name: text + modeline for name, text in VIM_HELP.items()}
    markdown = {"notes.md": "Tables of *formatting* rules, and |formatting| in a table cell.\n"}
    refs, ann = run({**help_files, **markdown})
    assert resolved(refs["usr_25.txt"]) == {("vim_help_tag:'textwidth'", "options.txt"),
                                            ("vim_help_tag:'tw'", "options.txt"),
                                            ("vim_help_tag:formatting", "change.txt")}
    assert ann.refs["usr_25.txt#0"][0]["chunk"] == "options.txt#0"
    assert not resolved(refs["options.txt"])
    assert not any("vim_help_tag" in str(ref) for ref in refs["notes.md"])     # no modeline: not Vim's help
    # vim-doc's HTML drops most modelines and keeps each file's header: that says it too.
    headed = {name: f"*{name}*\tFor Vim version 9.0.  Last change: 2022 Jun 01\n\n{text}"
              for name, text in VIM_HELP.items()}
    refs, _ = run({**headed, **markdown})
    assert ("vim_help_tag:formatting", "change.txt") in resolved(refs["usr_25.txt"])
    # The same files with neither are no help files: nothing is read as a tag.
    refs, _ = run(VIM_HELP)
    assert not resolved(refs["usr_25.txt"])


def test_a_config_family_repeating_a_built_in_one_stores_each_reference_once():
    # The README's Vim family, declared in a config before vim_help_tag was built in, read every tag a second time.
    from ragplugins_crossref.config import FamilySpec

    vimtag = FamilySpec(name="vimtag", kind="anchor", pattern=r"\|(?P<key>[^\s|*]{1,60})\|",
                        defines=r"\*(?P<key>[^\s*|]{1,60})\*").build()
    modeline = "\n vim:tw=78:ts=8:noet:ft=help:norl:\n"
    help_files = {name: text + modeline for name, text in VIM_HELP.items()}
    alone, alone_ann = run(help_files)
    both, both_ann = run(help_files, families=[*BUILTIN_FAMILIES, vimtag])
    stored = [(r["text"], r["target"]) for r in both_ann.refs["usr_25.txt#0"]]
    assert len(stored) == len(set(stored)) == len(alone_ann.refs["usr_25.txt#0"]) == 4
    assert resolved(both["usr_25.txt"]) == resolved(alone["usr_25.txt"])


def test_a_configuration_name_defined_once_resolves_from_documentation_of():
    docs = {k: v for k, v in CONFIG_REFERENCE.items() if k != "routers.html"}
    refs, _ = run(docs)
    assert ("term:tls_dhparam", "main_configuration.html") in resolved(refs["tls.html"])


def test_a_reference_to_an_entry_of_a_long_reference_page_names_the_entry_s_chunk():
    # Postfix's postconf(5): hundreds of entries on one page; a link's fragment or words, or a configuration
    # name in prose, points at one of them, not at the page's best match for a question.
    entries = [f"{name}\n:   What {name} does, in detail." for name in
               ("relay_domains", "relay_recipient_maps", "virtual_alias_maps", "mydestination")]
    chunks = {"postconf.5.html": [(f"postconf#{i}", text) for i, text in enumerate(entries)],
              "relay.html": [("relay#0", "Use [relay_recipient_maps](postconf.5.html#relay_recipient_maps) to "
                                         "reject unknown users. See the virtual_alias_maps parameter, the "
                                         "[destinations](postconf.5.html#mydestination), "
                                         "[the `relay_domains` list](postconf.5.html#relay-domains), the "
                                         "[top](postconf.5.html#top) and the [whole page](postconf.5.html).")]}
    ann = annotate(chunks, {d: {"file_name": d} for d in chunks}, BUILTIN_FAMILIES, max_refs=50)
    got = {(r["text"], r["target"], r.get("chunk")) for r in ann.refs["relay#0"]}
    assert ("[relay_recipient_maps](postconf.5.html#relay_recipient_maps)", "postconf.5.html", "postconf#1") in got
    assert ("See the virtual_alias_maps parameter", "postconf.5.html", "postconf#2") in got
    assert ("[destinations](postconf.5.html#mydestination)", "postconf.5.html", "postconf#3") in got
    # A fragment respelling the name (hyphens, capitals) still names it; one that names no entry, nor do the
    # link's words: the page alone.
    assert ("[the `relay_domains` list](postconf.5.html#relay-domains)", "postconf.5.html", "postconf#0") in got
    assert ("[top](postconf.5.html#top)", "postconf.5.html", None) in got
    assert ("[whole page](postconf.5.html)", "postconf.5.html", None) in got


def test_a_link_to_a_heading_of_a_long_page_names_the_heading_s_chunk():
    # Markdown and HTML documentation link into a page by its headings made anchors: GitHub and Node.js drop
    # punctuation ("#fsreadfilepath-options-callback"), Sphinx turns it into hyphens ("#reading-and-writing").
    fs = ["# File system\nThe fs module.", "## Promises API\nAsynchronous methods.",
          "## `fs.readFile(path[, options], callback)`\nReads the entire contents of a file.",
          "## Reading and writing\nOpen a file first."]
    chunks = {"fs.md": [(f"fs#{i}", text) for i, text in enumerate(fs)],
              "stream.md": [("stream#0", "Compare [`fs.readFile()`](fs.md#fsreadfilepath-options-callback) and "
                                         "[files](fs.md#reading-and-writing) with the [API](fs.md#promises-api), "
                                         "but not [this](fs.md#no-such-heading). Every [File system](fs.md) "
                                         "method takes a [`Buffer`][] from [Promises][].\n\n"
                                         "[`Buffer`]: buffer.md#class-buffer\n[Promises]: fs.md#promises-api\n")],
              "buffer.md": [("buffer#0", "# Buffer\nBytes."), ("buffer#1", "## Class: `Buffer`\nThe class.")],
              # mdBook: each heading links to its own anchor; some headings stand in block quotes.
              "ownership.html": [("own#0", "## What Is Ownership?\nRules."),
                                 ("own#1", "### [Stack-Only Data: Copy](#stack-only-data-copy)\nCopy types."),
                                 ("own#2", "> ### The Stack and the Heap\n>\n> Both are memory.")],
              "structs.html": [("structs#0", "Tuples are [copied](ownership.html#stack-only-data-copy) and live "
                                             "on [the stack](ownership.html#the-stack-and-the-heap).")]}
    ann = annotate(chunks, {d: {"file_name": d} for d in chunks}, BUILTIN_FAMILIES, max_refs=50)
    got = {r["text"]: (r["target"], r.get("chunk")) for r in ann.refs["stream#0"]}
    assert got["[`fs.readFile()`](fs.md#fsreadfilepath-options-callback)"] == ("fs.md", "fs#2")
    assert got["[files](fs.md#reading-and-writing)"] == ("fs.md", "fs#3")
    assert got["[API](fs.md#promises-api)"] == ("fs.md", "fs#1")
    assert got["[this](fs.md#no-such-heading)"] == ("fs.md", None)
    # A link to the whole page names no heading, not even the title its words repeat.
    assert got["[File system](fs.md)"] == ("fs.md", None)
    # Markdown reference links: the fragment of the reference list's definition.
    assert got["[`Buffer`][]"] == ("buffer.md", "buffer#1") and got["[Promises][]"] == ("fs.md", "fs#1")
    mdbook = {r["text"]: (r["target"], r.get("chunk")) for r in ann.refs["structs#0"]}
    assert mdbook["[copied](ownership.html#stack-only-data-copy)"] == ("ownership.html", "own#1")
    assert mdbook["[the stack](ownership.html#the-stack-and-the-heap)"] == ("ownership.html", "own#2")


def test_a_sentence_starting_a_line_with_chapter_n_is_no_heading_of_that_chapter():
    # Prose hard-wrapped so that a line starts "Chapter 4. References ..." (The Rust Book's pages) does not make
    # its page chapter 4: the reference stays unresolved rather than pointing at it; a heading-like line does.
    refs, _ = run({"ch08.md": "# Smart Pointers\nThe most common pointer is the reference, which you learned in\n"
                              "Chapter 4. References are indicated by the & symbol and borrow the value.\n",
                   "ch10.md": "# Generics\nAs we saw in Chapter 4, values move.\n"})
    assert not resolved(refs["ch10.md"])
    refs, _ = run({"ch04.md": "# The Book\nChapter 4: Understanding Ownership\nValues have owners.\n",
                   "ch10.md": "# Generics\nAs we saw in Chapter 4, values move.\n"})
    assert ("chapter 4", "ch04.md") in resolved(refs["ch10.md"])


def test_a_path_names_one_of_several_same_named_files_only_by_its_folders():
    # Flask's pages: a coverage report's "htmlcov/index.html" and a template's 'blog/index.html' are not the
    # manual's front page, the one index.html with no folder to disagree; "tutorial/index.html" is the tutorial's,
    # and a path from the project's top still names a file no other folder has.
    refs, _ = run({
        "tutorial/tests.html": "Open `htmlcov/index.html` in your browser. Back to tutorial/index.html or "
                               "docs/testing.html. `return render_template('blog/index.html', posts=posts)`.",
        "index.html": "# Welcome to Flask\ntext",
        "tutorial/index.html": "# Tutorial\ntext",
        "patterns/index.html": "# Patterns for Flask\ntext",
        "testing.html": "# Testing Flask Applications\ntext",
    })
    assert resolved(refs["tutorial/tests.html"]) == {("index.html", "tutorial/index.html"),
                                                     ("testing.html", "testing.html")}
    assert not any(target == "index.html" for _, _, target in refs["tutorial/tests.html"])


def test_a_file_name_in_prose_names_a_file_of_its_own_case():
    # Docker's contributors' guide: "Create a `TEST.md` file in the repository's root" is a file the reader makes,
    # not the guide's own test.md (file names were compared in lower case). The same name in its own case, and a
    # source's name for the page rendered from it, still resolve.
    refs, _ = run({
        "contributing/set-up-git.md": "# Configure Git\n\nCreate a `TEST.md` file in the repository's root.\n",
        "contributing/intro.md": "# Introduction\n\nRead test.md before you start, and user-manual.txt too.\n",
        "contributing/test.md": "# Run tests\n\ntext\n",
        "user-manual.html": "# Git User Manual\n\ntext\n",
    })
    assert resolved(refs["contributing/set-up-git.md"]) == set()
    assert {target for _, target in resolved(refs["contributing/intro.md"])} == {"contributing/test.md",
                                                                                "user-manual.html"}
