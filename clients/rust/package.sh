#!/usr/bin/env bash
# Packs the Rust SDK as crates.io would get it: vendors the wire contract (../../protos, outside the crate) into
# proto/, then `cargo package` builds the .crate (target/package/rummybot-VERSION.crate) and verifies it by
# building it unpacked, where build.rs finds the contract in proto/. Extra arguments go to cargo package
# (--allow-dirty for a tree with uncommitted changes, --offline). `cargo publish` after it publishes the same files.
set -euo pipefail

here="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
cd "$here"
rm -rf proto
mkdir -p proto/rummy/referee/v1
cp ../../protos/rummy/referee/v1/referee.proto proto/rummy/referee/v1/
export CARGO_BUILD_JOBS="${CARGO_BUILD_JOBS:-2}"
cargo package --locked "$@"
ls "$here"/target/package/rummybot-*.crate
