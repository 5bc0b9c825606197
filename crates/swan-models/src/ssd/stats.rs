//! What an SSD did: host traffic, internal GC work, and per-operation latency histograms
//! (SWAN Fig. 12's "SSD-internal latency": completion − submission at the device).

use hdrhistogram::Histogram;

/// Latencies up to an hour (in µs) keep 3 significant digits; longer ones saturate.
const MAX_LATENCY_US: u64 = 3_600_000_000;

/// Counters and latency histograms since creation or the last [`super::Ssd::reset_stats`].
#[derive(Clone, Debug)]
pub struct SsdStats {
    /// 4 KiB pages the host asked to read (mapped or not).
    pub host_pages_read: u64,
    /// 4 KiB pages the host wrote; each is programmed once.
    pub host_pages_written: u64,
    /// 4 KiB pages named by trims.
    pub host_pages_trimmed: u64,
    /// Valid pages the device copied on its own: page-FTL GC and block-FTL merges.
    pub gc_pages_copied: u64,
    pub erases: u64,
    /// Foreground GC runs (a host write found free blocks at the trigger level).
    pub gc_invocations: u64,
    /// FORCE GC commands that collected anything ([`super::Ssd::force_gc`]); not in
    /// `gc_invocations`.
    pub forced_gc_invocations: u64,
    /// Victims those forced runs collected, over every GC domain.
    pub forced_gc_victims: u64,
    /// Block-FTL merges (out-of-order writes that rewrote a whole block).
    pub merges: u64,
    /// Per-read latency in µs.
    pub read_latency_us: Histogram<u64>,
    /// Per-write latency in µs.
    pub write_latency_us: Histogram<u64>,
}

impl Default for SsdStats {
    fn default() -> Self {
        let hist = || Histogram::new_with_bounds(1, MAX_LATENCY_US, 3).expect("static histogram bounds are valid");
        Self {
            host_pages_read: 0,
            host_pages_written: 0,
            host_pages_trimmed: 0,
            gc_pages_copied: 0,
            erases: 0,
            gc_invocations: 0,
            forced_gc_invocations: 0,
            forced_gc_victims: 0,
            merges: 0,
            read_latency_us: hist(),
            write_latency_us: hist(),
        }
    }
}

impl SsdStats {
    /// Write amplification: pages programmed (host + GC copies) per host page programmed.
    /// 1.0 when nothing has been written: no writes, no amplification.
    pub fn waf(&self) -> f64 {
        if self.host_pages_written == 0 {
            return 1.0;
        }
        (self.host_pages_written + self.gc_pages_copied) as f64 / self.host_pages_written as f64
    }

    /// Clears every counter and histogram (histograms keep their allocation).
    pub fn reset(&mut self) {
        let Self {
            host_pages_read,
            host_pages_written,
            host_pages_trimmed,
            gc_pages_copied,
            erases,
            gc_invocations,
            forced_gc_invocations,
            forced_gc_victims,
            merges,
            read_latency_us,
            write_latency_us,
        } = self;
        for counter in [
            host_pages_read,
            host_pages_written,
            host_pages_trimmed,
            gc_pages_copied,
            erases,
            gc_invocations,
            forced_gc_invocations,
            forced_gc_victims,
            merges,
        ] {
            *counter = 0;
        }
        read_latency_us.reset();
        write_latency_us.reset();
    }
}
