import json

import numpy as np
import pytest

from ragplugins_overview.sidecar import FileLocation, Overviews, SidecarError


def _overviews(n=3, dim=4):
    vectors = np.eye(n, dim, dtype=np.float32)
    return Overviews([f"d{i}" for i in range(n)], [f"h{i}" for i in range(n)], [f"text {i}" for i in range(n)],
                     ["extractive"] * n, vectors, "emb:4", "lancedb:/x:chunks")


def _rewrite(path, **changes):
    with np.load(path, allow_pickle=False) as data:
        arrays = {k: data[k] for k in data.files}
    meta = json.loads(str(arrays["meta"]))
    meta.update(changes.pop("meta", {}))
    arrays["meta"] = np.array(json.dumps(meta))
    arrays.update(changes)
    with open(path, "wb") as f:
        np.savez(f, **arrays)


def test_round_trip_without_leftover_temporary_files(tmp_path):
    location = FileLocation(tmp_path / "sidecars" / "overviews.chunks.npz")
    location.write(_overviews())
    read = location.read()
    assert read.doc_ids == ["d0", "d1", "d2"] and read.texts[1] == "text 1" and read.embedder == "emb:4"
    assert np.array_equal(read.vectors, np.eye(3, 4, dtype=np.float32))
    assert [p.name for p in location.path.parent.iterdir()] == ["overviews.chunks.npz"]


@pytest.mark.parametrize("changes, message", [
    ({"meta": {"count": 5}}, "declares 5 documents but holds 3"),
    ({"vectors": 2 * np.eye(3, 4, dtype=np.float32)}, "not unit length"),
    ({"vectors": np.eye(2, 4, dtype=np.float32)}, "2 vectors for 3 documents"),
    ({"meta": {"normalized": False}}, "not marked L2-normalised"),
    ({"meta": {"format": 99}}, "format 99"),
    ({"doc_ids": np.array(["d0", "d0", "d2"])}, "lists a document twice"),
])
def test_a_sidecar_that_does_not_describe_one_unit_vector_per_document_is_refused(tmp_path, changes, message):
    location = FileLocation(tmp_path / "overviews.chunks.npz")
    location.write(_overviews())
    _rewrite(location.path, **changes)
    with pytest.raises(SidecarError, match=message):
        location.read()


def test_a_missing_sidecar_reads_as_none(tmp_path):
    assert FileLocation(tmp_path / "nothing.npz").read() is None
