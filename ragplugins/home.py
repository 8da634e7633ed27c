"""Where an embedded index keeps its files: a local directory, or a prefix in an S3-compatible bucket.

    home = home_for(config.core.persist_dir, config.core.storage)   # LocalHome or ObjectStoreHome
    home.read_text("manifest.json"); home.write_text("journal.json", text); home.writer_lock(600)
    lancedb.connect(home.lancedb_uri, storage_options=home.storage_options())

Everything the core keeps beside the LanceDB table (the manifest, the write journal, the writer lock,
the plugins' state under ``sidecars/``) goes through a home, so a second process, on another machine,
reads exactly what the first wrote. Names are relative and ``/``-separated (``sidecars/overview/x.json``).

The object-store home talks to the bucket with boto3 (the AWS SDK; it also does the conditional PUT the
writer lock needs) and hands LanceDB the same endpoint, region and credentials as ``storage_options``.
Credentials are read from the environment when first needed and kept in memory only: no repr, message,
log line or stored object carries them.
"""

from __future__ import annotations

import os
from abc import ABC, abstractmethod
from collections.abc import Hashable
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

from ragplugins.errors import StoreError

if TYPE_CHECKING:
    from ragplugins.config import StorageSettings

OBJECT_STORE_SCHEMES = ("s3",)


def is_object_store_uri(value: str) -> bool:
    scheme, sep, _ = value.partition("://")
    return bool(sep) and scheme.lower() in OBJECT_STORE_SCHEMES


class IndexHome(ABC):
    """The files of one embedded index, wherever they live."""

    # persist_dir as the user wrote it (a path or an s3:// URI), for messages.
    uri: str

    @property
    @abstractmethod
    def lancedb_uri(self) -> str:
        """Where the LanceDB database (``lancedb/``) of this index lives."""

    def storage_options(self) -> dict[str, str] | None:
        """What ``lancedb.connect`` needs to reach :attr:`lancedb_uri` (None: nothing)."""
        return None

    @abstractmethod
    def read_text(self, name: str) -> str | None:
        """The text of ``name``; None when there is none."""

    @abstractmethod
    def write_text(self, name: str, text: str) -> None:
        """Replace ``name`` in one step: a reader, or a crash, sees the old text or the new one."""

    @abstractmethod
    def delete(self, name: str) -> None:
        """Remove ``name`` (nothing when it is absent)."""

    @abstractmethod
    def signature(self, name: str) -> Hashable:
        """Changes with every write of ``name``; None when it is absent."""

    @abstractmethod
    def files(self, prefix: str) -> list[str]:
        """The names of the files under the folder ``prefix``, sorted (recursively)."""

    @abstractmethod
    def entries(self) -> list[str]:
        """The names at the top of the home (files and folders), sorted."""

    @abstractmethod
    def exists(self) -> bool:
        """Whether anything of an index is there."""

    @abstractmethod
    def holds(self, folder: str) -> bool:
        """Whether the folder ``folder`` holds anything."""

    @abstractmethod
    def location(self, name: str) -> str:
        """Where ``name`` is, for messages."""

    def scrub(self, text: str) -> str:
        """``text`` (a store's error message, say) without any credential in it."""
        return text

    @abstractmethod
    def create(self) -> None:
        """Make room for a new index (a local folder; nothing on object storage)."""

    @abstractmethod
    def writer_lock(self, timeout: float) -> Any:
        """The one-writer lock of this index (a context manager with ``is_free()``)."""

    def __str__(self) -> str:
        return self.uri


