//! One FIMM's flash translation and garbage collection, for runs with GC-active FIMMs.
//!
//! A FIMM has no controller (§3.3); the paper moves "FTL functions … from individual SSDs to
//! the central management module" (§6.7), so this map and its GC victim choice are the
//! management module's, one instance per FIMM. The copies a collection decides are carried
//! out inside the FIMM's cluster by its endpoint (read over the local bus into the endpoint,
//! programmed back over the same bus): the driver times them, this module only decides.
//!
//! The map is log-structured over the FIMM's 4 KiB slots (the data layout's unit): a write
//! goes to the next slot of the open **erase unit**, a superblock made of the same flash
//! block on every die and plane of the module, so consecutive writes stripe over the dies
//! as the static layout's slots do. When the free units fall to the trigger, the greedy
//! victim (fewest valid slots, swan's GC policy everywhere) is collected: its valid slots are
//! rewritten at the log's head and the unit is erased.
//!
//! The map changes when a collection is decided, and the victim is free for new writes at
//! once (as `manager` moves pages when it decides): the driver times the copies and the erase
//! after it, so the dies and the bus pay for every copy and erase, but a write may be timed on
//! a unit before its erase is. Memory: 8 bytes per slot (both directions of the map).

use super::TripleAError;
use thiserror::Error;

/// "No slot" in both directions of the map.
const NIL: u32 = u32::MAX;

/// The two directions of a FIMM's map disagree ([`FimmFtl::check`]).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Error)]
pub enum FimmMapError {
    #[error("logical {logical} → physical {physical}, which names {owner}")]
    Disowned { logical: u32, physical: u32, owner: u32 },
    #[error("{mapped} physical slots hold data, {live} logical slots are mapped")]
    Counts { mapped: usize, live: usize },
    #[error("a unit's valid count is not its mapped slots")]
    ValidCount,
}

/// Where an erase unit stands.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Unit {
    Free,
    Open,
    Sealed,
}

/// One slot a collection moves: its logical slot, where it was and where it goes.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct GcCopy {
    pub logical: u64,
    pub from: u64,
    pub to: u64,
}

/// A collection decided: `copies` then an erase of unit `victim`.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Collection {
    pub victim: u32,
    pub copies: Vec<GcCopy>,
}

/// The flash translation of one FIMM. See the module docs.
#[derive(Clone, Debug)]
pub struct FimmFtl {
    slots_per_unit: u32,
    /// Logical slot → physical slot, or NIL.
    l2p: Vec<u32>,
    /// Physical slot → logical slot, or NIL (free or stale).
    p2l: Vec<u32>,
    valid: Vec<u32>,
    state: Vec<Unit>,
    free: Vec<u32>,
    open: u32,
    fill: u32,
    /// A background collection starts when the free units fall to this many.
    trigger: u32,
    /// Collections decided whose erase the driver has not yet reported.
    collecting: u32,
}

impl FimmFtl {
    /// A FIMM of `units` erase units of `slots_per_unit` slots each, exporting
    /// `logical_slots`. The difference is the over-provisioning GC works with; it must hold
    /// more than `trigger` + 2 units, or a collection could find no victim worth collecting.
    pub fn new(slots_per_unit: u32, units: u32, logical_slots: u64, trigger: u32) -> Result<Self, TripleAError> {
        let bad = |m: String| Err(TripleAError::Config(m));
        if slots_per_unit == 0 || units < 4 {
            return bad(format!("a FIMM's FTL needs at least 4 erase units of slots, got {units} of {slots_per_unit}"));
        }
        let physical = u64::from(slots_per_unit) * u64::from(units);
        if physical >= u64::from(NIL) {
            return bad(format!("{physical} slots per FIMM do not fit the FTL's 32-bit map"));
        }
        let spare_units = (physical.saturating_sub(logical_slots)) / u64::from(slots_per_unit);
        if spare_units < u64::from(trigger) + 2 {
            return bad(format!(
                "{logical_slots} logical slots of {physical} leave {spare_units} spare erase units; \
                 GC needs more than its trigger ({trigger}) + 2"
            ));
        }
        let mut free: Vec<u32> = (1..units).rev().collect();
        free.shrink_to_fit();
        let mut state = vec![Unit::Free; units as usize];
        state[0] = Unit::Open;
        Ok(Self {
            slots_per_unit,
            l2p: vec![NIL; logical_slots as usize],
            p2l: vec![NIL; physical as usize],
            valid: vec![0; units as usize],
            state,
            free,
            open: 0,
            fill: 0,
            trigger,
            collecting: 0,
        })
    }

