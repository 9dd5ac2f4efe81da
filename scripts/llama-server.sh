#!/usr/bin/env bash
# Build llama-server once, from the llama-cpp-python sdist (the same llama.cpp that runs
# in-process; scripts/llama-sources.sh fetches it), and print its path. The tests of the server
# backend run against it, bound to 127.0.0.1. Kept in the user cache, so later runs reuse it.
set -euo pipefail
version="${LLAMA_CPP_PYTHON_VERSION:-0.3.36}"
cache="${XDG_CACHE_HOME:-$HOME/.cache}/repocontext/llama-server-$version"
bin="$cache/build/bin/llama-server"
if [ ! -x "$bin" ]; then
    echo "repocontext: building llama-server $version once (about 5 minutes on 2 cores)" >&2
    src="$(bash "$(dirname "${BASH_SOURCE[0]}")/llama-sources.sh")"
    cmake -S "$src/vendor/llama.cpp" -B "$cache/build" -DLLAMA_CURL=OFF \
        -DLLAMA_BUILD_SERVER=ON -DLLAMA_BUILD_TESTS=OFF -DLLAMA_BUILD_EXAMPLES=OFF \
        -DCMAKE_BUILD_TYPE=Release >&2
    cmake --build "$cache/build" --target llama-server -j "$(nproc)" >&2
fi
echo "$bin"
