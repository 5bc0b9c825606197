//! Garbage collection of a log-structured array: which R-group to clean, the victim's live
//! blocks and where they go, and the victim's release once they have moved.
//!
//! A job is two halves: [`LogArray::start_gc_with`] plans the reads of a victim's live
//! blocks and their writes to the R-group's GC segment; once the driver has carried them
//! out, [`LogArray::finish_job`] remaps what is still live and frees the victim.

use super::super::{GcJobId, Layout, MapChange, SummarySource};
use super::{GcJob, LogArray, Move};
use crate::io::{Dst, IoClass, IoKind, IoPlan, MemberIo, Src};
use crate::l2p::UNMAPPED;

/// How many moves ahead GC asks for a moved block's map entry.
const GC_PREFETCH_DISTANCE: usize = 16;

/// A GC job's plan reads the victim's live blocks in phase 0 and writes them (and the parity
/// of the rows they complete) from this phase on: between the two, a driver holds every
/// staged copy and may check it.
pub const GC_WRITE_PHASE: usize = 1;

impl LogArray {
    /// Which R-group GC should clean now, if any.
    fn gc_target_group(&mut self) -> Option<u32> {
        let payload = self.geo.payload_slots();
        let useful = |this: &Self, g: u32| -> Option<u32> {
            // One job per R-group, and only with a free segment for its moves: a job moves
            // less than a segment, so one fresh segment beyond the open GC segment always
            // holds it. (Victims awaiting a deferred release do not count as free.)
            if this.job_in_flight[g as usize] || this.segs.free_count(g) == 0 {
                return None;
            }
            let seg = this.segs.min_valid(g)?;
            let v = this.segs.valid(seg);
            (v < payload).then_some(v)
        };
        // A write that does not fit waits for GC: GC then runs whatever its target or
        // watermarks say, or the array could hold free segments in every R-group's reserve
        // and refuse the write forever (each back-end R-group's reserve counted towards
        // SWAN's target once did exactly that). "Does not fit" means the last refused write,
        // not that no room is left.
        let starved = !self.has_room(self.starved_for.max(1));
        match self.cfg.layout {
            Layout::LogRaid => {
                let free = self.segs.free_total();
                if free < self.cfg.lograid_gc_low {
                    self.lograid_gc_on = true;
                } else if free >= self.cfg.lograid_gc_high {
                    self.lograid_gc_on = false;
                }
                ((self.lograid_gc_on || starved) && useful(self, 0).is_some()).then_some(0)
            }
            Layout::Swan => {
                // While an R-group is degraded, the front-end must find room in a healthy one
                // at its next rotation ([`LogArray::next_front`]): only healthy back-end
                // R-groups' free segments count towards the target, and GC cleans them first.
                let any_degraded = self.degraded.iter().any(|&d| d);
                let counts = |g: u32| g != self.front && !(any_degraded && self.degraded[g as usize]);
                // The target counts what user writes may take, not the reserves they may not.
                let backend_ready: u64 =
                    (0..self.geo.rgroups).filter(|&g| counts(g)).map(|g| self.allocatable(g)).sum();
                if backend_ready >= self.cfg.swan_gc_target && !starved {
                    return None;
                }
                let busy = self.job_in_flight.iter().filter(|&&b| b).count() as u32;
                if busy >= self.cfg.swan_gc_max_groups {
                    return None;
                }
                // Greedy across the back-end: the R-group whose best victim holds the fewest
                // valid blocks; ties to the R-group that was front-end longest ago.
                let mut best: Option<(bool, u32, u64, u32)> = None; // (degraded, valid, last_front, group)
                let front = (!self.gc_in_front_end).then_some(self.front);
                for g in (0..self.geo.rgroups).filter(|&g| Some(g) != front) {
                    if let Some(v) = useful(self, g) {
                        let key = (self.degraded[g as usize], v, self.last_front[g as usize], g);
                        if best.is_none_or(|b| key < b) {
                            best = Some(key);
                        }
                    }
                }
                if best.is_none() && starved {
                    // Every back-end R-group is full of live data and the garbage sits in the
                    // front-end (a workload that rewrote recent data): writes would wait
                    // forever. Only then does the front-end collect, so the array never
                    // deadlocks; in steady state GC stays out of the front-end.
                    return useful(self, self.front).map(|_| self.front);
                }
                best.map(|(_, _, _, g)| g)
            }
        }
    }