class LocalHome(IndexHome):
    """A local directory (persist_dir = "path")."""

    def __init__(self, path: str | os.PathLike):
        self.path = Path(path)
        self.uri = str(self.path)

    def __repr__(self) -> str:
        return f"LocalHome({self.uri!r})"

    @property
    def lancedb_uri(self) -> str:
        return str(self.path / "lancedb")

    def read_text(self, name: str) -> str | None:
        try:
            return (self.path / name).read_text(encoding="utf-8")
        except FileNotFoundError:
            return None

    def write_text(self, name: str, text: str) -> None:
        from ragplugins.writes import atomic_write_text

        path = self.path / name
        path.parent.mkdir(parents=True, exist_ok=True)
        atomic_write_text(path, text)

    def delete(self, name: str) -> None:
        (self.path / name).unlink(missing_ok=True)

    def signature(self, name: str) -> Hashable:
        try:
            st = (self.path / name).stat()
        except FileNotFoundError:
            return None
        return (st.st_mtime_ns, st.st_size, st.st_ino)

    def files(self, prefix: str) -> list[str]:
        root = self.path / prefix
        return sorted(p.relative_to(self.path).as_posix() for p in root.rglob("*") if p.is_file())

    def entries(self) -> list[str]:
        return sorted(p.name for p in self.path.iterdir()) if self.path.is_dir() else []

    def exists(self) -> bool:
        return self.path.is_dir()

    def holds(self, folder: str) -> bool:
        return (self.path / folder).is_dir() and any((self.path / folder).iterdir())

    def location(self, name: str) -> str:
        return str(self.path / name)

    def create(self) -> None:
        self.path.mkdir(parents=True, exist_ok=True)

    def writer_lock(self, timeout: float) -> Any:
        from ragplugins.writes import WriterLock

        return WriterLock(self.path, timeout)


@dataclass(frozen=True)
class _Credentials:
    key_id: str
    secret: str
    token: str | None

    def __repr__(self) -> str:  # never shown, whatever prints it
        return "_Credentials(<hidden>)"


