#!/usr/bin/env bash
# Makes a release (`npm run release -- VERSION --registry REGISTRY ...`), the same steps on a
# laptop, in the release tier (scripts/release-test.sh) and in .github/workflows/release.yml:
#   1. the image: the Dockerfile built and checked by the image tier (scripts/image-test.sh --save),
#      or one given with --image (the workflow's multi-arch buildx output), pushed to
#      REGISTRY/wasmcloud-metacontroller:VERSION and kept as an OCI layout (…-image.oci.tar)
#   2. install.yaml: manifests/ with the image pinned by digest
#   3. the Helm chart, its default image pinned by the same digest, packaged and pushed as an OCI
#      artifact to REGISTRY/charts/wasmcloud-metacontroller:VERSION
#   4. the SBOM of what the image contains, SPDX and CycloneDX (syft)
#   5. an SLSA v1 provenance predicate
#   6. cosign: signatures over the image and the chart, the provenance and both SBOMs attested to
#      the image, a signature bundle over install.yaml and over SHA256SUMS (the checksums of
#      every file of the release)
#   7. the release notes: the version's section of CHANGELOG.md
# Keys: --key FILE signs with a cosign key pair (COSIGN_PASSWORD holds its password, empty for
# none) and nothing goes to a transparency log; without --key, cosign signs keyless (Fulcio and
# Rekor, the workflow's GitHub OIDC identity). scripts/release-verify.sh checks a release.
#
# Usage: scripts/release.sh VERSION --registry HOST[:PORT][/PATH] --out DIR
#            [--key cosign.key] [--image docker-save.tar | OCI-layout-dir] [--plain-http] [--allow-dirty]
#   --image        release this image instead of building one: a `docker save` tar, or an OCI layout
#                  whose index.json names one image or one index (buildx --output type=oci)
#   --plain-http   the registry speaks HTTP (a registry on loopback, as in the release tier)
#   --allow-dirty  release from a working tree with uncommitted changes (the provenance says so)
set -euo pipefail

ROOT=$(cd -- "$(dirname -- "${BASH_SOURCE[0]}")/.." && pwd -P)
NAME=wasmcloud-metacontroller
# The image name the manifests and the chart's values.yaml are written with.
SOURCE_IMAGE=ghcr.io/wasmcloud-metacontroller/wasmcloud-metacontroller

now_ms() { date +%s%3N; }
elapsed() { local ms=$(($(now_ms) - $1)); printf '%d.%01ds' $((ms / 1000)) $((ms % 1000 / 100)); }
say() { echo "release: $*"; }
die() { echo "release: $*" >&2; exit 1; }
usage() { sed -n '20,25s/^# \{0,1\}//p' "${BASH_SOURCE[0]}"; }

version= registry= out= key= image= plain_http=false allow_dirty=false
while (($#)); do
  case $1 in
    --registry) registry=${2:?--registry needs a value}; shift 2 ;;
    --out) out=$(realpath -m -- "${2:?--out needs a directory}"); shift 2 ;;
    --key) key=$(realpath -- "${2:?--key needs a file}"); shift 2 ;;
    --image) image=$(realpath -- "${2:?--image needs a path}"); shift 2 ;;
    --plain-http) plain_http=true; shift ;;
    --allow-dirty) allow_dirty=true; shift ;;
    -h | --help) usage; exit 0 ;;
    -*) usage >&2; die "unknown option '$1'" ;;
    *) [[ -z $version ]] || die "one version only"; version=$1; shift ;;
  esac
done
[[ -n $version && -n $registry && -n $out ]] || { usage >&2; exit 2; }
registry=${registry%/}
IMAGE_REPO=$registry/$NAME
CHART_REPO=$registry/charts
total_start=$(now_ms)

# --- what is released ---------------------------------------------------------------------------
package_version=$(node -p "require('$ROOT/package.json').version")
[[ $version == "$package_version" ]] || die "version $version is not package.json's ($package_version)"
cd "$ROOT"
revision=$(git rev-parse HEAD)
dirty=false
if [[ -n $(git status --porcelain --untracked-files=no) ]]; then
  $allow_dirty || die "the working tree has uncommitted changes (--allow-dirty releases them anyway)"
  dirty=true
fi
mkdir -p "$out"
out=$(cd "$out" && pwd -P)
[[ -z $(ls -A "$out") ]] || die "$out is not empty"
WORK=$(mktemp -d "${TMPDIR:-/tmp}/release.XXXXXX")
trap 'rm -rf "$WORK"' EXIT
bash scripts/release-notes.sh "$version" >"$out/release-notes.md"
started_on=$(date -u +%Y-%m-%dT%H:%M:%SZ)

bash scripts/release-tools.sh >"$WORK/release-tools.log" 2>&1 || { cat "$WORK/release-tools.log" >&2; die "scripts/release-tools.sh failed"; }
# shellcheck source=/dev/null
. .cache/release-tools.env
insecure=() helm_http=()
if $plain_http; then insecure=(--insecure) helm_http=(--plain-http); fi
crane() { "$CRANE_BIN" "${insecure[@]}" "$@"; }

# --- 1. the image -------------------------------------------------------------------------------
start=$(now_ms)
if [[ -z $image ]]; then
  image=$WORK/image.tar
  bash scripts/image-test.sh --save "$image"
  [[ -f $image ]] || die "the image tier did not build an image (see its output above)"