    /// [`Scheme::start_gc`], for a driver that can read summaries back from its members: with
    /// [`LogConfig::p2l_in_summaries`] a victim's P2L is asked of `summaries`.
    pub fn start_gc_with(&mut self, plan: &mut IoPlan, summaries: &mut dyn SummarySource) -> Option<GcJobId> {
        plan.clear();
        let group = self.gc_target_group()?;
        let victim =
            self.cfg.victim.select(&self.segs, group, self.geo.payload_slots(), self.seal_seq, &mut self.scratch)?;
        debug_assert_eq!(self.inbound[victim as usize], 0);
        // An empty victim needs no P2L at all: nothing moves.
        let in_memory = self.p2l.knows(victim) || self.segs.valid(victim) == 0;
        if !in_memory {
            self.load_victim_p2l(victim, summaries);
        }
        self.count_victim_choice(group, victim);
        self.segs.mark_victim(victim);
        self.counters.gc_onset_user_blocks.get_or_insert(self.counters.user_blocks_written);
        self.counters.victims += 1;
        self.counters.victim_valid_blocks += u64::from(self.segs.valid(victim));
        self.counters.victim_payload_blocks += u64::from(self.geo.payload_slots());
        let mut moves = self.move_pool.pop().unwrap_or_default();
        moves.clear();
        // Read the victim member by member, so consecutive live rows on an SSD become one
        // operation; staging slots are numbered in that order.
        let dm = self.geo.data_members;
        for col in 0..dm {
            for row in 0..self.geo.segment_rows {
                let slot = row * dm + col;
                if slot >= self.geo.payload_slots() {
                    break;
                }
                let pba = self.geo.pba(victim, slot);
                if self.is_live(pba) {
                    let lba = if in_memory { self.p2l.get(pba) } else { self.victim_p2l[slot as usize] };
                    debug_assert_eq!(self.l2p.get(lba), pba);
                    let (member, block) = self.geo.slot_location(victim, slot);
                    plan.push_merged(MemberIo {
                        member,
                        block,
                        count: 1,
                        kind: IoKind::Read(Dst::Staged { slot: moves.len() as u32 }),
                        class: IoClass::Gc,
                    });
                    moves.push(Move { lba, from: pba, to: UNMAPPED });
                }
            }
        }
        debug_assert_eq!(moves.len() as u32, self.segs.valid(victim));
        plan.barrier();
        debug_assert!(moves.is_empty() || plan.phase_count() == GC_WRITE_PHASE);
        // Take the destination slots from the GC segment in runs, and hand each run out
        // member by member, so each SSD's share of the run is one contiguous write.
        let total = moves.len() as u32;
        let first_write = plan.len();
        let (mut given, mut j) = (0u32, 0usize);
        while given < total {
            let (seg, first, count) = self.gc_take(group, total - given);
            given += count;
            for col in 0..dm {
                let mut slot = first + (col + dm - first % dm) % dm;
                while slot < first + count {
                    let to = self.geo.pba(seg, slot);
                    let mv = &mut moves[j];
                    mv.to = to;
                    self.p2l.set(to, mv.lba);
                    self.inbound[seg as usize] += 1;
                    let (member, block) = self.geo.slot_location(seg, slot);
                    plan.push_merged(MemberIo {
                        member,
                        block,
                        count: 1,
                        kind: IoKind::Write(Src::Staged { slot: j as u32 }),
                        class: IoClass::Gc,
                    });
                    j += 1;
                    slot += dm;
                }
            }
            // Parity of every stripe row the run completed, once the phase's data has landed.
            if self.geo.raid != crate::geometry::RaidLevel::Raid0 {
                for slot in first..first + count {
                    if self.geo.slot_ends_row(slot) {
                        self.push_parity(plan, seg, slot, IoClass::Gc);
                    }
                }
            }
        }
        debug_assert_eq!(j, moves.len());
        if self.cfg.zoned_members {
            // The parity rows sit between a member's data rows: zoned members take them in
            // block order or not at all.
            plan.order_by_member_block(first_write);
        }
        let id = self.next_job;
        self.next_job += 1;
        self.job_in_flight[group as usize] = true;
        self.jobs.insert(id, GcJob { group, victim, moves });
        Some(id)
    }

