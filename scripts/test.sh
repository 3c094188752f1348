#!/usr/bin/env bash
# The one command that runs every test on a fresh Debian machine (root, Node 20, no container runtime):
# installs pnpm and the dependencies, installs (or reuses) the local servers, builds, and runs vitest.
# Set TASKROW_MYSQL_URL / TASKROW_MARIADB_URL to test against your own servers instead (see README).
set -euo pipefail
cd "$(dirname "$0")/.."

PNPM_VERSION=$(node -p "require('./package.json').packageManager.split('@')[1]")
if ! command -v pnpm >/dev/null || [ "$(pnpm --version 2>/dev/null)" != "$PNPM_VERSION" ]; then
  echo "[test] installing pnpm $PNPM_VERSION" >&2
  npm install -g --no-fund --no-audit "pnpm@$PNPM_VERSION" >&2
fi

echo "[test] pnpm install --frozen-lockfile" >&2
pnpm install --frozen-lockfile --reporter=silent >&2

if ! env | grep -qE '^TASKROW_(MYSQL|MARIADB)(_[0-9]+_[0-9]+)?_URL='; then
  if [ "$(id -u)" = 0 ] && command -v apt-get >/dev/null; then
    bash packages/servers/scripts/install-servers.sh
  else
    echo "[test] not root on Debian: skipping the server installer; using servers already installed" >&2
  fi
fi

echo "[test] build" >&2
pnpm turbo run build --output-logs=errors-only >&2
echo "[test] vitest" >&2
exec pnpm vitest run "$@"
