"""What a path's name alone rules out of the index, and the reason `status --skipped` gives.

Tables, not code: vendored, build and cache folders; lockfiles; secrets (never even read);
binary and data suffixes. They grow with every ecosystem the index meets, so they live apart
from the listing (index/scan.py), which applies `path_skip_reason` to each candidate.
"""

from __future__ import annotations

import os

from .roles import any_glob

SKIP_DIRS = frozenset(
    {
        ".git",
        ".hg",
        ".svn",
        "node_modules",
        "bower_components",
        "dist",
        "build",
        "target",
        "vendor",
        "third_party",
        ".venv",
        "venv",
        "__pycache__",
        ".tox",
        ".nox",
        ".mypy_cache",
        ".pytest_cache",
        ".ruff_cache",
        ".hypothesis",
        ".idea",
        ".next",
        ".nuxt",
        ".gradle",
        ".eggs",
        "site-packages",
        ".cache",
        ".terraform",
        "Pods",
        ".direnv",
        "coverage",
        ".bundle",
        ".yarn",
        ".pnpm-store",
        "_build",
        "_site",  # a static site's output (Jekyll, Eleventy): immer's snapshot keeps its pages
        "htmlcov",
    }
)
LOCKFILES = frozenset(
    {
        "package-lock.json",
        "npm-shrinkwrap.json",
        "pnpm-lock.yaml",
        "yarn.lock",
        "bun.lockb",
        "Cargo.lock",
        "poetry.lock",
        "uv.lock",
        "Pipfile.lock",
        "pdm.lock",
        "composer.lock",
        "Gemfile.lock",
        "go.sum",
        "flake.lock",
        "mix.lock",
        "packages.lock.json",
        "Podfile.lock",
    }
)
SECRET_PATTERNS = (
    ".env",
    ".env.*",
    "*.pem",
    "*.key",
    "*.p12",
    "*.pfx",
    "*.jks",
    "*.keystore",
    "id_rsa*",
    "id_dsa*",
    "id_ecdsa*",
    "id_ed25519*",
    "credentials",
    "credentials.*",
    "*credentials.json",
    ".netrc",
    ".pgpass",
    ".htpasswd",
    "*.kdbx",
    "secrets.*",
    "*.env",
    ".npmrc",
    ".pypirc",
    ".git-credentials",
    "*.tfvars",
    "*.tfvars.json",
    "kubeconfig",
    "*.kubeconfig",
    "*service-account*.json",
    "*service_account*.json",
    "*.ovpn",
)
# Credential files known by where they sit rather than by name alone.
_SECRET_NAME = any_glob(SECRET_PATTERNS)
SECRET_PATHS = (".docker/config.json", ".kube/config", ".aws/credentials", ".ssh/config")
# Text, but data rather than code: translation catalogues, source maps, tables, logs.
DATA_SUFFIXES = frozenset({".po", ".pot", ".map", ".csv", ".tsv", ".log", ".svg"})
BINARY_SUFFIXES = frozenset(
    {
        ".png",
        ".jpg",
        ".jpeg",
        ".gif",
        ".bmp",
        ".ico",
        ".webp",
        ".pdf",
        ".zip",
        ".gz",
        ".tgz",
        ".bz2",
        ".xz",
        ".7z",
        ".tar",
        ".rar",
        ".so",
        ".dylib",
        ".dll",
        ".exe",
        ".o",
        ".a",
        ".lib",
        ".class",
        ".jar",
        ".war",
        ".pyc",
        ".pyo",
        ".whl",
        ".egg",
        ".woff",
        ".woff2",
        ".ttf",
        ".otf",
        ".eot",
        ".mp3",
        ".mp4",
        ".wav",
        ".ogg",
        ".mov",
        ".avi",
        ".sqlite",
        ".db",
        ".bin",
        ".dat",
        ".gguf",
        ".onnx",
        ".pt",
        ".npy",
        ".npz",
        ".parquet",
        ".psd",
        ".svgz",
    }
)


def path_skip_reason(rel: str) -> str | None:
    """Why a path is skipped from its name alone, or None."""
    try:
        rel.encode("utf-8")
    except UnicodeEncodeError:
        return "file name is not valid UTF-8"
    parts = rel.split("/")
    name = parts[-1]
    for part in parts[:-1]:
        if part in SKIP_DIRS or part.endswith(".egg-info"):
            return f"in a vendored, build or cache folder ({part}/)"
    if is_secret(name) or any(rel == p or rel.endswith("/" + p) for p in SECRET_PATHS):
        return "looks like a secret (never indexed)"
    if name in LOCKFILES:
        return "lockfile"
    suffix = os.path.splitext(name)[1].lower()
    if suffix in BINARY_SUFFIXES:
        return "binary file type"
    if suffix in DATA_SUFFIXES:
        return f"data file type ({suffix})"
    return None


def is_secret(name: str) -> bool:
    return _SECRET_NAME.match(name) is not None
