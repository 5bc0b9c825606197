//! Replaying the log to chosen crash points and checking recovery there: the array must
//! open, recover and pass `swan check`, and every block must read back as the writes and
//! flushes acknowledged before the crash allow (also with a member failed after the
//! restart, on arrays with parity; and over zoned members, once the array serves writes
//! again, which is when it resets and finishes the zones the crash left).

use super::materialise::Materialiser;
use super::payload::{identify, payload};
use super::workload::Kind;
use super::{quiet_opts, Run};
use crate::rng::SplitMix64;
use anyhow::{anyhow, bail, Context, Result};
use std::path::PathBuf;
use std::sync::{Arc, Mutex};
use swan_server::array;
use swan_server::check;
use swan_server::engine::{EngineOptions, Stepper};
use swan_server::member::{MemberSource, MemoryMembers, OpenOptions, BLOCK};
use swan_server::service::{BlockOp, BlockRequest, Reply};

/// What a replay found.
#[derive(Clone, Debug, Default)]
pub struct ReplayReport {
    pub points: u64,
    pub torn_writes: u64,
    pub blocks_verified: u64,
    /// Points also checked with a member failed after the restart (arrays with parity).
    pub degraded_points: u64,
    /// Points also checked serving writes after the restart (zoned members).
    pub writable_points: u64,
    /// Blocks that answered EIO after a crash in the window where a member's failure was
    /// a second fault ([`Run::in_double_fault`]); none of them had a flushed write.
    pub double_fault_eio: u64,
    pub failures: Vec<String>,
}

impl Run {
    /// The member list a restart after a crash at `cut` is given: the replacement in the
    /// failed member's place once its superblock is there, else (after the failure) either
    /// `missing` or the old member, as `pick` says.
    fn restart_paths(&self, source: &MemoryMembers, images: &[PathBuf], pick: bool) -> Vec<PathBuf> {
        let members = (self.cfg.rgroups * self.cfg.ssds_per_rgroup) as usize;
        let mut paths = images[..members].to_vec();
        let Some(m) = self.cfg.replace else { return paths };
        let replacement = &images[members];
        let adopted = source
            .open(replacement, OpenOptions::default())
            .ok()
            .and_then(|r| array::read_superblock(&r).ok())
            .is_some_and(|sb| sb.uuid == self.uuid && sb.member_index == m);
        if adopted {
            paths[m as usize] = replacement.clone();
        } else if pick {
            paths[m as usize] = PathBuf::from(array::MISSING);
        }
        paths
    }

    /// What every block must or may hold after a crash at log position `cut`, as a list of
    /// allowed versions per block; and per block whether a flushed write is among what it must hold (else the first
    /// allowed version, 0, is only "never written").
    fn allowed_and_required(&self, cut: usize) -> (Vec<Vec<u64>>, Vec<bool>) {
        // The last FLUSH (or FUA write) answered before the cut covers every request
        // answered in groups sent before its own.
        let covered_group = self
            .ops
            .iter()
            .filter(|o| o.ok && o.ack.is_some_and(|a| a <= cut))
            .filter(|o| matches!(o.kind, Kind::Flush | Kind::Write { fua: true }))
            .map(|o| o.group)
            .max()
            .unwrap_or(0);
        let mut out = Vec::with_capacity(self.volume_blocks as usize);
        let mut required = Vec::with_capacity(self.volume_blocks as usize);
        for h in &self.history {
            // The required write: the last successful one in a covered group.
            let req = h.iter().rposition(|&(i, _)| {
                let o = &self.ops[i as usize];
                o.ok && o.group < covered_group
            });
            required.push(req.is_some());
            let mut allowed = match req {
                Some(r) => vec![h[r].1],
                None => vec![0],
            };
            let from = req.map_or(0, |r| r + 1);
            for &(i, v) in &h[from..] {
                let o = &self.ops[i as usize];
                if o.start < cut {
                    allowed.push(v);
                }
            }
            out.push(allowed);
        }
        (out, required)
    }

    /// Whether a crash at `cut` struck while a member's failure was the array's second
    /// fault: after the injected error that failed it and before any FLUSH answered since
    /// (whose sync point protects what only that member held). There, md's write hole
    /// (FORMAT.md): a block written since the last FLUSH whose row's parity had not reached
    /// the members is gone. It may then answer EIO (its CRC catches the garbage its
    /// reconstruction gives), but never wrong data, and a flushed block is never lost.
    fn in_double_fault(&self, cut: usize) -> bool {
        let Some(f) = self.recorder.injected().first().map(|i| i.at) else { return false };
        cut >= f
            && !self.ops.iter().any(|o| {
                o.ok && o.ack.is_some_and(|a| a > f && a <= cut)
                    && matches!(o.kind, Kind::Flush | Kind::Write { fua: true })
            })
    }

