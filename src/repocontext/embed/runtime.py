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

import os

TELEMETRY_OFF = {"ORT_TELEMETRY_DISABLED": "1", "ORT_DISABLE_TELEMETRY": "1"}


def onnxruntime():
    """The `onnxruntime` module, its telemetry off."""
    os.environ.update(TELEMETRY_OFF)
    import onnxruntime as ort

    disable = getattr(ort, "disable_telemetry_events", None)
    if disable is not None:
        disable()
    return ort
