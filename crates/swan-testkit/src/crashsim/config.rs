//! The shape of a crash-simulation run: the array, the workload's size and seed, and the
//! member to fail and replace, if any.

use swan_core::scheme::SchemeKind;
use swan_server::array::ZonedMembers;

/// The shape of the array and the workload.
#[derive(Clone, Debug)]
pub struct Config {
    pub scheme: SchemeKind,
    pub rgroups: u32,
    pub ssds_per_rgroup: u32,
    pub member_bytes: u64,
    pub segment_bytes: u64,
    /// Requests of the workload (writes, trims, reads, flushes).
    pub ops: u64,
    pub seed: u64,
    /// Checkpoint after this many journal records (0: when the ring is half full).
    pub checkpoint_every: u64,
    /// Fail this member (as `swan fail` does) three tenths of the way through the workload,
    /// and rebuild it (as `swan replace` does) onto a fresh member halfway through. The
    /// replacement is another device: it gets its own image, after the members'.
    pub replace: Option<u32>,
    /// How the engine serves reads (reads around busy members among them).
    pub reads: swan_core::scheme::ReadRules,
    /// Members that are emulated zoned devices, each segment a zone (None: plain members).
    pub zoned: Option<ZonedMembers>,
}

impl Config {
    /// A small SWAN0 array (3 R-groups × 2 members of 24 MiB, 128 KiB segments) under
    /// enough writes that GC, front-end rotations and checkpoints all happen.
    pub fn small(scheme: SchemeKind, ops: u64, seed: u64) -> Config {
        Config {
            scheme,
            rgroups: 3,
            ssds_per_rgroup: if scheme.raid() == swan_core::geometry::RaidLevel::Raid0 { 2 } else { 3 },
            member_bytes: 24 << 20,
            segment_bytes: 128 << 10,
            ops,
            seed,
            checkpoint_every: 300,
            replace: None,
            reads: Default::default(),
            zoned: None,
        }
    }

    /// [`Config::small`] over emulated zoned members: each 128 KiB segment a zone, and each
    /// member letting three zones be active at once, the least the array works with
    /// (`swan create --max-active-zones`), so that a write the limit refuses shows up.
    pub fn small_zoned(scheme: SchemeKind, ops: u64, seed: u64) -> Config {
        let small = Config::small(scheme, ops, seed);
        Config { zoned: Some(ZonedMembers { zone_bytes: small.segment_bytes, max_active: Some(3) }), ..small }
    }
}
