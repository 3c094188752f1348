# Shared set-up for scripts/test.sh and scripts/demo.sh (sourced, not run): pnpm, dependencies,
# local servers, build. Messages go to stderr.

taskrow_setup_pnpm() {
  local want
  want=$(node -p "require('./package.json').packageManager.split('@')[1]")
  if ! command -v pnpm >/dev/null || [ "$(pnpm --version 2>/dev/null)" != "$want" ]; then
    echo "[setup] installing pnpm $want (npm install -g)" >&2
    npm install -g --no-fund --no-audit "pnpm@$want" >&2
  fi
  echo "[setup] pnpm install --frozen-lockfile" >&2
  pnpm install --frozen-lockfile --reporter=silent >&2
}

# taskrow_setup_servers [LIST]: installs (or verifies) local servers unless URLs point elsewhere.
taskrow_setup_servers() {
  if env | grep -qE '^TASKROW_(MYSQL|MARIADB)(_[0-9]+_[0-9]+)?_URL='; then return 0; fi
  if [ "$(id -u)" = 0 ] && command -v apt-get >/dev/null; then
    echo "[setup] local servers: packages/servers/scripts/install-servers.sh ${1:+(only $1)}" >&2
    TASKROW_SERVERS="${1:-${TASKROW_SERVERS:-mariadb-10.11,mysql-9.7,mariadb-11.8}}" bash packages/servers/scripts/install-servers.sh
  else
    echo "[setup] not root on Debian: not installing servers; using what is installed or configured" >&2
  fi
}

# taskrow_setup_browser: Debian's Chromium for the dashboard's browser tests (never a downloaded build).
taskrow_setup_browser() {
  if [ -x /usr/bin/chromium ]; then return 0; fi
  if [ "$(id -u)" = 0 ] && command -v apt-get >/dev/null; then
    echo "[setup] browser: apt-get install -y chromium (for the dashboard tests)" >&2
    { apt-get install -y -q chromium >/dev/null 2>&1 || { apt-get update -q >/dev/null && apt-get install -y -q chromium >/dev/null; }; } >&2
  else
    echo "[setup] not root on Debian: not installing chromium; the dashboard browser tests need /usr/bin/chromium" >&2
  fi
}

taskrow_setup_build() {
  echo "[setup] build" >&2
  pnpm turbo run build --output-logs=errors-only >&2
}

taskrow_typecheck() {
  echo "[test] typecheck (packages, tests, benchmarks, examples)" >&2
  pnpm turbo run typecheck --output-logs=errors-only >&2
}

# taskrow_setup_redis: Debian's redis-server for the benchmarks' BullMQ baselines (never run by the tests).
taskrow_setup_redis() {
  if [ -x /usr/bin/redis-server ] || [ -x /usr/local/bin/redis-server ]; then return 0; fi
  if [ "$(id -u)" = 0 ] && command -v apt-get >/dev/null; then
    echo "[setup] redis-server: apt-get install -y redis-server (BullMQ, the benchmarks' peer)" >&2
    { apt-get install -y -q redis-server >/dev/null 2>&1 || { apt-get update -q >/dev/null && apt-get install -y -q redis-server >/dev/null; }; } >&2
    # The package starts a system service; the benchmarks start their own redis-server per run.
    { systemctl stop redis-server 2>/dev/null || service redis-server stop 2>/dev/null || true; } >/dev/null 2>&1
  else
    echo "[setup] not root on Debian: not installing redis-server; the benchmarks run without BullMQ" >&2
  fi
}
