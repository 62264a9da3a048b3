#!/usr/bin/env bash
# Builds Citus (distributed PostgreSQL) from its source and installs it into Debian's
# PostgreSQL 15, for the Citus tests and benchmark (test/integration/citus.test.ts,
# `WRIT_BENCH_CITUS=1 npm run bench:verify`). Citus is not packaged by Debian and these machines
# reach only Debian's mirrors and the npm registry, so the source is kept outside this
# repository, in shared/engines/citus (a tarball of the upstream tag and a one-line patch; its
# README says how it builds). Nothing of Citus is copied into this repository. On a user's
# machine Citus comes from its own packages or images (docs/scale.md).
#
# Setting: WRIT_CITUS_SOURCE, the folder holding the tarball and the patch (default
# ../shared/engines/citus relative to the repository).
#
# Installs only what is missing: Debian's build packages (apt-get, --no-install-recommends), then
# the build (about a minute of compiling on 2 cores). When Citus from that very tarball is already
# installed (a stamp beside citus.so records the tarball's sha256) it leaves in milliseconds.
# Concurrent runs are serialised with flock. Prints, last, the lines the callers read:
#   citus=<version>  pg_bin=<folder of postgres, initdb, pg_ctl>  pg_user=<name>
# or, when the source is not there (and Citus is not installed), `citus=missing` and exits 3.
set -Eeuo pipefail

HERE=$(cd "$(dirname "$0")" && pwd)
REPO=$(cd "$HERE/../.." && pwd)
SRC=${WRIT_CITUS_SOURCE:-$REPO/../shared/engines/citus}
VERSION=13.2.2
TARBALL=citus-$VERSION.tar.gz
PATCH=pg15-have-createdb-privilege.patch
PG_BIN=/usr/lib/postgresql/15/bin
PG_CONFIG=$PG_BIN/pg_config
PG_USER=postgres
PACKAGES=(postgresql-15 postgresql-server-dev-15 libcurl4-openssl-dev liblz4-dev libzstd-dev libkrb5-dev
  libselinux1-dev libxslt1-dev libssl-dev libpam0g-dev flex bison autoconf make gcc patch)
trap 'printf "citus provision: FAILED (exit %s, line %s)\n" "$?" "$LINENO" >&2' ERR

report() {
  printf 'citus provision: Citus %s in %s\n' "$VERSION" "$("$PG_BIN/postgres" --version)"
  printf 'citus=%s\npg_bin=%s\npg_user=%s\n' "$VERSION" "$PG_BIN" "$PG_USER"
}

# The bytes of the tarball and the patch (not their paths: every checkout of the repository finds the same stamp).
source_sum() { cat "$SRC/$TARBALL" "$SRC/$PATCH" | sha256sum | cut -d" " -f1; }

installed() {
  [[ -x $PG_CONFIG ]] || return 1
  local lib share
  lib=$("$PG_CONFIG" --pkglibdir)
  share=$("$PG_CONFIG" --sharedir)
  [[ -f $lib/citus.so && -f $share/extension/citus.control && -f $lib/citus.writ-source ]] || return 1
  # Without the source (a machine that has Citus but not shared/), what is installed is used.
  [[ -f $SRC/$TARBALL ]] || return 0
  [[ $(cat "$lib/citus.writ-source") == "$(source_sum)" ]]
}

missing_packages() {
  local p status
  for p in "${PACKAGES[@]}"; do
    status=$(dpkg-query -W -f='${Status}' "$p" 2>/dev/null || true)
    [[ $status == *"install ok installed"* ]] || printf '%s\n' "$p"
  done
}

if installed; then report; exit 0; fi
if [[ ! -f $SRC/$TARBALL || ! -f $SRC/$PATCH ]]; then
  printf 'citus provision: no Citus source at %s (set WRIT_CITUS_SOURCE to the folder of %s and %s)\n' "$SRC" "$TARBALL" "$PATCH" >&2
  printf 'citus=missing\n'
  exit 3
fi

LOCK_DIR=${XDG_CACHE_HOME:-${HOME:?HOME is not set}/.cache}/writ
mkdir -p "$LOCK_DIR"
exec 9>"$LOCK_DIR/citus-provision.lock"
flock 9
if installed; then report; exit 0; fi

SUDO=()
if ((EUID != 0)) && command -v sudo >/dev/null; then SUDO=(sudo); fi
mapfile -t MISSING < <(missing_packages)
if ((${#MISSING[@]} > 0)); then
  printf 'citus provision: installing with apt: %s\n' "${MISSING[*]}"
  "${SUDO[@]}" apt-get update -q
  # policy-rc.d in containers keeps the packages' services from starting; nothing here needs them.
  "${SUDO[@]}" env DEBIAN_FRONTEND=noninteractive apt-get install -y -q --no-install-recommends "${MISSING[@]}"
fi
if ! id -u "$PG_USER" >/dev/null 2>&1; then
  "${SUDO[@]}" adduser --system --quiet --home /var/lib/postgresql --no-create-home --shell /bin/bash --group "$PG_USER"
fi

BUILD=$(mktemp -d "${TMPDIR:-/tmp}/writ-citus-build.XXXXXX")
trap 'rm -rf "$BUILD"' EXIT
SUM=$(source_sum)
printf 'citus provision: building Citus %s from %s (about a minute on 2 cores)\n' "$VERSION" "$SRC"
started=$SECONDS
tar xzf "$SRC/$TARBALL" -C "$BUILD"
cd "$BUILD/citus-$VERSION"
patch -p1 -s < "$SRC/$PATCH"
# Quiet unless something fails (then the log's tail says why).
if ! { ./configure PG_CONFIG="$PG_CONFIG" && make -j"$(nproc)" && "${SUDO[@]}" make install; } >"$BUILD/build.log" 2>&1; then
  tail -n 60 "$BUILD/build.log" >&2
  printf 'citus provision: the build failed (log above)\n' >&2
  exit 1
fi
printf '%s\n' "$SUM" | "${SUDO[@]}" tee "$("$PG_CONFIG" --pkglibdir)/citus.writ-source" >/dev/null
printf 'citus provision: built and installed in %ss\n' "$((SECONDS - started))"
installed || { printf 'citus provision: Citus is missing after install\n' >&2; exit 1; }
report
