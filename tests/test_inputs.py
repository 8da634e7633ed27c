"""Bad input: a clear error that names the path, and nothing already indexed is lost."""

import pytest

from ragplugins import InputError
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
    with pytest.raises(InputError, match="directory '.*empty' is empty; supported files: .markdown, .md, .pdf"):
        rag.index_paths([tmp_path / "empty"])


def test_unsupported_file_is_skipped_with_a_warning(rag, tmp_path):
    folder = tmp_path / "mixed"
    folder.mkdir()
    (folder / "table.xlsx").write_bytes(b"PK\x03\x04")
    (folder / "ok.md").write_text("A supported note about espresso grind size.")
    with pytest.warns(UserWarning, match=r"skipped '.*table.xlsx': unsupported file type '.xlsx'"):
        _, report = rag.index_paths([folder])
    assert report.added == ["ok.md"] and report.skipped[0][0].endswith("table.xlsx")


def test_empty_document_and_only_bad_files(rag, tmp_path):
    folder = tmp_path / "blank"
    folder.mkdir()
    (folder / "blank.md").write_text("   \n\n")
    before = _count(rag)
    with pytest.warns(UserWarning, match="blank.md': it has no text"):
        with pytest.raises(InputError, match="no file could be indexed: '.*blank.md': it has no text"):
            rag.index_paths([folder])
    assert _count(rag) == before


def test_non_utf8_text_is_read_with_a_warning(rag, tmp_path):
    path = tmp_path / "latin.txt"
    path.write_bytes("Caf\xe9 menu: cr\xe8me br\xfbl\xe9e costs 7 euros.".encode("cp1252"))
    with pytest.warns(UserWarning, match="latin.txt' is not valid UTF-8"):
        rag.index_paths([path])
    assert any("Café menu" in n.get_content() for n in rag.context().all_nodes())


def test_large_file_is_skipped_and_names_the_key(rag, tmp_path):
    big = tmp_path / "big.txt"
    with open(big, "wb") as f:
        f.write(b"lorem ipsum dolor sit amet " * (50 * 1024 * 1024 // 27 + 1))
    before = _count(rag)
    with pytest.warns(UserWarning, match=r"big.txt': 5\d\.\d MB is over max_file_mb = 25.0; raise \[ragplugins\] max_file_mb"):
        with pytest.raises(InputError):
            rag.index_paths([big])
    assert _count(rag) == before


def test_duplicate_ids_across_roots(rag, tmp_path):
    for d in ("one", "two"):
        (tmp_path / d).mkdir()
        (tmp_path / d / "same.md").write_text(f"Note from {d}.")
    with pytest.raises(InputError, match="two files would get the id 'same.md'"):
        rag.index_paths([tmp_path / "one", tmp_path / "two"])