    /// Replay the log to each of `cuts` (ascending log positions) and check recovery there.
    pub fn replay(&self, cuts: &[usize], seed: u64) -> Result<ReplayReport> {
        let log = self.recorder.log();
        let mut mat = Materialiser::new(self, &log)?;
        let mut rng = SplitMix64(seed);
        let mut report = ReplayReport::default();
        let mut cuts = cuts.to_vec();
        cuts.sort_unstable();
        cuts.dedup();
        for &cut in &cuts {
            let cut = cut.min(log.len());
            let mode = rng.below(4);
            let torn = mat.cut(cut, mode, &mut rng)?;
            report.torn_writes += torn;
            report.points += 1;
            // Every fourth point of an array with parity: a member fails after the restart.
            let degraded = (self.cfg.scheme.raid() != swan_core::geometry::RaidLevel::Raid0 && report.points % 4 == 1)
                .then(|| rng.below(u64::from(self.cfg.rgroups * self.cfg.ssds_per_rgroup)) as u32);
            let paths = self.restart_paths(&mat.images, &mat.paths, rng.chance(1, 2));
            let verified = self.verify_images(&mat.images, &paths, cut).map(|(whole, eio)| {
                report.double_fault_eio += eio;
                whole
            });
            let verified = verified.and_then(|whole| match degraded {
                Some(m) if whole => {
                    report.degraded_points += 1;
                    self.verify_degraded(&mat.images, &paths, cut, m).map(|()| whole)
                }
                _ => Ok(whole),
            });
            let verified = verified.and_then(|whole| {
                if whole && self.cfg.zoned.is_some() {
                    report.writable_points += 1;
                    self.verify_writable(&mat.images, &paths, cut, rng.next_u64())?;
                }
                Ok(())
            });
            if let Err(e) = verified {
                report.failures.push(format!(
                    "replay seed {seed:#x}, run seed {:#x}, cut at log entry {cut} of {} (mode {mode}): {e:#}",
                    self.cfg.seed,
                    log.len()
                ));
                if report.failures.len() >= 5 {
                    break;
                }
            } else {
                report.blocks_verified += self.volume_blocks;
            }
        }
        Ok(report)
    }

    /// Open, recover, check and read back the array in `paths` as a crash at `cut` left it.
    /// True if the array came back whole (no member failed).
    /// Also the blocks that answered EIO in a double fault ([`Run::in_double_fault`]).
    fn verify_images(&self, images: &Arc<MemoryMembers>, paths: &[PathBuf], cut: usize) -> Result<(bool, u64)> {
        let opened = array::open_from(images.clone(), paths, false, true)?;
        let whole = opened.sb.failed.is_empty();
        // (swan check refuses a degraded array: it checks parity against data.)
        if whole {
            let again = array::open_from(images.clone(), paths, false, true)?;
            let rep = check::check_opened(again).context("recovery (swan check)")?;
            if rep.problems != 0 {
                bail!("swan check: {}", rep.text);
            }
        }
        let recovered = array::recover(&opened)?;
        let mut st =
            Stepper::start(opened, recovered, EngineOptions { read_only: true, ..quiet_opts(self.cfg.reads) })?;
        let eio_may = !whole && self.in_double_fault(cut);
        let (allowed, required) = self.allowed_and_required(cut);
        self.read_back(&mut st, &allowed, &required, eio_may).map(|eio| (whole, eio))
    }

    /// As [`Run::verify_images`], on copies of the images, then with member `failed` failed:
    /// a crash at `cut`, a restart (which gives the rows left open their parity), then the
    /// loss of one member. Every block must still read back as it may.
    fn verify_degraded(&self, images: &MemoryMembers, paths: &[PathBuf], cut: usize, failed: u32) -> Result<()> {
        let copies = MemoryMembers::new();
        for p in paths.iter().filter(|p| p.as_os_str() != array::MISSING) {
            copies.insert(p, images.image(p).expect("an image for every member").fork());
        }
        let opened = array::open_from(copies, paths, false, false)?;
        let recovered = array::recover(&opened)?;
        let mut st = Stepper::start(opened, recovered, quiet_opts(self.cfg.reads))?;
        st.fail(failed).map_err(|e| anyhow!("swan fail {failed}: {e}"))?;
        let (allowed, required) = self.allowed_and_required(cut);
        self.read_back(&mut st, &allowed, &required, false)
            .map(|_| ())
            .with_context(|| format!("member {failed} failed after the restart"))
    }

