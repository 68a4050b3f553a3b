#!/usr/bin/env bash
# Installs/builds the native programs the test suite runs against, caching them between runs:
#   - nats-server (wadm needs >= 2.10 with JetStream; Debian ships 2.9), via `go install`
#   - a real wadm, built from test/wadm (a thin binary over the published `wadm` crate)
#   - lua5.1 from Debian (the Argo CD health check's Lua is run by a test), as root via apt-get
#   - kube-apiserver, kube-controller-manager and kubectl, built from the Go module proxy
#     (scripts/build-kubernetes.sh)
#   - etcd, the binary of Debian's etcd-server package (unpacked, no service installed)
#   - helm (the chart's lint, template and parity tests) and actionlint (the GitHub workflows), via `go install`
# and writes their absolute paths to .cache/test-deps.env (NATS_SERVER_BIN=..., WADM_BIN=...).
#
# Usage: scripts/test-deps.sh                install/build what is missing or outdated
#        scripts/test-deps.sh --check        only verify; exit 1 with the command to run if not ready
#        scripts/test-deps.sh --nats-server  only nats-server; prints its path last
#        scripts/test-deps.sh --demo         only nats-server and wadm (for `npm run demo` and the image tier); prints
#                                            NATS_SERVER_BIN=... and WADM_BIN=... last
#
# Needs Go, cargo (rustup stable), a C compiler (for `ring`) and apt-get. Safe to run from any
# directory and to re-run: everything up to date is skipped in well under a second.
set -euo pipefail

# Bump deliberately: the tests treat this nats-server as the reference broker. 2.11.x is what
# wash 0.43 bundled with wadm 0.21; the Go module proxy serves it and it builds with current Go.
NATS_SERVER_VERSION=v2.11.17
NATS_SERVER_MODULE=github.com/nats-io/nats-server/v2
# The API server the CRD's validation rules and list types are tested against; kubectl from the
# same release so its client-side checks match. 15-30 min to build on 2 cores, then cached.
KUBERNETES_VERSION=v1.36.3
# Upstream version of Debian bookworm's etcd-server (3.4.23-4+b4); Kubernetes supports etcd >= 3.4.
ETCD_VERSION=3.4.23
# Go tools the tests run, installed from the Go module proxy with `go install`; each pinned (helm
# in scripts/lib/go-install.sh: the release uses the same).
ACTIONLINT_MODULE=github.com/rhysd/actionlint/cmd/actionlint
ACTIONLINT_VERSION=v1.7.12

ROOT=$(cd -- "$(dirname -- "${BASH_SOURCE[0]}")/.." && pwd -P)
CACHE_DIR=$ROOT/.cache
BIN_DIR=$CACHE_DIR/bin
ENV_FILE=$CACHE_DIR/test-deps.env
NATS_SERVER_BIN=$BIN_DIR/nats-server
WADM_DIR=$ROOT/test/wadm
# Explicit target dir so a user-level CARGO_TARGET_DIR can't move the binary elsewhere.
WADM_TARGET_DIR=$WADM_DIR/target
WADM_BIN=$WADM_TARGET_DIR/release/wadm
KUBE_APISERVER_BIN=$BIN_DIR/kube-apiserver
# Only its clusterrole-aggregation controller runs in the tests (the aggregated RBAC roles).
KUBE_CONTROLLER_MANAGER_BIN=$BIN_DIR/kube-controller-manager
KUBECTL_BIN=$BIN_DIR/kubectl
ETCD_BIN=$BIN_DIR/etcd
HELM_BIN=$BIN_DIR/helm
ACTIONLINT_BIN=$BIN_DIR/actionlint
# Inputs whose change means the wadm binary must be rebuilt.
WADM_INPUTS=("$WADM_DIR/Cargo.toml" "$WADM_DIR/Cargo.lock" "$WADM_DIR/src/main.rs")

# How to re-run this script, as the user should type it from the current directory.
SELF="bash ${ROOT#"$PWD/"}/scripts/test-deps.sh"
if [[ $ROOT == "$PWD" ]]; then SELF="bash scripts/test-deps.sh"; fi

usage() { sed -n '2,19s/^# \{0,1\}//p' "${BASH_SOURCE[0]}"; }

check_only=false
nats_server_only=false
demo_only=false
case "${1:-}" in
  "") ;;
  --check) check_only=true ;;
  --nats-server) nats_server_only=true ;;
  --demo) demo_only=true ;;
  -h | --help) usage; exit 0 ;;
  *) echo "test-deps: unknown argument '$1'" >&2; usage >&2; exit 2 ;;
