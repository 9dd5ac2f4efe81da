"""A server the user configured, as an address that can be asked: the one HTTP client of
repocontext, for the generation server and the embedding server alike.

A server is outside our control, so every reply is bounded: at most `MAX_REPLY_BYTES` (a
line of a stream at most `MAX_LINE_BYTES`), and the whole reply, headers included, within
its deadline, however slowly the server drips it (per-read time-outs alone let a server
that sends a byte a second hold a request forever: a timer shuts the socket at the
deadline). Past either, the request ends with one line that says so. Connections are kept
between requests (urllib3's pool, maintained and already installed with detect-secrets'
requests); a stream left early closes its own, so the server stops generating.

A URL may carry a user and password (sent as HTTP basic auth, never in the address asked
for, where they would fail the host lookup and be quoted in its error) and a query (kept on
every request); `shown` is the URL without its credentials, for messages, statuses and logs.
Nothing here is reached unless the user set a `server_url`.
"""

from __future__ import annotations

import base64
import json
import os
import socket
import threading
import time
import urllib.parse
from collections.abc import Iterator
from typing import TYPE_CHECKING, Any

import urllib3
from urllib3.connection import HTTPConnection, HTTPSConnection

from .errors import RepoContextError, redact_secrets, redact_url
from .runtime.threads import start_timer

if TYPE_CHECKING:
    from threading import Timer

# a bearer token for servers that want one (vLLM's --api-key, LM Studio, a team's proxy):
# read from the environment at each start, never written to the config or the index
API_KEY_ENV = "REPOCONTEXT_SERVER_KEY"
# The most a reply may hold: an embedding batch of 64 texts at 4096 dimensions is about 4 MB
# of JSON, a streamed completion of a few dozen tokens a few KB.
MAX_REPLY_BYTES = 32 * 2**20
MAX_LINE_BYTES = 2**20
_CHUNK = 64 * 2**10


