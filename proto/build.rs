//! Compiles `proto/spur/v1/*.proto` with protox (pure Rust, so no `protoc`)
//! and keeps the encoded descriptor set for gRPC reflection.

use prost::Message;
use std::path::PathBuf;

fn main() -> Result<(), Box<dyn std::error::Error>> {
    let dir = PathBuf::from("proto/spur/v1");
    let mut files: Vec<PathBuf> = std::fs::read_dir(&dir)?
        .filter_map(|e| e.ok().map(|e| e.path()))
        .filter(|p| p.extension().is_some_and(|x| x == "proto"))
        .collect();
    files.sort();
    println!("cargo:rerun-if-changed={}", dir.display());
    for f in &files {
        println!("cargo:rerun-if-changed={}", f.display());
    }
    let fds = protox::compile(&files, ["proto"])?;
    let out = PathBuf::from(std::env::var("OUT_DIR")?);
    std::fs::write(out.join("spur_descriptor.bin"), fds.encode_to_vec())?;
    // A job listing holds 100,000 of these: boxing the spec (absent from brief
    // listings) keeps each `Job` small to build, encode and decode.
    // A packed listing is decoded again from its own bytes: `Bytes` slices
    // the response buffer rather than copying megabytes into a Vec.
    tonic_prost_build::configure()
        .boxed(".spur.v1.Job.spec")
        .bytes(".spur.v1.ListJobsResponse.packed")
        .compile_fds(fds)?;
    Ok(())
}
