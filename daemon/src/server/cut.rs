//! Connections that can be cut. A server's graceful stop waits for its
//! streams to end, and a console's watch or an agent's command stream
//! never ends on its own; aborting the server task leaves the connections'
//! own tasks running, still answering from a controller that is gone.
//! When a controller changes role (a follower takes the lease, a leader
//! loses it) or stops, every connection it accepted is cut after a grace
//! period, so each client reconnects and finds what is true now.

use std::future::Future;
use std::io;
use std::pin::Pin;
use std::task::{Context, Poll};
use tokio::io::{AsyncRead, AsyncWrite, ReadBuf};
use tokio::net::TcpStream;
use tokio_stream::{Stream, StreamExt};
use tokio_util::sync::{CancellationToken, WaitForCancellationFutureOwned};
use tonic::transport::server::{Connected, TcpConnectInfo, TcpIncoming};

/// A connection that fails its reads and writes once its token is cancelled.
pub struct Cuttable {
    io: TcpStream,
    cut: Pin<Box<WaitForCancellationFutureOwned>>,
}

impl Cuttable {
    fn check(&mut self, cx: &mut Context<'_>) -> io::Result<()> {
        match self.cut.as_mut().poll(cx) {
            Poll::Ready(()) => {
                Err(io::Error::new(io::ErrorKind::ConnectionAborted, "the controller changed role"))
            }
            Poll::Pending => Ok(()),
        }
    }
}

impl AsyncRead for Cuttable {
    fn poll_read(
        mut self: Pin<&mut Self>,
        cx: &mut Context<'_>,
        buf: &mut ReadBuf<'_>,
    ) -> Poll<io::Result<()>> {
        self.check(cx)?;
        Pin::new(&mut self.io).poll_read(cx, buf)
    }
}

impl AsyncWrite for Cuttable {
    fn poll_write(mut self: Pin<&mut Self>, cx: &mut Context<'_>, buf: &[u8]) -> Poll<io::Result<usize>> {
        self.check(cx)?;
        Pin::new(&mut self.io).poll_write(cx, buf)
    }

    fn poll_flush(mut self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<io::Result<()>> {
        self.check(cx)?;
        Pin::new(&mut self.io).poll_flush(cx)
    }

    fn poll_shutdown(mut self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<io::Result<()>> {
        Pin::new(&mut self.io).poll_shutdown(cx)
    }
}

impl Connected for Cuttable {
    type ConnectInfo = TcpConnectInfo;

    fn connect_info(&self) -> TcpConnectInfo {
        self.io.connect_info()
    }
}

/// The connections `listener` accepts, each cut when `token` is cancelled.
pub fn incoming(
    listener: tokio::net::TcpListener,
    token: CancellationToken,
) -> impl Stream<Item = io::Result<Cuttable>> + Send + 'static {
    // Nagle plus delayed ACKs would add ~40 ms to every other response.
    TcpIncoming::from(listener)
        .with_nodelay(Some(true))
        .map(move |r| r.map(|io| Cuttable { io, cut: Box::pin(token.clone().cancelled_owned()) }))
}
