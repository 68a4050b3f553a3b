#!/usr/bin/env bash
# Verifies a release made by scripts/release.sh, as a user would before installing it: every
# signature and attestation, and that the files in DIR are the ones signed and pushed.
#   1. SHA256SUMS: its signature bundle, then every file it lists
#   2. install.yaml: its signature bundle, and that it pins the image of release.env
#   3. the image in the registry (by digest): its signature, and its provenance (SLSA v1), SPDX
#      and CycloneDX attestations
#   4. the chart in the registry (by digest): its signature, and that its content is the .tgz of DIR
# Exit 0 only if every check passes; the first failure is printed and ends the run.
#
# Usage: scripts/release-verify.sh DIR --key cosign.pub [--plain-http]
#        scripts/release-verify.sh DIR --certificate-identity-regexp RE --certificate-oidc-issuer URL
#   --key: a release signed with a key pair (offline, no transparency log)
#   --certificate-*: a keyless release (the workflow's: its GitHub identity, checked against Rekor)
set -euo pipefail

ROOT=$(cd -- "$(dirname -- "${BASH_SOURCE[0]}")/.." && pwd -P)
say() { echo "release-verify: $*"; }
fail() { echo "release-verify: FAILED: $*" >&2; exit 1; }
usage() { sed -n '11,14s/^# \{0,1\}//p' "${BASH_SOURCE[0]}"; }

dir=${1:-}
[[ -d $dir ]] || { usage >&2; exit 2; }
shift
identity=() registry_args=() insecure=()
while (($#)); do
  case $1 in
    --key) identity+=(--key "${2:?--key needs a file}" --insecure-ignore-tlog=true); shift 2 ;;
    --certificate-identity-regexp | --certificate-oidc-issuer) identity+=("$1" "${2:?$1 needs a value}"); shift 2 ;;
    --plain-http) registry_args=(--allow-http-registry) insecure=(--insecure); shift ;;
    *) usage >&2; exit 2 ;;
  esac
done
((${#identity[@]})) || { usage >&2; exit 2; }

tools_log=$(bash "$ROOT/scripts/release-tools.sh" 2>&1) || { echo "$tools_log" >&2; fail "scripts/release-tools.sh"; }
# shellcheck source=/dev/null
. "$ROOT/.cache/release-tools.env"
cosign() { "$COSIGN_BIN" "$@" 2>"$dir/.verify.log" || { cat "$dir/.verify.log" >&2; return 1; }; }
trap 'rm -f "$dir/.verify.log"' EXIT
cd "$dir"

verify_blob() { cosign verify-blob "${identity[@]}" --bundle "$1.sigstore.json" "$1" >/dev/null || fail "the signature over $1"; }
verify_blob SHA256SUMS
sha256sum --quiet --check --strict SHA256SUMS || fail "a file differs from SHA256SUMS"
say "SHA256SUMS signed; every file matches it"

# release.env is listed in SHA256SUMS: from here on, what it names is what was signed.
# shellcheck source=/dev/null
. ./release.env
verify_blob install.yaml
images=$(sed -n 's/^ *image: //p' install.yaml | sort -u)
[[ $images == "$IMAGE" ]] || fail "install.yaml runs '${images//$'\n'/, }', not the released $IMAGE"
say "install.yaml signed; it runs $IMAGE"

cosign verify "${identity[@]}" "${registry_args[@]}" "$IMAGE" >/dev/null || fail "the image's signature"
for type in slsaprovenance1 spdxjson cyclonedx; do
  cosign verify-attestation "${identity[@]}" "${registry_args[@]}" --type "$type" "$IMAGE" >/dev/null ||
    fail "the image's $type attestation"
done
say "image signed, with provenance and SBOM attestations"

cosign verify "${identity[@]}" "${registry_args[@]}" "$CHART" >/dev/null || fail "the chart's signature"
chart_layer=$("$CRANE_BIN" "${insecure[@]}" manifest "$CHART" |
  node -e "const m = JSON.parse(require('fs').readFileSync(0, 'utf8'));
    const layer = m.layers.find((l) => l.mediaType === 'application/vnd.cncf.helm.chart.content.v1.tar+gzip');
    process.stdout.write(layer ? layer.digest : '')")
[[ $chart_layer == "sha256:$(sha256sum "wasmcloud-metacontroller-$VERSION.tgz" | cut -d' ' -f1)" ]] ||
  fail "the chart in the registry is not wasmcloud-metacontroller-$VERSION.tgz"
say "chart signed; the registry's is the release's .tgz"
say "release $VERSION verified"
