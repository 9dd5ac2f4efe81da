#!/usr/bin/env bash
# Install StyLua once (the npm registry's @johnnymorganz/stylua-bin carries the binary for each
# platform) into the user cache and print the binary's path. scripts/test checks the Lua with it.
set -euo pipefail
version="2.5.2"
cache="${XDG_CACHE_HOME:-$HOME/.cache}/repocontext/stylua-$version"
bin="$(find "$cache/node_modules/@johnnymorganz" -maxdepth 2 -name stylua -type f 2>/dev/null | head -1 || true)"
if [ -z "$bin" ]; then
    echo "repocontext: installing StyLua $version from npm once" >&2
    mkdir -p "$cache"
    npm install --silent --no-audit --no-fund --prefix "$cache" "@johnnymorganz/stylua-bin@$version" >&2
    bin="$(find "$cache/node_modules/@johnnymorganz" -maxdepth 2 -name stylua -type f | head -1)"
fi
[ -x "$bin" ] || chmod +x "$bin"
echo "$bin"
