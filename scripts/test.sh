#!/usr/bin/env bash
# The one command that runs every test on a fresh Debian machine (root, Node 20, no container runtime):
# installs pnpm and the dependencies, installs (or reuses) the local servers, builds, and runs vitest.
# Set TASKROW_MYSQL_URL / TASKROW_MARIADB_URL to test against your own servers instead (see README).
set -euo pipefail
cd "$(dirname "$0")/.."
# shellcheck source=scripts/setup.sh
. scripts/setup.sh
taskrow_setup_pnpm
taskrow_setup_servers
taskrow_setup_browser
taskrow_setup_build
taskrow_typecheck
echo "[test] docs: TypeScript blocks type-checked, included programs compared (scripts/check-docs.mjs)" >&2
node scripts/check-docs.mjs >&2
echo "[test] import circles (scripts/check-circles.mjs), lint and format (biome check)" >&2
node scripts/check-circles.mjs >&2
pnpm exec biome check . >&2
echo "[test] vitest run" >&2
exec pnpm vitest run "$@"