fi
# A directory is an OCI layout (buildx's, several platforms): crane pushes the one image or index
# its index.json names, as it is, so the digest is the layout's.
crane push "$image" "$IMAGE_REPO:$version" >/dev/null 2>"$WORK/push.log" || { cat "$WORK/push.log" >&2; die "crane push failed"; }
digest=$(crane digest "$IMAGE_REPO:$version")
IMAGE_REF=$IMAGE_REPO@$digest
crane pull --format oci "$IMAGE_REF" "$WORK/image-oci" 2>/dev/null
tar -C "$WORK/image-oci" -cf "$out/$NAME-$version-image.oci.tar" .
say "image $IMAGE_REPO:$version is $digest ($(elapsed "$start"))"

# --- 2. install.yaml ----------------------------------------------------------------------------
mkdir -p "$WORK/overlay"
cat >"$WORK/overlay/kustomization.yaml" <<YAML
resources: # kustomize takes relative paths only
  - $(realpath --relative-to="$WORK/overlay" "$ROOT/manifests")
images:
  - name: $SOURCE_IMAGE
    newName: $IMAGE_REPO
    digest: $digest
YAML
"$KUSTOMIZE_BIN" build --load-restrictor LoadRestrictionsNone "$WORK/overlay" >"$out/install.yaml"
grep -q "image: $IMAGE_REF\$" "$out/install.yaml" || die "install.yaml does not pin $IMAGE_REF"

# --- 3. the chart -------------------------------------------------------------------------------
start=$(now_ms)
cp -r charts/$NAME "$WORK/chart"
node scripts/release-files.mjs pin-chart-image "$WORK/chart/values.yaml" "$IMAGE_REPO" "$version" "$digest"
"$HELM_BIN" lint "$WORK/chart" >/dev/null
"$HELM_BIN" package "$WORK/chart" --version "$version" --app-version "$version" -d "$out" >/dev/null
chart=$out/$NAME-$version.tgz
chart_digest=$("$HELM_BIN" push "${helm_http[@]}" "$chart" "oci://$CHART_REPO" 2>&1 | sed -n 's/^Digest: //p')
[[ $chart_digest == sha256:* ]] || die "helm push printed no digest"
CHART_REF=$CHART_REPO/$NAME@$chart_digest
say "chart $CHART_REPO/$NAME:$version is $chart_digest ($(elapsed "$start"))"

# --- 4. the SBOM --------------------------------------------------------------------------------
start=$(now_ms)
# The lock cataloger reads /app/package-lock.json: the packages bundled into dist/main.js have
# no package.json of their own in the image (syft's image scans leave that cataloger out).
SYFT_CHECK_FOR_APP_UPDATE=false "$SYFT_BIN" scan "oci-dir:$WORK/image-oci" -q \
  --select-catalogers +javascript-lock-cataloger --source-name "$NAME" --source-version "$version" \
  -o "spdx-json=$out/$NAME-$version.spdx.json" -o "cyclonedx-json=$out/$NAME-$version.cdx.json"
say "SBOM: $(node -p "require('$out/$NAME-$version.spdx.json').packages.length") packages ($(elapsed "$start"))"

# --- 5. the provenance --------------------------------------------------------------------------
node scripts/release-files.mjs provenance "$out/$NAME-$version.provenance.json" \
  "$version" "$revision" "$dirty" "$started_on" "$IMAGE_REF" "$CHART_REF"

# What was released, for scripts/release-verify.sh and the notes.
cat >"$out/release.env" <<ENV
VERSION=$version
IMAGE=$IMAGE_REF
CHART=$CHART_REF
REVISION=$revision
ENV

# --- 6. signatures ------------------------------------------------------------------------------
start=$(now_ms)
(cd "$out" && sha256sum -- *.* | grep -v ' SHA256SUMS' >SHA256SUMS)
signing=(--yes)
if [[ -n $key ]]; then
  # Key pairs sign offline: a signing config that names no service keeps everything (the
  # transparency log too) on this machine.
  "$COSIGN_BIN" signing-config create --out "$WORK/signing-config.json" 2>"$WORK/cosign.log" ||
    { cat "$WORK/cosign.log" >&2; die "cosign signing-config create failed"; }
  signing+=(--key "$key" --signing-config "$WORK/signing-config.json")
fi
cosign() { "$COSIGN_BIN" "$@"; }
registry_args=()
$plain_http && registry_args=(--allow-http-registry)
cosign sign "${signing[@]}" "${registry_args[@]}" "$IMAGE_REF" 2>"$WORK/cosign.log" || { cat "$WORK/cosign.log" >&2; die "cosign sign $IMAGE_REF failed"; }
cosign sign "${signing[@]}" "${registry_args[@]}" "$CHART_REF" 2>>"$WORK/cosign.log" || { cat "$WORK/cosign.log" >&2; die "cosign sign $CHART_REF failed"; }
for attestation in slsaprovenance1:provenance.json spdxjson:spdx.json cyclonedx:cdx.json; do
  cosign attest "${signing[@]}" "${registry_args[@]}" --type "${attestation%%:*}" \
    --predicate "$out/$NAME-$version.${attestation#*:}" "$IMAGE_REF" 2>>"$WORK/cosign.log" ||
    { cat "$WORK/cosign.log" >&2; die "cosign attest ${attestation%%:*} failed"; }
done
for file in install.yaml SHA256SUMS; do
  cosign sign-blob "${signing[@]}" --bundle "$out/$file.sigstore.json" "$out/$file" 2>>"$WORK/cosign.log" >/dev/null ||
    { cat "$WORK/cosign.log" >&2; die "cosign sign-blob $file failed"; }
done
say "signed ($(elapsed "$start"))"

say "released $version in $(elapsed "$total_start"): $out"
