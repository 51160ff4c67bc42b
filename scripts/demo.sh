#!/usr/bin/env bash
# The demo from a fresh clone: install, build, services, then `gsindex demo` in a database of its own.
set -euo pipefail
cd "$(dirname "$0")/.."
if [ ! -f node_modules/.package-lock.json ] || [ package-lock.json -nt node_modules/.package-lock.json ]; then
  npm ci --no-audit --no-fund
fi
node scripts/build-if-stale.js
exec node scripts/with-services.js --database gsindex_demo -- node --max-semi-space-size=32 bin/gsindex.js demo "$@"