esac

die() { echo "test-deps: $*" >&2; exit 1; }
# now_ms, elapsed, with_progress, go_install_as, go_tool_installed, go_tool_install.
# shellcheck source=lib/go-install.sh
. "$ROOT/scripts/lib/go-install.sh"

# Prints the installed nats-server version (e.g. v2.11.17), or nothing if absent/broken.
nats_server_version() {
  [[ -x $NATS_SERVER_BIN ]] || return 0
  "$NATS_SERVER_BIN" --version 2>/dev/null | sed -n 's/^nats-server: *//p' || true
}

# Succeeds if the wadm binary exists and is newer than every build input.
wadm_up_to_date() {
  [[ -x $WADM_BIN ]] || return 1
  local f
  for f in "${WADM_INPUTS[@]}"; do [[ $WADM_BIN -nt $f ]] || return 1; done
}

# Version of the Kubernetes binaries we built: the build writes this stamp after all of them are
# in place, so one file read stands for three slow `--version` runs. Built by the build script as
# it is: the stamp is newer than the script, or KUBERNETES_INPUTS holds the script's hash. The hash
# is what holds in CI, whose cache restores .cache/bin with the times it was saved with, older than
# the files of a fresh checkout.
KUBERNETES_STAMP=$BIN_DIR/kubernetes.version
KUBERNETES_INPUTS=$BIN_DIR/kubernetes.inputs
kubernetes_version() {
  [[ -x $KUBE_APISERVER_BIN && -x $KUBE_CONTROLLER_MANAGER_BIN && -x $KUBECTL_BIN && -f $KUBERNETES_STAMP ]] || return 0
  [[ $KUBERNETES_STAMP -nt $ROOT/scripts/build-kubernetes.sh ||
    (-f $KUBERNETES_INPUTS && $(<"$KUBERNETES_INPUTS") == "$(kubernetes_inputs)") ]] || return 0
  cat "$KUBERNETES_STAMP"
}
kubernetes_inputs() { sha256sum <"$ROOT/scripts/build-kubernetes.sh" | cut -d' ' -f1; }

etcd_version() {
  [[ -x $ETCD_BIN ]] || return 0
  "$ETCD_BIN" --version 2>/dev/null | sed -n 's/^etcd Version: *//p' || true
}

wadm_version() { "$WADM_BIN" --version 2>/dev/null || echo "wadm (version unknown)"; }

env_file_content() {
  printf 'NATS_SERVER_BIN=%q\nWADM_BIN=%q\n' "$NATS_SERVER_BIN" "$WADM_BIN"
  printf 'KUBE_APISERVER_BIN=%q\nKUBE_CONTROLLER_MANAGER_BIN=%q\n' "$KUBE_APISERVER_BIN" "$KUBE_CONTROLLER_MANAGER_BIN"
  printf 'KUBECTL_BIN=%q\nETCD_BIN=%q\n' "$KUBECTL_BIN" "$ETCD_BIN"
  printf 'HELM_BIN=%q\nACTIONLINT_BIN=%q\n' "$HELM_BIN" "$ACTIONLINT_BIN"
}

if $check_only; then
  problem=
  have=$(nats_server_version)
  if [[ $have != "$NATS_SERVER_VERSION" ]]; then
    problem="nats-server $NATS_SERVER_VERSION is not installed at $NATS_SERVER_BIN"
    [[ -n $have ]] && problem="nats-server at $NATS_SERVER_BIN is $have, not $NATS_SERVER_VERSION"
  elif ! wadm_up_to_date; then
    problem="wadm is not built at $WADM_BIN"
    [[ -x $WADM_BIN ]] && problem="wadm at $WADM_BIN is older than its sources in test/wadm"
  elif ! command -v lua5.1 >/dev/null; then
    problem="lua5.1 is not installed"
  elif [[ $(kubernetes_version) != "$KUBERNETES_VERSION" ]]; then
    problem="kube-apiserver, kube-controller-manager and kubectl $KUBERNETES_VERSION are not built in $BIN_DIR"
  elif [[ $(etcd_version) != "$ETCD_VERSION" ]]; then
    problem="etcd $ETCD_VERSION is not installed at $ETCD_BIN"
  elif ! go_tool_installed "$HELM_BIN" "$HELM_MODULE@$HELM_VERSION"; then
    problem="helm $HELM_VERSION is not installed at $HELM_BIN"
  elif ! go_tool_installed "$ACTIONLINT_BIN" "$ACTIONLINT_MODULE@$ACTIONLINT_VERSION"; then
    problem="actionlint $ACTIONLINT_VERSION is not installed at $ACTIONLINT_BIN"
  elif [[ ! -f $ENV_FILE || $(<"$ENV_FILE") != "$(env_file_content)" ]]; then
    problem="$ENV_FILE is missing or stale"
  fi
  [[ -z $problem ]] || die "$problem; run: $SELF"
  exit 0
