#!/usr/bin/env bash
# Builds the single-file binary as it ships (scripts/build_binary.sh: `bun build --compile`,
# offline) and runs it
# outside the source tree: --version, plugins list, a --dry-run, the demo and vf view.
set -euo pipefail
cd "$(dirname "$0")/.."
root=$(pwd)
out=$(mktemp -d)
bash scripts/build_binary.sh "$out/vf" >/dev/null
cp examples/quickstart.toml "$out/"
cd "$out"
./vf --version | grep -q "^vf "
./vf plugins list | grep -q "^taskset  *shell-basics"
./vf eval @ quickstart.toml --model oracle --dry-run -o "$out/runs" >/dev/null 2>&1
test -s "$(ls "$out"/runs/*/configs/eval.json | head -1)"
./vf eval @ quickstart.toml --model oracle -o "$out/demo" --display plain >"$out/demo.txt" 2>"$out/demo.err"
grep -Eq "^reward +1\.000$" "$out/demo.txt" || { cat "$out/demo.txt" "$out/demo.err"; echo "demo did not score 1"; exit 1; }
test "$(wc -l < "$(ls "$out"/demo/*/traces.jsonl)")" -eq 10
# vf view: the page's assets are embedded in the binary (a report, and the served page)
run_dir=$(ls -d "$out"/demo/*/ | head -1)
./vf view --out "$out/report.html" "$run_dir" 2>/dev/null
grep -q "@tanstack/virtual-core" "$out/report.html" || { echo "report lacks the page script"; exit 1; }
./vf view "$run_dir" >"$out/view.url" 2>/dev/null &
view_pid=$!
for _ in $(seq 50); do [ -s "$out/view.url" ] && break; sleep 0.2; done
url=$(head -1 "$out/view.url")
if command -v curl >/dev/null 2>&1; then
  curl -sf "$url" >"$out/page.html" || true
  curl -sf "${url}api/runs/0" >"$out/view.json" || true
  grep -q "@tanstack/virtual-core" "$out/page.html" || { kill "$view_pid"; echo "vf view served no page"; exit 1; }
  grep -q '"episodes":10' "$out/view.json" || { kill "$view_pid"; echo "vf view API failed"; exit 1; }
fi
kill "$view_pid"
wait "$view_pid" || true
set +e
./vf eval @ quickstart.toml --env.agent.max-turns nope --dry-run >/dev/null 2>&1
code=$?
set -e
[ "$code" = 2 ] || { echo "expected exit 2 for a bad flag, got $code"; exit 1; }
echo "binary smoke test ok ($(du -h vf | cut -f1), $out)"
rm -rf "$out"
cd "$root"
