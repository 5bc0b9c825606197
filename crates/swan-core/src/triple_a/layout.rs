//! Where each logical page lives: a static striping, plus the pages the management moved.
//!
//! The **static layout** is the non-autonomic array's: the logical space is dealt to the
//! clusters in chunks, round-robin over every cluster of every switch, and inside a cluster
//! the pages of its chunks are striped over its FIMMs. A trace's busy address ranges thus
//! land on a few clusters — the paper's hot clusters (Table 1). It is a formula, so the
//! layout costs memory only for pages that moved: one map entry each.
//!
//! Each FIMM holds `user_slots` pages of the static layout and `spare_slots` more for pages
//! moved to it; a page that moves away frees its slot for the next one moved there. Physical
//! slots are the management module's page addresses on a FIMM; the hardware model decides
//! which package, die and plane a slot is on.

use super::{FabricShape, TripleAError};
use std::collections::HashMap;
use std::hash::{BuildHasherDefault, Hasher};

/// How the static layout deals pages and how much room a FIMM keeps for moved ones.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct LayoutConfig {
    /// Logical pages per chunk dealt to one cluster.
    pub chunk_pages: u64,
    /// Slots per FIMM holding the static layout.
    pub user_slots: u64,
    /// Slots per FIMM kept free for pages moved there.
    pub spare_slots: u64,
}

/// A physical page: FIMM `fimm` (within its cluster) of `cluster`, slot `slot` on it.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct Location {
    pub cluster: u32,
    pub fimm: u32,
    pub slot: u64,
}

/// One page moved: where it was and where it is now.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Move {
    pub lpn: u64,
    pub from: Location,
    pub to: Location,
}

/// Slots a FIMM can give to pages moved to it.
#[derive(Clone, Debug)]
struct FreeSlots {
    /// The next never-used spare slot.
    next_spare: u64,
    /// Slots freed by pages that moved away.
    released: Vec<u64>,
}

/// The non-autonomic array's placement: a formula over the shape, no memory per page.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct StaticLayout {
    shape: FabricShape,
    cfg: LayoutConfig,
}

impl StaticLayout {
    pub fn new(shape: FabricShape, cfg: LayoutConfig) -> Result<Self, TripleAError> {
        shape.validate()?;
        let bad = |m: String| Err(TripleAError::Layout(m));
        if cfg.chunk_pages == 0 || cfg.user_slots == 0 {
            return bad("the chunk and the static slots per FIMM must each be at least one page".into());
        }
        let per_cluster = cfg.user_slots * u64::from(shape.fimms_per_cluster);
        if !per_cluster.is_multiple_of(cfg.chunk_pages) {
            return bad(format!(
                "a cluster's {per_cluster} static pages are not a whole number of {}-page chunks",
                cfg.chunk_pages
            ));
        }
        Ok(Self { shape, cfg })
    }

    pub fn shape(&self) -> FabricShape {
        self.shape
    }

    pub fn config(&self) -> LayoutConfig {
        self.cfg
    }

    /// Logical pages the array holds.
    pub fn pages(&self) -> u64 {
        u64::from(self.shape.fimms()) * self.cfg.user_slots
    }

    /// Pages the static layout puts on each cluster.
    pub fn pages_per_cluster(&self) -> u64 {
        self.cfg.user_slots * u64::from(self.shape.fimms_per_cluster)
    }

    /// Where the static layout puts `lpn`.
    pub fn home(&self, lpn: u64) -> Location {
        let cp = self.cfg.chunk_pages;
        let clusters = u64::from(self.shape.clusters());
        let fimms = u64::from(self.shape.fimms_per_cluster);
        let (chunk, offset) = (lpn / cp, lpn % cp);
        let within = (chunk / clusters) * cp + offset;
        Location { cluster: (chunk % clusters) as u32, fimm: (within % fimms) as u32, slot: within / fimms }
    }

