//! Every member operation of the engine, and what a member's failure means for the array.
//!
//! A member that returns an I/O error is marked failed when its parity group can spare it
//! ([`Members::can_lose`]): the failure is recorded in every other member's superblock (made
//! durable before anything else happens, so no FLUSH is acknowledged by an array that
//! forgot it), the operation is carried out degraded, and the array goes on serving. From
//! then on the failed member is neither read nor written: its blocks are rebuilt from the
//! other members of its row, whole rows from the members and open rows from their running
//! XOR ([`OpenRows`]).
//!
//! `swan replace` puts a new member in the failed one's place while the array serves. The
//! replacement is written like a healthy member from the start; a cursor walks it from the
//! first block to the last, copying the metadata area from the other metadata copy and
//! rebuilding every data row from its peers, a slice per round between user requests. Its
//! superblock is written last, with the failure cleared everywhere: a rebuild cut short by
//! a crash leaves the member failed and the replacement unrecognised, to be started again.
//! A zoned replacement is rebuilt zone by zone instead, each brought level with its peers
//! before it takes the array's writes ([`MemberIo::rebuild_zone_step`]).
//!
//! The scheme must hear of every change of health (it keeps new rows off a failed member):
//! [`MemberIo::health_news`] hands the changes over, and the engine passes them on before it
//! next asks the scheme to plan.

use super::open_rows::OpenRows;
use super::status::{MemberStatus, RebuildStatus};
use super::{FailError, ReplaceError};
use crate::array::write_superblocks;
use crate::layout::{Superblock, SuperblockError};
use crate::member::{Member, MemberError, MemberSource, OpenOptions, BLOCK};
use crate::members::{Health, Members};
use crate::parity::xor;
use std::path::Path;
use std::sync::Arc;
use swan_core::geometry::Geometry;
use swan_models::zns::zones::{Zone, ZoneCondition};

/// Blocks of the replacement rebuilt per step (1 MiB).
const REBUILD_STEP: u64 = 256;

/// A rebuild under way.
#[derive(Debug)]
struct Rebuild {
    member: u32,
    /// Blocks below this are rebuilt on the replacement.
    cursor: u64,
}

pub(super) struct MemberIo {
    pub sb: Superblock,
    /// Shared with the read pool, which reads from them beside the engine's thread;
    /// replaced whole when `swan replace` puts a new member in.
    pub members: Arc<Members>,
    /// Where the members came from: a replacement is opened there.
    source: Arc<dyn MemberSource>,
    /// Parity of the stripe rows still filling.
    pub rows: OpenRows,
    /// What `swan status` shows of each member.
    pub stats: Vec<MemberStatus>,
    rebuild: Option<Rebuild>,
    /// Members failed while serving (a sync point that saw one fail relocates again).
    pub failures: u64,
    /// Changes of health the scheme has not been told of: (member, failed).
    news: Vec<(u32, bool)>,
}

impl MemberIo {
    pub fn new(sb: Superblock, members: Members, source: Arc<dyn MemberSource>) -> MemberIo {
        let stats = members
            .iter()
            .map(|m| MemberStatus { path: m.path().display().to_string(), ..MemberStatus::default() })
            .collect();
        MemberIo {
            sb,
            members: Arc::new(members),
            source,
            rows: OpenRows::default(),
            stats,
            rebuild: None,
            failures: 0,
            news: Vec::new(),
        }
    }

    /// Where the members came from.
    pub fn source(&self) -> Arc<dyn MemberSource> {
        Arc::clone(&self.source)
    }

