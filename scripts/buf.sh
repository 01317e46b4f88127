#!/usr/bin/env bash
# Run buf (the protobuf linter and breaking-change checker) at the project's pinned version, installing it first
# into .tools/bin with `go install` when it is missing or a different version, as clients/go/build.sh does for
# its protoc plugins. Arguments go to buf, run from protos/ (where buf.yaml is):
#
#   bash scripts/buf.sh lint
#   bash scripts/buf.sh breaking --against v1.binpb
#   bash scripts/buf.sh --install-only       # install (or check) buf and print its path
#
# Needs Go; buf comes from the Go module proxy on the first run only (GOFLAGS=-mod=mod is not needed: buf is
# installed at a version, outside any module).
set -euo pipefail

BUF_VERSION=v1.75.0
ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
TOOLS="$ROOT/.tools/bin"
BUF="$TOOLS/buf"

if ! "$BUF" --version 2>/dev/null | grep -qx "${BUF_VERSION#v}"; then
  command -v go >/dev/null || { echo "go not found: buf $BUF_VERSION is installed with 'go install' (install Go)" >&2; exit 1; }
  echo "installing buf $BUF_VERSION into $TOOLS" >&2
  GOBIN="$TOOLS" GOFLAGS= go install "github.com/bufbuild/buf/cmd/buf@$BUF_VERSION"
fi

if [ "${1:-}" = "--install-only" ]; then
  echo "$BUF"
  exit 0
fi
cd "$ROOT/protos"
exec "$BUF" "$@"
