#!/usr/bin/env bash
# Installs the local database servers taskrow tests against, idempotently, on Debian as root.
#
#   MariaDB 10.11  from the machine's own Debian release (mariadb-server-core)
#   MySQL 9.7      in a minimal Debian sid root   (mysql-server-core; needs sid's newer libc)
#   MariaDB 11.8   in a minimal Debian trixie root (mariadb-server-core)
#   Galera 4       for MariaDB 10.11 clusters (galera-4, rsync, and mariadb-server's wsrep_sst_rsync)
#   (MySQL 9.7's group_replication.so ships with mysql-server-core: nothing more for Group Replication)
#
# Roots live in a cache folder outside the checkout (TASKROW_SERVERS_CACHE, default
# ~/.cache/taskrow/servers), so a second run on the same machine only verifies them.
# On success it writes servers.json in that folder: the manifest @taskrow/servers reads.
# Any failure exits non-zero with the step that failed; nothing is half-registered.
set -euo pipefail

# Arguments: only --help. Anything else is refused before anything is installed.
case "${1-}" in
  -h | --help)
    cat <<'USAGE'
usage: taskrow-install-servers [--help]

Installs (or verifies) the local MySQL / MariaDB servers taskrow tests against, on Debian, as root:
apt-get install, then minimal Debian roots built with debootstrap. Idempotent; a second run only verifies.

environment:
  TASKROW_SERVERS        which servers (default mariadb-10.11,mysql-9.7,mariadb-11.8)
  TASKROW_SERVERS_CACHE  where the roots and servers.json go (default ~/.cache/taskrow/servers)
  TASKROW_DEBIAN_MIRROR  Debian mirror for debootstrap (default http://deb.debian.org/debian)
USAGE
    exit 0
    ;;
  '') ;;
  *)
    printf 'taskrow-install-servers: unknown argument %s (see taskrow-install-servers --help)\n' "$1" >&2
    exit 2
    ;;
esac

CACHE="${TASKROW_SERVERS_CACHE:-$HOME/.cache/taskrow/servers}"
MIRROR="${TASKROW_DEBIAN_MIRROR:-http://deb.debian.org/debian}"
ONLY="${TASKROW_SERVERS:-mariadb-10.11,mysql-9.7,mariadb-11.8}"
log() { printf '[install-servers] %s\n' "$*" >&2; }
die() { log "FAILED: $*"; exit 1; }
want() { case ",$ONLY," in *",$1,"*) return 0 ;; *) return 1 ;; esac; }

[ "$(id -u)" = 0 ] || die "must run as root (apt-get, debootstrap and chroot need it)"
command -v apt-get >/dev/null || die "apt-get not found: this installer is for Debian"
mkdir -p "$CACHE/roots"

