#!/usr/bin/env bash
# Download and unpack the llama-cpp-python source release once (the llama.cpp that runs
# in-process) and print the unpacked folder. llama-server.sh builds llama-server from it; the
# FIM family tests read llama.cpp's own vocabulary files in it (vendor/llama.cpp/models). Kept
# in the user cache, so later runs reuse it; unpacked beside it first and then moved into place,
# so an interrupted run leaves no half a folder to be reused.
set -euo pipefail
version="${LLAMA_CPP_PYTHON_VERSION:-0.3.36}"
cache="${XDG_CACHE_HOME:-$HOME/.cache}/repocontext/llama-server-$version"
src="$cache/llama_cpp_python-$version"
if [ ! -d "$src" ]; then
    mkdir -p "$cache"
    cd "$cache"
    if [ ! -f "llama_cpp_python-$version.tar.gz" ]; then
        echo "repocontext: downloading the llama-cpp-python $version source release once" >&2
        "${PYTHON:-python3}" -m pip download -q --no-deps --no-binary :all: \
            "llama-cpp-python==$version" -d . >&2
    fi
    unpack="$(mktemp -d "$cache/unpack.XXXXXX")"
    tar -xzf "llama_cpp_python-$version.tar.gz" -C "$unpack"
    mv "$unpack/llama_cpp_python-$version" "$src"
    rmdir "$unpack"
fi
echo "$src"
