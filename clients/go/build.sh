#!/usr/bin/env bash
# Build the Go client: vet and unit-test the SDK, check the committed generated code, build bin/greedy and bin/firstlegal.
#
#   bash clients/go/build.sh           # from any folder; safe to rerun
#   bash clients/go/build.sh --regen   # first regenerate gen/ from protos/ (after a proto change)
#
# Needs Go (go.mod's version or newer); modules come from the Go module proxy. The generated code check and
# --regen use the repo's .venv (grpcio-tools gives protoc) and the pinned protoc plugins, installed with
# `go install` into .tools/bin.
set -euo pipefail

HERE="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
ROOT="$(cd "$HERE/../.." && pwd)"
PY="$ROOT/.venv/bin/python"
TOOLS="$HERE/.tools/bin"
PROTOC_GEN_GO=v1.36.12    # the same as google.golang.org/protobuf in go.mod
PROTOC_GEN_GO_GRPC=v1.6.2
GO_PACKAGE="github.com/rummy-referee/rummy/clients/go/gen/rummy/referee/v1;refereev1"
PROTO=rummy/referee/v1/referee.proto

regen=0
case "${1:-}" in
  "") ;;
  --regen) regen=1 ;;
  *) echo "usage: $0 [--regen]" >&2; exit 2 ;;
esac

command -v go >/dev/null || { echo "go not found: install Go $(sed -n 's/^go //p' "$HERE/go.mod") or newer" >&2; exit 1; }
cd "$HERE"

# The plugins at their pinned versions (reinstalled only when missing or different).
install_plugins() {
  if ! "$TOOLS/protoc-gen-go" --version 2>/dev/null | grep -qx "protoc-gen-go $PROTOC_GEN_GO"; then
    GOBIN="$TOOLS" go install "google.golang.org/protobuf/cmd/protoc-gen-go@$PROTOC_GEN_GO"
  fi
  if ! "$TOOLS/protoc-gen-go-grpc" --version 2>/dev/null | grep -qx "protoc-gen-go-grpc ${PROTOC_GEN_GO_GRPC#v}"; then
    GOBIN="$TOOLS" go install "google.golang.org/grpc/cmd/protoc-gen-go-grpc@$PROTOC_GEN_GO_GRPC"
  fi
}

# generate OUT: the .pb.go files of protos/ into OUT, laid out as the proto's path.
generate() {
  local include
  include="$("$PY" -c 'import grpc_tools, os; print(os.path.join(os.path.dirname(grpc_tools.__file__), "_proto"))')"
  mkdir -p "$1"
  "$PY" -m grpc_tools.protoc -I"$ROOT/protos" -I"$include" \
    --plugin=protoc-gen-go="$TOOLS/protoc-gen-go" --plugin=protoc-gen-go-grpc="$TOOLS/protoc-gen-go-grpc" \
    --go_out="$1" --go_opt=paths=source_relative --go_opt="M$PROTO=$GO_PACKAGE" \
    --go-grpc_out="$1" --go-grpc_opt=paths=source_relative --go-grpc_opt="M$PROTO=$GO_PACKAGE" \
    "$ROOT/protos/$PROTO"
}

have_protoc() { [ -x "$PY" ] && "$PY" -c 'import grpc_tools.protoc' 2>/dev/null; }

if [ "$regen" = 1 ]; then
  have_protoc || { echo "--regen needs $PY with grpcio-tools: run 'make test' or 'make clients' once" >&2; exit 1; }
  install_plugins
  rm -rf "$HERE/gen"
  generate "$HERE/gen"
  echo "regenerated $(cd "$HERE" && find gen -name '*.pb.go' | sort | tr '\n' ' ')"
elif have_protoc; then
  install_plugins
  fresh="$(mktemp -d)"
  trap 'rm -rf "$fresh"' EXIT
  generate "$fresh"
  if ! diff -r "$fresh" "$HERE/gen" >/dev/null; then
    echo "clients/go/gen is stale against protos/: run 'bash clients/go/build.sh --regen'" >&2
    exit 1
  fi
else
  echo "note: $PY with grpcio-tools not found; not checking clients/go/gen against protos/" >&2
fi

go vet ./...
go test -count=1 ./...
go build -buildvcs=false -trimpath -o bin/ ./cmd/...
echo "built clients/go/bin/greedy and clients/go/bin/firstlegal"
