"""A server the user configured, as an address that can be asked: the one place a URL from
the config becomes connections.

A URL may carry a user and password (sent as HTTP basic auth, never in the address asked
for, where they would fail the host lookup and be quoted in its error) and a query (kept on
every request); `shown` is the URL without its credentials, for messages, statuses and logs.
Nothing here is reached unless the user set a `server_url`.
"""

from __future__ import annotations

import base64
import http.client
import json
import os
import urllib.parse
from collections.abc import Iterator
from typing import Any

from .errors import RepoContextError, redact_secrets, redact_url

# a bearer token for servers that want one (vLLM's --api-key, LM Studio, a team's proxy):
# read from the environment at each start, never written to the config or the index
API_KEY_ENV = "REPOCONTEXT_SERVER_KEY"


class Endpoint:
    """`url` parsed once; `error` is the exception raised (with `setting`, the config key the
    user fixes, in its one line)."""

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

    def connect(self, timeout: float) -> http.client.HTTPConnection:
        if self.https:
            return http.client.HTTPSConnection(self.host, self.port, timeout=timeout)
        return http.client.HTTPConnection(self.host, self.port, timeout=timeout)

    def target(self, path: str) -> str:
        """What a request for `path` asks the server for: under the URL's path, with its query."""
        return f"{self.path}{path}{self._query}"

    def json(self, method: str, path: str, payload: dict[str, Any] | None = None) -> Any:
        """One request and its JSON answer; a failure is `error` with what to do (with a
        `status` attribute when the server answered, but not 200)."""
        conn = self.connect(self.timeout)
        try:
            body = json.dumps(payload) if payload is not None else None
            conn.request(method, self.target(path), body, self.headers)
            resp = conn.getresponse()
            data = resp.read()
            if resp.status != 200:
                refused = self.error(
                    f"the server at {self.shown} answered {resp.status} to {path}"
                    f"{server_reason(data)}; check {self.setting}"
                )
                refused.status = resp.status  # type: ignore[attr-defined]
                raise refused
            return json.loads(data or b"{}")
        except (OSError, http.client.HTTPException, ValueError) as exc:
            raise self.not_answering(exc) from exc
        finally:
            conn.close()

    def stream_failed(self, exc: BaseException) -> str:
        """A streamed answer broke off: "deadline" when it was the socket's time limit (the
        caller's deadline), else the error for a server that is not answering (raised)."""
        if isinstance(exc, TimeoutError) or "timed out" in str(exc):
            return "deadline"
        raise self.not_answering(exc) from exc

    def not_answering(self, exc: BaseException) -> RepoContextError:
        return self.error(
            f"the server at {self.shown} is not answering "
            f"({redact_secrets(str(exc) or type(exc).__name__, self.url)}); "
            f"start it or fix {self.setting}"
        )


# what `server_events` yields for `data: [DONE]`, the OpenAI stream's last line
DONE: dict[str, Any] = {}


def server_events(resp: http.client.HTTPResponse) -> Iterator[dict[str, Any]]:
    """The JSON objects of a server-sent event stream (`data: {...}` lines), then `DONE` if
    the server ended it with `data: [DONE]`."""
    for raw in resp:
        line = raw.decode("utf-8", "replace").strip()
        if not line.startswith("data:"):
            continue
        data = line[5:].strip()
        if data == "[DONE]":
            yield DONE
            return
        yield json.loads(data)


def server_reason(body: bytes) -> str:
    """The server's own words for a refusal (OpenAI-style `{"error": {"message"}}`), short."""
    try:
        answer = json.loads(body)
    except ValueError:
        return ""
    error = answer.get("error") if isinstance(answer, dict) else None
    message = error.get("message") if isinstance(error, dict) else error
    return f" ({str(message)[:160]})" if message else ""
