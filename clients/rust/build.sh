#!/usr/bin/env bash
# Builds the Rust SDK (crate `rummybot`), its greedy example bot (clients/rust/target/release/greedy) and the
# examples/ bots (target/release/examples/NAME), then runs the crate's unit tests. Needs only cargo: crates come from crates.io, and protoc ships inside protoc-bin-vendored.
# Safe to rerun; cargo rebuilds only what changed. CARGO_BUILD_JOBS sets the parallelism (default 2).
set -euo pipefail

here="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
cd "$here"

if ! command -v cargo >/dev/null 2>&1 && [ -f "${CARGO_HOME:-$HOME/.cargo}/env" ]; then
    # rustup installs cargo here without always putting it on a non-login shell's PATH.
    . "${CARGO_HOME:-$HOME/.cargo}/env"
fi
command -v cargo >/dev/null 2>&1 || { echo "clients/rust: cargo not found (install Rust with rustup)" >&2; exit 1; }

export CARGO_BUILD_JOBS="${CARGO_BUILD_JOBS:-2}"
cargo build --release --locked --bins --examples
cargo test --release --locked --quiet
echo "clients/rust: built $here/target/release/greedy"
