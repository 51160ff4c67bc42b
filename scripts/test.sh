#!/usr/bin/env bash
# The whole test suite from a fresh clone: install, build, services, every test (each test suite
# creates and migrates databases of its own, and uses Redis key prefixes of its own).
set -euo pipefail
cd "$(dirname "$0")/.."
if [ ! -f node_modules/.package-lock.json ] || [ package-lock.json -nt node_modules/.package-lock.json ]; then
  npm ci --no-audit --no-fund
fi
node scripts/build-if-stale.js
npx tsc -p tsconfig.check.json
npx eslint src test
node scripts/with-services.js -- npx jest --ci "$@"