class Endpoint:
    """`url` parsed once; `error` is the exception raised (with `setting`, the config key the
    user fixes, in its one line); `timeout` bounds each reply, from the request to its last
    byte. Thread-safe: the pool hands each thread its own connection."""

    def __init__(self, url: str, setting: str, error: type[RepoContextError], timeout: float):
        self.url = url.rstrip("/")
        self.shown = redact_url(self.url)
        self.setting = setting
        self.error = error
        self.timeout = timeout
        try:
            parts = urllib.parse.urlsplit(self.url)
            port = parts.port  # a ValueError for a port that is no number
        except ValueError as exc:  # such as an unclosed "[" of an IPv6 address
            raise error(
                f"{setting} {self.shown} is not a URL ({exc}); give one such as "
                "http://127.0.0.1:8012"
            ) from None
        if parts.scheme not in ("http", "https") or not parts.hostname:
            raise error(
                f"{setting} is {self.shown!r}: give an http:// or https:// address with a "
                "host, such as http://127.0.0.1:8012"
            )
        self.host: str = parts.hostname
        self.port = port or (443 if parts.scheme == "https" else 80)
        self.https = parts.scheme == "https"
        self.path = parts.path.rstrip("/")  # each request's path goes after it
        self._query = f"?{parts.query}" if parts.query else ""
        self.headers = {"Content-Type": "application/json"}
        if parts.username is not None:
            user = urllib.parse.unquote(parts.username)
            login = f"{user}:{urllib.parse.unquote(parts.password or '')}".encode()
            self.headers["Authorization"] = "Basic " + base64.b64encode(login).decode()
        elif os.environ.get(API_KEY_ENV):
            self.headers["Authorization"] = "Bearer " + os.environ[API_KEY_ENV]
        pool = urllib3.HTTPSConnectionPool if self.https else urllib3.HTTPConnectionPool
        self._pool = pool(self.host, self.port, maxsize=4, block=False, retries=False)
        self._pool.ConnectionCls = _CutAtDeadline if not self.https else _CutAtDeadlineTLS

    def target(self, path: str) -> str:
        """What a request for `path` asks the server for: under the URL's path, with its query."""
        return f"{self.path}{path}{self._query}"

    def json(
        self,
        method: str,
        path: str,
        payload: dict[str, Any] | None = None,
        timeout: float | None = None,
    ) -> Any:
        """One request and its JSON answer within `timeout` (the endpoint's by default); a
        failure is `error` with what to do, with a `status` attribute when the server
        answered but not 200, and `kind`: "refused", "not_answering", "too_slow", "too_big"."""
        deadline = time.monotonic() + (self.timeout if timeout is None else timeout)
        with self.reply(method, path, payload, deadline) as reply:
            data = reply.body()
            if reply.status != 200:
                raise self.failure(
                    f"the server at {self.shown} answered {reply.status} to {path}"
                    f"{server_reason(data)}; check {self.setting}",
                    "refused",
                    reply.status,
                )
        try:
            return json.loads(data or b"{}")
        except ValueError as exc:
            raise self.failure(
                f"the server at {self.shown} answered {path} with something that is not JSON "
                f"({exc}); check {self.setting}",
                "refused",
            ) from None

    def reply(
        self, method: str, path: str, payload: dict[str, Any] | None, deadline: float
    ) -> Reply:
        """A request sent, its reply's status and headers read, by `deadline`; read its body
        with `body()` or `lines()` inside `with`, which gives the connection back (kept when
        the reply was read whole, closed otherwise: a stream left early stops the server)."""
        remaining = deadline - time.monotonic()
        if remaining <= 0:
            raise self.too_slow(path)
        body = json.dumps(payload).encode() if payload is not None else None
        _armed.deadline = deadline
        try:
            resp = self._pool.urlopen(
                method,
                self.target(path),
                body=body,
                headers=self.headers,
                retries=False,
                redirect=False,
                preload_content=False,
                decode_content=False,  # a compressed bomb is never inflated
                release_conn=False,
                timeout=urllib3.Timeout(connect=remaining, read=remaining),
            )
        except (OSError, urllib3.exceptions.HTTPError) as exc:
            raise self._broken(exc, path, deadline) from None
        finally:
            _armed.deadline = None
        return Reply(self, resp, path, deadline)

    def failure(self, message: str, kind: str, status: int | None = None) -> RepoContextError:
        exc = self.error(message)
        exc.kind = kind  # type: ignore[attr-defined]
        if status is not None:
            exc.status = status  # type: ignore[attr-defined]
        return exc

    def stream_failed(self, exc: RepoContextError) -> str:
        """A streamed answer broke off: "deadline" when it ran out of time (the caller's
        deadline or the endpoint's time-out), else `exc` is raised."""
        if getattr(exc, "kind", None) == "too_slow":
            return "deadline"
        raise exc

    def too_slow(self, path: str) -> RepoContextError:
        return self.failure(
            f"the server at {self.shown} did not finish its reply to {path} within "
            f"{self.timeout:g} s; check that it is not overloaded, or fix {self.setting}",
            "too_slow",
        )

    def not_answering(self, exc: BaseException) -> RepoContextError:
        detail = redact_secrets(_reason(exc), self.url)
        failure = self.failure(
            f"the server at {self.shown} is not answering ({detail}); "
            f"start it or fix {self.setting}",
            "not_answering",
        )
        failure.detail = detail  # type: ignore[attr-defined]
        return failure

    def _broken(self, exc: BaseException, path: str, deadline: float) -> RepoContextError:
        """A request that failed under us: past its deadline (the timer shut the socket, or a
        read timed out) it was the server's slowness, else the server is not answering."""
        if time.monotonic() >= deadline - 0.05:
            return self.too_slow(path)
        return self.not_answering(exc)


