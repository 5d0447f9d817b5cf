#!/usr/bin/env bash
# Installs the agents of the ACP harnesses (pinned npm packages, checked against their
# registry integrity) into the user's agent cache, <cache>/verifiers-ts/agents, so their
# end-to-end tests run instead of skipping. Idempotent: an install already there is left
# as it is and this takes a second. Cache that folder between CI runs ($XDG_CACHE_HOME or
# $VF_CACHE_DIR moves it).
set -euo pipefail
cd "$(dirname "$0")/.."
harnesses=("$@")
if [ ${#harnesses[@]} -eq 0 ]; then
  harnesses=(pi claude-code codex opencode)
fi
node_modules/.bin/deno run -A cli.ts harnesses install "${harnesses[@]}"
