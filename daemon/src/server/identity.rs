//! Peer addresses as the txn log stores them: IPv4-mapped IPv6 unwrapped.

use std::net::{IpAddr, SocketAddr};

/// `[::ffff:10.0.0.42]:5000` is stored as `10.0.0.42:5000`.
pub fn normalize_peer(addr: SocketAddr) -> String {
    match addr.ip() {
        IpAddr::V6(v6) => match v6.to_ipv4_mapped() {
            Some(v4) => SocketAddr::new(IpAddr::V4(v4), addr.port()).to_string(),
            None => addr.to_string(),
        },
        IpAddr::V4(_) => addr.to_string(),
    }
}

/// The caller's address of a request as a server received it ("" when unknown).
pub fn peer_of<B>(req: &http::Request<B>) -> String {
    req.extensions()
        .get::<tonic::transport::server::TcpConnectInfo>()
        .and_then(|i| i.remote_addr())
        .map(normalize_peer)
        .unwrap_or_default()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn mapped_ipv4_is_unwrapped() {
        let a: SocketAddr = "[::ffff:10.0.0.42]:5000".parse().unwrap();
        assert_eq!(normalize_peer(a), "10.0.0.42:5000");
        let b: SocketAddr = "[2001:db8::1]:6817".parse().unwrap();
        assert_eq!(normalize_peer(b), "[2001:db8::1]:6817");
    }
}