class Reply:
    """A reply being read: its status, then its body whole or line by line, never past the
    size caps or the deadline."""

    def __init__(self, endpoint: Endpoint, resp: Any, path: str, deadline: float):
        self.endpoint, self._resp, self.path, self.deadline = endpoint, resp, path, deadline
        self.status: int = resp.status
        self._whole = False  # read to its end: the connection may serve the next request

    def __enter__(self) -> Reply:
        return self

    def __exit__(self, *exc: object) -> None:
        conn = self._resp.connection
        if isinstance(conn, _CutAtDeadline | _CutAtDeadlineTLS):
            conn.disarm()
        if not self._whole:
            self._resp.close()  # the socket goes; the pool makes a new one when next asked
        self._resp.release_conn()

    def body(self) -> bytes:
        """The whole body; `too_big` past MAX_REPLY_BYTES (told by Content-Length at once)."""
        self._check_length()
        parts, size = [], 0
        for chunk in self._chunks():
            size += len(chunk)
            if size > MAX_REPLY_BYTES:
                raise self._too_big()
            parts.append(chunk)
        return b"".join(parts)

    def lines(self) -> Iterator[bytes]:
        """The body's lines as they come (without their end), each at most MAX_LINE_BYTES."""
        self._check_length()
        pending, size = b"", 0
        for chunk in self._chunks():
            size += len(chunk)
            if size > MAX_REPLY_BYTES:
                raise self._too_big()
            pending += chunk
            *whole, pending = pending.split(b"\n")
            yield from whole
            if len(pending) > MAX_LINE_BYTES:
                raise self._too_big(f"a line over {MAX_LINE_BYTES // 2**20} MiB")
        if pending:
            yield pending

    def _check_length(self) -> None:
        length = self._resp.headers.get("Content-Length", "")
        if length.isdigit() and int(length) > MAX_REPLY_BYTES:
            raise self._too_big()

    def _chunks(self) -> Iterator[bytes]:
        endpoint = self.endpoint
        while True:
            try:
                chunk = self._resp.read1(_CHUNK)
            except (OSError, urllib3.exceptions.HTTPError) as exc:
                raise endpoint._broken(exc, self.path, self.deadline) from None
            if not chunk:
                # the end, or the timer shut the socket at the deadline
                if time.monotonic() >= self.deadline - 0.01:
                    raise endpoint.too_slow(self.path)
                self._whole = True
                return
            yield chunk

    def _too_big(self, what: str = "") -> RepoContextError:
        endpoint = self.endpoint
        what = what or f"more than {MAX_REPLY_BYTES // 2**20} MiB"
        return endpoint.failure(
            f"the server at {endpoint.shown} sent {what} in its reply to {self.path}; "
            f"is {endpoint.setting} the right server?",
            "too_big",
        )


# what `server_events` yields for `data: [DONE]`, the OpenAI stream's last line
DONE: dict[str, Any] = {}


def server_events(reply: Reply) -> Iterator[dict[str, Any]]:
    """The JSON objects of a server-sent event stream (`data: {...}` lines), then `DONE` if
    the server ended it with `data: [DONE]`."""
    for raw in reply.lines():
        line = raw.decode("utf-8", "replace").strip()
        if not line.startswith("data:"):
            continue
        data = line[5:].strip()
        if data == "[DONE]":
            yield DONE
            return
        event = json.loads(data)
        if isinstance(event, dict):
            yield event


def server_reason(body: bytes) -> str:
    """The server's own words for a refusal (OpenAI-style `{"error": {"message"}}`), short."""
    try:
        answer = json.loads(body)
    except ValueError:
        return ""
    error = answer.get("error") if isinstance(answer, dict) else None
    message = error.get("message") if isinstance(error, dict) else error
    return f" ({str(message)[:160]})" if message else ""


def _reason(exc: BaseException) -> str:
    """What went wrong in the OS's words ("[Errno 111] Connection refused"), not urllib3's
    wrapping of it (its messages hold object addresses)."""
    while True:
        inner = exc.__cause__ or exc.__context__
        if isinstance(exc, urllib3.exceptions.NewConnectionError):
            return (
                str(exc).split(": ", 1)[-1].removeprefix("Failed to establish a new connection: ")
            )
        if inner is None or not isinstance(exc, urllib3.exceptions.HTTPError):
            return str(exc) or type(exc).__name__
        exc = inner


# The deadline the next request of this thread is sent with (set around `urlopen`, which
# makes or reuses the connection out of our sight).
_armed = threading.local()


class _DeadlineTimer:
    """Shuts a connection's socket at the reply's deadline, whatever the reply is doing:
    connecting, sending, waiting for headers, or reading a body a byte at a time."""

    sock: socket.socket | None
    _timer: Timer | None = None

    def request(self, *args: Any, **kwargs: Any) -> None:
        deadline = getattr(_armed, "deadline", None)
        if deadline is not None:
            self.disarm()
            self._timer = start_timer("deadline", max(0.0, deadline - time.monotonic()), self._cut)
        super().request(*args, **kwargs)  # type: ignore[misc]

    def disarm(self) -> None:
        if self._timer is not None:
            self._timer.cancel()
            self._timer = None

    def _cut(self) -> None:
        sock = self.sock
        if sock is not None:
            try:
                sock.shutdown(socket.SHUT_RDWR)
            except OSError:
                pass


class _CutAtDeadline(_DeadlineTimer, HTTPConnection):
    pass


class _CutAtDeadlineTLS(_DeadlineTimer, HTTPSConnection):
    pass
