//! Generates the message types and the Referee client from the project's proto at build time, with the protoc
//! binary that ships inside the `protoc-bin-vendored` crate (no protoc needs to be installed).
//!
//! The contract is `protos/` of the repository when the crate is built where it lives (clients/rust); a packaged
//! crate (`cargo package`, crates.io) has its own copy in `proto/`, vendored by package.sh.

use std::path::{Path, PathBuf};

const CONTRACT: &str = "rummy/referee/v1/referee.proto";

/// The folder holding the contract: the repository's `protos/` if this crate is the repository's clients/rust,
/// else the crate's vendored `proto/`.
fn proto_root(manifest: &Path) -> Result<PathBuf, Box<dyn std::error::Error>> {
    let repo = manifest.join("../..");
    let in_repo = repo.join("clients/rust/Cargo.toml").canonicalize().ok()
        == manifest.join("Cargo.toml").canonicalize().ok()
        && repo.join("protos").join(CONTRACT).is_file();
    let root = if in_repo { repo.join("protos") } else { manifest.join("proto") };
    if !root.join(CONTRACT).is_file() {
        return Err(format!("{} not found: run package.sh to vendor the contract", root.join(CONTRACT).display()).into());
    }
    Ok(root)
}

fn main() -> Result<(), Box<dyn std::error::Error>> {
    let root = proto_root(&PathBuf::from(std::env::var("CARGO_MANIFEST_DIR")?))?;
    let proto = root.join(CONTRACT);
    // in the repository the contract lives outside this package: without this, cargo would keep code generated
    // from an old one
    println!("cargo:rerun-if-changed={}", proto.display());

    let mut config = tonic_prost_build::Config::new();
    config.protoc_executable(protoc_bin_vendored::protoc_bin_path()?);

    tonic_prost_build::configure().build_server(false).build_transport(false).compile_with_config(
        config,
        &[proto],
        &[root],
    )?;
    Ok(())
}
