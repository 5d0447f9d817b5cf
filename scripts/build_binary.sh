#!/usr/bin/env bash
# Builds the single-file `vf` binary with `bun build --compile` (offline) into $1
# (default dist/vf-bun). The one place its build flags live (the compile:bun task, the
# binary smoke test and the benchmarks use it):
#   --bytecode --format=esm   ship precompiled bytecode: the binary does not parse its
#                             bundle at each start (bench/startup.ts)
#   --splitting               each module cli.ts imports lazily (one per command) is a chunk
#                             of its own, loaded when imported: in one bundle, the Node
#                             modules of every command (node:http, node:http2, node:zlib,
#                             node:crypto) were loaded at each start, `vf --version` included
set -euo pipefail
here="$(cd "$(dirname "$0")/.." && pwd)"
out="${1:-$here/dist/vf-bun}"
exec "$here/scripts/bun.sh" build --compile --bytecode --format=esm --splitting \
  --outfile "$out" "$here/cli.ts"
