#!/usr/bin/env bash
# The main demo on a fresh Debian machine (root, Node 20): installs pnpm and the dependencies, makes
# sure a local MariaDB is installed (saying so), builds, and runs `taskrow demo`, which starts an
# embedded server, runs the Queue, Dones and Loop rounds, prints a summary and stops the server.
# Pass --url mysql://... (or set TASKROW_URL) to run it on your own server instead.
set -euo pipefail
cd "$(dirname "$0")/.."
# shellcheck source=scripts/setup.sh
. scripts/setup.sh
taskrow_setup_pnpm
case " $* " in
  *" --url"*) ;;
  *) [ -n "${TASKROW_URL:-}" ] || taskrow_setup_servers mariadb-10.11 ;;
esac
taskrow_setup_build
exec node packages/cli/dist/bin.js demo "$@"
