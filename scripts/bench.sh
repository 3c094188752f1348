#!/usr/bin/env bash
# `pnpm bench [file filter]`: the benchmarks (conformance/bench; a bench file's name, such as
# `queue`, picks that file alone). Installs Debian's redis-server for
# the BullMQ baselines when it can (root on Debian), builds, and runs the bench files one at a time
# against every available server (the same global setup as the tests).
set -euo pipefail
cd "$(dirname "$0")/.."
# shellcheck source=scripts/setup.sh
. scripts/setup.sh
taskrow_setup_redis
pnpm turbo run build --output-logs=errors-only >&2
# A filter that names a bench file picks that file alone: `pnpm bench queue` runs queue.bench.ts,
# not also enqueue.bench.ts (vitest matches filters anywhere in a file's path).
args=()
for a in "$@"; do
  if [[ "$a" != -* && -f "conformance/bench/$a.bench.ts" ]]; then args+=("bench/$a.bench.ts"); else args+=("$a"); fi
done
exec pnpm --filter taskrow-conformance bench ${args[@]+"${args[@]}"}
