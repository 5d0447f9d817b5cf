#!/usr/bin/env bash
# Runs the project's pinned Bun (installed from npm by `npm install`), else the Bun on PATH.
here="$(cd "$(dirname "$0")/.." && pwd)"
bin="$here/node_modules/bun/bin/bun.exe"
[ -x "$bin" ] || bin="$(readlink -f "$here/node_modules/.bin/bun" 2>/dev/null)"
if [ -n "$bin" ] && [ -x "$bin" ]; then exec "$bin" "$@"; fi
exec bun "$@"
