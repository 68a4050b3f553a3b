#!/usr/bin/env bash
# The kube tier against the ends of the supported Kubernetes range, beside the pinned release that
# `npm test` uses (KUBERNETES_VERSION in scripts/test-deps.sh): the floor (the chart's kubeVersion)
# and the newest release. Each version is built once by scripts/build-kubernetes.sh into
# .cache/bin/kubernetes-<version>/ (stamped like test-deps.sh's build), then each file of
# KUBE_FILES runs against it, one file at a time, with the pinned etcd and helm; a summary table
# follows. Exit 1 if any file fails on any version.
#
# Usage: scripts/kube-matrix.sh              the versions of MATRIX_VERSIONS
#        scripts/kube-matrix.sh --all        those and the pinned version
#        scripts/kube-matrix.sh VERSION...   only these, e.g. v1.34.4 (built the same way)
#
# Needs what scripts/test-deps.sh needs (it runs it first) and node_modules.
set -euo pipefail

# The newest patch of the floor's release line and of the newest line that the Go module proxy
# serves (`go list -m -versions k8s.io/kubernetes`); 1.36 is the pinned version.
MATRIX_VERSIONS=(v1.33.13 v1.37.2)

# What each version builds, by Kubernetes' version skew policy: kubectl works with an API server
# one minor older or newer, kube-controller-manager with one as new or one minor newer. The pinned
# release's kubectl and kube-controller-manager serve a version within that skew; a version
# outside it gets its own (the floor's users run a kubectl of about their cluster's release, and a
# kubectl flag or a controller newer than their cluster must fail here, not there).
SKEW=1

# Every file of test/kube/: each judges something the API server does itself (the CRD's schema and
# CEL rules, ratcheting on upgrade, server-side apply, RBAC aggregation, the Deployment's
# topology spread fields), which is what differs between releases.
KUBE_FILES=(
  test/kube/crd.test.ts
  test/kube/upgrade.test.ts
  test/kube/install.test.ts
  test/kube/metacontroller.test.ts
  test/kube/helm.test.ts
  test/kube/adopt.test.ts
  test/kube/v2-crd.test.ts
  test/kube/lattice-crd.test.ts
  test/kube/lattice.test.ts
  test/kube/lattice-access.test.ts
)

ROOT=$(cd -- "$(dirname -- "${BASH_SOURCE[0]}")/.." && pwd -P)
CACHE_DIR=$ROOT/.cache
BIN_DIR=$CACHE_DIR/bin

usage() { sed -n '2,13s/^# \{0,1\}//p' "${BASH_SOURCE[0]}"; }
# now_ms, elapsed, with_progress.
# shellcheck source=lib/go-install.sh
. "$ROOT/scripts/lib/go-install.sh"
MATRIX=kube-matrix
# die, matrix_arguments, matrix_begin, matrix_run.
# shellcheck source=lib/matrix.sh
. "$ROOT/scripts/lib/matrix.sh"

matrix_arguments "$@"
matrix_begin

# The pinned binaries, etcd, helm and the rest, as npm test gets them.
deps_log=$(mktemp)
bash scripts/test-deps.sh >"$deps_log" 2>&1 || { cat "$deps_log"; die "scripts/test-deps.sh failed"; }
rm -f "$deps_log"
set -a
# shellcheck source=/dev/null
. "$CACHE_DIR/test-deps.env"
set +a
pinned=$(sed -n 's/^KUBERNETES_VERSION=//p' scripts/test-deps.sh)
if $include_pinned; then versions=("$pinned" "${versions[@]}"); fi
minor() { local rest=${1#v1.}; echo "${rest%%.*}"; }

# The commands VERSION builds itself: kube-apiserver always, the others when the pinned ones
# are outside the skew policy towards it.
commands_of() { # VERSION
  local skew=$(($(minor "$1") - $(minor "$pinned")))
  local commands=(kube-apiserver)
  # kube-controller-manager may be one minor older than the API server, never newer.
  ((skew < 0 || skew > SKEW)) && commands+=(kube-controller-manager)
  # kubectl may be one minor older or newer.
  ((skew < -SKEW || skew > SKEW)) && commands+=(kubectl)
  echo "${commands[@]}"
}
version_dir() { echo "$BIN_DIR/kubernetes-$1"; }
# VERSION's binary of COMMAND: its own if it builds it, else the pinned one.
binary_of() { # VERSION COMMAND
  if [[ $1 != "$pinned" && " $(commands_of "$1") " == *" $2 "* ]]; then echo "$(version_dir "$1")/$2"; else
    case $2 in
      kube-apiserver) echo "$KUBE_APISERVER_BIN" ;;
      kube-controller-manager) echo "$KUBE_CONTROLLER_MANAGER_BIN" ;;
      kubectl) echo "$KUBECTL_BIN" ;;
    esac
  fi
}

