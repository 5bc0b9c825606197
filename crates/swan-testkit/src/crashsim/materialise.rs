//! Member images as a power cut would leave them at any point of the log: durable up to
//! each member's last completed sync, and a chosen share of the writes after it landed
//! (some torn sector by sector). The images are patched from cut to cut, not rebuilt.

use super::Run;
use crate::recorder::Entry;
use crate::rng::SplitMix64;
use anyhow::Result;
use std::collections::HashMap;
use std::path::PathBuf;
use std::sync::Arc;
use swan_server::member::{MemoryBacking, MemoryMembers, BLOCK};

const SECTOR: usize = 512;

/// A block of a member as some write left it: the write's payload and where in it.
#[derive(Clone)]
struct Blk(Arc<[u8]>, usize);

impl Blk {
    fn bytes(&self) -> &[u8] {
        &self.0[self.1 * BLOCK..(self.1 + 1) * BLOCK]
    }
}

/// The member images, patched from cut to cut.
pub(super) struct Materialiser<'a> {
    log: &'a [Entry],
    /// The images, by the names the member list gives them.
    pub(super) images: Arc<MemoryMembers>,
    pub(super) paths: Vec<PathBuf>,
    files: Vec<Arc<MemoryBacking>>,
    /// Durable contents (absent: zeroes).
    durable: Vec<HashMap<u64, Blk>>,
    /// Per member: log indices of its writes, trims and syncs.
    per_member: Vec<Vec<usize>>,
    /// Per member: how far into `per_member` the durable state goes.
    applied: Vec<usize>,
    /// Log indices of writes and trims a failed sync left in doubt for good.
    doubtful: Vec<bool>,
    doubt: Vec<Vec<usize>>,
    /// Blocks the previous cut's overlay changed.
    touched: Vec<(u32, u64)>,
}

impl<'a> Materialiser<'a> {
    pub(super) fn new(run: &Run, log: &'a [Entry]) -> Result<Self> {
        let n = run.base.len();
        let images = MemoryMembers::new();
        let mut paths = Vec::new();
        let mut files = Vec::new();
        let mut durable = Vec::new();
        for (m, blocks) in run.base.iter().enumerate() {
            let p = PathBuf::from(format!("replay/m{m}"));
            let f = MemoryBacking::new(run.image_blocks);
            images.insert(&p, f.clone());
            let mut map = HashMap::new();
            for (b, data) in blocks {
                f.put_block(*b, Some(data));
                map.insert(*b, Blk(Arc::from(data.as_slice()), 0));
            }
            paths.push(p);
            files.push(f);
            durable.push(map);
        }
        let mut per_member = vec![Vec::new(); n];
        let mut doubtful = vec![false; log.len()];
        let mut since_sync: Vec<Vec<usize>> = vec![Vec::new(); n];
        for (i, e) in log.iter().enumerate() {
            match e {
                Entry::Write { member, .. } | Entry::Trim { member, .. } => {
                    per_member[*member as usize].push(i);
                    since_sync[*member as usize].push(i);
                }
                Entry::Sync { member } => {
                    per_member[*member as usize].push(i);
                    since_sync[*member as usize].clear();
                }
                Entry::SyncFailed { member } => {
                    for j in since_sync[*member as usize].drain(..) {
                        doubtful[j] = true;
                    }
                }
                Entry::Mark(_) => {}
            }
        }
        Ok(Materialiser {
            log,
            images,
            paths,
            files,
            durable,
            per_member,
            applied: vec![0; n],
            doubtful,
            doubt: vec![Vec::new(); n],
            touched: Vec::new(),
        })
    }

    fn write_block(&self, m: usize, b: u64, data: Option<&[u8]>) {
        self.files[m].put_block(b, data);
    }