    pub fn logical_slots(&self) -> u64 {
        self.l2p.len() as u64
    }

    pub fn slots_per_unit(&self) -> u32 {
        self.slots_per_unit
    }

    pub fn free_units(&self) -> u32 {
        self.free.len() as u32
    }

    /// Collections decided and not yet reported erased.
    pub fn collecting(&self) -> u32 {
        self.collecting
    }

    /// Where logical slot `logical` lives, if it was ever written.
    pub fn resolve(&self, logical: u64) -> Option<u64> {
        let p = *self.l2p.get(logical as usize)?;
        (p != NIL).then_some(u64::from(p))
    }

    /// Whether the driver should start a collection before the next write: in the
    /// background once the free units reach the trigger (one collection at a time), in the
    /// foreground whatever runs once fewer than two are left (a collection's copies need the
    /// open unit's rest and at most one more).
    pub fn wants_collection(&self) -> bool {
        let free = self.free_units();
        free < 2 || (free <= self.trigger && self.collecting == 0)
    }

    /// Writes `logical` at the log's head and returns its physical slot; its old copy, if
    /// any, becomes stale.
    ///
    /// # Panics
    /// If `logical` is past the FIMM's logical slots, or no unit is free when the open one
    /// fills: the driver collects while [`FimmFtl::wants_collection`] says so.
    pub fn write(&mut self, logical: u64) -> u64 {
        self.invalidate(logical);
        let p = self.append(logical as u32);
        self.l2p[logical as usize] = p;
        u64::from(p)
    }

    /// Forgets `logical` (its page moved to another FIMM): GC no longer copies it.
    pub fn trim(&mut self, logical: u64) {
        self.invalidate(logical);
        self.l2p[logical as usize] = NIL;
    }

    /// The greedy victim's collection: its valid slots rewritten at the head, the unit free
    /// again. `None` if no sealed unit exists.
    pub fn collect(&mut self) -> Option<Collection> {
        let victim = (0..self.state.len() as u32)
            .filter(|&u| self.state[u as usize] == Unit::Sealed)
            .min_by_key(|&u| (self.valid[u as usize], u))?;
        let base = victim * self.slots_per_unit;
        let mut copies = Vec::with_capacity(self.valid[victim as usize] as usize);
        for from in base..base + self.slots_per_unit {
            let logical = self.p2l[from as usize];
            if logical == NIL {
                continue;
            }
            self.p2l[from as usize] = NIL;
            self.valid[victim as usize] -= 1;
            let to = self.append(logical);
            self.l2p[logical as usize] = to;
            copies.push(GcCopy { logical: u64::from(logical), from: u64::from(from), to: u64::from(to) });
        }
        debug_assert_eq!(self.valid[victim as usize], 0);
        self.state[victim as usize] = Unit::Free;
        self.free.push(victim);
        self.collecting += 1;
        Some(Collection { victim, copies })
    }

    /// The driver has erased the victim of a collection.
    pub fn collected(&mut self) {
        debug_assert!(self.collecting > 0, "a collection reported twice");
        self.collecting = self.collecting.saturating_sub(1);
    }

    fn invalidate(&mut self, logical: u64) {
        let old = self.l2p[logical as usize];
        if old != NIL {
            debug_assert_eq!(self.p2l[old as usize], logical as u32, "P2L of slot {old} names another logical slot");
            self.p2l[old as usize] = NIL;
            self.valid[(old / self.slots_per_unit) as usize] -= 1;
        }
    }

    fn append(&mut self, logical: u32) -> u32 {
        if self.fill == self.slots_per_unit {
            self.state[self.open as usize] = Unit::Sealed;
            // Lowest-numbered free unit last in the stack: deterministic.
            self.open = self.free.pop().expect("an FTL with no free erase unit: collect before writing");
            self.state[self.open as usize] = Unit::Open;
            self.fill = 0;
        }
        let p = self.open * self.slots_per_unit + self.fill;
        self.fill += 1;
        self.p2l[p as usize] = logical;
        self.valid[self.open as usize] += 1;
        p
    }