class ObjectStoreHome(IndexHome):
    """A prefix in an S3-compatible bucket (persist_dir = "s3://bucket/prefix")."""

    def __init__(self, uri: str, settings: StorageSettings | None = None):
        from ragplugins.config import StorageSettings

        scheme, _, rest = uri.partition("://")
        if scheme.lower() != "s3" or not rest.split("/", 1)[0]:
            raise StoreError(f"persist_dir = '{uri}': write an object-store location as s3://bucket/prefix")
        self.uri = uri.rstrip("/")
        self.bucket, _, prefix = rest.partition("/")
        self.prefix = prefix.strip("/")
        self.settings = settings or StorageSettings()
        self._s3_client: Any = None
        self._credentials: _Credentials | None = None

    def __repr__(self) -> str:
        return f"ObjectStoreHome({self.uri!r}, endpoint={self.endpoint!r})"

    # -- where and who -------------------------------------------------------
    @property
    def endpoint(self) -> str | None:
        return (self.settings.endpoint or os.environ.get("AWS_ENDPOINT_URL_S3")
                or os.environ.get("AWS_ENDPOINT_URL") or None)

    @property
    def region(self) -> str:
        return (self.settings.region or os.environ.get("AWS_REGION") or os.environ.get("AWS_DEFAULT_REGION")
                or "us-east-1")

    @property
    def allow_http(self) -> bool:
        if self.settings.allow_http is not None:
            return self.settings.allow_http
        return bool(self.endpoint and self.endpoint.startswith("http://"))

    @property
    def where(self) -> str:
        """The location for messages: the URI and the endpoint it is on."""
        return f"'{self.uri}'" + (f" at {self.endpoint}" if self.endpoint else "")

    def credentials(self) -> _Credentials:
        """From the environment variables [ragplugins.storage] names (AWS_ACCESS_KEY_ID, ... by default),
        else from boto3's own chain (a profile in ~/.aws, an instance role); read once."""
        if self._credentials is None:
            s = self.settings
            key_id, secret = os.environ.get(s.access_key_id_env), os.environ.get(s.secret_access_key_env)
            token = os.environ.get(s.session_token_env) or None
            if not (key_id and secret):
                found = self._boto_session().get_credentials()
                if found is not None:
                    frozen = found.get_frozen_credentials()
                    key_id, secret, token = frozen.access_key, frozen.secret_key, frozen.token
            if not (key_id and secret):
                raise StoreError(
                    f"no credentials for {self.where}: set {s.access_key_id_env} and {s.secret_access_key_env} "
                    "in the environment (or name other variables in [ragplugins.storage] access_key_id_env / "
                    "secret_access_key_env)")
            self._credentials = _Credentials(key_id, secret, token)
        return self._credentials

    def _boto_session(self) -> Any:
        try:
            import boto3
        except ImportError:
            raise StoreError(f"persist_dir {self.where} is on object storage, which needs boto3: "
                             "pip install 'ragplugins[s3]'") from None
        return boto3.session.Session()

    @property
    def client(self) -> Any:
        if self._s3_client is None:
            from botocore.config import Config as BotoConfig

            creds = self.credentials()
            self._s3_client = self._boto_session().client(
                "s3", endpoint_url=self.endpoint, region_name=self.region, aws_access_key_id=creds.key_id,
                aws_secret_access_key=creds.secret, aws_session_token=creds.token,
                config=BotoConfig(connect_timeout=5, read_timeout=60, retries={"max_attempts": 3, "mode": "standard"},
                                  s3={"addressing_style": "path" if self.endpoint else "auto"}))
        return self._s3_client

    @property
    def lancedb_uri(self) -> str:
        return f"s3://{self.bucket}/{self.key('lancedb')}"

    def storage_options(self) -> dict[str, str]:
        creds = self.credentials()
        options = {"aws_access_key_id": creds.key_id, "aws_secret_access_key": creds.secret,
                   "aws_region": self.region, "allow_http": str(self.allow_http).lower()}
        if creds.token:
            options["aws_session_token"] = creds.token
        if self.endpoint:
            options["aws_endpoint"] = self.endpoint
            options["aws_virtual_hosted_style_request"] = "false"
        return options

    def key(self, name: str) -> str:
        return f"{self.prefix}/{name}" if self.prefix else name

    # -- objects --------------------------------------------------------------
    def call(self, operation: str, name: str, **kwargs: Any) -> Any:
        """``client.<operation>(Bucket=..., Key=<name>, **kwargs)``; a failure becomes one clear StoreError
        (a missing key is the caller's business: botocore's ClientError with code NoSuchKey/404 passes)."""
        from botocore.exceptions import BotoCoreError, ClientError

        try:
            return getattr(self.client, operation)(Bucket=self.bucket, Key=self.key(name), **kwargs)
        except ClientError as exc:
            if exc.response.get("Error", {}).get("Code") in ("NoSuchKey", "404", "PreconditionFailed", "412"):
                raise
            raise self.explain(exc, name) from None
        except BotoCoreError as exc:
            raise self.explain(exc, name) from None

    def explain(self, exc: Exception, name: str = "") -> StoreError:
        """One line naming the location and what to do (never the credentials)."""
        from botocore.exceptions import ClientError, EndpointConnectionError, NoCredentialsError

        s = self.settings
        what = f"s3://{self.bucket}/{self.key(name)}" if name else self.where
        if isinstance(exc, ClientError):
            code = str(exc.response.get("Error", {}).get("Code", ""))
            if code == "NoSuchBucket":
                return StoreError(f"the bucket '{self.bucket}' of persist_dir {self.where} does not exist; create "
                                  "it (ragplugins does not create buckets) or fix persist_dir")
            if code in ("InvalidAccessKeyId", "SignatureDoesNotMatch", "AccessDenied", "403", "ExpiredToken"):
                return StoreError(f"the object store refused access to {what} ({code}); check the credentials in "
                                  f"{s.access_key_id_env} / {s.secret_access_key_env} and the bucket's policy")
            return StoreError(f"the object store failed on {what} ({code or type(exc).__name__}); "
                              "check persist_dir and [ragplugins.storage]")
        if isinstance(exc, NoCredentialsError):
            return StoreError(f"no credentials for {self.where}: set {s.access_key_id_env} and "
                              f"{s.secret_access_key_env} in the environment")
        if isinstance(exc, EndpointConnectionError) or "connect" in type(exc).__name__.lower():
            return StoreError(f"cannot reach the object store of persist_dir '{self.uri}' at "
                              f"{self.endpoint or 'AWS S3'}; check [ragplugins.storage] endpoint (or "
                              "AWS_ENDPOINT_URL) and that the server is running")
        return StoreError(f"the object store failed on {what} ({type(exc).__name__}); check persist_dir and "
                          "[ragplugins.storage]")

    @staticmethod
    def is_missing(exc: Exception) -> bool:
        code = getattr(exc, "response", {}).get("Error", {}).get("Code")
        return code in ("NoSuchKey", "404")

    def read_text(self, name: str) -> str | None:
        from botocore.exceptions import ClientError

        try:
            body = self.call("get_object", name)["Body"].read()
        except ClientError as exc:
            if self.is_missing(exc):
                return None
            raise self.explain(exc, name) from None
        return bytes(body).decode("utf-8")

    def write_text(self, name: str, text: str) -> None:
        self.call("put_object", name, Body=text.encode("utf-8"), ContentType="application/json")

    def delete(self, name: str) -> None:
        self.call("delete_object", name)

    def signature(self, name: str) -> Hashable:
        from botocore.exceptions import ClientError

        try:
            head = self.call("head_object", name)
        except ClientError as exc:
            if self.is_missing(exc):
                return None
            raise self.explain(exc, name) from None
        return (head.get("ETag"), str(head.get("LastModified")), head.get("ContentLength"))

    def _list(self, prefix: str, delimiter: str | None = None) -> tuple[list[str], list[str]]:
        from botocore.exceptions import BotoCoreError, ClientError

        base = self.key(prefix).rstrip("/") + "/" if prefix or self.prefix else ""
        keys: list[str] = []
        folders: list[str] = []
        kwargs: dict[str, Any] = {"Bucket": self.bucket, "Prefix": base}
        if delimiter:
            kwargs["Delimiter"] = delimiter
        try:
            for page in self.client.get_paginator("list_objects_v2").paginate(**kwargs):
                keys += [o["Key"][len(base):] for o in page.get("Contents", ())]
                folders += [p["Prefix"][len(base):].rstrip("/") for p in page.get("CommonPrefixes", ())]
        except (ClientError, BotoCoreError) as exc:
            raise self.explain(exc, prefix) from None
        return keys, folders

    def files(self, prefix: str) -> list[str]:
        keys, _ = self._list(prefix)
        return sorted(f"{prefix.strip('/')}/{k}" for k in keys if k)

    def entries(self) -> list[str]:
        keys, folders = self._list("", delimiter="/")
        return sorted({*(k for k in keys if k), *folders})

    def exists(self) -> bool:
        return self.holds("")

    def holds(self, folder: str) -> bool:
        from botocore.exceptions import BotoCoreError, ClientError

        base = self.key(folder).rstrip("/") + "/" if folder or self.prefix else ""
        try:
            return bool(self.client.list_objects_v2(Bucket=self.bucket, Prefix=base, MaxKeys=1).get("KeyCount"))
        except (ClientError, BotoCoreError) as exc:
            raise self.explain(exc, folder) from None

    def location(self, name: str) -> str:
        return f"{self.uri}/{name}"

    def scrub(self, text: str) -> str:
        creds = self._credentials
        for secret in (creds.secret, creds.token) if creds is not None else ():
            if secret:
                text = text.replace(secret, "<hidden>")
        return text

    def create(self) -> None:
        """Nothing to make (a prefix exists once an object is under it); the bucket must exist."""
        from botocore.exceptions import BotoCoreError, ClientError

        try:
            self.client.head_bucket(Bucket=self.bucket)
        except ClientError as exc:
            if str(exc.response.get("Error", {}).get("Code")) in ("404", "NoSuchBucket"):
                exc.response["Error"]["Code"] = "NoSuchBucket"
            raise self.explain(exc) from None
        except BotoCoreError as exc:
            raise self.explain(exc) from None

    def writer_lock(self, timeout: float) -> Any:
        from ragplugins.writes import LeaseLock

        return LeaseLock(self, timeout, lease=self.settings.lock_lease)


def home_for(persist_dir: str | os.PathLike, settings: StorageSettings | None = None) -> IndexHome:
    """The home of ``persist_dir``: an object-store prefix for ``s3://bucket/prefix``, else a local directory."""
    if isinstance(persist_dir, str) and is_object_store_uri(persist_dir):
        return ObjectStoreHome(persist_dir, settings)
    return LocalHome(persist_dir)
