#!/usr/bin/env bash
# Prints the path of the image's Node.js binary (scripts/image-node.env: the Dockerfile's Node 26
# line), downloaded and integrity-checked by scripts/node-binary.sh into .cache/node on first use.
# The bench runs the servers on it with BENCH_NODE=image: the image's runtime manages memory
# differently from the build machines' Node 20 (docs/benchmarks-history.md, third round of issue 15).
set -euo pipefail

ROOT=$(cd -- "$(dirname -- "${BASH_SOURCE[0]}")/.." && pwd -P)
# shellcheck source=scripts/image-node.env
. "$ROOT/scripts/image-node.env"
exec bash "$ROOT/scripts/node-binary.sh" "${NODE_VERSION%%.*}"
