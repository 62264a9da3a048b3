#!/usr/bin/env bash
# Installs what the replicated-Postgres test and benchmark run (test/e2e/failover.test.ts,
# `npm run bench:verify`): Debian's Patroni (with its etcd client library),
# etcd and PostgreSQL 15, on Debian bookworm machines that reach only Debian's mirrors.
#
# Installs only what is missing (apt-get, --no-install-recommends); when everything is there it
# prints what it found and leaves in milliseconds. Concurrent runs are serialised with flock.
# Prints, last, the lines the callers read:
#   patroni=<path>  etcd=<path>  pg_bin=<folder of postgres, initdb, pg_ctl>  pg_user=<name>
# Postgres refuses to run as root: the cluster runs as the `postgres` system user that Debian's
# postgresql-common creates (created here with the same settings when it is missing).
set -Eeuo pipefail

PACKAGES=(patroni python3-etcd etcd-server postgresql-15)
PG_BIN=/usr/lib/postgresql/15/bin
PG_USER=postgres
trap 'printf "patroni provision: FAILED (exit %s, line %s)\n" "$?" "$LINENO" >&2' ERR

missing() {
  local p status
  for p in "${PACKAGES[@]}"; do
    status=$(dpkg-query -W -f='${Status}' "$p" 2>/dev/null || true)
    [[ $status == *"install ok installed"* ]] || printf '%s\n' "$p"
  done
}

mapfile -t MISSING < <(missing)
if ((${#MISSING[@]} > 0)); then
  LOCK_DIR=${XDG_CACHE_HOME:-${HOME:?HOME is not set}/.cache}/writ
  mkdir -p "$LOCK_DIR"
  exec 9>"$LOCK_DIR/patroni-provision.lock"
  flock 9
  mapfile -t MISSING < <(missing)
fi
if ((${#MISSING[@]} > 0)); then
  SUDO=()
  if ((EUID != 0)) && command -v sudo >/dev/null; then SUDO=(sudo); fi
  printf 'patroni provision: installing with apt: %s\n' "${MISSING[*]}"
  "${SUDO[@]}" apt-get update -q
  # policy-rc.d in containers keeps the packages' services from starting; nothing here needs them.
  "${SUDO[@]}" env DEBIAN_FRONTEND=noninteractive apt-get install -y -q --no-install-recommends "${MISSING[@]}"
fi
if ! id -u "$PG_USER" >/dev/null 2>&1; then
  "${SUDO[@]}" adduser --system --quiet --home /var/lib/postgresql --no-create-home --shell /bin/bash --group "$PG_USER"
fi
for f in /usr/bin/patroni /usr/bin/etcd "$PG_BIN/postgres" "$PG_BIN/initdb" "$PG_BIN/pg_ctl"; do
  [[ -x $f ]] || { printf 'patroni provision: %s is missing after install\n' "$f" >&2; exit 1; }
done
# (No `| head` under pipefail: a writer cut off by SIGPIPE would fail the script.)
etcd_version=$(/usr/bin/etcd --version 2>&1)
printf 'patroni provision: %s, %s, %s\n' "$(/usr/bin/patroni --version 2>&1)" "${etcd_version%%$'\n'*}" "$("$PG_BIN/postgres" --version)"
printf 'patroni=/usr/bin/patroni\netcd=/usr/bin/etcd\npg_bin=%s\npg_user=%s\n' "$PG_BIN" "$PG_USER"
