//! Recovery: the newest whole checkpoint, and the journal rolled forward over it
//! (FORMAT.md, "Recovery").

use super::{Opened, RecoverError};
use crate::checkpoint::{self, CheckpointError};
use crate::journal::{self, Ring};
use crate::layout::{ImpossibleGeometry, Superblock};
use crate::member::{Member, BLOCK};
use std::collections::HashMap;
use swan_core::geometry::Geometry;
use swan_core::l2p::{PackedMap, UNMAPPED};
use swan_core::scheme::{ArrayScheme, LogArray, MapChange};

/// The state a restart found.
pub struct Recovered {
    pub scheme: ArrayScheme,
    pub ring: Ring,
    pub checkpoint_seq: u64,
    /// The checkpoint slot the next checkpoint goes to.
    pub next_slot: u32,
    pub records_replayed: u64,
    pub changes_replayed: u64,
    /// Tail records not replayed because a block they name never reached stable storage.
    pub tail_dropped: u64,
    /// Segments sealed by a replayed record that was not synced: their data and summary
    /// were checked, but the parity of their last rows may not have reached the members.
    /// Serving read-write rewrites it, as for segments adopted open.
    pub unsynced_seals: Vec<u64>,
    /// The CRC32C of each live block of a segment adopted open, by physical slot, where a
    /// replayed record named it (those written before the checkpoint have none): such a
    /// segment has no summary, and without these its blocks could not be verified until GC
    /// moved them.
    pub adopted_crcs: HashMap<u64, u32>,
    /// Recovery started from a checkpoint written at a clean stop and replayed nothing
    /// after it that changed the map (the stop's restated CRCs change nothing): every row
    /// of every adopted segment already has its parity.
    pub parity_whole: bool,
    /// Metadata members whose copy of the checkpoint recovery started from is not whole,
    /// each as "PATH slot N: why": the map was found on another copy.
    pub checkpoint_copies_lost: Vec<String>,
}

impl Recovered {
    /// In-place RAID: no map, checkpoint or journal to recover, only the scheme.
    fn in_place(scheme: ArrayScheme) -> Recovered {
        Recovered {
            scheme,
            ring: Ring::new(0, 0, 1),
            checkpoint_seq: 0,
            next_slot: 0,
            records_replayed: 0,
            changes_replayed: 0,
            tail_dropped: 0,
            unsynced_seals: Vec::new(),
            adopted_crcs: HashMap::new(),
            parity_whole: true,
            checkpoint_copies_lost: Vec::new(),
        }
    }
}

/// Load the newest whole checkpoint and roll the journal forward over it.
pub fn recover(o: &Opened) -> Result<Recovered, RecoverError> {
    let sb = &o.sb;
    let spec = sb.array_spec();
    let scheme = spec.build().map_err(ImpossibleGeometry)?;
    if scheme.volume_blocks() != sb.volume_blocks {
        return Err(RecoverError::VolumeMismatch { recorded: sb.volume_blocks, built: scheme.volume_blocks() });
    }
    let cfg = match &scheme {
        ArrayScheme::InPlace(_) => return Ok(Recovered::in_place(scheme)),
        ArrayScheme::Log(la) => la.config().clone(),
    };
    // The recovered map becomes the array's own; do not hold an empty one beside it.
    drop(scheme);
    let geo = cfg.geometry;
    let segments = geo.segments();
    let slots = segments * u64::from(geo.data_slots);
    // A failed metadata member's copies are stale: only the healthy ones count.
    let meta: Vec<&Member> =
        (0..sb.meta_members()).filter(|&m| o.members.is_healthy(m)).map(|m| &o.members[m as usize]).collect();
    let Newest { header, mut map, mut seqs, slot, copies_lost: checkpoint_copies_lost } =
        newest_checkpoint(&meta, sb, segments, slots)?;
    let (chain, end) = longest_chain(&meta, sb, &header)?;
    // Records up to the last synced one name only durable data. After it comes the tail,
    // written before its data was synced: replay it while every block it names holds what
    // was written there, and stop at the first that does not (that write never reached
    // stable storage, and nothing after it was acknowledged as durable either).
    let trusted = chain.iter().rposition(|r| r.synced).map_or(0, |i| i + 1);
    let mut named: HashMap<u64, (u64, u32)> = HashMap::new();
    let mut unsynced_seals = Vec::new();
    let mut changes = 0u64;
    let mut kept = 0usize;
    // Whether a replayed record changed anything (a clean stop's restated CRCs do not).
    let mut moved = false;
    for (i, record) in chain.iter().enumerate() {
        if i >= trusted && !tail_record_landed(o, &geo, record)? {
            break;
        }
        for &(c, crc) in &record.entries {
            match c {
                MapChange::Map { lba, pba } if lba < map.len() && (pba < slots || pba == UNMAPPED) => {
                    moved |= map.get(lba) != pba;
                    map.set(lba, pba);
                    if pba != UNMAPPED {
                        named.insert(pba, (lba, crc));
                    }
                }
                MapChange::Sealed { segment, seq } if segment < segments => {
                    moved |= seqs[segment as usize] != seq;
                    seqs[segment as usize] = seq;
                    if i >= trusted && seq != 0 {
                        unsynced_seals.push(segment);
                    }
                }
                other => return Err(RecoverError::JournalEntry(other)),
            }
            changes += 1;
        }
        kept += 1;
    }
    let tail_dropped = chain.len() - kept;
    let mut restored = LogArray::restore(cfg, map, &seqs).map_err(RecoverError::Inconsistent)?;
    restored.enable_change_log();
    let adopted_crcs = adopted_crcs(&restored, named);
    Ok(Recovered {
        scheme: restored.into(),
        ring: Ring::new(sb.journal_blocks, end.0, end.1),
        checkpoint_seq: header.seq,
        next_slot: 1 - slot,
        records_replayed: kept as u64,
        changes_replayed: changes,
        tail_dropped: tail_dropped as u64,
        unsynced_seals,
        adopted_crcs,
        parity_whole: header.parity_whole && !moved,
        checkpoint_copies_lost,
    })
}