    /// Changes of health since the last call, oldest first, for the scheme.
    pub fn health_news(&mut self) -> std::vec::Drain<'_, (u32, bool)> {
        self.news.drain(..)
    }

    /// Read member `m`'s blocks from `block` into `buf`: from the member while it is healthy,
    /// else (or once it fails here) from its parity group.
    pub fn read(&mut self, m: u32, block: u64, buf: &mut [u8]) -> Result<(), MemberError> {
        match self.members.health(m) {
            Health::Healthy => match self.members[m as usize].read(block, buf) {
                Ok(()) => Ok(()),
                Err(e) if e.is_io_error() && self.fail(m, &e.to_string()) => self.reconstruct(m, block, buf),
                Err(e) => Err(e),
            },
            Health::Rebuilding
                if self.rebuild.as_ref().is_some_and(|r| block + (buf.len() / BLOCK) as u64 <= r.cursor) =>
            {
                match self.members[m as usize].read(block, buf) {
                    Ok(()) => Ok(()),
                    Err(e) => {
                        self.abort_rebuild(&e.to_string());
                        self.reconstruct(m, block, buf)
                    }
                }
            }
            Health::Rebuilding | Health::Failed => self.reconstruct(m, block, buf),
        }
    }

    /// Write `data` to member `m` from `block`; dropped for a failed member (its row's
    /// parity carries it), and for a zone of a replacement the rebuild has not reached.
    pub fn write(&mut self, m: u32, block: u64, data: &[u8]) -> Result<(), MemberError> {
        if self.zone_not_rebuilt(m, block) {
            return Ok(());
        }
        self.op(m, |mem| mem.write(block, data))
    }

    /// Whether `block` of member `m` lies in a zone of a replacement that its rebuild has
    /// not yet brought up to its peers. A zone takes writes only at its pointer, so until
    /// then the replacement is written there as a failed member is (not at all): the rebuild
    /// gives the zone those blocks from the peers when it gets there.
    pub fn zone_not_rebuilt(&self, m: u32, block: u64) -> bool {
        self.rebuild.as_ref().is_some_and(|r| {
            r.member == m
                && block >= r.cursor
                && self.members[m as usize].zoned().is_some_and(|l| l.zone_of(block).is_some())
        })
    }

    /// See [`Member::write_cached`].
    pub fn write_cached(&mut self, m: u32, block: u64, data: &[u8]) -> Result<(), MemberError> {
        self.op(m, |mem| mem.write_cached(block, data))
    }

    pub fn trim(&mut self, m: u32, block: u64, count: u64) -> Result<(), MemberError> {
        if self.zone_not_rebuilt(m, block) {
            return Ok(());
        }
        self.op(m, |mem| mem.trim(block, count))
    }

    pub fn sync(&mut self, m: u32) -> Result<(), MemberError> {
        self.op(m, Member::sync)
    }

    fn op(&mut self, m: u32, op: impl FnOnce(&Member) -> Result<(), MemberError>) -> Result<(), MemberError> {
        match self.members.health(m) {
            Health::Failed => Ok(()),
            _ => {
                let r = op(&self.members[m as usize]);
                self.result(m, r)
            }
        }
    }

    /// What an operation's result on member `m` means for the array: an I/O error fails a
    /// healthy member (when the array can lose it) or ends a rebuild onto it.
    pub fn result(&mut self, m: u32, r: Result<(), MemberError>) -> Result<(), MemberError> {
        match self.members.health(m) {
            Health::Failed => Ok(()),
            Health::Healthy => match r {
                Err(e) if e.is_io_error() && self.fail(m, &e.to_string()) => Ok(()),
                r => r,
            },
            Health::Rebuilding => {
                if let Err(e) = r {
                    self.abort_rebuild(&e.to_string());
                }
                Ok(())
            }
        }
    }

    /// Sync every member that is not failed. `parallel`: every member's fdatasync at once
    /// (each writes back its own file's dirty pages; one after another, a sync point took the
    /// sum of their times). Otherwise one member after another, so that a seed gives the same
    /// member I/O in the same order every time (the deterministic tests).
    pub fn sync_all(&mut self, parallel: bool) -> Result<(), MemberError> {
        if !parallel {
            for m in 0..self.members.len() as u32 {
                self.sync(m)?;
            }
            return Ok(());
        }
        let members = &self.members;
        let live: Vec<u32> = (0..members.len() as u32).filter(|&m| members.health(m) != Health::Failed).collect();
        let results: Vec<(u32, Result<(), MemberError>)> = std::thread::scope(|s| {
            let handles: Vec<_> = live.iter().map(|&m| (m, s.spawn(move || members[m as usize].sync()))).collect();
            handles.into_iter().map(|(m, h)| (m, h.join().unwrap_or_else(|p| std::panic::resume_unwind(p)))).collect()
        });
        // Failures are handled in member order, as the sequential path would.
        for (m, r) in results {
            self.result(m, r)?;
        }
        Ok(())
    }

    /// Member `m`'s blocks from `block`, rebuilt from its parity group: whole rows from the
    /// members, open rows from their running XOR.
    pub fn reconstruct(&self, m: u32, block: u64, buf: &mut [u8]) -> Result<(), MemberError> {
        let count = (buf.len() / BLOCK) as u64;
        self.members.reconstruct(m, block, buf).map_err(|e| e.into_member_error(&self.members, m, block, count))?;
        if self.rows.is_empty() {
            return Ok(());
        }
        let group = self.members.group(m);
        let mut one = vec![0u8; BLOCK];
        for (g, row, open) in self.rows.iter() {
            if g != group || row < block || row >= block + count {
                continue;
            }
            let out = &mut buf[(row - block) as usize * BLOCK..(row - block + 1) as usize * BLOCK];
            if !open.written.contains(&m) {
                // Nothing written there since the row opened: no live data to give back.
                out.fill(0);
                continue;
            }
            let written = open.written.iter().filter(|&&p| p != m).map(|&p| &self.members[p as usize]);
            crate::parity::row_xor(written, row, &mut one, out)?;
            xor(out, &open.xor);
        }
        Ok(())
    }

    /// CRC32C of the block in log slot `pba`, read back from its member (or rebuilt from its
    /// row when the member has failed). A read error does not fail the member here: it yields
    /// CRC 0, which recovery finds wrong (bar a 2^-32 chance) and so drops the journal's tail
    /// from the record holding it on.
    pub fn slot_crc(&self, geo: &Geometry, pba: u64) -> u32 {
        let (seg, slot) = geo.split_pba(pba);
        let (m, at) = geo.slot_location(seg, slot);
        let mut b = vec![0u8; BLOCK];
        let read = match self.members.is_healthy(m) {
            true => self.members[m as usize].read(at, &mut b),
            false => self.reconstruct(m, at, &mut b),
        };
        match read {
            Ok(()) => crc32c::crc32c(&b),
            Err(_) => 0,
        }
    }

    /// Write every row's parity of segment `seg` as the XOR of what its data columns hold
    /// now (every member of its R-group healthy). Returns the rows written.
    pub fn reparity_segment(&mut self, geo: &Geometry, seg: u64) -> Result<u64, MemberError> {
        let group = geo.group_of_segment(seg);
        let cols: Vec<u32> = geo.group_members(group).collect();
        let (mut one, mut acc) = (vec![0u8; BLOCK], vec![0u8; BLOCK]);
        let mut rows = 0;
        for row in 0..geo.segment_rows {
            let block = geo.row_block(seg, row);
            let Some(pc) = geo.parity_column(block) else { continue };
            let data = (0..geo.ssds_per_rgroup).filter(|&c| c != pc).map(|c| &self.members[cols[c as usize] as usize]);
            crate::parity::row_xor(data, block, &mut one, &mut acc)?;
            self.members[cols[pc as usize] as usize].write(block, &acc)?;
            rows += 1;
        }
        Ok(rows)
    }

    /// A note to the members' recorder (crash replay, fault injection), if there is one.
    pub fn mark(&self, what: &'static str) {
        if let Some(m) = self.members.first() {
            m.mark(what);
        }
    }

    pub fn is_recorded(&self) -> bool {
        self.members.first().is_some_and(Member::is_recorded)
    }

    /// Mark member `m` failed, if its parity group can spare it; record it on the others.
    /// False (the error stands) when it cannot be spared.
    pub fn fail(&mut self, m: u32, why: &str) -> bool {
        if !self.members.can_lose(m) {
            return false;
        }
        // Said before the health changes: whoever sees the member failed in `swan status`
        // finds the reason already in the log.
        eprintln!(
            "swan: member {m} ({}) FAILED: {why}; serving degraded from parity (replace it: swan replace --member {m} NEW ...)",
            self.members[m as usize].path().display()
        );
        self.members.set(m, Health::Failed);
        self.sb.failed.insert(m);
        self.sb.events += 1;
        self.stats[m as usize].errors += 1;
        if let Err(e) = write_superblocks(&self.members, &self.sb) {
            eprintln!("swan: recording member {m}'s failure in the superblocks: {e}");
        }
        self.news.push((m, true));
        self.failures += 1;
        true
    }

    /// Fail the members that `errors` (of the read pool) came from.
    pub fn fail_where(&mut self, errors: Vec<MemberError>) {
        for e in errors {
            if let Some(m) = self.members.iter().position(|x| x.path() == e.path()) {
                self.fail(m as u32, &e.to_string());
            }
        }
    }

    /// Spare the member a pooled operation's error came from, if the array can: true if the
    /// error is taken care of that way.
    pub fn spare(&mut self, e: &MemberError) -> bool {
        let m = self.members.iter().position(|x| x.path() == e.path());
        e.is_io_error() && m.is_some_and(|m| self.fail(m as u32, &e.to_string()))
    }

    /// Why member `m` may not be failed by request (`swan fail`), if it may not.
    pub fn refuse_to_fail(&self, m: u32) -> Result<(), FailError> {
        if m as usize >= self.members.len() {
            return Err(FailError::NoSuchMember { member: m, members: self.members.len() });
        }
        if !self.members.has_parity() {
            return Err(FailError::NoParity);
        }
        match self.members.health(m) {
            Health::Failed => return Err(FailError::AlreadyFailed { member: m }),
            Health::Rebuilding => return Err(FailError::Rebuilding { member: m }),
            Health::Healthy => {}
        }
        if let Some(p) = self.members.peers(m).find(|&p| !self.members.is_healthy(p)) {
            return Err(FailError::PeerDown { member: m, peer: p, health: self.members.health(p).name() });
        }
        Ok(())
    }

    /// Open `path` to replace failed member `m` (`swan replace`), checking that it may.
    /// `read_only`: the array is served read-only.
    pub fn open_replacement(&self, m: u32, path: &Path, read_only: bool) -> Result<Member, ReplaceError> {
        if m as usize >= self.members.len() {
            return Err(ReplaceError::NoSuchMember { member: m, members: self.members.len() });
        }
        if let Some(r) = &self.rebuild {
            return Err(ReplaceError::RebuildUnderWay { rebuilding: r.member });
        }
        if self.members.health(m) != Health::Failed {
            return Err(ReplaceError::NotFailed { member: m, health: self.members.health(m).name() });
        }
        if read_only {
            return Err(ReplaceError::ReadOnly);
        }
        let old = &self.members[m as usize];
        if let Some(stuck) = old.stuck_for() {
            // The old member's path as resolved when it was opened: resolving it now would
            // wait on the very operation that is stuck.
            let was = old.canonical().unwrap_or(old.path());
            if was == std::fs::canonicalize(path).unwrap_or_else(|_| path.to_owned()) {
                return Err(ReplaceError::SameFileStuck {
                    member: m,
                    path: path.to_owned(),
                    stuck_s: stuck.as_secs_f64(),
                });
            }
        }
        let direct = self.members.first().is_some_and(Member::is_direct);
        // A zoned array's replacement that does not exist is made as an emulated zoned
        // device like its peers, as `swan create` makes them.
        let zoned = self.members.iter().find_map(Member::zoned);
        if let (Some(layout), false) = (zoned, self.source.exists(path)) {
            self.source.create_zoned(path, &layout, false)?;
        }
        let new = self.source.open(path, OpenOptions { direct, read_only: false })?;
        new.lock(true)?;
        if let Some(why) = crate::array::zoned_mismatch(&new, &self.sb) {
            return Err(ReplaceError::NotZonedLikePeers { path: path.to_owned(), why });
        }
        if new.blocks() < self.sb.member_blocks {
            return Err(ReplaceError::TooSmall {
                path: path.to_owned(),
                blocks: new.blocks(),
                wanted: self.sb.member_blocks,
            });
        }
        match crate::array::read_superblock(&new) {
            Err(SuperblockError::NotSwan) => {}
            Ok(sb) if sb.uuid == self.sb.uuid && sb.member_index == m => {} // the same member, back
            Ok(sb) => {
                return Err(ReplaceError::OtherArray {
                    path: path.to_owned(),
                    index: sb.member_index,
                    uuid: sb.uuid_string(),
                })
            }
            Err(_) => {} // a damaged superblock: nothing to keep
        }
        Ok(new)
    }

    /// Put `new` in member `m`'s place and start rebuilding it; what it says it does. No
    /// member I/O of the read pool may be in flight: the members are replaced whole.
    pub fn start_rebuild(&mut self, m: u32, new: Member, path: &Path) -> String {
        // What open_replacement checked: one rebuild at a time, of a failed member.
        assert!(self.rebuild.is_none(), "member {m}'s rebuild started while another runs");
        assert_eq!(self.members.health(m), Health::Failed, "member {m} rebuilt while not failed");
        let next = self.members.with_replacement(m, new);
        self.members = Arc::new(next);
        self.stats[m as usize].path = path.display().to_string();
        self.rebuild = Some(Rebuild { member: m, cursor: 0 });
        eprintln!("swan: rebuilding member {m} onto {}", path.display());
        format!("rebuilding member {m} onto {}", path.display())
    }

    pub fn rebuilding(&self) -> bool {
        self.rebuild.is_some()
    }

    /// Whether the next [`MemberIo::rebuild_step`] only finishes (or there is no rebuild):
    /// it then reads no row.
    pub fn rebuild_at_end(&self) -> bool {
        self.rebuild.as_ref().is_none_or(|r| r.cursor >= self.sb.member_blocks)
    }

    /// Rebuild the next slice of the replacement; finish when the cursor reaches the end.
    /// The caller runs slices between batches of user requests, with the pool's writes
    /// landed, so a row is never rebuilt while a write to it is half done. `geo`: the log's
    /// geometry (zoned members are rebuilt zone by zone, [`MemberIo::rebuild_zone_step`]).
    pub fn rebuild_step(&mut self, geo: Option<&Geometry>) {
        let Some(r) = &self.rebuild else { return };
        let (m, cursor) = (r.member, r.cursor);
        let end = self.sb.member_blocks;
        if cursor >= end {
            self.finish_rebuild();
            return;
        }
        let zoned = self.members[m as usize].zoned().filter(|l| cursor >= l.conventional_blocks);
        if let (Some(layout), Some(geo)) = (zoned, geo) {
            match self.rebuild_zone_step(m, cursor, &layout, geo) {
                Ok(next) => {
                    if let Some(r) = self.rebuild.as_mut() {
                        r.cursor = next;
                    }
                }
                Err(e) => self.abort_rebuild(&e.to_string()),
            }
            return;
        }
        let meta = self.sb.meta_blocks;
        let (from, to) = if cursor < meta {
            (cursor.max(1), meta.min(cursor + REBUILD_STEP))
        } else {
            (cursor, end.min(cursor + REBUILD_STEP))
        };
        let result = if from >= to {
            Ok(())
        } else if to <= meta {
            self.rebuild_metadata(m, from, to)
        } else {
            let mut buf = vec![0u8; (to - from) as usize * BLOCK];
            self.reconstruct(m, from, &mut buf).and_then(|()| self.members[m as usize].write(from, &buf))
        };
        match result {
            Ok(()) => {
                if let Some(r) = self.rebuild.as_mut() {
                    r.cursor = to;
                }
            }
            Err(e) => self.abort_rebuild(&e.to_string()),
        }
    }

    /// The next slice of zoned replacement `m`'s zone at `cursor`; returns the next cursor.
    ///
    /// A zone is written only at its pointer, so the replacement's zone is brought to where
    /// its peers have written the segment ([`MemberIo::zone_frontier`]) from its start, and
    /// the cursor stands at the zone's pointer meanwhile: user writes to the zone at or past
    /// it are dropped ([`MemberIo::zone_not_rebuilt`]) and rebuilt here in turn. Once the
    /// zone has caught up, the cursor moves to the next zone, and from then on the zone
    /// takes its writes as a healthy member's would.
    fn rebuild_zone_step(
        &mut self,
        m: u32,
        cursor: u64,
        layout: &crate::member::ZonedLayout,
        geo: &Geometry,
    ) -> Result<u64, MemberError> {
        let zone = layout.zone_of(cursor).expect("the cursor is in the sequential zones");
        let start = layout.zone_start(zone);
        let new = &self.members[m as usize];
        let z = new.report_zones()?[zone as usize];
        // The peers' zone, read once: where they stand says how far to go, and whether
        // they were finished short.
        let mut peers: Vec<(u32, Zone)> = Vec::new();
        for p in self.members.peers(m) {
            peers.push((p, self.members[p as usize].report_zones()?[zone as usize]));
        }
        let frontier = self.zone_frontier(m, start, layout.zones.capacity_blocks, &peers, geo);
        let mut have = z.written;
        // On reaching the zone, whatever it holds is from before (the replacement was
        // written nowhere past the cursor); mid-zone, a segment freed and reset meanwhile
        // leaves the zone short of the cursor.
        if (cursor == start && z.write_pointer > 0)
            || have > frontier
            || (z.condition == ZoneCondition::Full && have < frontier)
        {
            new.trim(start, layout.zones.zone_blocks)?;
            have = 0;
        }
        // A zone partly rebuilt is one more active zone on the replacement than its peers
        // have; where the device limits them, a zone is rebuilt whole in one step, so that
        // the replacement never needs more than its peers do.
        let whole = layout.zones.max_active.is_some();
        let mut to = have;
        while to < frontier {
            let end = frontier.min(to + REBUILD_STEP);
            let mut buf = vec![0u8; (end - to) as usize * BLOCK];
            self.reconstruct(m, start + to, &mut buf)?;
            self.members[m as usize].write(start + to, &buf)?;
            to = end;
            if !whole {
                break;
            }
        }
        if to < frontier {
            return Ok(start + to);
        }
        // Caught up. A segment whose zones its peers finished short of their end (sealed
        // or emptied at a restart) has its zone here finished there too.
        let peers_finished = peers.iter().any(|(_, z)| z.condition == ZoneCondition::Full);
        if peers_finished && to > 0 && to < layout.zones.capacity_blocks {
            self.members[m as usize].finish_zone(zone)?;
        }
        Ok(start + layout.zones.zone_blocks)
    }

    /// Blocks from the start of `zone` that member `m` would hold had it not failed: the
    /// rows of the segment there whose slot on `m` was written. A row's parity slot is
    /// written when the row completes (every peer holds the row, and it is not open); a
    /// data slot when the row's parity is on its member, or, in an open row, when `m` wrote
    /// into it (its block is in the row's running XOR). `peers`: the zone on each other
    /// member of `m`'s parity group; `rows`: the zone's capacity.
    fn zone_frontier(&self, m: u32, start: u64, rows: u64, peers: &[(u32, Zone)], geo: &Geometry) -> u64 {
        let group = self.members.group(m);
        let column = m - geo.member(group, 0);
        let holds = |p: u32, row: u64| peers.iter().any(|&(q, z)| q == p && z.written > row);
        for row in 0..rows {
            let block = start + row;
            let Some(pc) = geo.parity_column(block) else { return 0 };
            let open = self.rows.get(group, block);
            let slot_written = if pc == column {
                open.is_none() && peers.iter().all(|(_, z)| z.written > row)
            } else {
                match open {
                    Some(o) => o.written.contains(&m),
                    None => holds(geo.member(group, pc), row),
                }
            };
            if !slot_written {
                return row;
            }
        }
        rows
    }

    /// The metadata area's blocks `from..to`: the checkpoints and journal are mirrored on
    /// the first two members, so a metadata member's come from the other copy; the other
    /// members keep nothing there.
    fn rebuild_metadata(&mut self, m: u32, from: u64, to: u64) -> Result<(), MemberError> {
        let copies = self.sb.meta_members();
        if m >= copies {
            return Ok(());
        }
        let Some(mirror) = (0..copies).find(|&c| c != m && self.members.is_healthy(c)) else {
            return Err(MemberError::Lost {
                path: self.members[m as usize].path().to_owned(),
                op: crate::member::Op::Read { block: from, count: to - from },
                why: "no healthy copy of the metadata to rebuild from".into(),
            });
        };
        let mut buf = vec![0u8; (to - from) as usize * BLOCK];
        self.members[mirror as usize].read(from, &mut buf)?;
        self.members[m as usize].write(from, &buf)
    }

    fn finish_rebuild(&mut self) {
        let Some(r) = self.rebuild.take() else { return };
        let m = r.member;
        if let Err(e) = self.members[m as usize].sync() {
            self.rebuild = Some(r);
            self.abort_rebuild(&e.to_string());
            return;
        }
        self.members.set(m, Health::Healthy);
        self.sb.failed.remove(&m);
        self.sb.events += 1;
        if let Err(e) = crate::array::write_superblocks_rebuilt(&self.members, &self.sb, m) {
            eprintln!("swan: recording member {m}'s rebuild in the superblocks: {e}");
        }
        self.news.push((m, false));
        eprintln!(
            "swan: member {m} rebuilt onto {}; the array is whole again",
            self.members[m as usize].path().display()
        );
    }

    /// The replacement failed: it is not a member; the index stays failed.
    fn abort_rebuild(&mut self, why: &str) {
        let Some(r) = self.rebuild.take() else { return };
        self.members.set(r.member, Health::Failed);
        eprintln!("swan: rebuild of member {} stopped: {why}; the member stays failed", r.member);
    }

    pub fn rebuild_status(&self) -> Option<RebuildStatus> {
        self.rebuild.as_ref().map(|r| RebuildStatus {
            member: r.member,
            path: self.members[r.member as usize].path().display().to_string(),
            done_blocks: r.cursor,
            total_blocks: self.sb.member_blocks,
        })
    }
}
