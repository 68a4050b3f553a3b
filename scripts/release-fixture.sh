#!/usr/bin/env bash
# Regenerates test/fixtures/releases/<version>/ from the commit its release.json names: install.yaml
# as the release ships it (`kubectl kustomize manifests/` of that commit) and, when that commit has
# one, the chart directory (chart/). The tests read only the committed result, never git.
#   bash scripts/release-fixture.sh 0.1.0
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/.."

version=${1:?usage: release-fixture.sh VERSION}
fixture="test/fixtures/releases/$version"
commit=$(node -p "require('./$fixture/release.json').commit")
kubectl=${KUBECTL_BIN:-kubectl}

git cat-file -e "$commit^{commit}" 2>/dev/null ||
  { echo "release-fixture: commit $commit ($version) is not in this clone: run \`git fetch --unshallow\`" >&2; exit 1; }

work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
git archive "$commit" manifests | tar -x -C "$work"
"$kubectl" kustomize "$work/manifests" > "$fixture/install.yaml"

rm -rf "$fixture/chart"
if git cat-file -e "$commit:charts/wasmcloud-metacontroller" 2>/dev/null; then
  git archive "$commit" charts/wasmcloud-metacontroller | tar -x -C "$work"
  mv "$work/charts/wasmcloud-metacontroller" "$fixture/chart"
fi
echo "release-fixture: $fixture from $commit"
