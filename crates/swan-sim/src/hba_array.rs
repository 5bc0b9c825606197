//! SSDs behind one shared host-bus-adapter bus ([`swan_models::hba`]): the array DiskSim
//! builds for Harmonia's simulator, where every member's data crosses the same bus. The
//! SSDs keep everything else (FTL, elements, GC); their own host link is the bus, so it
//! costs nothing inside them.

use crate::engine::{SimConfig, SimError};
use crate::members::Members;
use swan_core::io::IoClass;
use swan_models::hba::{HbaBus, HbaBusConfig};
use swan_models::ssd::{Ssd, SsdStats};
use swan_models::{DevOp, DevOpKind, Device, Nanos};

/// Bytes per member block (a 4 KiB page).
const BLOCK_BYTES: u64 = 4096;

/// A host link so fast it takes no time: the shared bus carries the data instead.
const LINK_ON_THE_BUS_MBPS: u64 = 1 << 40;

/// The members and the bus they share.
#[derive(Debug)]
pub struct HbaArray {
    ssds: Vec<Ssd>,
    bus: HbaBus,
    /// Per member: when its last transfer over the bus ends (a read is not through until
    /// its data has crossed).
    carried_until: Vec<Nanos>,
}

impl HbaArray {
    /// `members` SSDs as `cfg` builds them, behind a bus of `bus`.
    pub fn new(cfg: &SimConfig, bus: HbaBusConfig, members: u32) -> Result<Self, SimError> {
        if bus.mbps == 0 {
            return Err(SimError::Config("the shared HBA bus needs a rate above 0 MB/s".into()));
        }
        let mut inner = cfg.clone();
        inner.ssd.host_mbps = LINK_ON_THE_BUS_MBPS;
        let ssds = crate::engine::build_ssds(&inner, members)?;
        Ok(Self { bus: HbaBus::new(bus, ssds.len()), carried_until: vec![0; ssds.len()], ssds })
    }

    pub fn bus(&self) -> &HbaBus {
        &self.bus
    }
}

impl Members for HbaArray {
    #[inline]
    fn count(&self) -> usize {
        self.ssds.len()
    }

    fn submit(&mut self, member: u32, now: Nanos, op: DevOp) -> Nanos {
        let done = self.ssds[member as usize].submit(now, op);
        match op.kind {
            DevOpKind::Read | DevOpKind::Write => {
                let end = self.bus.carry(member, now, done, u64::from(op.count) * BLOCK_BYTES);
                let until = &mut self.carried_until[member as usize];
                *until = (*until).max(end);
                end
            }
            DevOpKind::Trim | DevOpKind::Flush => done,
        }
    }

    /// The SSD's wait only: the bus, shared by all, would delay a read around a busy
    /// member as much as one on it.
    fn read_wait(&self, member: u32, now: Nanos, block: u64, count: u32, class: IoClass) -> Nanos {
        self.ssds[member as usize].read_wait(now, block, count, class)
    }

    fn busy_until(&self, member: u32) -> Nanos {
        self.ssds[member as usize].busy_until().max(self.carried_until[member as usize])
    }

    fn apply_untimed(&mut self, member: u32, op: DevOp) {
        self.ssds[member as usize].apply_untimed(op);
    }

    fn reset_stats(&mut self) {
        self.ssds.iter_mut().for_each(Ssd::reset_stats);
    }

    fn stats(&self, member: u32) -> &SsdStats {
        self.ssds[member as usize].stats()
    }

    fn ssds(&mut self) -> &mut [Ssd] {
        &mut self.ssds
    }

    fn slow_ns(&mut self, member: u32, now: Nanos) -> Nanos {
        self.ssds[member as usize].slow_ns(now)
    }

    fn busy_fraction(&self, member: u32, elapsed: Nanos) -> f64 {
        self.ssds[member as usize].die_busy_fraction(elapsed)
    }

    fn user_blocks(&self, member: u32) -> u64 {
        self.ssds[member as usize].config().user_pages
    }

    fn map_dram_bytes(&self, member: u32) -> u64 {
        self.ssds[member as usize].map_dram_bytes()
    }

    fn model_bytes(&self, member: u32) -> u64 {
        self.ssds[member as usize].model_bytes()
    }
}

#[cfg(test)]
#[path = "hba_array_tests.rs"]
mod tests;
