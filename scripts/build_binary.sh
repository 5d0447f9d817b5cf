#!/usr/bin/env bash
# Builds the single-file `vf` binary with `bun build --compile` (offline) into $1
# (default dist/vf-bun). The one place its build flags live (the compile:bun task, the
# binary smoke test and the benchmarks use it):
#   --bytecode --format=esm   ship precompiled bytecode: the binary does not parse its
#                             bundle at each start (bench/startup.ts)
set -euo pipefail
here="$(cd "$(dirname "$0")/.." && pwd)"
out="${1:-$here/dist/vf-bun}"
exec "$here/scripts/bun.sh" build --compile --bytecode --format=esm \
  --outfile "$out" "$here/cli.ts"
