"""The scaling bench's own pieces: the streamed corpus is the one on disk, and bytes stored are
counted alike on local disk and on a local S3 server."""

from __future__ import annotations

import sys
from pathlib import Path

import pytest

BENCH = Path(__file__).resolve().parents[1] / "bench"
sys.path.insert(0, str(BENCH))

import synth  # noqa: E402


def test_streamed_documents_are_the_files_make_corpus_writes(tmp_path):
    from ragplugins.readers import read_documents

    on_disk = {d.id_: d for d in read_documents([synth.make_corpus(tmp_path, 60)]).documents}
    streamed = {d.id_: d for d in synth.iter_documents(60)}
    assert sorted(streamed) == sorted(on_disk) and len(streamed) == 6
    for doc_id, doc in streamed.items():
        assert doc.text == on_disk[doc_id].text
        assert doc.metadata["file_path"] == on_disk[doc_id].metadata["file_path"]
        assert set(doc.excluded_embed_metadata_keys) <= set(on_disk[doc_id].excluded_embed_metadata_keys)


def test_stored_bytes_by_part_on_disk_and_on_s3(tmp_path, monkeypatch):
    pytest.importorskip("moto")
    import bench_scale_s3 as bench

    for name in ("AWS_ACCESS_KEY_ID", "AWS_SECRET_ACCESS_KEY", "AWS_REGION", "AWS_DEFAULT_REGION", "AWS_ENDPOINT_URL",
                 "AWS_ENDPOINT", "AWS_ALLOW_HTTP"):
        monkeypatch.delenv(name, raising=False)  # start_s3 sets them; restored after the test

    files = {"lancedb/chunks.lance/data/a.lance": 100, "lancedb/chunks.lance/_indices/x/part": 30,
             "lancedb/chunks.lance/_versions/1.manifest": 7, "sidecars/overview/o.chunks.json": 50,
             "manifest.json": 3}
    for key, size in files.items():
        (tmp_path / key).parent.mkdir(parents=True, exist_ok=True)
        (tmp_path / key).write_bytes(b"x" * size)
    want = {"lance rows (all versions)": 100, "lance indices": 30, "lance versions and deletions": 7,
            "plugin state": 50, "other (manifest, journal)": 3}
    assert bench.stored_bytes(str(tmp_path)) == want
    server = bench.start_s3()
    try:
        client = bench._s3()
        for key, size in files.items():
            client.put_object(Bucket=bench.BUCKET, Key=f"run/{key}", Body=b"x" * size)
        client.put_object(Bucket=bench.BUCKET, Key="other-run/manifest.json", Body=b"not counted")
        assert bench.stored_bytes(f"s3://{bench.BUCKET}/run") == want
        bench.remove(f"s3://{bench.BUCKET}/run")
        assert bench.stored_bytes(f"s3://{bench.BUCKET}/run") == {}
        assert bench.stored_bytes(f"s3://{bench.BUCKET}/other-run") == {"other (manifest, journal)": 11}
    finally:
        server.stop()
