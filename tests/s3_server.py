"""A local S3-compatible server for the tests (moto's server mode on 127.0.0.1) and the environment a
host sets to put an index on it."""

from __future__ import annotations

import socket
import uuid
from collections.abc import Iterator
from contextlib import contextmanager
from typing import Any

import pytest

KEY_ID = "AKIARAGPLUGINSTEST01"
CLEARED = ("AWS_PROFILE", "AWS_SESSION_TOKEN", "AWS_ENDPOINT_URL_S3", "AWS_DEFAULT_REGION")


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


@contextmanager
def local_s3_server() -> Iterator[str]:
    """Runs moto's S3 server on a free port of 127.0.0.1; yields its endpoint URL."""
    moto_server = pytest.importorskip("moto.server")
    server = moto_server.ThreadedMotoServer(ip_address="127.0.0.1", port=free_port(), verbose=False)
    server.start()
    try:
        host, port = server.get_host_and_port()
        yield f"http://{host}:{port}"
    finally:
        server.stop()


def s3_environment(monkeypatch: Any, endpoint: str, secret: str) -> None:
    """The environment a host sets for an index on object storage."""
    for name in CLEARED:
        monkeypatch.delenv(name, raising=False)
    monkeypatch.setenv("AWS_ACCESS_KEY_ID", KEY_ID)
    monkeypatch.setenv("AWS_SECRET_ACCESS_KEY", secret)
    monkeypatch.setenv("AWS_ENDPOINT_URL", endpoint)
    monkeypatch.setenv("AWS_REGION", "us-east-1")


def new_bucket(endpoint: str, secret: str) -> Any:
    """A boto3 client on the server with a new, empty bucket (its name in ``client.bucket``)."""
    boto3 = pytest.importorskip("boto3")
    client = boto3.client("s3", endpoint_url=endpoint, region_name="us-east-1",
                          aws_access_key_id=KEY_ID, aws_secret_access_key=secret)
    client.bucket = f"rp-{uuid.uuid4().hex[:12]}"
    client.create_bucket(Bucket=client.bucket)
    return client
