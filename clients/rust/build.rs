//! Generates the message types and the Referee client from the project's proto at build time, with the protoc
//! binary that ships inside the `protoc-bin-vendored` crate (no protoc needs to be installed).

use std::path::PathBuf;

fn main() -> Result<(), Box<dyn std::error::Error>> {
    let root = PathBuf::from(std::env::var("CARGO_MANIFEST_DIR")?).join("../../protos");
    let proto = root.join("rummy/referee/v1/referee.proto");
    // the contract lives outside this package: without this, cargo would keep code generated from an old one
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
