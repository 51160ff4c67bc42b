#!/usr/bin/env bash
# Starts gsindex from a fresh clone: install, build, services (see src/shared/services.ts),
# migrations, then the API, the scheduler, the workers and the management server in one process.
set -euo pipefail
cd "$(dirname "$0")/.."
if [ ! -f node_modules/.package-lock.json ] || [ package-lock.json -nt node_modules/.package-lock.json ]; then
  npm ci --no-audit --no-fund
fi
node scripts/build-if-stale.js
exec node scripts/with-services.js --database gsindex -- node --max-semi-space-size=32 bin/gsindex.js serve "$@"