/// The checkpoint recovery starts from: its header, map and seal numbers, its slot, and the
/// metadata members whose copy of it is not whole ([`Recovered::checkpoint_copies_lost`]).
struct Newest {
    header: checkpoint::Header,
    map: PackedMap,
    seqs: Vec<u64>,
    slot: u32,
    copies_lost: Vec<String>,
}

/// The newest checkpoint that is whole on any copy in `meta`, and its slot: headers first (a
/// block each), then bodies newest first until one passes its checksum, so only one map is
/// read and held.
fn newest_checkpoint(meta: &[&Member], sb: &Superblock, segments: u64, slots: u64) -> Result<Newest, RecoverError> {
    let mut candidates = Vec::new();
    let mut tried = Vec::new();
    for &m in meta {
        for slot in 0..2 {
            match checkpoint::read_header(m, sb.checkpoint_slot(slot), &sb.uuid, sb.volume_blocks, segments) {
                Ok(h) => candidates.push((h, m, slot)),
                Err(e) => tried.push((m.path().to_path_buf(), slot, e)),
            }
        }
    }
    candidates.sort_by_key(|c| std::cmp::Reverse(c.0.seq));
    for (i, &(h, m, slot)) in candidates.iter().enumerate() {
        match checkpoint::read_body(m, sb.checkpoint_slot(slot), &h, slots) {
            Ok((map, seqs)) => {
                let whole_on: Vec<&Member> =
                    candidates[i..].iter().filter(|c| c.0.seq == h.seq && c.2 == slot).map(|c| c.1).collect();
                let missing = missing_copies(meta, &whole_on, &tried, slot, h.seq);
                return Ok(Newest { header: h, map, seqs, slot, copies_lost: missing });
            }
            Err(e) => tried.push((m.path().to_path_buf(), slot, e)),
        }
    }
    Err(RecoverError::NoCheckpoint { tried })
}

/// The metadata members whose copy of the checkpoint recovery started from (sequence `seq`,
/// in `slot`) is not whole, each with why: the array then holds its map in fewer copies
/// than it was made with, until the next checkpoints rewrite them. `whole_on`: the members
/// whose header is that checkpoint's (their body is read only if the first one fails).
fn missing_copies(
    meta: &[&Member],
    whole_on: &[&Member],
    tried: &[(std::path::PathBuf, u32, CheckpointError)],
    slot: u32,
    seq: u64,
) -> Vec<String> {
    meta.iter()
        .filter(|m| !whole_on.iter().any(|w| std::ptr::eq(*w, **m)))
        .map(|m| {
            let why = tried
                .iter()
                .find(|(p, s, _)| p == m.path() && *s == slot)
                .map_or_else(|| "an older checkpoint".to_string(), |(_, _, e)| e.to_string());
            format!(
                "{} slot {slot}: {why} (the newest checkpoint, {seq}, is whole on the other copy)",
                m.path().display()
            )
        })
        .collect()
}

