"""ONNX Runtime, imported with its telemetry off before it can start.

ONNX Runtime 1.29 and later send usage events to Microsoft from Linux and macOS too: a process
that keeps a session loaded looked up the event endpoint's name 11 times in 75 s and queued
events (a device id, the Python path, the model file's name) under
`~/.cache/Microsoft/DeveloperTools/`. `disable_telemetry_events()` acts only once the runtime's
environment exists, after its first event; the environment variables below are read when it
is created, so they are set before the first import (1.29-1.31 read ORT_DISABLE_TELEMETRY, later
releases ORT_TELEMETRY_DISABLED). `tests/test_trust.py` traces every socket to prove it.
"""

from __future__ import annotations

import contextlib
import glob
import os
import shutil
import stat
from collections.abc import Callable
from pathlib import Path
from typing import Any

from ..store import stamps
from ..store.files import private_dir

TELEMETRY_OFF = {"ORT_TELEMETRY_DISABLED": "1", "ORT_DISABLE_TELEMETRY": "1"}


def onnxruntime():
    """The `onnxruntime` module, its telemetry off."""
    os.environ.update(TELEMETRY_OFF)
    import onnxruntime as ort

    disable = getattr(ort, "disable_telemetry_events", None)
    if disable is not None:
        disable()
    return ort


def cached_session(
    model_path: Path, cached: Path, sha256: str, options: Callable[[Any, Path | None], Any]
):
    """An ONNX Runtime session on `model_path`, its graph optimised once (the extended level,
    which does not depend on the CPU) and kept at `cached`, where later loads take it as it is
    (the cost: bench/results/cli_speed.md). None when no cache can be used here (a folder that
    is not ours, read-only or full) or the model itself does not load: the caller loads the
    model itself, or says why it cannot.

    The optimised graph's weights are kept beside it in a file of their own (`weights_of`):
    optimising an int8 model folds its weights into float32 (23 MB became 90 MB), and a graph
    that carries them in its protobuf took about 100 ms to load against about 30 ms for one
    that maps them from their own file; that load is in every command-line question.

    The kept graph and weights are code-like input to ONNX Runtime that decides every vector,
    and a damaged one loads without a word (a flipped byte in its weights moved a query's
    vector to a cosine of 0.03 from the right one): they are trusted only in a private folder
    and each with its stamp (store/stamps.py: written with it, the file's stat as it was
    written, `sha256` the model's it was made from). Anything else, a link or a file changed
    or put in its place included, is made again. `options(level, save_to)` makes the session
    options."""
    ort = onnxruntime()
    weights = weights_of(cached)
    # each kept file and the stamp that vouches for it
    kept = [
        (cached, cached.with_suffix(".verified")),
        (weights, weights.with_suffix(".weights.verified")),
    ]
    trusted = _private_folder(cached.parent)
    if trusted is None:
        return None
    providers = ["CPUExecutionProvider"]
    if trusted and all(stamps.stamped(path, stamp, sha256) for path, stamp in kept):
        try:
            return ort.InferenceSession(
                str(cached), options(ort.GraphOptimizationLevel.ORT_DISABLE_ALL, None), providers
            )
        except Exception:
            pass  # stamped but damaged all the same (the disk's own fault): made again
    # Written in a folder of this process's own, then each file moved into place: the graph
    # names its weights file by name, so both are written under their final names.
    work = cached.with_name(f"{cached.name}.{os.getpid()}.partial")
    try:
        for path, stamp in kept:
            stamp.unlink(missing_ok=True)  # it describes no file that is trusted now
            path.unlink(missing_ok=True)
        shutil.rmtree(work, ignore_errors=True)
        _sweep_partials(cached)
        private_dir(work)
        level = ort.GraphOptimizationLevel.ORT_ENABLE_EXTENDED
        made = options(level, work / cached.name)
        made.add_session_config_entry(
            "session.optimized_model_external_initializers_file_name", weights.name
        )
        made.add_session_config_entry(
            "session.optimized_model_external_initializers_min_size_in_bytes", "1024"
        )
        session = ort.InferenceSession(str(model_path), made, providers)
        for path, _ in reversed(kept):  # the weights first: a graph in place has its weights
            os.chmod(work / path.name, 0o600)
            os.replace(work / path.name, path)
        for path, stamp in kept:
            stamps.write_stamp(path, stamp, sha256)
        return session
    except Exception:
        return None  # an unwritable or full cache, or a model that does not load
    finally:
        shutil.rmtree(work, ignore_errors=True)


def _sweep_partials(cached: Path) -> None:
    """Remove what processes that died while making `cached` left (`<name>.<pid>.partial`,
    a folder with 90 MB of weights, or a file from releases before): one whose pid is no
    running process. A live one, or a pid taken again since, is left to its owner."""
    prefix = f"{cached.name}."
    for left in cached.parent.glob(f"{glob.escape(cached.name)}.*.partial"):
        pid = left.name[len(prefix) : -len(".partial")]
        if not pid.isdigit() or int(pid) == os.getpid() or _running(int(pid)):
            continue
        if left.is_dir() and not left.is_symlink():
            shutil.rmtree(left, ignore_errors=True)
        else:
            with contextlib.suppress(OSError):
                left.unlink()


def _running(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except (OSError, OverflowError):
        return True  # another user's process, or not a pid this system can name: left alone
    return True


def weights_of(cached: Path) -> Path:
    """Where the weights of the optimised graph kept at `cached` are kept."""
    return cached.with_suffix(".weights")


def _private_folder(directory: Path) -> bool | None:
    """Make `directory` private (0700, any ancestor it needs too) and say whether the files
    already in it can be trusted: False when anyone else could write it until now, None when
    it cannot be used (not a folder of ours, or not writable)."""
    try:
        private_dir(directory)  # what it creates is 0700 whatever the umask
        st = os.lstat(directory)
    except OSError:
        return None
    if not stat.S_ISDIR(st.st_mode) or st.st_uid not in stamps.owners():
        return None
    if st.st_uid == os.getuid() and st.st_mode & 0o077:
        try:
            os.chmod(directory, 0o700)
        except OSError:
            return None
    return not st.st_mode & 0o022
