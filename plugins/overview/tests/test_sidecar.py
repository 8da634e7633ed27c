"""The overviews as plugin state: what is written reads back, and what does not describe one unit vector
per document is refused (the store adapter keeps them; ragplugins/tests/test_store_adapters.py tests where)."""


import base64
from types import SimpleNamespace

import numpy as np
import pytest

from ragplugins.api import StoreAdapter
from ragplugins_overview.sidecar import Overviews, SidecarError, location_for


class Owner:
    """Stands for a vector store."""


def _ctx():
    store = StoreAdapter(SimpleNamespace(vector_store=Owner()), index_uid="fake-index")
    store.owner = store.index.vector_store  # keeps the in-memory state alive as long as the test runs
    return SimpleNamespace(state=store.state, index_id=store.index_id, store=store)


def _overviews(n=3, dim=4):
    vectors = np.eye(n, dim, dtype=np.float32)
    return Overviews([f"d{i}" for i in range(n)], [f"h{i}" for i in range(n)], [f"text {i}" for i in range(n)],
                     ["extractive"] * n, vectors, "emb:4", "fake-index")


def _rewrite(ctx, records=None, **meta):
    stored = ctx.state("overview").read("overviews")
    ctx.state("overview").write("overviews", stored.records if records is None else records, {**stored.meta, **meta})


def test_round_trip():
    ctx = _ctx()
    location = location_for(ctx)
    assert location.read() is None and location.signature() is None
    with pytest.warns(UserWarning, match="memory only"):
        location.write(_overviews())
    first = location.signature()
    read = location.read()
    assert read.doc_ids == ["d0", "d1", "d2"] and read.texts[1] == "text 1" and read.embedder == "emb:4"
    assert np.array_equal(read.vectors, np.eye(3, 4, dtype=np.float32))
    location.write(_overviews(n=2))
    assert location.signature() != first and location.read().doc_ids == ["d0", "d1"]


def _vectors(matrix):
    encoded = [base64.b64encode(np.asarray(row, dtype="<f4").tobytes()).decode("ascii") for row in matrix]
    return lambda records: [{**r, "vector": v} for r, v in zip(records, encoded)]


@pytest.mark.parametrize("records, meta, message", [
    (None, {"count": 5}, "declares 5 documents but holds 3"),
    (_vectors(2 * np.eye(3, 4)), {}, "not unit length"),
    (lambda records: records[:2], {"count": 3}, "declares 3 documents but holds 2"),
    (None, {"normalized": False}, "not marked L2-normalised"),
    (None, {"format": 99}, "format 99"),
    (lambda records: [records[0], records[0], records[2]], {}, "lists a document twice"),
    (lambda records: [{k: v for k, v in r.items() if k != "vector"} for r in records], {}, "cannot be read"),
])
def test_overviews_that_do_not_describe_one_unit_vector_per_document_are_refused(records, meta, message):
    ctx = _ctx()
    with pytest.warns(UserWarning):
        location_for(ctx).write(_overviews())
    stored = ctx.state("overview").read("overviews")
    _rewrite(ctx, records(stored.records) if records else None, **meta)
    with pytest.raises(SidecarError, match=message):
        location_for(ctx).read()


def test_unreadable_state_is_refused_not_raised_as_json_error():
    ctx = _ctx()
    ctx.store.read_state = lambda plugin, name: "{not json"
    with pytest.raises(SidecarError, match="cannot be read"):
        location_for(ctx).read()

