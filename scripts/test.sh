#!/usr/bin/env bash
# The whole test suite from a fresh clone: install, build, services, every test (each test suite
# creates and migrates databases of its own, and uses Redis key prefixes of its own). Needs no
# PostgreSQL or Redis installed: without a local PostgreSQL the embedded one, without Redis the queues on
# PostgreSQL.
set -euo pipefail
cd "$(dirname "$0")/.."
if [ ! -f node_modules/.package-lock.json ] || [ package-lock.json -nt node_modules/.package-lock.json ]; then
  npm ci --no-audit --no-fund
fi
node scripts/build-if-stale.js
# The web page tests drive Debian's chromium (test/web/browser.ts); install it when it is missing and we
# can (root with apt-get); otherwise those tests skip and say why.
if [ ! -x /usr/bin/chromium ] && [ "$(id -u)" = 0 ] && command -v apt-get >/dev/null 2>&1; then
  (apt-get update && DEBIAN_FRONTEND=noninteractive apt-get install -y --no-install-recommends chromium) \
    || echo "chromium could not be installed: the web page tests will skip" >&2
fi
npm run --silent typecheck
npm run --silent lint
# The queues of the tests: Redis where one answers, or can be started from a redis-server on the PATH, so
# the tests about Redis run too; on a machine without either, PostgreSQL, and the tests about Redis skip,
# saying why (test/helpers/queue-backend.ts). QUEUE_BACKEND set by the caller wins.
if [ -z "${QUEUE_BACKEND:-}" ] && command -v redis-server >/dev/null 2>&1; then
  export QUEUE_BACKEND=redis
fi
node scripts/with-services.js -- npx jest --ci "$@"