# The stamp, written once every binary is in place, names the version, the commands built and the
# build script's hash (not its time: CI's cache restores .cache/bin older than a fresh checkout).
stamp_of() { # VERSION
  echo "$1 $(commands_of "$1") $(sha256sum <scripts/build-kubernetes.sh | cut -d' ' -f1)"
}
built() { # VERSION
  local stamp
  stamp=$(version_dir "$1")/kubernetes.version
  [[ -f $stamp && $(<"$stamp") == "$(stamp_of "$1")" ]]
}

exec 9>"$CACHE_DIR/test-deps.lock" # the lock of test-deps.sh: both write .cache/bin
command -v flock >/dev/null && flock 9
declare -A prepared
for version in "${versions[@]}"; do
  [[ $version == "$pinned" ]] && { prepared[$version]=pinned; continue; }
  start=$(now_ms)
  dir=$(version_dir "$version")
  read -r -a commands <<<"$(commands_of "$version")"
  if built "$version"; then
    echo "kube-matrix: found cached ${commands[*]} $version in $dir"
    prepared[$version]=cached
    continue
  fi
  command -v go >/dev/null || die "'go' not found; install Go (https://go.dev/dl/)"
  echo "kube-matrix: building ${commands[*]} $version with go build (about 11 minutes on 2 cores for kube-apiserver, 4 more for the others)..."
  rm -f "$dir/kubernetes.version"
  with_progress "building Kubernetes $version" bash scripts/build-kubernetes.sh "$version" "$dir" "${commands[@]}"
  reported=$("$dir/kube-apiserver" --version | sed -n 's/^Kubernetes *//p')
  [[ $reported == "$version" ]] || die "$dir/kube-apiserver reports '${reported:-nothing}', not $version"
  stamp_of "$version" >"$dir/kubernetes.version"
  prepared[$version]=$(elapsed "$start")
  echo "kube-matrix: built ${commands[*]} $version in $dir (${prepared[$version]})"
done
flock -u 9 2>/dev/null || true

version_env() { # VERSION
  local command
  for command in kube-apiserver kube-controller-manager kubectl; do
    local var=${command^^}_BIN
    echo "${var//-/_}=$(binary_of "$1" "$command")"
  done
}
version_title() { # VERSION
  if [[ $1 == "$pinned" ]]; then
    echo "kube-matrix: Kubernetes $1, the pinned binaries"
    return
  fi
  local borrowed=() command
  for command in kube-controller-manager kubectl; do
    [[ " $(commands_of "$1") " == *" $command "* ]] || borrowed+=("$command")
  done
  echo "kube-matrix: Kubernetes $1: its own $(commands_of "$1")${borrowed[*]:+; ${borrowed[*]} of the pinned $pinned}"
}
echo "kube-matrix: the kube tier (${#KUBE_FILES[@]} files) per Kubernetes version"
status=0
matrix_run build "${KUBE_FILES[@]}" || status=$?
echo "total $(elapsed "$matrix_start")"
exit "$status"