/// The longest valid chain of journal records after `header` on any copy in `meta`, and
/// where the next record goes. A synced record was made durable on every copy before its
/// flush was acknowledged, so any whole chain is a true prefix. The journal continues after
/// the whole chain, dropped tail included, so new records' sequence numbers never meet a
/// stale one.
fn longest_chain(meta: &[&Member], sb: &Superblock, header: &checkpoint::Header) -> Result<Chain, RecoverError> {
    let mut chain: Vec<journal::Record> = Vec::new();
    let mut end = (header.journal_pos, header.journal_seq);
    for &m in meta {
        let (records, at) = scan_journal(m, sb, header.journal_pos, header.journal_seq)?;
        if records.len() > chain.len() {
            chain = records;
            end = at;
        }
    }
    Ok((chain, end))
}

/// Whether every block an unsynced `record` names holds what was written there, and every
/// segment it seals has its summary on the members (GC reads it back as the segment's P2L).
fn tail_record_landed(o: &Opened, geo: &Geometry, record: &journal::Record) -> Result<bool, RecoverError> {
    let (segments, slots) = (geo.segments(), geo.segments() * u64::from(geo.data_slots));
    let mut block = vec![0u8; BLOCK];
    let mut summary_buf = Vec::new();
    for &(c, crc) in &record.entries {
        let landed = match c {
            MapChange::Map { pba, .. } if pba != UNMAPPED && pba < slots => {
                let (seg, slot) = geo.split_pba(pba);
                let (member, at) = geo.slot_location(seg, slot);
                o.members.read(member, at, &mut block).map_err(|e| e.into_member_error(&o.members, member, at, 1))?;
                crc32c::crc32c(&block) == crc
            }
            MapChange::Sealed { segment, seq } if segment < segments && seq != 0 => {
                crate::summaries::read_sealed(&o.members, geo, segment, seq, &mut summary_buf).is_some()
            }
            _ => true,
        };
        if !landed {
            return Ok(false);
        }
    }
    Ok(true)
}

/// The CRC32C of each live block of a segment adopted open, by slot, from `named` (slot →
/// the logical block and CRC of the last replayed entry naming it).
fn adopted_crcs(restored: &LogArray, named: HashMap<u64, (u64, u32)>) -> HashMap<u64, u32> {
    let geo = restored.geometry();
    let segs = restored.segments();
    named
        .into_iter()
        .filter(|&(pba, (lba, _))| {
            let (seg, _) = geo.split_pba(pba);
            segs.seq(seg) == 0 && restored.l2p().get(lba) == pba
        })
        .map(|(pba, (_, crc))| (pba, crc))
        .collect()
}

/// The records found, and the (position, sequence number) where the next one goes.
type Chain = (Vec<journal::Record>, (u64, u64));

/// Read records from `pos`/`seq` while each is whole and next in sequence.
fn scan_journal(m: &Member, sb: &Superblock, mut pos: u64, mut seq: u64) -> Result<Chain, RecoverError> {
    let ring = sb.journal_blocks;
    let base = sb.journal_start();
    let mut out = Vec::new();
    let mut first = vec![0u8; BLOCK];
    let mut wrapped_here = false;
    loop {
        if pos >= ring {
            pos = 0;
        }
        m.read(base + pos, &mut first).map_err(RecoverError::Journal)?;
        let head = journal::head(&first).filter(|h| h.seq == seq && pos + u64::from(h.blocks) <= ring);
        let Some(h) = head else {
            // The writer starts a record at the ring's start when it does not fit before
            // the end; look there once.
            if pos != 0 && !wrapped_here {
                wrapped_here = true;
                let saved = pos;
                pos = 0;
                m.read(base, &mut first).map_err(RecoverError::Journal)?;
                if journal::head(&first).is_some_and(|h| h.seq == seq) {
                    continue;
                }
                pos = saved;
            }
            break;
        };
        let mut rec = vec![0u8; h.blocks as usize * BLOCK];
        m.read(base + pos, &mut rec).map_err(RecoverError::Journal)?;
        let Some(record) = journal::decode(&sb.uuid, &rec) else {
            break; // torn: the batch that wrote it was never acknowledged
        };
        out.push(record);
        pos += u64::from(h.blocks);
        seq += 1;
        wrapped_here = false;
    }
    Ok((out, (pos, seq)))
}