APT_UPDATED=0
apt_install() {
  local missing=()
  for p in "$@"; do dpkg -s "$p" >/dev/null 2>&1 || missing+=("$p"); done
  [ ${#missing[@]} -eq 0 ] && return 0
  if [ $APT_UPDATED = 0 ]; then apt-get update -qq >&2 || die "apt-get update"; APT_UPDATED=1; fi
  log "apt-get install ${missing[*]}"
  DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends "${missing[@]}" >&2 \
    || die "apt-get install ${missing[*]}"
}

# make_root SUITE "PACKAGES" BINARY [TOOL]: a minimal Debian SUITE root holding PACKAGES, ready when
# BINARY runs and TOOL (a helper the server's set-up needs) is present.
make_root() {
  local suite=$1 pkgs=$2 bin=$3 tool=${4:-$3} dir="$CACHE/roots/$1"
  if [ -d "$dir" ] && [ -f "$dir/.taskrow-ready" ] && [ ! -x "$dir$tool" ]; then
    # An older root without the helper: add it in place rather than rebuilding the root.
    # shellcheck disable=SC2086
    DEBIAN_FRONTEND=noninteractive chroot "$dir" apt-get install -y -qq --no-install-recommends $pkgs >&2 || true
  fi
  if [ -f "$dir/.taskrow-ready" ] && [ -x "$dir$tool" ] && chroot "$dir" "$bin" --version >/dev/null 2>&1; then
    log "$suite root ready ($dir)"; return 0
  fi
  rm -rf "$dir.partial" "$dir"
  log "debootstrap $suite into $dir (about half a minute)"
  debootstrap --variant=minbase "$suite" "$dir.partial" "$MIRROR" >"$CACHE/debootstrap-$suite.log" 2>&1 \
    || { tail -20 "$CACHE/debootstrap-$suite.log" >&2; die "debootstrap $suite"; }
  cp /etc/hosts /etc/resolv.conf "$dir.partial/etc/"
  printf 'Acquire::Check-Valid-Until "false";\n' >"$dir.partial/etc/apt/apt.conf.d/99taskrow"
  chroot "$dir.partial" apt-get update -qq >&2 || die "apt-get update in $suite root"
  # shellcheck disable=SC2086 # PACKAGES is a word list
  DEBIAN_FRONTEND=noninteractive chroot "$dir.partial" apt-get install -y -qq --no-install-recommends $pkgs >&2 \
    || die "apt-get install $pkgs in $suite root"
  chroot "$dir.partial" apt-get clean
  chroot "$dir.partial" "$bin" --version >/dev/null || die "$bin does not run in the $suite root"
  [ -x "$dir.partial$tool" ] || die "$tool missing in the $suite root"
  touch "$dir.partial/.taskrow-ready"
  mv "$dir.partial" "$dir"
  log "$suite root ready ($dir)"
}

# Host packages first, in one apt run: the roots are then built in parallel without sharing apt's lock.
host_pkgs=()
# MariaDB 10.11 comes with what its Galera clusters need: the provider (galera-4) and rsync for state transfers.
if want mariadb-10.11; then host_pkgs+=(mariadb-server-core mariadb-client-core galera-4 rsync); fi
if want mysql-9.7 || want mariadb-11.8; then host_pkgs+=(debootstrap); fi
[ ${#host_pkgs[@]} -eq 0 ] || apt_install "${host_pkgs[@]}"

# Galera's state transfer scripts (wsrep_sst_rsync, wsrep_sst_common) come from mariadb-server, which
# is not installed (it would start a system server): they are taken from its package into the cache.
# The rsync daemon the joiner runs would drop to user nobody, which cannot write the private data
# directories of a test cluster: the copy runs it as the user the server runs as (root here).
install_galera_sst() {
  local dir="$CACHE/galera/bin" tmp ver
  if [ -f "$dir/.taskrow-ready" ] && [ -x "$dir/wsrep_sst_rsync" ]; then log "galera state transfer scripts ready ($dir)"; return 0; fi
  tmp=$(mktemp -d) && chmod 755 "$tmp"
  ver=$(dpkg-query -W -f='${Version}' mariadb-server-core)
  (cd "$tmp" && { apt-get download -q "mariadb-server=$ver" || apt-get download -q mariadb-server; }) >&2 2>/dev/null \
    || die "apt-get download mariadb-server (for wsrep_sst_rsync)"
  dpkg-deb -x "$tmp"/mariadb-server_*.deb "$tmp/x" || die "unpack mariadb-server"
  mkdir -p "$dir"
  cp "$tmp/x/usr/bin/wsrep_sst_common" "$tmp/x/usr/bin/wsrep_sst_rsync" "$dir/" || die "wsrep_sst scripts missing from mariadb-server"
  sed -i 's/^use chroot = no$/use chroot = no\nuid = 0\ngid = 0/' "$dir/wsrep_sst_rsync"
  grep -q '^uid = 0$' "$dir/wsrep_sst_rsync" || die "could not set the rsync daemon user in wsrep_sst_rsync"
  rm -rf "$tmp"
  touch "$dir/.taskrow-ready"
  log "galera state transfer scripts ready ($dir)"
}
if want mariadb-10.11; then install_galera_sst; fi

pids=()
if want mysql-9.7; then make_root sid mysql-server-core /usr/sbin/mysqld & pids+=($!); fi
if want mariadb-11.8; then make_root trixie "mariadb-server-core mariadb-client-core" /usr/sbin/mariadbd /usr/bin/my_print_defaults & pids+=($!); fi
for p in "${pids[@]}"; do wait "$p" || die "a root failed to build (see above)"; done

# The manifest: one entry per server, with the version the binary itself reports. It lists every
# server installed here, not only the ones this run was asked for, so installing one server (as the
# demo does) never hides the others from the tests.
entries=()
version_of() { "$@" --version | sed -E 's/.*Ver ([0-9]+\.[0-9]+\.[0-9]+).*/\1/'; }
root_ready() { [ -f "$CACHE/roots/$1/.taskrow-ready" ] && chroot "$CACHE/roots/$1" "$2" --version >/dev/null 2>&1; }
if want mariadb-10.11 || [ -x /usr/sbin/mariadbd ]; then
  v=$(version_of /usr/sbin/mariadbd) || die "host mariadbd --version"
  entries+=("{\"engine\":\"mariadb\",\"version\":\"$v\",\"root\":null,\"server\":\"/usr/sbin/mariadbd\",\"installDb\":\"/usr/bin/mariadb-install-db\"}")
fi
if want mysql-9.7 || root_ready sid /usr/sbin/mysqld; then
  v=$(version_of chroot "$CACHE/roots/sid" /usr/sbin/mysqld) || die "sid mysqld --version"
  entries+=("{\"engine\":\"mysql\",\"version\":\"$v\",\"root\":\"$CACHE/roots/sid\",\"server\":\"/usr/sbin/mysqld\",\"installDb\":null}")
fi
if want mariadb-11.8 || root_ready trixie /usr/sbin/mariadbd; then
  v=$(version_of chroot "$CACHE/roots/trixie" /usr/sbin/mariadbd) || die "trixie mariadbd --version"
  entries+=("{\"engine\":\"mariadb\",\"version\":\"$v\",\"root\":\"$CACHE/roots/trixie\",\"server\":\"/usr/sbin/mariadbd\",\"installDb\":\"/usr/bin/mariadb-install-db\"}")
fi
{ printf '{"servers":[\n'; (IFS=$',\n'; printf '  %s\n' "${entries[*]}"); printf ']}\n'; } >"$CACHE/servers.json.partial"
mv "$CACHE/servers.json.partial" "$CACHE/servers.json"
log "manifest: $CACHE/servers.json"
for e in "${entries[@]}"; do log "  $e"; done
