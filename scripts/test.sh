#!/usr/bin/env bash
# The whole check: format, lint, types, runtime seams and the JSR dry-run; the test suite on
# Deno and on Bun (at the same time: most of a test's time is spent waiting on child
# processes and loopback servers); a single-file binary smoke test. One line per step;
# a failing step prints its failures. Logs go to a fresh temp folder per run, kept only
# when something failed; the temp files of the run are removed at its end. Exits non-zero
# when any step failed.
set -uo pipefail
cd "$(dirname "$0")/.."
BIN=node_modules/.bin
export NO_COLOR=1
logs=$(mktemp -d "${TMPDIR:-/tmp}/vf-test.XXXXXX")
# Everything the suites and the programs they start put in the temp folder goes into one
# folder of this run, removed when the run ends however it ends: a test killed by a timeout
# or a crashed runtime leaves nothing behind in the machine's temp folder.
scratch=$(mktemp -d "${TMPDIR:-/tmp}/vf-test-tmp.XXXXXX")
trap 'rm -rf "$scratch"' EXIT
export TMPDIR=$scratch
started=$SECONDS
failed=0

elapsed() { local s=$(($1)); printf '%dm%02ds' $((s / 60)) $((s % 60)); }

# Runs one check quietly; prints its output only when it fails.
check() {
  local name=$1
  shift
  if ! "$@" >"$logs/$name.log" 2>&1; then
    echo "checks  FAILED at $name:"
    cat "$logs/$name.log"
    echo "(logs: $logs)"
    exit 1
  fi
}

t0=$SECONDS
check fmt "$BIN/deno" fmt --check
check lint "$BIN/deno" lint
check types "$BIN/deno" check mod.ts cli.ts lib/ kit/ plugins/ tests/ bench/
check seams bash scripts/check_runtime_seams.sh
check layers "$BIN/deno" run -A scripts/check_layers.ts
check publish bash scripts/publish_check.sh
echo "checks  ok   fmt, lint, types, runtime seams, layers, publish dry-run  $(elapsed $((SECONDS - t0)))"

t0=$SECONDS
# each suite writes its own log, then its exit code and the seconds it took
(
  "$BIN/deno" test -A --no-check tests/ >"$logs/deno.log" 2>&1
  echo "$? $((SECONDS - t0))" >"$logs/deno.end"
) &
(
  "$BIN/bun" test --timeout 60000 tests/ >"$logs/bun.log" 2>&1
  echo "$? $((SECONDS - t0))" >"$logs/bun.end"
) &
wait
read -r deno_code deno_time <"$logs/deno.end"
read -r bun_code bun_time <"$logs/bun.end"

# each it() counted once on both runners (scripts/test_counts.sh says how)
source scripts/test_counts.sh
read -r deno_pass deno_fail deno_skip < <(deno_counts "$logs/deno.log")
read -r bun_pass bun_fail bun_skip < <(bun_counts "$logs/bun.log")

report() { # name code pass fail seconds
  if [ "$2" = 0 ] && [ -n "$3" ] && [ "${4:-0}" = 0 ]; then
    printf '%-7s ok   %s tests passed, 0 failed  %s\n' "$1" "$3" "$(elapsed "$5")"
  else
    printf '%-7s FAILED  %s passed, %s failed (exit %s)  %s\n' "$1" "${3:-?}" "${4:-?}" "$2" \
      "$(elapsed "$5")"
    failed=1
  fi
}
report deno "$deno_code" "$deno_pass" "$deno_fail" "$deno_time"
if [ "$deno_code" != 0 ]; then
  # deno prints every failure's details after an ERRORS heading
  sed -n '/ERRORS/,$p' "$logs/deno.log" | grep -v '^Stack backtrace:\|^ *[0-9]*: <unknown>$'
  grep -q ERRORS "$logs/deno.log" || tail -40 "$logs/deno.log"
fi
report bun "$bun_code" "$bun_pass" "$bun_fail" "$bun_time"
if [ "$bun_code" != 0 ]; then
  # bun prints a failure's details before its (fail) line: keep all but passing tests,
  # and a file's heading only when something of that file is printed
  awk '/^\(pass\)/ || /^\s*$/ {next} /^tests\/.*:$/ {head=$0; next}
       {if (head != "") {print head; head=""}; print}' "$logs/bun.log"
fi

t0=$SECONDS
if bash scripts/smoke_binary.sh >"$logs/binary.log" 2>&1; then
  echo "binary  ok   bun build --compile, then --version, plugins list, dry-run, demo, bad flag  $(elapsed $((SECONDS - t0)))"
else
  echo "binary  FAILED:"
  cat "$logs/binary.log"
  failed=1
fi

if [ "$failed" = 0 ]; then
  took=$(elapsed $((SECONDS - started)))
  if [ "$deno_pass" = "$bun_pass" ] && [ "$deno_skip" = "$bun_skip" ]; then
    skipped=""
    [ "$bun_skip" = 0 ] || skipped="; $bun_skip skipped on both:"
    echo "npm test: ${deno_pass} tests, each passed on Deno and on Bun ($took)${skipped}"
  else
    echo "npm test: ${deno_pass} tests passed on Deno (${deno_skip} skipped), ${bun_pass} on Bun" \
      "(${bun_skip} skipped) ($took); skipped on Bun:"
  fi
  bun_skipped "$logs/bun.log" | sed 's/^/  /'
  rm -rf "$logs"
  exit 0
fi
echo "npm test: FAILED (deno ${deno_pass:-?} passed / ${deno_fail:-?} failed, bun ${bun_pass:-?} passed / ${bun_fail:-?} failed; logs: $logs)"
exit 1
