"""One place hides metadata keys from the text LlamaIndex embeds and gives the LLM."""

from pathlib import Path

from llama_index.core.schema import MetadataMode, TextNode

from ragplugins import api

ROOT = Path(__file__).resolve().parents[1]


def test_hide_metadata_keeps_keys_out_of_embed_and_llm_text_once():
    node = TextNode(text="body", metadata={"secret": "s3", "title": "T"}, excluded_embed_metadata_keys=["x"])
    assert api.hide_metadata(node, ["secret", "secret"]) is True
    assert api.hide_metadata(node, ["secret"]) is False
    assert node.excluded_embed_metadata_keys == ["x", "secret"] and node.excluded_llm_metadata_keys == ["secret"]
    for mode in (MetadataMode.EMBED, MetadataMode.LLM):
        text = node.get_content(metadata_mode=mode)
        assert "s3" not in text and "T" in text


def test_no_other_module_edits_the_exclusion_lists():
    sources = [*ROOT.glob("ragplugins/**/*.py"), *ROOT.glob("plugins/*/ragplugins_*/**/*.py"),
               *ROOT.glob("examples/plugin-template/ragplugins_*/**/*.py")]
    editing = sorted(
        str(p.relative_to(ROOT))
        for p in sources
        if "excluded_embed_metadata_keys" in p.read_text() or "excluded_llm_metadata_keys" in p.read_text()
    )
    assert editing == ["ragplugins/nodes.py"]
