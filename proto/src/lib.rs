//! Spur's gRPC API.
//!
//! - [`v1`]: the generated messages, clients and servers of `proto/spur/v1/*.proto`.
//! - [`FILE_DESCRIPTOR_SET`]: the encoded descriptors, served by gRPC reflection.
//! - [`wire`]: constants both ends agree on (headers, windows, the controller's address).
//! - [`credential`]: the MUNGE credential every client attaches to each request.
//! - [`states`]: the wire's job states and reason codes, to and from the vocabulary's tables.
//! - [`token`]: user credentials (HS256 JWTs): mint, verify, key and lifetime checks.
//! - [`PROTO_DIR`]: where the `.proto` sources live, so tests and other languages can generate clients.

#[allow(clippy::all, missing_docs)]
pub mod v1 {
    tonic::include_proto!("spur.v1");

    impl KeyValue {
        /// A pair, from borrowed text.
        pub fn new(key: &str, value: &str) -> KeyValue {
            KeyValue { key: key.into(), value: value.into() }
        }

        /// `k=v` pairs joined by `sep`, in order; empty when there are none.
        pub fn join(kvs: &[KeyValue], sep: &str) -> String {
            let pairs: Vec<String> = kvs.iter().map(|kv| format!("{}={}", kv.key, kv.value)).collect();
            pairs.join(sep)
        }
    }
}

pub mod credential;
pub mod states;
pub mod token;
pub mod wire;

pub const FILE_DESCRIPTOR_SET: &[u8] = include_bytes!(concat!(env!("OUT_DIR"), "/spur_descriptor.bin"));

/// The directory holding `spur/v1/*.proto`, for code generators in other languages.
pub const PROTO_DIR: &str = concat!(env!("CARGO_MANIFEST_DIR"), "/proto");
