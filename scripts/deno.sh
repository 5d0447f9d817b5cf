#!/usr/bin/env bash
# Runs the project's pinned Deno (installed from npm by `npm install`), else the Deno on PATH.
# deno.json tasks call this instead of `deno`: inside `deno task`, a name found in
# node_modules/.bin is run as a JavaScript bin script, which the native binary is not.
here="$(cd "$(dirname "$0")/.." && pwd)"
if [ -x "$here/node_modules/deno/deno" ]; then exec "$here/node_modules/deno/deno" "$@"; fi
exec deno "$@"
