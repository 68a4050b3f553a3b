# Sourced by scripts/test-deps.sh and scripts/release-tools.sh: Go programs installed from the Go
# module proxy with `go install`, pinned, into BIN_DIR (the caller sets CACHE_DIR, BIN_DIR and
# the helpers now_ms, elapsed and die). A stamp next to each binary names the module@version
# built, so one file read says whether the cached one is the pinned one.
# shellcheck shell=bash

# Pins of the tools both the tests and the release use.
HELM_MODULE=helm.sh/helm/v3/cmd/helm
HELM_VERSION=v3.22.0

# Runs "$@" and says every 30 s that it is still at work: go install prints nothing while it
# downloads and compiles, and a first install must never look hung.
with_progress() { # WHAT COMMAND...
  local what=$1 start ticker status=0
  shift
  start=$(now_ms)
  (while sleep 30; do echo "  ... still $what ($(elapsed "$start"))"; done) &
  ticker=$!
  "$@" || status=$?
  kill "$ticker" 2>/dev/null || true
  wait "$ticker" 2>/dev/null || true
  return "$status"
}

# GOWORK/GOFLAGS off: a caller's workspace or flags must not change what gets built.
go_install_into_bin() { # MODULE@VERSION
  (cd "$CACHE_DIR" && GOBIN=$BIN_DIR GOWORK=off GOFLAGS='' CGO_ENABLED=0 go install "$1")
}

# Whether BIN is the build of MODULE@VERSION (its stamp is written after the binary).
go_tool_installed() { # BIN MODULE@VERSION
  [[ -x $1 && -f $1.version && $(<"$1.version") == "$2" ]]
}

# Installs MODULE@VERSION as BIN unless it is there already; FIRST-TIME says how long a first
# install takes, so that a long silent build never looks hung.
go_tool_install() { # NAME BIN MODULE VERSION FIRST-TIME
  local name=$1 bin=$2 module=$3 version=$4 first=$5 start
  start=$(now_ms)
  if go_tool_installed "$bin" "$module@$version"; then
    echo "$name: found cached $version at $bin ($(elapsed "$start"))"
    return
  fi
  command -v go >/dev/null || die "$name: 'go' not found; install Go (https://go.dev/dl/)"
  echo "$name: installing $version with go install (a first install takes $first on 2 cores)..."
  rm -f "$bin.version"
  with_progress "installing $name" go_install_into_bin "$module@$version"
  echo "$module@$version" >"$bin.version"
  echo "$name: installed $version at $bin ($(elapsed "$start"))"
}
