#!/usr/bin/env bash
# `pnpm bench [file filter]`: the benchmarks (conformance/bench). Installs Debian's redis-server for
# the BullMQ baselines when it can (root on Debian), builds, and runs the bench files one at a time
# against every available server (the same global setup as the tests).
set -euo pipefail
cd "$(dirname "$0")/.."
# shellcheck source=scripts/setup.sh
. scripts/setup.sh
taskrow_setup_redis
pnpm turbo run build --output-logs=errors-only >&2
exec pnpm --filter taskrow-conformance bench "$@"
