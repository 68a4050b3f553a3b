# Shared by scripts/test-deps.sh, scripts/nats-matrix.sh, scripts/release-tools.sh and
# scripts/image-engine.sh (sourced, not run): Go programs installed from the Go module proxy with
# `go install`, pinned and cached in $BIN_DIR with a stamp. The sourcing script sets BIN_DIR and
# CACHE_DIR and defines die.
# shellcheck shell=bash

# Pins of the tools both the tests and the release use.
HELM_MODULE=helm.sh/helm/v3/cmd/helm
HELM_VERSION=v3.22.0
# crane: the release pushes with it; its `registry serve` is the registry on loopback of the
# release tier and of npm test's README install (scripts/image-engine.sh).
CRANE_MODULE=github.com/google/go-containerregistry/cmd/crane
CRANE_VERSION=v0.22.1
CRANE_FIRST_INSTALL="about 40 seconds"

now_ms() { date +%s%3N; }
elapsed() { local ms=$(($(now_ms) - $1)); printf '%d.%01ds' $((ms / 1000)) $((ms % 1000 / 100)); }

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

# Builds MODULE@VERSION into a private directory, then moves the one program it made to BIN: the
# name can differ from the command's (nats-server-v2.10.27), and a failed build leaves BIN as it
# was. GOWORK/GOFLAGS off: a caller's workspace or flags must not change what gets built.
go_install_as() { # BIN MODULE@VERSION
  local bin=$1 gobin status=0 built
  gobin=$(mktemp -d "$CACHE_DIR/go-install.XXXXXX")
  (cd "$CACHE_DIR" && GOBIN=$gobin GOWORK=off GOFLAGS='' CGO_ENABLED=0 go install "$2") || status=$?
  built=("$gobin"/*)
  if ((status == 0)) && [[ ${#built[@]} == 1 && -x ${built[0]} ]]; then
    mv -f "${built[0]}" "$bin"
  elif ((status == 0)); then
    echo "go install $2 made no single program in $gobin" >&2
    status=1
  fi
  rm -rf "$gobin"
  return "$status"
}

# A Go program installed by go_tool_install below: its stamp (written after the binary) names the
# module@version built, so one file read says whether it is the pinned one.
go_tool_installed() { # BIN MODULE@VERSION
  [[ -x $1 && -f $1.version && $(<"$1.version") == "$2" ]]
}

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
  with_progress "installing $name" go_install_as "$bin" "$module@$version"
  echo "$module@$version" >"$bin.version"
  echo "$name: installed $version at $bin ($(elapsed "$start"))"
}
