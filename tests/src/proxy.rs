//! A TCP proxy on loopback that a test can cut and restore: a database
//! outage for one controller, without stopping the server other tests use.
//! Cut, it closes every connection and its port (connections are refused);
//! restored, it listens on the same port again.

use std::io::ErrorKind;
use std::net::{Shutdown, SocketAddr, TcpListener, TcpStream};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex};
use std::time::Duration;

pub struct Proxy {
    pub addr: SocketAddr,
    up: Arc<AtomicBool>,
    /// Whether the port is open, as the accepting thread last left it.
    listening: Arc<AtomicBool>,
    stop: Arc<AtomicBool>,
    conns: Arc<Mutex<Vec<TcpStream>>>,
}

impl Proxy {
    /// Forwards a new loopback port to `upstream` (`host:port`).
    pub fn start(upstream: &str) -> Proxy {
        let listener = TcpListener::bind("127.0.0.1:0").expect("bind proxy");
        let addr = listener.local_addr().unwrap();
        let p = Proxy {
            addr,
            up: Arc::new(AtomicBool::new(true)),
            listening: Arc::new(AtomicBool::new(true)),
            stop: Arc::new(AtomicBool::new(false)),
            conns: Arc::default(),
        };
        let (up, listening, stop) = (p.up.clone(), p.listening.clone(), p.stop.clone());
        let (conns, upstream) = (p.conns.clone(), upstream.to_string());
        std::thread::spawn(move || {
            let mut listener = Some(listener);
            while !stop.load(Ordering::SeqCst) {
                match (&listener, up.load(Ordering::SeqCst)) {
                    (Some(_), false) => listener = None,
                    (None, true) => listener = TcpListener::bind(addr).ok(),
                    _ => {}
                }
                listening.store(listener.is_some(), Ordering::SeqCst);
                let Some(l) = &listener else {
                    std::thread::sleep(Duration::from_millis(10));
                    continue;
                };
                l.set_nonblocking(true).ok();
                match l.accept() {
                    Ok((client, _)) => {
                        client.set_nonblocking(false).ok();
                        if let Ok(server) = TcpStream::connect(&upstream) {
                            pipe(client, server, &conns);
                        }
                    }
                    Err(e) if e.kind() == ErrorKind::WouldBlock => {
                        std::thread::sleep(Duration::from_millis(10))
                    }
                    Err(_) => {}
                }
            }
        });
        p
    }

    /// The outage: open connections break and new ones are refused.
    pub fn cut(&self) {
        self.up.store(false, Ordering::SeqCst);
        crate::proc::wait_for("the proxy's port to close", || {
            (!self.listening.load(Ordering::SeqCst) || self.stop.load(Ordering::SeqCst)).then_some(())
        });
        for c in self.conns.lock().unwrap().drain(..) {
            let _ = c.shutdown(Shutdown::Both);
        }
    }

    pub fn restore(&self) {
        self.up.store(true, Ordering::SeqCst);
        crate::proc::wait_for("the proxy's port to open", || {
            self.listening.load(Ordering::SeqCst).then_some(())
        });
    }
}

impl Drop for Proxy {
    fn drop(&mut self) {
        self.stop.store(true, Ordering::SeqCst);
        for c in self.conns.lock().unwrap().drain(..) {
            let _ = c.shutdown(Shutdown::Both);
        }
    }
}

/// Copies both ways on two threads; the sockets are kept so a cut can close them.
fn pipe(client: TcpStream, server: TcpStream, conns: &Mutex<Vec<TcpStream>>) {
    let (Ok(c2), Ok(s2)) = (client.try_clone(), server.try_clone()) else { return };
    if let (Ok(a), Ok(b)) = (client.try_clone(), server.try_clone()) {
        conns.lock().unwrap().extend([a, b]);
    }
    for (mut from, mut to) in [(client, s2), (server, c2)] {
        std::thread::spawn(move || {
            let _ = std::io::copy(&mut from, &mut to);
            let _ = to.shutdown(Shutdown::Both);
        });
    }
}
