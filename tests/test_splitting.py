"""The section-aware splitter: chunks begin where the document's sections begin, when they fit."""

from __future__ import annotations

from ragplugins.splitting import BlockedSentenceSplitter, SectionSplitter, section_starts


def _lines_at(text: str, starts: list[int]) -> list[str]:
    return [text[s:].split("\n", 1)[0] for s in starts]


def test_section_starts_find_headings_of_each_plain_text_style():
    text = ("git-stash(1)\n============\n\nNAME\n----\ngit-stash - stash changes\n\n"
            "OPTIONS\n-------\n\n--all::\n\tAll files.\n\n-q::\n\tQuiet.\n\n"
            "4.3. Scope of the standard\n\nText.\n\n## Markdown heading\n\nMore.\n\n"
            ".. function:: open(file)\n\n   Open a file.\n")
    assert _lines_at(text, section_starts(text)) == [
        "git-stash(1)", "NAME", "OPTIONS", "--all::", "-q::", "4.3. Scope of the standard",
        "## Markdown heading", ".. function:: open(file)"]


def test_asciidoctor_titles_and_pod_headings_start_sections_and_a_table_border_does_not():
    text = ("= Guide\n\n== Install\n\nRun it.\n\n=== From source\n\nBuild it.\n\n"
            "=====  =====\n  A      B\n=====  =====\n\n=head1 NAME\n\nperlfunc - functions\n\n"
            "=head2 open\n\nOpens a file.\n\n=over 4\n\n=item one\n")
    assert _lines_at(text, section_starts(text)) == [
        "= Guide", "== Install", "=== From source", "=head1 NAME", "=head2 open"]


def test_a_chapter_docbook_wrote_as_text_starts_a_section_and_a_sentence_about_one_does_not():
    # X.Org's specifications as text: "Chapter", its number and its title apart by no-break spaces.
    text = ("X Window System Protocol\n\nChapter\u00a01.\u00a0Protocol Formats\n\nRequest Format\n\n"
            "Chapter 4 covers errors.\n\nAppendix A. Encoding\n\nText.\n")
    assert _lines_at(text, section_starts(text)) == [
        "X Window System Protocol", "Chapter\u00a01.\u00a0Protocol Formats", "Appendix A. Encoding"]


def test_a_block_delimiter_or_a_paragraphs_last_line_is_not_a_section_start():
    text = ("Intro line one\nends the paragraph like this::\n\n    literal\n\n"
            "+\n----\n$ git stash list\nstash@{0}: WIP on master\n----\n")
    assert _lines_at(text, section_starts(text)) == ["Intro line one"]



def test_nothing_inside_a_code_fence_starts_a_section_and_a_title_underlined_with_tildes_is_a_title():
    # A shell comment after a blank line in a code block began a section, and so did a code block's short last
    # line, its closing fence read as that line's underline ("});" over "```": 1,000 starts in four corpora).
    text = ("## Setup\n\nRun:\n\n```sh\napt-get update\n\n# then install\napt-get install x\n});\n```\n\n"
            "- ```\n  ## in a list item\n  ```\n\n"
            "Options\n~~~~~~~\n\nThe options.\n\n~~~\n# tilde fenced\n~~~\n\n4.3. Scope\n\nText.\n")
    assert _lines_at(text, section_starts(text)) == ["## Setup", "Options", "4.3. Scope"]


def _sections(n: int, words: int) -> str:
    return "".join(f"Section {i}\n{'-' * (8 + len(str(i)))}\n\n" + " ".join(f"w{i}x{j}." for j in range(words)) + "\n\n"
                   for i in range(n))


def test_chunks_start_at_section_starts_where_the_sentence_splitter_cuts_inside_sections():
    text = _sections(12, 20)  # about 100 tokens a section
    ours = SectionSplitter(chunk_size=256, chunk_overlap=20).split_text(text)
    plain = BlockedSentenceSplitter(chunk_size=256, chunk_overlap=20).split_text(text)
    assert len(ours) > 1
    assert all(chunk.startswith("Section ") for chunk in ours)
    assert not all(chunk.startswith("Section ") for chunk in plain)
    # Nothing lost, nothing repeated: the packed sections are the text itself.
    assert "".join(c.replace("\n", "").replace(" ", "") for c in ours) == text.replace("\n", "").replace(" ", "")


