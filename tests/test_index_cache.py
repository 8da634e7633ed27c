"""ragplugins.index_cache: values derived from an index, kept until it is written, bounded in number."""

from llama_index.core import VectorStoreIndex
from llama_index.core.embeddings import MockEmbedding
from llama_index.core.schema import TextNode

from ragplugins import index_cache
from ragplugins.stores import adapter_for


def _adapter():
    index = VectorStoreIndex([TextNode(text="one", embedding=[1.0, 0.0])], embed_model=MockEmbedding(embed_dim=2))
    return adapter_for(index)


def test_a_value_is_built_once_then_again_after_a_write():
    cache, adapter, builds = index_cache.IndexCache(), _adapter(), []
    assert cache.get(adapter, "a", lambda: builds.append("a") or 1) == 1
    assert cache.get(adapter, "a", lambda: builds.append("a") or 2) == 1
    cache.invalidate(adapter.vector_store)
    assert cache.get(adapter, "a", lambda: builds.append("a") or 3) == 3
    assert builds == ["a", "a"]


def test_values_of_many_filters_are_bounded_and_stale_ones_dropped(monkeypatch):
    """A value per host filter (one per tenant, say) must not grow without end: the least recently
    used go past MAX_VALUES, and a write drops every value built before it once one is rebuilt."""
    monkeypatch.setattr(index_cache, "MAX_VALUES", 5)
    cache, adapter = index_cache.IndexCache(), _adapter()
    built = []

    def value(name):
        return cache.get(adapter, name, lambda: built.append(name) or name)

    for i in range(8):
        value(f"vocabulary:filters={i}")
        value("sparse")  # used by every query: never the least recently used
    kept = cache._built[id(adapter.vector_store)]
    assert len(kept) == 5 and "sparse" in kept and "vocabulary:filters=0" not in kept
    assert built.count("sparse") == 1
    cache.invalidate(adapter.vector_store)
    value("sparse")
    assert list(cache._built[id(adapter.vector_store)]) == ["sparse"] and built.count("sparse") == 2
