//! A network link with a bandwidth cap: the AFA's network interface (SWAN §3.5 sizes an
//! R-group so its SSDs' write bandwidth matches this link).

use crate::Nanos;

/// A full-duplex link: each direction is a FIFO pipe of `bytes_per_s`, plus a fixed latency.
#[derive(Clone, Debug)]
pub struct Link {
    bytes_per_s: u64,
    latency_ns: Nanos,
    inbound_busy_until: Nanos,
    outbound_busy_until: Nanos,
}

impl Link {
    /// A link of `mbps` MB/s (10^6 bytes per second) each way. `mbps = 0` means unlimited.
    pub fn new(mbps: u64, latency_ns: Nanos) -> Self {
        Self { bytes_per_s: mbps * 1_000_000, latency_ns, inbound_busy_until: 0, outbound_busy_until: 0 }
    }

    pub fn unlimited() -> Self {
        Self::new(0, 0)
    }

    fn transfer(busy_until: &mut Nanos, bytes_per_s: u64, latency: Nanos, now: Nanos, bytes: u64) -> Nanos {
        if bytes_per_s == 0 {
            return now + latency;
        }
        let start = now.max(*busy_until);
        let dur = (bytes as u128 * 1_000_000_000 / bytes_per_s as u128) as Nanos;
        *busy_until = start + dur;
        start + dur + latency
    }

    /// Client to array (write payloads): when `bytes` sent at `now` have fully arrived.
    pub fn inbound(&mut self, now: Nanos, bytes: u64) -> Nanos {
        Self::transfer(&mut self.inbound_busy_until, self.bytes_per_s, self.latency_ns, now, bytes)
    }

    /// Array to client (read payloads): when `bytes` sent at `now` have fully arrived.
    pub fn outbound(&mut self, now: Nanos, bytes: u64) -> Nanos {
        Self::transfer(&mut self.outbound_busy_until, self.bytes_per_s, self.latency_ns, now, bytes)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_saturated_link_runs_at_its_cap() {
        let mut l = Link::new(1000, 0); // 1 GB/s
        let mut done = 0;
        for _ in 0..1000 {
            done = l.inbound(0, 1_000_000);
        }
        assert_eq!(done, 1_000_000_000, "1 GB at 1 GB/s takes one second");
        assert_eq!(Link::unlimited().outbound(5, 1 << 30), 5);
    }
}
