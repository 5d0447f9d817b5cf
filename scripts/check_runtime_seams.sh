#!/usr/bin/env bash
# Fails when `Deno.*` or `Bun.*` is used outside kit/_runtime/ (the platform seam).
set -euo pipefail
cd "$(dirname "$0")/.."
hits=$(grep -rnE '\b(Deno|Bun)\.[a-zA-Z]' --include='*.ts' lib plugins kit mod.ts cli.ts \
  | grep -v '^kit/_runtime/' | grep -vE '^\S+:\s*(//|\*|/\*\*)' || true)
if [ -n "$hits" ]; then
  echo "Deno.* / Bun.* outside kit/_runtime/:"
  echo "$hits"
  exit 1
fi
