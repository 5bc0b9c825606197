//! Prometheus metrics of a running server (`swan serve --metrics ADDR`).
//!
//! - [`requests`]: what the NBD front counts of each request: counts, bytes, errors and a
//!   latency histogram per NBD command, in atomics on the completing thread.
//! - [`exposition`]: the scrape-time collector: the engine's `swan status` report and the
//!   front's counters, as Prometheus metric families.
//! - [`http`]: the listener: `/metrics`, and the live dashboard at `/` (`dashboard.html`).
//!
//! [`serve`] puts the three together for one array; [`serve_exports`] for several, each
//! export's series labelled with its name.

pub mod exposition;
pub mod http;
pub mod requests;

use crate::engine::Engine;
use crate::nbd::ServerStats;
use prometheus_client::registry::Registry;
use std::sync::atomic::AtomicBool;
use std::sync::Arc;

pub use http::MetricsListener;

/// Serve `/metrics` of `engine` and the NBD front's `server` stats on `listener` until
/// `stop` is set.
pub fn serve(
    listener: MetricsListener,
    engine: Arc<Engine>,
    server: Arc<ServerStats>,
    stop: Arc<AtomicBool>,
) -> std::io::Result<std::thread::JoinHandle<()>> {
    serve_scrape(listener, exposition::Scrape::of_engine(engine, server), stop)
}

/// Serve `/metrics` of a server of several exports on `listener` until `stop` is set:
/// every series of an export carries its `export` label (the connection counters, the
/// server's, none).
pub fn serve_exports(
    listener: MetricsListener,
    exports: Vec<exposition::Exported>,
    server: Arc<ServerStats>,
    stop: Arc<AtomicBool>,
) -> std::io::Result<std::thread::JoinHandle<()>> {
    serve_scrape(listener, exposition::Scrape::of_exports(exports, server), stop)
}

fn serve_scrape(
    listener: MetricsListener,
    scrape: exposition::Scrape,
    stop: Arc<AtomicBool>,
) -> std::io::Result<std::thread::JoinHandle<()>> {
    let mut registry = Registry::default();
    registry.register_collector(Box::new(scrape));
    listener.serve(registry, stop)
}