    /// Both directions of the map agree, and every unit's valid count is its mapped slots.
    pub fn check(&self) -> Result<(), FimmMapError> {
        let mut valid = vec![0u32; self.valid.len()];
        for (l, &p) in self.l2p.iter().enumerate() {
            if p == NIL {
                continue;
            }
            if self.p2l[p as usize] != l as u32 {
                return Err(FimmMapError::Disowned { logical: l as u32, physical: p, owner: self.p2l[p as usize] });
            }
            valid[(p / self.slots_per_unit) as usize] += 1;
        }
        let mapped = self.p2l.iter().filter(|&&l| l != NIL).count();
        let live = self.l2p.iter().filter(|&&p| p != NIL).count();
        if mapped != live {
            return Err(FimmMapError::Counts { mapped, live });
        }
        if valid != self.valid {
            return Err(FimmMapError::ValidCount);
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A small deterministic generator (xorshift), enough to scatter test writes.
    struct Xs(u64);
    impl Xs {
        fn below(&mut self, n: u64) -> u64 {
            self.0 ^= self.0 << 13;
            self.0 ^= self.0 >> 7;
            self.0 ^= self.0 << 17;
            self.0 % n
        }
    }

    #[test]
    fn a_full_ftl_collects_without_losing_or_duplicating_a_slot() {
        let (spu, units, logical) = (64u32, 32u32, 64 * 26);
        let mut ftl = FimmFtl::new(spu, units, logical, 3).unwrap();
        // The reference: which physical slot holds each logical slot's latest data, as a
        // token written with it; a collection must carry every live token along.
        let mut token_at = vec![0u64; (spu * units) as usize];
        let mut latest = vec![0u64; logical as usize];
        let mut rng = Xs(0x9E37_79B9);
        let (mut collections, mut copies) = (0u64, 0u64);
        for n in 1..=1_000_000u64 {
            while ftl.wants_collection() {
                let c = ftl.collect().expect("a sealed unit");
                for g in &c.copies {
                    token_at[g.to as usize] = token_at[g.from as usize];
                }
                copies += c.copies.len() as u64;
                collections += 1;
                ftl.collected();
            }
            let l = rng.below(logical);
            if n % 97 == 0 {
                ftl.trim(l);
                latest[l as usize] = 0;
                continue;
            }
            let p = ftl.write(l);
            token_at[p as usize] = n;
            latest[l as usize] = n;
        }
        ftl.check().unwrap();
        for (l, &t) in latest.iter().enumerate() {
            match ftl.resolve(l as u64) {
                Some(p) => assert_eq!(token_at[p as usize], t, "logical {l}"),
                None => assert_eq!(t, 0, "logical {l} lost"),
            }
        }
        assert!(collections > 10_000, "{collections} collections");
        // Greedy on uniform writes at 81 % full copies a few slots per write, not more.
        assert!(copies > 0 && copies < 5_000_000, "{copies} copies");
    }

    #[test]
    fn greedy_takes_the_unit_with_fewest_valid_slots() {
        let mut ftl = FimmFtl::new(4, 8, 12, 1).unwrap();
        (0..12).for_each(|l| {
            ftl.write(l);
        });
        // Units 0, 1, 2 sealed or open full; stale three slots of unit 1.
        for l in [4, 5, 6] {
            ftl.write(l);
        }
        let c = ftl.collect().unwrap();
        assert_eq!(c.victim, 1);
        assert_eq!(c.copies, vec![GcCopy { logical: 7, from: 7, to: 15 }]);
        assert_eq!(ftl.resolve(7), Some(15));
        assert_eq!(ftl.collecting(), 1);
        ftl.collected();
        ftl.check().unwrap();
    }

    #[test]
    fn the_trigger_starts_one_collection_and_pressure_more() {
        let mut ftl = FimmFtl::new(4, 8, 8, 3).unwrap();
        for l in 0..8 {
            ftl.write(l);
        }
        // Unit 0 sealed, unit 1 open and full: 6 free.
        assert!(!ftl.wants_collection());
        for l in 0..8 {
            ftl.write(l);
        }
        assert_eq!(ftl.free_units(), 4);
        ftl.write(0);
        assert_eq!(ftl.free_units(), 3);
        assert!(ftl.wants_collection());
        ftl.collect().unwrap();
        assert!(!ftl.wants_collection(), "one background collection at a time");
    }

    #[test]
    fn too_little_spare_is_refused() {
        let e = FimmFtl::new(64, 8, 64 * 5, 3).unwrap_err();
        assert!(e.to_string().contains("spare erase units"), "{e}");
        assert!(FimmFtl::new(64, 3, 10, 0).is_err());
    }
}
