//! The host bus adapter's bus that every member of an array shares, as DiskSim builds an
//! array: driver → controller → **one bus** → the devices. The SSD extension's own
//! configuration (`ssdmodel/valid/ssd-postmark.parv`) hangs its SSD under such a bus,
//! `BUSHBA`: a type-2 bus, "shared … where multiple bulk transfers are interleaved (each
//! gets a fraction of the total bandwidth)", 0.0002384 ms per 512 B sector (its comment:
//! PCIe x8, about 2 GB/s) and 0.001 ms of arbitration; the SSD itself transfers nothing
//! (`Bulk sector transfer time = 0`). Added SSDs go under the same bus, so the array's
//! members share one bandwidth however many there are: the part of a request's time that
//! does not shrink as the array widens.
//!
//! DiskSim splits a request into at most one sub-request per member
//! (`logorg_mapstriped`), so arbitration is paid once per member per request: an
//! operation for a member submitted at the same instant as that member's previous one is
//! part of the same sub-request and joins its tenure.
//!
//! A transfer takes the bus's idle time from the moment its data is ready, in as many
//! pieces as it takes ([`Calendar::fill`]): the interleaving of a type-2 bus, with the
//! transfers ready first served first rather than sharing the bandwidth at once. Both
//! directions are charged when the member has finished the operation: a read's data goes
//! up then, and a write's data, which in DiskSim crosses before the flash is written, is
//! charged after it too, so that each member still sees its operations in submission order
//! (the [`crate::Device`] contract). Unloaded, the sum is the same.

use crate::calendar::Calendar;
use crate::Nanos;
use serde::{Deserialize, Serialize};

/// The shared bus: its payload rate and the arbitration each tenure pays.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct HbaBusConfig {
    /// Payload rate in MB/s (10^6 bytes per second) shared by every member.
    pub mbps: u64,
    /// Time to win the bus, once per member per request.
    pub arbitration_ns: Nanos,
}

impl HbaBusConfig {
    /// DiskSim's SSD extension, `BUSHBA`: 512 B per 0.2384 µs (2,147 MB/s), arbitration 1 µs.
    pub const DISKSIM_PCIE_X8: HbaBusConfig = HbaBusConfig { mbps: 2_147, arbitration_ns: 1_000 };

    /// Time for `bytes` to cross the bus, rounded up to whole nanoseconds.
    pub fn xfer_ns(&self, bytes: u64) -> Nanos {
        (bytes * 1_000).div_ceil(self.mbps.max(1))
    }
}

/// The bus, as busy as what the members have moved over it.
#[derive(Clone, Debug)]
pub struct HbaBus {
    config: HbaBusConfig,
    wire: Calendar,
    /// Per member: when its current sub-request was submitted.
    tenure: Vec<Option<Nanos>>,
    arbitrations: u64,
}

impl HbaBus {
    pub fn new(config: HbaBusConfig, members: usize) -> Self {
        Self { config, wire: Calendar::new(), tenure: vec![None; members], arbitrations: 0 }
    }

    pub fn config(&self) -> &HbaBusConfig {
        &self.config
    }

    /// `bytes` of an operation `member` was given at `submitted` (non-decreasing from call
    /// to call) and finished at `ready`: when they have crossed the bus.
    pub fn carry(&mut self, member: u32, submitted: Nanos, ready: Nanos, bytes: u64) -> Nanos {
        debug_assert!(ready >= submitted);
        self.wire.prune(submitted);
        let tenure = &mut self.tenure[member as usize];
        let arbitration = if *tenure == Some(submitted) { 0 } else { self.config.arbitration_ns };
        *tenure = Some(submitted);
        self.arbitrations += u64::from(arbitration > 0);
        let dur = arbitration + self.config.xfer_ns(bytes);
        if dur == 0 {
            return ready;
        }
        self.wire.fill(ready, dur)
    }

    /// Total time the bus has been reserved (its utilisation over a run's length).
    pub fn busy_ns(&self) -> Nanos {
        self.wire.reserved_ns()
    }

    /// Tenures won: one per member per request that moved data.
    pub fn arbitrations(&self) -> u64 {
        self.arbitrations
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const PAGE: u64 = 4096;

    #[test]
    fn a_lone_transfer_takes_arbitration_plus_its_bytes() {
        let mut bus = HbaBus::new(HbaBusConfig::DISKSIM_PCIE_X8, 4);
        // 8 sectors of 0.2384 µs: 1,907.2 ns, rounded up.
        assert_eq!(HbaBusConfig::DISKSIM_PCIE_X8.xfer_ns(PAGE), 1_908);
        assert_eq!(bus.carry(0, 0, 50_000, PAGE), 50_000 + 1_000 + 1_908);
    }

    #[test]
    fn members_share_one_bandwidth() {
        // Four members finish a page each at the same moment: the bus carries them one
        // after another, so the last is done four transfers (and arbitrations) later.
        let mut bus = HbaBus::new(HbaBusConfig::DISKSIM_PCIE_X8, 4);
        let done: Vec<Nanos> = (0..4).map(|m| bus.carry(m, 0, 10_000, PAGE)).collect();
        assert_eq!(done[3], 10_000 + 4 * (1_000 + 1_908));
        assert_eq!(bus.busy_ns(), 4 * (1_000 + 1_908));
    }

    #[test]
    fn a_members_pages_of_one_request_win_the_bus_once() {
        let mut bus = HbaBus::new(HbaBusConfig::DISKSIM_PCIE_X8, 2);
        for _ in 0..16 {
            bus.carry(0, 5, 5, PAGE);
        }
        bus.carry(1, 5, 5, PAGE);
        assert_eq!(bus.arbitrations(), 2, "one sub-request per member");
        bus.carry(0, 6, 6, PAGE);
        assert_eq!(bus.arbitrations(), 3, "the next request is a new tenure");
    }

    #[test]
    fn a_transfer_ready_later_leaves_the_gap_before_it_to_others() {
        let mut bus = HbaBus::new(HbaBusConfig { mbps: 1_000, arbitration_ns: 0 }, 2);
        // Member 0's data is ready at 100 µs; member 1's, submitted after, at once.
        assert_eq!(bus.carry(0, 0, 100_000, 4_000), 104_000);
        assert_eq!(bus.carry(1, 1, 1, 4_000), 4_001);
    }
}
