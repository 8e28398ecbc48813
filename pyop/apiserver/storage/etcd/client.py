"""A small etcd v3 client over etcd's JSON gateway (grpc-gateway): no gRPC dependency, standard library only.

etcd serves its v3 API as JSON on the client port: ``POST /v3/kv/range``, ``/v3/kv/txn``, ``/v3/kv/deleterange``,
``/v3/kv/compaction``, and ``/v3/watch`` (a stream of newline-separated JSON messages). Keys and values travel
base64-encoded, 64-bit integers as decimal strings, and proto3's defaults (0, false, PUT) are left out of answers.
Debian bookworm's etcd-server is 3.4, whose gateway lives under ``/v3/`` (3.3 used ``/v3beta/``: ``api_prefix``).

Unary calls share one keep-alive connection per endpoint behind a lock, so the client is safe from several threads;
each watch gets its own connection (a long-lived stream), closed by ``Watch.close`` from any thread.
"""

from __future__ import annotations

import base64
import contextlib
import http.client
import json
import socket
import ssl
import threading
from collections.abc import Iterator
from dataclasses import dataclass, field
from typing import Any
from urllib.parse import urlsplit

from pyop.apiserver.storage.backend import StorageExpired, StorageUnavailable

CODE_OUT_OF_RANGE = 11  # gRPC status of "mvcc: required revision has been compacted"


class EtcdError(StorageUnavailable):
    """etcd refused a request (or could not be reached); ``code`` is the gRPC status code, 0 when unreachable."""

    def __init__(self, message: str, code: int = 0) -> None:
        super().__init__(message)
        self.code = code


def b64(data: bytes) -> str:
    return base64.b64encode(data).decode("ascii")


def unb64(text: str | None) -> bytes:
    return base64.b64decode(text) if text else b""


def prefix_end(prefix: bytes) -> bytes:
    """The range end covering every key that starts with ``prefix`` (etcd's ``clientv3.GetPrefixRangeEnd``)."""
    end = bytearray(prefix)
    for index in range(len(end) - 1, -1, -1):
        if end[index] < 0xFF:
            end[index] += 1
            return bytes(end[: index + 1])
    return b"\x00"  # every key


@dataclass(slots=True)
class KeyValue:
    key: bytes
    value: bytes
    create_revision: int
    mod_revision: int
    version: int

    @classmethod
    def from_json(cls, kv: dict[str, Any]) -> KeyValue:
        return cls(
            unb64(kv.get("key")),
            unb64(kv.get("value")),
            int(kv.get("create_revision", 0)),
            int(kv.get("mod_revision", 0)),
            int(kv.get("version", 0)),
        )


@dataclass(slots=True)
class WatchEvent:
    type: str  # "PUT" or "DELETE"
    kv: KeyValue
    prev_kv: KeyValue | None


@dataclass(slots=True)
class WatchResponse:
    revision: int  # the store's revision when the message was sent
    events: list[WatchEvent] = field(default_factory=list)
    created: bool = False
    canceled: bool = False
    compact_revision: int = 0
    cancel_reason: str = ""


@dataclass(slots=True)
class TLSOptions:
    """``--etcd-cafile``, ``--etcd-certfile``, ``--etcd-keyfile``: the CA to trust and a client certificate."""

    ca_file: str | None = None
    cert_file: str | None = None
    key_file: str | None = None

    def context(self) -> ssl.SSLContext:
        context = ssl.create_default_context(cafile=self.ca_file)
        if self.cert_file:
            context.load_cert_chain(self.cert_file, self.key_file)
        return context


def _raise_for(status: int, body: bytes, what: str, revision: int = 0) -> None:
    try:
        answer = json.loads(body)
        message, code = str(answer.get("message") or answer.get("error")), int(answer.get("code", 0))
    except (ValueError, AttributeError):
        message, code = body[:200].decode("utf-8", "replace"), 0
    if code == CODE_OUT_OF_RANGE and "compacted" in message:
        raise StorageExpired(revision)
    raise EtcdError(f"etcd {what}: HTTP {status}: {message}", code)