    /// As [`Run::verify_images`], on copies of the images, opened to serve writes: over
    /// zoned members that is when the free segments' zones the crash left written are reset
    /// and the segments open at the crash are sealed where their zones stand (or emptied),
    /// which a read-only open skips. Every block must read back as it may; then writes to `SERVED_AFTER` random
    /// blocks, which the zones take only at their write pointers, must be answered and read
    /// back, beside every other block as it was.
    fn verify_writable(&self, images: &MemoryMembers, paths: &[PathBuf], cut: usize, seed: u64) -> Result<()> {
        /// Writes after the restart: a few segments' worth, so the log moves on to segments
        /// whose zones the restart reset.
        const SERVED_AFTER: u64 = 1024;
        let copies = MemoryMembers::new();
        for p in paths {
            copies.insert(p, images.image(p).expect("an image for every member").fork());
        }
        let opened = array::open_from(copies, paths, false, false)?;
        let recovered = array::recover(&opened)?;
        let mut st = Stepper::start(opened, recovered, quiet_opts(self.cfg.reads)).context("serving again")?;
        let (mut allowed, required) = self.allowed_and_required(cut);
        self.read_back(&mut st, &allowed, &required, false).context("opened to serve writes")?;
        let mut rng = SplitMix64(seed);
        for k in 0..SERVED_AFTER {
            let lba = rng.below(self.volume_blocks);
            // Above every version the workload wrote (one per request).
            let version = (1 << 40) + k;
            let data = payload(self.cfg.seed, lba, version);
            let write = BlockRequest {
                op: BlockOp::Write(data.into()),
                offset: lba * BLOCK as u64,
                len: BLOCK as u32,
                fua: false,
            };
            served(&mut st, write).map_err(|e| anyhow!("write {k} after the restart, to block {lba}: {e:?}"))?;
            allowed[lba as usize] = vec![version];
        }
        let flush = BlockRequest { op: BlockOp::Flush, offset: 0, len: 0, fua: false };
        served(&mut st, flush).map_err(|e| anyhow!("FLUSH after the restart: {e:?}"))?;
        self.read_back(&mut st, &allowed, &required, false).context("after writes served since the restart")?;
        Ok(())
    }

    /// Read the whole volume through `st`; every block must hold one of its `allowed`
    /// versions. With `eio_may`, a block no flushed write is `required` of may answer EIO
    /// instead; returns how many did.
    fn read_back(&self, st: &mut Stepper, allowed: &[Vec<u64>], required: &[bool], eio_may: bool) -> Result<u64> {
        let seed = self.cfg.seed;
        let mut eio = 0;
        const CHUNK: u64 = 256;
        let mut errors = Vec::new();
        let mut lba = 0;
        while lba < self.volume_blocks {
            let n = CHUNK.min(self.volume_blocks - lba);
            let data = match read_blocks(st, lba, n) {
                Ok(data) => data,
                Err(e) if !eio_may => bail!("read of blocks {lba}..{} failed: {e:?}", lba + n),
                // Which blocks: one at a time. Each may answer EIO only if no flushed
                // write is required of it.
                Err(_) => {
                    let mut data = vec![0u8; n as usize * BLOCK];
                    for i in 0..n {
                        let b = lba + i;
                        match read_blocks(st, b, 1) {
                            Ok(one) => data[i as usize * BLOCK..(i as usize + 1) * BLOCK].copy_from_slice(&one),
                            Err(swan_nbd::Errno::Io) if !required[b as usize] => {
                                eio += 1;
                                // Zeroes: version 0, which is allowed for such a block.
                            }
                            Err(e) => bail!("read of block {b} failed: {e:?} (a flushed write is required of it)"),
                        }
                    }
                    data
                }
            };
            for i in 0..n {
                let b = lba + i;
                let bytes = &data[i as usize * BLOCK..(i as usize + 1) * BLOCK];
                let ok = &allowed[b as usize];
                match identify(seed, b, bytes) {
                    Ok(v) if ok.contains(&v) => {}
                    Ok(v) => errors.push(format!("block {b}: version {v}, allowed {ok:?}")),
                    Err(what) => errors.push(format!("block {b}: {what}, allowed {ok:?}")),
                }
            }
            lba += n;
        }
        if !errors.is_empty() {
            let n = errors.len();
            errors.truncate(8);
            bail!("{n} block(s) wrong after recovery: {}", errors.join("; "));
        }
        Ok(eio)
    }
}

/// Read `n` blocks from `lba` through the stepper.
fn read_blocks(st: &mut Stepper, lba: u64, n: u64) -> Reply {
    served(
        st,
        BlockRequest { op: BlockOp::Read, offset: lba * BLOCK as u64, len: (n as usize * BLOCK) as u32, fua: false },
    )
}

/// Send `req` through the stepper and run it until the reply.
fn served(st: &mut Stepper, req: BlockRequest) -> Reply {
    let slot: Arc<Mutex<Option<Reply>>> = Arc::new(Mutex::new(None));
    let s = slot.clone();
    st.submit(req, Box::new(move |r| *s.lock().expect("slot") = Some(r)));
    while slot.lock().expect("slot").is_none() {
        st.round();
    }
    let reply = slot.lock().expect("slot").take().expect("done");
    reply
}