    /// The logical page the static layout puts `index`-th on `cluster` (`index` below
    /// [`StaticLayout::pages_per_cluster`]): the inverse of [`StaticLayout::home`], for
    /// workloads that aim at chosen clusters.
    pub fn page_on(&self, cluster: u32, index: u64) -> u64 {
        debug_assert!(index < self.pages_per_cluster() && cluster < self.shape.clusters());
        let cp = self.cfg.chunk_pages;
        (index / cp * u64::from(self.shape.clusters()) + u64::from(cluster)) * cp + index % cp
    }
}

/// The management module's map of every logical page. See the module docs.
#[derive(Clone, Debug)]
pub struct DataLayout {
    fixed: StaticLayout,
    moved: HashMap<u64, Location, BuildHasherDefault<PageHasher>>,
    free: Vec<FreeSlots>,
}

impl DataLayout {
    pub fn new(shape: FabricShape, cfg: LayoutConfig) -> Result<Self, TripleAError> {
        let fixed = StaticLayout::new(shape, cfg)?;
        let first_spare = cfg.user_slots;
        let free = (0..shape.fimms()).map(|_| FreeSlots { next_spare: first_spare, released: Vec::new() }).collect();
        Ok(Self { fixed, moved: HashMap::default(), free })
    }

    pub fn shape(&self) -> FabricShape {
        self.fixed.shape
    }

    /// The placement before anything moved.
    pub fn fixed(&self) -> &StaticLayout {
        &self.fixed
    }

    /// Logical pages the array holds.
    pub fn pages(&self) -> u64 {
        self.fixed.pages()
    }

    /// Pages living away from their static place.
    pub fn moved_pages(&self) -> usize {
        self.moved.len()
    }

    /// Where `lpn` lives now.
    pub fn resolve(&self, lpn: u64) -> Location {
        debug_assert!(lpn < self.pages(), "page {lpn} beyond the array's {}", self.pages());
        match self.moved.get(&lpn) {
            Some(&at) => at,
            None => self.fixed.home(lpn),
        }
    }

    /// Slots FIMM `fimm` of `cluster` can still take.
    pub fn free_slots(&self, cluster: u32, fimm: u32) -> u64 {
        let f = &self.free[self.shape().fimm_index(cluster, fimm) as usize];
        let cfg = self.fixed.cfg;
        cfg.user_slots + cfg.spare_slots - f.next_spare + f.released.len() as u64
    }

    /// Moves `lpn` to a free slot of FIMM `fimm` of `cluster`; `None` when that FIMM has none
    /// or the page is already there.
    pub fn relocate(&mut self, lpn: u64, cluster: u32, fimm: u32) -> Option<Move> {
        let from = self.resolve(lpn);
        if (from.cluster, from.fimm) == (cluster, fimm) {
            return None;
        }
        let (shape, cfg) = (self.fixed.shape, self.fixed.cfg);
        let limit = cfg.user_slots + cfg.spare_slots;
        let dest = &mut self.free[shape.fimm_index(cluster, fimm) as usize];
        let slot = match dest.released.pop() {
            Some(s) => s,
            None if dest.next_spare < limit => {
                dest.next_spare += 1;
                dest.next_spare - 1
            }
            None => return None,
        };
        self.free[shape.fimm_index(from.cluster, from.fimm) as usize].released.push(from.slot);
        let to = Location { cluster, fimm, slot };
        if to == self.fixed.home(lpn) {
            self.moved.remove(&lpn);
        } else {
            self.moved.insert(lpn, to);
        }
        Some(Move { lpn, from, to })
    }
}

/// A page number is already well spread; one multiply mixes it enough for a hash table and
/// costs far less than SipHash on a path every request takes.
#[derive(Default)]
pub struct PageHasher(u64);

impl Hasher for PageHasher {
    fn finish(&self) -> u64 {
        self.0
    }

    fn write(&mut self, bytes: &[u8]) {
        for &b in bytes {
            self.0 = (self.0.rotate_left(8) ^ u64::from(b)).wrapping_mul(0x9e37_79b9_7f4a_7c15);
        }
    }

    fn write_u64(&mut self, n: u64) {
        self.0 = (n ^ (n >> 29)).wrapping_mul(0x9e37_79b9_7f4a_7c15);
    }
}
