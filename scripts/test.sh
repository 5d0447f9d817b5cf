#!/usr/bin/env bash
# The whole check: format, lint, types, the test suite on Deno and on Bun, and a
# single-file binary smoke test. Exits non-zero on the first failure.
set -euo pipefail
cd "$(dirname "$0")/.."
BIN=node_modules/.bin
export NO_COLOR=1

step() { printf '\n== %s\n' "$*"; }

step "deno fmt --check"
"$BIN/deno" fmt --check
step "deno lint"
"$BIN/deno" lint
step "deno check"
"$BIN/deno" check mod.ts cli.ts lib/ plugins/ tests/ bench/
bash scripts/check_runtime_seams.sh
step "deno publish --dry-run"
bash scripts/publish_check.sh

step "tests on Deno"
"$BIN/deno" test -A --no-check tests/ 2>&1 | tee /tmp/vf-deno-test.log
step "tests on Bun"
"$BIN/bun" test --timeout 60000 tests/ 2>&1 | tee /tmp/vf-bun-test.log

step "single-file binary (bun build --compile) smoke test"
bash scripts/smoke_binary.sh

deno_line=$(grep -E '^(ok|FAILED) \|' /tmp/vf-deno-test.log | tail -1 || true)
bun_pass=$(grep -E '^ *[0-9]+ pass' /tmp/vf-bun-test.log | tail -1 | tr -dc 0-9)
bun_fail=$(grep -E '^ *[0-9]+ fail' /tmp/vf-bun-test.log | tail -1 | tr -dc 0-9)
# deno counts describe blocks as tests and their it() cases as steps: report the steps
deno_pass=$(echo "$deno_line" | sed -E 's/.*\| [0-9]+ passed \(([0-9]+) steps\).*/\1/')
deno_fail=$(echo "$deno_line" | sed -E 's/.*\| ([0-9]+) failed.*/\1/')
echo
echo "deno: ${deno_pass} passed, ${deno_fail} failed; bun: ${bun_pass} passed, ${bun_fail} failed"
echo "tests: $((deno_pass + bun_pass)) passed, $((deno_fail + bun_fail)) failed"