    /// Count what the pick of `victim` in `group` passed over ([`VictimChoice`]): the
    /// emptiest sealed segment of every R-group and why GC could not take it, and whether
    /// GC moves wrote the victim.
    ///
    /// [`VictimChoice`]: super::super::VictimChoice
    fn count_victim_choice(&mut self, group: u32, victim: u64) {
        let valid = self.segs.valid(victim);
        let (mut best, mut front, mut collecting, mut no_room) = (valid, false, false, false);
        for g in 0..self.geo.rgroups {
            let Some(v) = self.segs.min_valid(g).map(|s| self.segs.valid(s)) else { continue };
            best = best.min(v);
            if v >= valid || g == group {
                continue;
            }
            if self.cfg.layout == Layout::Swan && g == self.front && !self.gc_in_front_end {
                front = true;
            } else if self.job_in_flight[g as usize] {
                collecting = true;
            } else if self.segs.free_count(g) == 0 {
                no_room = true;
            }
        }
        let c = &mut self.counters.victim_choice;
        c.best_anywhere_valid_blocks += u64::from(best);
        c.emptier_in_front_end += u64::from(front);
        c.emptier_in_collecting += u64::from(collecting);
        c.emptier_without_room += u64::from(no_room);
        if self.gc_written[victim as usize] {
            c.gc_written_victims += 1;
            c.gc_written_valid_blocks += u64::from(valid);
        }
    }

    /// The R-group `job` collects in, while it is started and not yet finished.
    pub fn gc_group(&self, job: GcJobId) -> Option<u32> {
        self.jobs.get(&job).map(|j| j.group)
    }

    /// The moves of `job`, a job started and not yet finished, in staging-slot order.
    pub fn gc_moves(&self, job: GcJobId) -> &[Move] {
        self.jobs.get(&job).map_or(&[], |j| &j.moves)
    }

    /// Every I/O of `job` has completed: remap what it moved, seal the GC segments it
    /// filled, and release (or queue for release) the victim.
    pub(super) fn finish_job(&mut self, job: GcJobId, plan: &mut IoPlan) {
        plan.clear();
        let GcJob { group, victim, mut moves } =
            self.jobs.remove(&job).unwrap_or_else(|| panic!("finish_gc for unknown job {job}"));
        for (i, mv) in moves.iter().enumerate() {
            // The moved blocks' map entries are scattered over the volume: ask for the ones
            // a few moves on while this one is done.
            if let Some(ahead) = moves.get(i + GC_PREFETCH_DISTANCE) {
                self.l2p.prefetch(ahead.lba);
            }
            let seg = self.seg_of(mv.to);
            self.inbound[seg as usize] -= 1;
            // Still live in the victim means nobody overwrote or trimmed it meanwhile.
            if self.is_live(mv.from) {
                debug_assert_eq!(self.l2p.get(mv.lba), mv.from);
                self.remap_live(mv.lba, mv.from, mv.to);
                self.counters.gc_blocks_moved += 1;
            } else {
                // Overwritten or trimmed while the job ran: the copy is dead on arrival.
                self.p2l.set(mv.to, UNMAPPED);
            }
        }
        moves.clear();
        self.move_pool.push(moves);
        let g = group as usize;
        let mut full = std::mem::take(&mut self.gc_full[g]);
        full.retain(|&seg| {
            if self.inbound[seg as usize] == 0 {
                self.seal(seg, plan, IoClass::Gc);
                false
            } else {
                true
            }
        });
        self.gc_full[g] = full;
        // RAIZN logs a write's partial parity with the write; a job's moves are written
        // when it finishes, and logging here keeps the log in the order its plans reach the
        // members (a job's writes go out after user writes planned later).
        if let Some(c) = self.gc_open[g].filter(|c| c.next > 0) {
            self.log_partial_parity(plan, c.seg, c.next - 1, IoClass::Gc);
        }
        assert_eq!(self.segs.valid(victim), 0, "victim {victim} still holds live blocks after GC");
        if self.cfg.defer_release {
            self.releasing.push((group, victim));
        } else {
            self.release_victim(group, victim, plan);
        }
        self.job_in_flight[g] = false;
    }