    /// Make the images what a power cut at `cut` could leave; returns the writes torn.
    /// `mode`: 0 every volatile write lands, 1 none does, 2–3 a random subset.
    pub(super) fn cut(&mut self, cut: usize, mode: u64, rng: &mut SplitMix64) -> Result<u64> {
        // Undo the previous overlay.
        for (m, b) in std::mem::take(&mut self.touched) {
            let d = self.durable[m as usize].get(&b).cloned();
            self.write_block(m as usize, b, d.as_ref().map(Blk::bytes));
        }
        let mut torn = 0;
        for m in 0..self.files.len() {
            let upto = self.apply_synced(m, cut)?;
            let (overlay, tears) = self.volatile_overlay(m, upto, cut, mode, rng);
            torn += tears;
            for (b, data) in overlay {
                self.write_block(m, b, Some(&data));
                self.touched.push((m as u32, b));
            }
        }
        Ok(torn)
    }

    /// Make member `m`'s image hold everything up to its last sync before `cut` (log
    /// entries a failed sync left in doubt aside). Returns how far into its entries that is.
    fn apply_synced(&mut self, m: usize, cut: usize) -> Result<usize> {
        let list = &self.per_member[m];
        let upto = list[..list.partition_point(|&i| i < cut)]
            .iter()
            .rposition(|&i| matches!(self.log[i], Entry::Sync { .. }))
            .map_or(0, |p| p + 1)
            .max(self.applied[m]);
        for k in self.applied[m]..upto {
            let i = self.per_member[m][k];
            if self.doubtful[i] {
                self.doubt[m].push(i);
                continue;
            }
            match &self.log[i] {
                Entry::Write { block, data, .. } => {
                    for j in 0..data.len() / BLOCK {
                        let b = block + j as u64;
                        self.files[m].put_block(b, Some(&data[j * BLOCK..(j + 1) * BLOCK]));
                        self.durable[m].insert(b, Blk(data.clone(), j));
                    }
                }
                Entry::Trim { block, count, .. } => {
                    for b in *block..block + count {
                        if self.durable[m].remove(&b).is_some() {
                            self.write_block(m, b, None);
                        }
                    }
                }
                _ => {}
            }
        }
        self.applied[m] = upto;
        Ok(upto)
    }

    /// What of member `m`'s volatile writes before `cut` (after its last sync at `upto`,
    /// and whatever a failed sync left in doubt) the crash lets land: all (`mode` 0), none
    /// (1), or a random choice, some torn sector by sector (2 and up). Returns the blocks
    /// as they read after the crash, and how many writes were torn.
    fn volatile_overlay(
        &self,
        m: usize,
        upto: usize,
        cut: usize,
        mode: u64,
        rng: &mut SplitMix64,
    ) -> (HashMap<u64, Vec<u8>>, u64) {
        let list = &self.per_member[m];
        let end = list.partition_point(|&i| i < cut);
        let mut volatile: Vec<usize> = self.doubt[m].iter().copied().filter(|&i| i < cut).collect();
        volatile.extend_from_slice(&list[upto.min(end)..end]);
        volatile.sort_unstable();
        let mut overlay: HashMap<u64, Vec<u8>> = HashMap::new();
        let mut torn = 0;
        for i in volatile {
            let lands = match mode {
                0 => true,
                1 => false,
                _ => rng.chance(1, 2),
            };
            if !lands {
                continue;
            }
            match &self.log[i] {
                Entry::Write { block, data, .. } => {
                    let tear = mode >= 2 && rng.chance(1, 4);
                    for j in 0..data.len() / BLOCK {
                        let b = block + j as u64;
                        let new = &data[j * BLOCK..(j + 1) * BLOCK];
                        let mut out = match overlay.get(&b) {
                            Some(v) => v.clone(),
                            None => self.durable[m].get(&b).map_or(vec![0u8; BLOCK], |d| d.bytes().to_vec()),
                        };
                        if tear {
                            for s in 0..BLOCK / SECTOR {
                                if rng.chance(1, 2) {
                                    out[s * SECTOR..(s + 1) * SECTOR]
                                        .copy_from_slice(&new[s * SECTOR..(s + 1) * SECTOR]);
                                }
                            }
                        } else {
                            out.copy_from_slice(new);
                        }
                        overlay.insert(b, out);
                    }
                    torn += u64::from(tear);
                }
                Entry::Trim { block, count, .. } => {
                    for b in *block..block + count {
                        overlay.insert(b, vec![0u8; BLOCK]);
                    }
                }
                _ => {}
            }
        }
        (overlay, torn)
    }
}
