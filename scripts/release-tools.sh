#!/usr/bin/env bash
# Installs the programs a release needs, each pinned and built once from the Go module proxy with
# `go install` into .cache/bin (cached like the test dependencies, scripts/lib/go-install.sh):
#   - crane: pushes the image and copies by digest; `crane registry serve` is the release tier's
#     registry on loopback
#   - cosign: signs and verifies the image, the chart and the files, and attests the provenance
#   - syft: the SBOM of what the image contains (SPDX and CycloneDX)
#   - kustomize: renders install.yaml from manifests/
#   - helm: packages and pushes the chart (the pin the tests use)
# and writes their paths to .cache/release-tools.env (CRANE_BIN=..., COSIGN_BIN=..., ...).
# A first run takes ~17 min on 2 cores (cosign ~7.5 min, syft ~8.5 min); then well under a second.
#
# Usage: scripts/release-tools.sh     (prints the env file's lines last)
set -euo pipefail

COSIGN_MODULE=github.com/sigstore/cosign/v3/cmd/cosign
COSIGN_VERSION=v3.1.3
SYFT_MODULE=github.com/anchore/syft/cmd/syft
SYFT_VERSION=v1.57.2
KUSTOMIZE_MODULE=sigs.k8s.io/kustomize/kustomize/v5
KUSTOMIZE_VERSION=v5.8.2

ROOT=$(cd -- "$(dirname -- "${BASH_SOURCE[0]}")/.." && pwd -P)
CACHE_DIR=$ROOT/.cache
BIN_DIR=$CACHE_DIR/bin
ENV_FILE=$CACHE_DIR/release-tools.env

die() { echo "release-tools: $*" >&2; exit 1; }
# now_ms, elapsed, go_tool_install and the pins of helm and crane.
# shellcheck source=scripts/lib/go-install.sh
. "$ROOT/scripts/lib/go-install.sh"

if ! command -v go >/dev/null && [[ -x /usr/local/go/bin/go ]]; then PATH=$PATH:/usr/local/go/bin; fi
mkdir -p "$BIN_DIR"
exec 7>"$CACHE_DIR/release-tools.lock"
flock 7 # concurrent runs share the cache

go_tool_install crane "$BIN_DIR/crane" "$CRANE_MODULE" "$CRANE_VERSION" "$CRANE_FIRST_INSTALL"
go_tool_install cosign "$BIN_DIR/cosign" "$COSIGN_MODULE" "$COSIGN_VERSION" "about 7.5 minutes"
go_tool_install syft "$BIN_DIR/syft" "$SYFT_MODULE" "$SYFT_VERSION" "about 8.5 minutes"
go_tool_install kustomize "$BIN_DIR/kustomize" "$KUSTOMIZE_MODULE" "$KUSTOMIZE_VERSION" "about 1 minute"
go_tool_install helm "$BIN_DIR/helm" "$HELM_MODULE" "$HELM_VERSION" "10-15 minutes"

{
  printf 'CRANE_BIN=%q\nCOSIGN_BIN=%q\nSYFT_BIN=%q\n' "$BIN_DIR/crane" "$BIN_DIR/cosign" "$BIN_DIR/syft"
  printf 'KUSTOMIZE_BIN=%q\nHELM_BIN=%q\n' "$BIN_DIR/kustomize" "$BIN_DIR/helm"
} >"$ENV_FILE.tmp"
mv -f "$ENV_FILE.tmp" "$ENV_FILE"
cat "$ENV_FILE"