    /// With deferred release ([`LogConfig::defer_release`]), GC victims stay unusable after
    /// [`Scheme::finish_gc`] until the driver has made the job's moves durable and calls this:
    /// it frees them and plans their TRIMs into `plan` (cleared first). Returns how many.
    pub fn release_deferred(&mut self, plan: &mut IoPlan) -> usize {
        plan.clear();
        let victims = std::mem::take(&mut self.releasing);
        for &(group, victim) in &victims {
            self.release_victim(group, victim, plan);
        }
        victims.len()
    }

    /// Victims waiting for [`LogArray::release_deferred`].
    pub fn pending_release(&self) -> usize {
        self.releasing.len()
    }

    /// The live blocks of `segment`, slot by slot ([`UNMAPPED`] where none), found by
    /// scanning the whole L2P map: O(volume), for when no P2L is at hand.
    pub(super) fn scan_p2l(&self, segment: u64) -> Vec<u64> {
        let mut out = vec![UNMAPPED; self.geo.payload_slots() as usize];
        let first = self.geo.pba(segment, 0);
        let end = first + u64::from(self.geo.payload_slots());
        for lba in 0..self.cfg.volume_blocks {
            let pba = self.l2p.get(lba);
            if (first..end).contains(&pba) {
                out[(pba - first) as usize] = lba;
            }
        }
        out
    }

    /// Fill `victim_p2l` with the blocks of `victim`'s live slots when the in-memory P2L does
    /// not hold them: from its summary if that reads back whole and agrees with the map on
    /// every live slot, else by scanning the map. A summary is trusted for nothing the map
    /// does not confirm, so a torn, stale or corrupt one costs time, never data.
    fn load_victim_p2l(&mut self, victim: u64, summaries: &mut dyn SummarySource) {
        let payload = self.geo.payload_slots();
        let seq = self.segs.seq(victim);
        let from_summary = (seq != 0)
            .then(|| summaries.read_summary(&self.geo, victim))
            .flatten()
            .filter(|s| s.segment == victim && s.seq == seq && s.entries.len() == payload as usize)
            .filter(|s| {
                (0..payload).all(|slot| {
                    let pba = self.geo.pba(victim, slot);
                    let lba = s.entries[slot as usize].lba;
                    !self.is_live(pba) || (lba < self.cfg.volume_blocks && self.l2p.get(lba) == pba)
                })
            });
        self.victim_p2l = match from_summary {
            Some(s) => s.entries.iter().map(|e| e.lba).collect(),
            None => {
                self.counters.p2l_scans += 1;
                self.scan_p2l(victim)
            }
        };
    }

    /// Return an emptied victim to the free pool and TRIM it (§4.2), so the SSD can erase it
    /// without copying anything.
    fn release_victim(&mut self, group: u32, victim: u64, plan: &mut IoPlan) {
        self.segs.release(victim);
        // Journal the release as "sealed with sequence 0": a restart that finds blocks in
        // this segment again (it was reused) must adopt it as unsealed, not trust the
        // summary an older checkpoint remembers.
        if let Some(log) = self.changes.as_mut() {
            log.push(MapChange::Sealed { segment: victim, seq: 0 });
        }
        let block = self.geo.row_block(victim, 0);
        for member in self.geo.group_members(group) {
            plan.push(MemberIo { member, block, count: self.geo.segment_rows, kind: IoKind::Trim, class: IoClass::Gc });
        }
    }
}