class Watch:
    """An open watch stream: iterate for responses; ``close`` (any thread) ends the iteration."""

    def __init__(self, connection: http.client.HTTPConnection, response: http.client.HTTPResponse) -> None:
        self._connection = connection
        self._response = response
        self._closed = False

    def __iter__(self) -> Iterator[WatchResponse]:
        try:
            while not self._closed:
                line = self._response.readline()
                if not line:
                    return
                if not line.strip():
                    continue
                message = json.loads(line)
                if "error" in message and "result" not in message:
                    raise EtcdError(f"etcd watch: {message['error'].get('message', message['error'])}")
                yield _watch_response(message.get("result") or {})
        except Exception as error:
            if self._closed:  # closed from another thread: http.client fails in whatever way it happens to
                return
            if isinstance(error, OSError | http.client.HTTPException | ValueError):
                raise EtcdError(f"etcd watch stream broke: {error}") from error
            raise

    def close(self) -> None:
        self._closed = True
        sock = self._connection.sock
        if sock is not None:
            with contextlib.suppress(OSError):
                sock.shutdown(socket.SHUT_RDWR)
        self._connection.close()


def _watch_response(result: dict[str, Any]) -> WatchResponse:
    events = [
        WatchEvent(
            event.get("type", "PUT"),
            KeyValue.from_json(event.get("kv") or {}),
            KeyValue.from_json(event["prev_kv"]) if event.get("prev_kv") else None,
        )
        for event in result.get("events") or []
    ]
    return WatchResponse(
        int((result.get("header") or {}).get("revision", 0)),
        events,
        bool(result.get("created")),
        bool(result.get("canceled")),
        int(result.get("compact_revision", 0)),
        str(result.get("cancel_reason", "")),
    )