def test_a_section_larger_than_a_chunk_is_split_by_sentences_and_small_sections_are_packed():
    text = _sections(1, 600) + _sections(3, 5).replace("Section 0", "Section A").replace("w0x", "s0x")
    chunks = SectionSplitter(chunk_size=128, chunk_overlap=10).split_text(text)
    splitter = SectionSplitter(chunk_size=128, chunk_overlap=10)
    assert all(splitter._token_size(c) <= 128 for c in chunks)
    assert sum("Section 0" in c for c in chunks) == 1  # the big section's tail chunks carry no heading
    tail = chunks[-1]
    assert "Section A" in tail and "Section 2" in tail  # three small sections in one chunk


def test_empty_text_gives_one_empty_chunk_like_the_sentence_splitter():
    assert SectionSplitter().split_text("") == BlockedSentenceSplitter().split_text("") == [""]


def test_the_config_chooses_the_splitter_that_indexes_a_file(tmp_path):
    from llama_index.core import MockEmbedding

    import ragplugins

    doc = tmp_path / "docs" / "manual.txt"
    doc.parent.mkdir()
    doc.write_text(_sections(12, 20))
    starts = {}
    for name in ("sections", "sentence"):
        rp = ragplugins.load({"ragplugins": {"enable": [], "splitter": name, "chunk_size": 256, "chunk_overlap": 20,
                                             "persist_dir": str(tmp_path / name)}},
                             embed_model=MockEmbedding(embed_dim=8))
        rp.index_paths([doc.parent])
        chunks = [n.get_content() for n in rp.context(rp.index()).all_nodes()]
        starts[name] = all(c.startswith("Section ") for c in chunks)
    assert starts == {"sections": True, "sentence": False}


def test_below_a_block_the_splitter_is_llamaindexs_own_and_metadata_still_takes_its_room():
    from llama_index.core import Document
    from llama_index.core.node_parser import SentenceSplitter

    text = " ".join(f"Sentence number {i} says something about item {i}." for i in range(400))
    ours, theirs = BlockedSentenceSplitter(chunk_size=128, chunk_overlap=16), SentenceSplitter(chunk_size=128,
                                                                                               chunk_overlap=16)
    assert ours.split_text(text) == theirs.split_text(text)
    doc = Document(text=text, metadata={"title": "A long title " * 8})
    assert [n.text for n in ours([doc])] == [n.text for n in theirs([doc])]
    assert len(ours([doc])) > len(ours([Document(text=text)]))  # the metadata's tokens leave less room


def test_a_text_larger_than_a_block_is_split_one_block_at_a_time():
    from ragplugins.splitting import BLOCK_CHARS

    paragraph = "Alpha beta gamma delta. " * 400
    text = "\n\n".join([paragraph] * (3 * BLOCK_CHARS // len(paragraph)))
    chunks = BlockedSentenceSplitter(chunk_size=256, chunk_overlap=0).split_text(text)
    assert all(len(c) <= BLOCK_CHARS for c in chunks) and "".join(chunks).count("Alpha") == text.count("Alpha")


def test_a_sentence_too_long_for_a_chunk_is_cut_where_white_space_follows_its_punctuation():
    # A code block of file names and addresses is one "sentence" to nltk; LlamaIndex's fallback regex cut it
    # at every ".", inside "demo2.img" and "https://libvirt.org" (a new user's libvirt pages).
    from llama_index.core.node_parser import SentenceSplitter

    text = "<disk>\n" + "".join(f"  <source file='/var/lib/images/demo{i}.img'/> see https://libvirt.org/x{i}.html\n"
                                for i in range(60)) + "</disk>"
    names = [f"demo{i}.img" for i in range(60)] + [f"https://libvirt.org/x{i}.html" for i in range(60)]
    ours = BlockedSentenceSplitter(chunk_size=64, chunk_overlap=0).split_text(text)
    theirs = SentenceSplitter(chunk_size=64, chunk_overlap=0).split_text(text)
    assert len(ours) > 3
    assert all(any(name in chunk for chunk in ours) for name in names)
    assert not all(any(name in chunk for chunk in theirs) for name in names)   # what LlamaIndex's default does
    # Sentences still end at their marks: "a, b. c" is cut after "," or "." when it must be.
    prose = "word " * 30 + "end, " + "more " * 30 + "stop. " + "tail " * 30
    assert all(c.endswith((",", ".")) or c.endswith("tail") for c in
               BlockedSentenceSplitter(chunk_size=40, chunk_overlap=0).split_text(prose))
