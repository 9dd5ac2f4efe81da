"""The package's exceptions, one hierarchy, translated once at the boundary.

    RepoContextError            anything the user can act on; str(exc) is the one line to show
    ├── RootError               the repository root does not exist or is not a directory
    │   └── NotAProject         a file outside any project: the open buffers only, no index
    ├── IndexError_             the index file cannot be used
    │   ├── IndexCorrupt        a repocontext index that SQLite cannot read
    │   ├── IndexForeign        a file at the index path that is not a repocontext index
    │   ├── IndexTooNew         written by a newer repocontext (schema version ahead of ours)
    │   ├── IndexBusy           another process is writing the index
    │   ├── IndexDiskFull       the disk holding the index is full
    │   └── IndexImportRefused  an exported index (`index --import`) that cannot be used as it is
    ├── IndexMissing            no index yet for this root
    ├── QueryError              the search question cannot be run as asked
    ├── ConfigError             the config file is unreadable or has a wrong option
    ├── EmbeddingModelError     the embedding model or its tokenizer cannot be loaded
    ├── ModelMismatch           the index was embedded by another model than the configured one
    ├── GenerationError         the generation model or server cannot be used
    └── MissingExtra            an optional part is not installed: names its pip extra

Errors from apsw, tree-sitter and the OS are caught where they happen (store, parser,
scanner) and re-raised as one of these with `raise ... from exc`, so the CLI and the editor
bridge only ever have to print `str(exc)`. A message that shows a server's address shows
`redact_url(address)`: never a password or a token it carries.
"""

from __future__ import annotations

import re
import urllib.parse


class RepoContextError(Exception):
    """Base class: the message says what is wrong and what to do."""


class RootError(RepoContextError):
    """The repository root is unusable."""


class NotAProject(RootError):
    """A file outside any project (no marker above it): completion uses the open buffers
    only, and nothing is indexed or written for its folder."""


class IndexError_(RepoContextError):
    """The index file cannot be used as it is (named with a trailing _ to leave the builtin alone)."""


class IndexCorrupt(IndexError_):
    """The index is a damaged repocontext database."""


class IndexForeign(IndexError_):
    """Something that is not a repocontext index sits at the index path; it is never overwritten."""


class IndexTooNew(IndexError_):
    """The index was written by a newer version of repocontext."""


class IndexBusy(IndexError_):
    """Another `repocontext index` holds the write lock; `pid` is its process id when known."""

    def __init__(self, message: str, pid: int | None = None):
        super().__init__(message)
        self.pid = pid


class IndexDiskFull(IndexError_):
    """The disk holding the index is full: what was committed is whole, nothing more fits."""


class IndexImportRefused(IndexError_):
    """An exported index this repocontext cannot use as it is (`index --import`): not a
    regular file, another version, schema or embedding model, or rows that fail a check."""


class IndexMissing(RepoContextError):
    """There is no index for this root yet."""


class QueryError(RepoContextError):
    """The query cannot be run (for example, nothing searchable in it for the chosen modality)."""


class ConfigError(RepoContextError):
    """The configuration file cannot be used; the message names the option."""


class EmbeddingModelError(RepoContextError):
    """The embedding model is missing, damaged or does not match its configuration."""


class ModelMismatch(RepoContextError):
    """The index's vectors come from another embedding model than the configured one."""


class GenerationError(RepoContextError):
    """The generation model cannot be loaded, or the llama-server cannot be reached."""


class MissingExtra(RepoContextError):
    """An optional part of the package (extras.py) is not installed; the message is the one
    line that says which extra installs it."""


# --- credentials in messages ----------------------------------------------------------------
# A server address is shown in errors, :checkhealth and status, which end up in CI logs and
# bug reports: what it carries for logging in never does. Query parameters whose name says
# "credential" (compared without case, "-" or "_"):
_SECRET_WORDS = ("key", "token", "secret", "password", "passwd", "auth", "credential", "signature")
_SECRET_NAMES = {"sig", "pw", "pwd", "pass", "code"}
_AUTHORITY = re.compile(r"((?:[A-Za-z][A-Za-z0-9+.\-]*:)?//)?([^/?#]*)")
REDACTED = "***"


def _secret_name(name: str) -> bool:
    key = urllib.parse.unquote(name).lower().replace("-", "").replace("_", "")
    return key in _SECRET_NAMES or any(word in key for word in _SECRET_WORDS)


def _url_parts(url: str) -> tuple[str, str, str, str, str, str, str]:
    """(prefix, userinfo, "@" or "", host and port, path, "?"+query or "", "#"+fragment or "")
    of `url`, split as http.client and urllib split it; a value without `//` (no scheme) is
    read as starting with its authority, so `user:pw@host:80` is still found."""
    m = _AUTHORITY.match(url)
    assert m is not None  # every part of the pattern is optional
    prefix, authority, rest = m.group(1) or "", m.group(2), url[m.end() :]
    userinfo, at, hostport = authority.rpartition("@")
    rest, hash_, fragment = rest.partition("#")
    path, q, query = rest.partition("?")
    return prefix, userinfo, at, hostport, path, q + query, hash_ + fragment


def _redacted_params(params: str) -> str:
    """`?a=1&api_key=x` -> `?a=1&api_key=***` (the same for a fragment's `#access_token=x`)."""
    if len(params) < 2:
        return params
    out = []
    for pair in params[1:].split("&"):
        name, eq, value = pair.partition("=")
        out.append(f"{name}={REDACTED}" if eq and value and _secret_name(name) else pair)
    return params[0] + "&".join(out)


def redact_url(url: str) -> str:
    """`url` as it may be shown (an error line, a status, a log): the password of its user
    (`user:secret@` -> `user:***@`), a user with no password (often a token: `***@`) and the
    values of query parameters named like a credential (api_key, token, key, password, auth,
    sig...) replaced by `***`. A URL with none of these comes back unchanged, character for
    character; so does anything that is no URL (it is never an error to show one)."""
    prefix, userinfo, at, hostport, path, query, fragment = _url_parts(url)
    if at and userinfo:
        user, colon, password = userinfo.partition(":")
        if not colon:
            userinfo = REDACTED
        elif password:
            userinfo = f"{user}:{REDACTED}"
    return (
        prefix
        + userinfo
        + at
        + hostport
        + path
        + _redacted_params(query)
        + _redacted_params(fragment)
    )


def redact_secrets(text: str, url: str) -> str:
    """`text` (an exception's message, say) with each credential that `url` carries replaced
    by `***`, wherever it appears: for messages that quote more than the URL itself."""
    _, userinfo, at, _, _, query, fragment = _url_parts(url)
    secrets = []
    if at and userinfo:
        user, colon, password = userinfo.partition(":")
        secrets.append(password if colon else user)
    for params in (query, fragment):
        for pair in params[1:].split("&"):
            name, eq, value = pair.partition("=")
            if eq and _secret_name(name):
                secrets.append(value)
    for secret in sorted((s for s in secrets if len(s) >= 3), key=len, reverse=True):
        for form in {secret, urllib.parse.unquote(secret)}:
            text = text.replace(form, REDACTED)
    return text
