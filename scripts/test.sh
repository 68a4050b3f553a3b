#!/usr/bin/env bash
# `npm test`: make sure the native test dependencies exist (nats-server, the real wadm; built
# once and cached, see scripts/test-deps.sh), then run every test file under node:test.
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/.."

if [[ ! -d node_modules ]]; then
  echo "npm test: node_modules is missing; run: npm ci" >&2
  exit 1
fi
bash scripts/test-deps.sh
set -a
# shellcheck source=/dev/null
. .cache/test-deps.env
set +a

mapfile -t files < <(find test -name '*.test.ts' -not -path '*/node_modules/*' | sort)
# Files run one at a time on CI's 2 cores: the end-to-end files start real servers.
# A hang must fail one test, not the run: a test or hook is failed after 20 min (the slowest, the
# 4000-application lattice's setup, takes ~8 min on a loaded 2-core machine), and a file whose tests
# have ended exits even if a handle (say, a reconnecting NATS client) was left open.
exec node --import tsx --test --test-concurrency="${TEST_CONCURRENCY:-1}" --test-timeout=1200000 --test-force-exit \
  --test-reporter=spec "$@" "${files[@]}"