class EtcdClient:
    """``endpoints``: etcd client URLs (``http://127.0.0.1:2379``, ``https://...``), tried in order when unreachable."""

    def __init__(
        self,
        endpoints: list[str] | str,
        *,
        tls: TLSOptions | None = None,
        timeout: float = 10.0,
        api_prefix: str = "/v3",
    ) -> None:
        self.endpoints = [endpoints] if isinstance(endpoints, str) else list(endpoints)
        if not self.endpoints:
            raise ValueError("etcd client: no endpoints given (--etcd-servers)")
        for endpoint in self.endpoints:
            parts = urlsplit(endpoint)
            if parts.scheme not in ("http", "https") or not parts.hostname:
                raise ValueError(f"etcd endpoint {endpoint!r} is not an http:// or https:// URL with a host")
        self.tls = tls or TLSOptions()
        self.timeout = timeout
        self.api_prefix = api_prefix.rstrip("/")
        self._current = 0
        self._connection: http.client.HTTPConnection | None = None
        self._lock = threading.Lock()

    # --- transport ----------------------------------------------------------------------------------

    def _connect(self, endpoint: str, timeout: float | None) -> http.client.HTTPConnection:
        parts = urlsplit(endpoint)
        if parts.scheme == "https":
            return http.client.HTTPSConnection(
                parts.hostname or "", parts.port or 2379, timeout=timeout, context=self.tls.context()
            )
        return http.client.HTTPConnection(parts.hostname or "", parts.port or 2379, timeout=timeout)

    def call(self, path: str, body: dict[str, Any], *, revision: int = 0) -> dict[str, Any]:
        """POST one unary request; a broken keep-alive connection is retried once, then the next endpoint."""
        payload = json.dumps(body, separators=(",", ":")).encode()
        with self._lock:
            last_error: Exception | None = None
            for attempt in range(len(self.endpoints) + 1):
                if self._connection is None:
                    self._connection = self._connect(self.endpoints[self._current], self.timeout)
                try:
                    self._connection.request(
                        "POST", self.api_prefix + path, payload, {"Content-Type": "application/json"}
                    )
                    response = self._connection.getresponse()
                    data = response.read()
                except (OSError, http.client.HTTPException) as error:
                    last_error = error
                    self._connection.close()
                    self._connection = None
                    if attempt > 0:  # the first failure may be a keep-alive the server closed: same endpoint again
                        self._current = (self._current + 1) % len(self.endpoints)
                    continue
                if response.status != 200:
                    _raise_for(response.status, data, path, revision)
                answer: dict[str, Any] = json.loads(data)
                return answer
            raise EtcdError(f"etcd unreachable at {', '.join(self.endpoints)}: {last_error}")

    # --- KV -----------------------------------------------------------------------------------------

    def range(
        self, key: bytes, range_end: bytes | None = None, *, revision: int = 0, limit: int = 0
    ) -> tuple[int, list[KeyValue], bool]:
        """(header revision, key-values, more) of ``[key, range_end)`` at ``revision`` (0: latest)."""
        body: dict[str, Any] = {"key": b64(key)}
        if range_end is not None:
            body["range_end"] = b64(range_end)
        if revision:
            body["revision"] = revision
        if limit:
            body["limit"] = limit
        answer = self.call("/kv/range", body, revision=revision)
        kvs = [KeyValue.from_json(kv) for kv in answer.get("kvs") or []]
        return int(answer["header"]["revision"]), kvs, bool(answer.get("more"))

    def put(self, key: bytes, value: bytes) -> int:
        return int(self.call("/kv/put", {"key": b64(key), "value": b64(value)})["header"]["revision"])

    def delete(self, key: bytes, range_end: bytes | None = None) -> tuple[int, int]:
        """(revision, number deleted)."""
        body: dict[str, Any] = {"key": b64(key)}
        if range_end is not None:
            body["range_end"] = b64(range_end)
        answer = self.call("/kv/deleterange", body)
        return int(answer["header"]["revision"]), int(answer.get("deleted", 0))

    def txn(
        self, compare: list[dict[str, Any]], success: list[dict[str, Any]], failure: list[dict[str, Any]]
    ) -> tuple[bool, int, list[dict[str, Any]]]:
        """(succeeded, header revision, responses); build operands with ``compare_*`` and ``op_*``."""
        answer = self.call("/kv/txn", {"compare": compare, "success": success, "failure": failure})
        return bool(answer.get("succeeded")), int(answer["header"]["revision"]), answer.get("responses") or []

    def compact(self, revision: int, *, physical: bool = True) -> None:
        """Forget every revision before ``revision``; reads and watches from older ones fail with StorageExpired."""
        self.call("/kv/compaction", {"revision": revision, "physical": physical})

    def status(self) -> dict[str, Any]:
        return self.call("/maintenance/status", {})

    # --- watch --------------------------------------------------------------------------------------

    def watch(
        self, key: bytes, range_end: bytes | None = None, *, start_revision: int = 0, prev_kv: bool = False
    ) -> Watch:
        """Open a watch stream on ``[key, range_end)`` from ``start_revision`` (0: from now)."""
        create: dict[str, Any] = {"key": b64(key)}
        if range_end is not None:
            create["range_end"] = b64(range_end)
        if start_revision:
            create["start_revision"] = start_revision
        if prev_kv:
            create["prev_kv"] = True
        payload = json.dumps({"create_request": create}).encode()
        last_error: Exception | None = None
        for offset in range(len(self.endpoints)):
            endpoint = self.endpoints[(self._current + offset) % len(self.endpoints)]
            connection = self._connect(endpoint, self.timeout)
            try:
                connection.request("POST", self.api_prefix + "/watch", payload, {"Content-Type": "application/json"})
                response = connection.getresponse()
            except (OSError, http.client.HTTPException) as error:
                connection.close()
                last_error = error
                continue
            if response.status != 200:
                data = response.read()
                connection.close()
                _raise_for(response.status, data, "/watch", start_revision)
            if connection.sock is not None:
                connection.sock.settimeout(None)  # a quiet stream is not a dead one
            return Watch(connection, response)
        raise EtcdError(f"etcd unreachable at {', '.join(self.endpoints)}: {last_error}")

    def close(self) -> None:
        with self._lock:
            if self._connection is not None:
                self._connection.close()
                self._connection = None


def compare_mod_revision(key: bytes, revision: int) -> dict[str, Any]:
    return {"target": "MOD", "key": b64(key), "mod_revision": revision, "result": "EQUAL"}


def compare_absent(key: bytes) -> dict[str, Any]:
    return {"target": "CREATE", "key": b64(key), "create_revision": 0, "result": "EQUAL"}


def op_put(key: bytes, value: bytes) -> dict[str, Any]:
    return {"request_put": {"key": b64(key), "value": b64(value)}}


def op_delete(key: bytes) -> dict[str, Any]:
    return {"request_delete_range": {"key": b64(key)}}


def op_range(key: bytes) -> dict[str, Any]:
    return {"request_range": {"key": b64(key)}}
