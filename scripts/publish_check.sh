#!/usr/bin/env bash
# `deno publish --dry-run`: the package as JSR would take it (license, no slow types, the
# `publish.include` list, bare imports rewritten to npm: specifiers). It needs no network.
# Fails on any error, and on any warning but the one expected: the runtime import of
# user plugins and scripts in lib/plugins/import_module.ts, which no publisher can analyze.
set -euo pipefail
cd "$(dirname "$0")/.."
log=$(mktemp)
trap 'rm -f "$log"' EXIT
if ! NO_COLOR=1 node_modules/.bin/deno publish --dry-run --allow-dirty >"$log" 2>&1; then
  cat "$log"
  echo "deno publish --dry-run failed"
  exit 1
fi
warnings=$(grep -A1 '^warning' "$log" | grep -- '-->' | sed -E 's/^ *--> //; s/:[0-9]+:[0-9]+$//' || true)
unexpected=$(printf '%s\n' "$warnings" | grep -v '/lib/plugins/import_module.ts$' | grep -v '^$' || true)
if [ -n "$unexpected" ] || [ "$(grep -c '^warning' "$log")" -gt 1 ]; then
  cat "$log"
  echo "deno publish --dry-run: unexpected warnings"
  exit 1
fi
echo "deno publish --dry-run ok ($(grep -c '^ *file:///' "$log") files)"
