#!/usr/bin/env bash
# Builds kube-apiserver, kube-controller-manager and kubectl (or the named ones of them) of one
# Kubernetes release from the Go module proxy alone.
#
# Usage: scripts/build-kubernetes.sh VERSION OUT_DIR [COMMAND...]     e.g. v1.36.3 .cache/bin
#        (COMMAND: kube-apiserver, kube-controller-manager, kubectl; all three by default)
#
# `go install k8s.io/kubernetes/cmd/kube-apiserver@VERSION` cannot work: the module's go.mod
# replaces every k8s.io/* staging module with ./staging/src/k8s.io/X, and the module zip the
# proxy serves has no staging/ sources. Each staging module is published on its own as
# k8s.io/X@v0.MINOR.PATCH, so a writable copy of the module with those replaces pointed at the
# published versions builds. Called by scripts/test-deps.sh, which decides when to rebuild.
set -euo pipefail

VERSION=${1:?usage: build-kubernetes.sh VERSION OUT_DIR}
OUT_DIR=${2:?usage: build-kubernetes.sh VERSION OUT_DIR}
shift 2
COMMANDS=("$@")
[[ ${#COMMANDS[@]} -gt 0 ]] || COMMANDS=(kube-apiserver kube-controller-manager kubectl)
for command in "${COMMANDS[@]}"; do
  case $command in
    kube-apiserver | kube-controller-manager | kubectl) ;;
    *) echo "build-kubernetes: unknown command '$command'" >&2; exit 2 ;;
  esac
done
# Staging modules are tagged v0.<minor>.<patch> for Kubernetes v1.<minor>.<patch>.
STAGING_VERSION=v0.${VERSION#v1.}
# Not published on the proxy; nothing we build imports it, but go.mod requires it.
UNPUBLISHED_STAGING=(k8s.io/sample-cli-plugin)

# A caller's workspace or flags must not change what gets built.
export GOWORK=off GOFLAGS=-mod=mod CGO_ENABLED=0

mkdir -p "$OUT_DIR"
OUT_DIR=$(cd -- "$OUT_DIR" && pwd -P)
work=$(mktemp -d "${TMPDIR:-/tmp}/build-kubernetes.XXXXXX")
trap 'chmod -R u+w "$work" 2>/dev/null; rm -rf "$work"' EXIT

module_dir=$(cd "$work" && go mod download -json "k8s.io/kubernetes@$VERSION" |
  sed -n 's/^[[:space:]]*"Dir": "\(.*\)",$/\1/p')
[[ -d $module_dir ]] || { echo "build-kubernetes: go mod download gave no module dir" >&2; exit 1; }

src=$work/kubernetes
cp -r "$module_dir" "$src"
chmod -R u+w "$src" # the module cache is read-only

cd "$src"
replaces=()
for module in $(sed -n 's|^[[:space:]]*\(k8s\.io/[^ ]*\) => \./staging/src/.*$|\1|p' go.mod); do
  if [[ " ${UNPUBLISHED_STAGING[*]} " == *" $module "* ]]; then
    mkdir -p "$work/empty/$module"
    printf 'module %s\n\ngo 1.21\n' "$module" >"$work/empty/$module/go.mod"
    replaces+=("-replace=$module=$work/empty/$module")
  else
    replaces+=("-replace=$module=$module@$STAGING_VERSION")
  fi
done
[[ ${#replaces[@]} -gt 0 ]] || { echo "build-kubernetes: found no staging replaces in go.mod" >&2; exit 1; }
go mod edit "${replaces[@]}"

# Stamp the release so `--version`, discovery and kubectl's skew check report it.
version_pkg=k8s.io/component-base/version
minor=${VERSION#v1.}
minor=${minor%%.*}
ldflags="-s -w -X $version_pkg.gitVersion=$VERSION -X $version_pkg.gitMajor=1 -X $version_pkg.gitMinor=$minor"
ldflags+=" -X $version_pkg.gitTreeState=clean"
go build -trimpath -ldflags "$ldflags" -o "$OUT_DIR/" "${COMMANDS[@]/#/./cmd/}"