fi

# Toolchains installed the usual way are often not on a non-login shell's PATH.
if ! command -v go >/dev/null && [[ -x /usr/local/go/bin/go ]]; then PATH=$PATH:/usr/local/go/bin; fi
if ! command -v cargo >/dev/null && [[ -x ~/.cargo/bin/cargo ]]; then PATH=$PATH:~/.cargo/bin; fi

mkdir -p "$BIN_DIR"
# Serialise concurrent runs (e.g. parallel CI jobs sharing a checkout).
if command -v flock >/dev/null; then
  exec 9>"$CACHE_DIR/test-deps.lock"
  flock 9
fi

# --- nats-server ---------------------------------------------------------------------------
start=$(now_ms)
have=$(nats_server_version)
if [[ $have == "$NATS_SERVER_VERSION" ]]; then
  echo "nats-server: found cached $have at $NATS_SERVER_BIN ($(elapsed "$start"))"
else
  command -v go >/dev/null || die "nats-server: 'go' not found; install Go (https://go.dev/dl/)"
  echo "nats-server: installing $NATS_SERVER_VERSION${have:+ (replacing $have)} with go install..."
  with_progress "installing nats-server" go_install_as "$NATS_SERVER_BIN" "$NATS_SERVER_MODULE@$NATS_SERVER_VERSION"
  have=$(nats_server_version)
  [[ $have == "$NATS_SERVER_VERSION" ]] ||
    die "nats-server: installed binary reports '${have:-nothing}', expected $NATS_SERVER_VERSION"
  echo "nats-server: installed $have at $NATS_SERVER_BIN ($(elapsed "$start"))"
fi
if $nats_server_only; then
  echo "$NATS_SERVER_BIN"
  exit 0
fi

# --- wadm ----------------------------------------------------------------------------------
start=$(now_ms)
if wadm_up_to_date; then
  echo "wadm: found cached $(wadm_version) at $WADM_BIN ($(elapsed "$start"))"
else
  command -v cargo >/dev/null || die "wadm: 'cargo' not found; install Rust via https://rustup.rs"
  command -v "${CC:-cc}" >/dev/null ||
    die "wadm: no C compiler ('${CC:-cc}') found, needed to build ring; e.g. apt-get install -y gcc"
  echo "wadm: building test/wadm with cargo (a first build takes 4-10 minutes on 2 cores; cargo shows its progress)..."
  cargo build --release --locked \
    --manifest-path "$WADM_DIR/Cargo.toml" --target-dir "$WADM_TARGET_DIR"
  # cargo leaves an up-to-date binary untouched; bump it so the freshness check above holds.
  touch "$WADM_BIN"
  echo "wadm: built $(wadm_version) at $WADM_BIN ($(elapsed "$start"))"
fi
if $demo_only; then
  echo "NATS_SERVER_BIN=$NATS_SERVER_BIN"
  echo "WADM_BIN=$WADM_BIN"
  exit 0
fi

# --- lua (runs the Argo CD health check of examples/gitops/argocd in a test) ------------------
start=$(now_ms)
if command -v lua5.1 >/dev/null; then
  echo "lua: found $(lua5.1 -v 2>&1 | head -n 1) ($(elapsed "$start"))"
elif [[ $(id -u) == 0 ]] && command -v apt-get >/dev/null; then
  echo "lua: installing Debian's lua5.1 (Argo CD runs health checks with a Lua 5.1 interpreter)..."
  (apt-get install -y -qq lua5.1 >/dev/null 2>&1 || { apt-get update -qq && apt-get install -y -qq lua5.1; }) >/dev/null
  echo "lua: installed $(lua5.1 -v 2>&1 | head -n 1) ($(elapsed "$start"))"
else
  die "lua: lua5.1 is missing; run: sudo apt-get install -y lua5.1"
fi

# --- kube-apiserver, kube-controller-manager and kubectl (the real API server judges the CRD) --
start=$(now_ms)
have=$(kubernetes_version)
if [[ $have == "$KUBERNETES_VERSION" ]]; then
  echo "kubernetes: found cached kube-apiserver, kube-controller-manager and kubectl $have in $BIN_DIR ($(elapsed "$start"))"
