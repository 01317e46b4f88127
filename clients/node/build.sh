#!/usr/bin/env bash
# Builds the Node SDK and its example bots into clients/node/dist (examples/greedy.js is the artifact), then runs
# the unit tests. Needs Node 20+ and npm; every package comes from the npm registry via package-lock.json.
# Idempotent, and runs from any folder.
set -euo pipefail
here="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
cd "$here"

if ! command -v node >/dev/null || ! command -v npm >/dev/null; then
  echo "node/npm missing: installing Debian's nodejs and npm" >&2
  bash "$here/../../scripts/apt-install.sh" nodejs npm
fi

npm ci --no-audit --no-fund
rm -rf dist src/generated  # generated types and compiled output are rebuilt from protos/ every time
# `npm run build` also copies the .proto files beside the compiled SDK (dist/protos): the package runs with
# nothing outside it (a sandboxed bot sees only its own package; `npm pack` ships them, see README.md)
npm run build
npm test
echo "built $here/dist/examples/greedy.js"
