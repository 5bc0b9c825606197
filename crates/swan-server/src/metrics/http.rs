//! The metrics listener: tiny_http on one plain thread. `/metrics` answers with the registry
//! encoded in the Prometheus text format (version 0.0.4); `/` with the live dashboard, a page
//! that reads `/metrics` itself, so the two can never disagree.

use prometheus_client::encoding::prometheus_text;
use prometheus_client::registry::Registry;
use std::io;
use std::net::{SocketAddr, TcpListener};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;
use std::thread::JoinHandle;
use std::time::Duration;

/// The dashboard page; its script draws SWAN's Fig. 5/6 views from `/metrics`.
const DASHBOARD: &str = include_str!("dashboard.html");

/// How often the serving thread looks at `stop`.
const STOP_POLL: Duration = Duration::from_millis(100);

/// A bound, not yet serving `/metrics` listener. Bound first, so that an address in use is
/// an error at startup and port 0 gives its real port before anything is served.
pub struct MetricsListener {
    server: tiny_http::Server,
    addr: SocketAddr,
}

impl MetricsListener {
    pub fn bind(addr: SocketAddr) -> io::Result<MetricsListener> {
        let listener = TcpListener::bind(addr)?;
        let addr = listener.local_addr()?;
        let server = tiny_http::Server::from_listener(listener, None).map_err(io::Error::other)?;
        Ok(MetricsListener { server, addr })
    }

    /// The bound address (the real port when bound to port 0).
    pub fn local_addr(&self) -> SocketAddr {
        self.addr
    }

    /// Answer scrapes from `registry` on a thread of its own until `stop` is set.
    pub fn serve(self, registry: Registry, stop: Arc<AtomicBool>) -> io::Result<JoinHandle<()>> {
        std::thread::Builder::new().name("swan-metrics".into()).spawn(move || {
            while !stop.load(Ordering::Relaxed) {
                match self.server.recv_timeout(STOP_POLL) {
                    Ok(Some(request)) => answer(request, &registry),
                    Ok(None) => {}
                    // An error of one connection; the listener itself goes on.
                    Err(_) => std::thread::sleep(STOP_POLL),
                }
            }
        })
    }
}

fn answer(request: tiny_http::Request, registry: &Registry) {
    use tiny_http::{Header, Method, Response};
    let header = |v: &str| Header::from_bytes("Content-Type", v).expect("a valid header");
    let path = request.url().split('?').next().unwrap_or("");
    let response = match (request.method(), path) {
        (Method::Get | Method::Head, "/metrics") => {
            let mut body = String::new();
            match prometheus_text::encode(&mut body, registry) {
                Ok(()) => Response::from_string(body).with_header(header(prometheus_text::CONTENT_TYPE)),
                Err(_) => Response::from_string("encoding the metrics failed\n").with_status_code(500),
            }
        }
        (Method::Get | Method::Head, "/") => {
            Response::from_string(DASHBOARD).with_header(header("text/html; charset=utf-8"))
        }
        (Method::Get | Method::Head, _) => {
            Response::from_string("not found: try / (dashboard) or /metrics\n").with_status_code(404)
        }
        _ => Response::from_string("only GET and HEAD\n").with_status_code(405),
    };
    // A scraper that hung up takes its answer with it; nothing to do.
    let _ = request.respond(response);
}