else
  command -v go >/dev/null || die "kubernetes: 'go' not found; install Go (https://go.dev/dl/)"
  echo "kubernetes: building kube-apiserver, kube-controller-manager and kubectl $KUBERNETES_VERSION with go build (a first build takes 15-30 minutes on 2 cores)..."
  rm -f "$KUBERNETES_STAMP" "$KUBERNETES_INPUTS"
  bash "$ROOT/scripts/build-kubernetes.sh" "$KUBERNETES_VERSION" "$BIN_DIR"
  built=$("$KUBE_APISERVER_BIN" --version | sed -n 's/^Kubernetes *//p')
  [[ $built == "$KUBERNETES_VERSION" ]] ||
    die "kubernetes: built kube-apiserver reports '${built:-nothing}', expected $KUBERNETES_VERSION"
  kubernetes_inputs >"$KUBERNETES_INPUTS"
  echo "$KUBERNETES_VERSION" >"$KUBERNETES_STAMP"
  echo "kubernetes: built kube-apiserver, kube-controller-manager and kubectl $KUBERNETES_VERSION in $BIN_DIR ($(elapsed "$start"))"
fi

# --- etcd (kube-apiserver's storage) --------------------------------------------------------
start=$(now_ms)
have=$(etcd_version)
if [[ $have == "$ETCD_VERSION" ]]; then
  echo "etcd: found cached $have at $ETCD_BIN ($(elapsed "$start"))"
else
  command -v apt-get >/dev/null || die "etcd: apt-get not found; put an etcd $ETCD_VERSION binary at $ETCD_BIN"
  echo "etcd: unpacking Debian's etcd-server package..."
  deb_dir=$(mktemp -d "$CACHE_DIR/etcd-deb.XXXXXX")
  # apt's download sandbox user must be able to write there (it warns, and works, otherwise).
  chmod 755 "$deb_dir" && { chown _apt "$deb_dir" 2>/dev/null || true; }
  (cd "$deb_dir" && { apt-get download -qq etcd-server 2>/dev/null ||
    { apt-get update -qq >/dev/null && apt-get download -qq etcd-server; }; })
  deb=$(echo "$deb_dir"/etcd-server_*.deb)
  deb_version=$(dpkg-deb -f "$deb" Version)
  upstream=${deb_version#*:}
  upstream=${upstream%-*}
  [[ $upstream == "$ETCD_VERSION" ]] ||
    { rm -rf "$deb_dir"; die "etcd: Debian now serves etcd-server $deb_version; set ETCD_VERSION=$upstream in this script"; }
  dpkg-deb -x "$deb" "$deb_dir/root"
  install -m 755 "$deb_dir/root/usr/bin/etcd" "$ETCD_BIN"
  rm -rf "$deb_dir"
  have=$(etcd_version)
  [[ $have == "$ETCD_VERSION" ]] || die "etcd: unpacked binary reports '${have:-nothing}', expected $ETCD_VERSION"
  echo "etcd: installed $have (Debian $deb_version) at $ETCD_BIN ($(elapsed "$start"))"
fi

# --- helm and actionlint (the chart's and the workflows' tests) -------------------------------
go_tool_install helm "$HELM_BIN" "$HELM_MODULE" "$HELM_VERSION" "10-15 minutes"
go_tool_install actionlint "$ACTIONLINT_BIN" "$ACTIONLINT_MODULE" "$ACTIONLINT_VERSION" "about 1.5 minutes"

# --- paths for the test runner -------------------------------------------------------------
tmp=$(mktemp "$CACHE_DIR/test-deps.env.XXXXXX")
env_file_content >"$tmp"
mv -f "$tmp" "$ENV_FILE"
echo "NATS_SERVER_BIN=$NATS_SERVER_BIN"
echo "WADM_BIN=$WADM_BIN"
echo "KUBE_APISERVER_BIN=$KUBE_APISERVER_BIN"
echo "KUBE_CONTROLLER_MANAGER_BIN=$KUBE_CONTROLLER_MANAGER_BIN"
echo "KUBECTL_BIN=$KUBECTL_BIN"
echo "ETCD_BIN=$ETCD_BIN"
echo "HELM_BIN=$HELM_BIN"
echo "ACTIONLINT_BIN=$ACTIONLINT_BIN"
echo "(written to $ENV_FILE)"
