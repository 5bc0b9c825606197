//! What makes the map durable: the journal's records and the checkpoints of the whole map.
//!
//! After every batch of requests one *tail* record with their map changes (and a CRC of
//! every block they name) is written, not synced, before their replies go out: a server
//! killed at any moment loses no acknowledged write, since the page cache outlives the
//! process. A FLUSH, or a FUA write, waits for the next *sync point*: fdatasync on every
//! member, then a *synced* record, made durable on the metadata members. A checkpoint holds
//! the whole map; one is written when the ring is half full, and the journal starts again
//! after it (FORMAT.md).
//!
//! Once an error may have cost durability (a failed sync, data write or journal write),
//! [`Durability::lost`] says why, and nothing may claim durability again until a restart
//! recovers what is durable: a sync that failed cannot be retried, since Linux marks the
//! pages of a failed writeback clean and a later fdatasync succeeds without their data.
//! The one exception is a write refused because a member's file system is full
//! ([`Durability::full`]): nothing was written back and lost, so once space returns the
//! engine recovers what is durable in-process and goes on ([`super::resume`]).

use super::error::EngineError;
use super::full_stop::FullStop;
use super::member_io::MemberIo;
use crate::checkpoint::{self, CheckpointError};
use crate::journal::{self, Ring};
use crate::member::{Member, MemberError, Op, BLOCK};
use crate::members::Health;
use std::path::PathBuf;
use swan_core::scheme::{CheckpointImage, MapChange};

/// The journal's newest record while it is an unsynced tail record of one block.
struct OpenTail {
    /// Its block in the ring.
    at: u64,
    seq: u64,
    entries: Vec<journal::Entry>,
}

/// What [`Durability::append`] did.
#[must_use]
pub(super) enum Appended {
    Written,
    /// The ring has no room (or a checkpoint is due): the caller syncs and checkpoints
    /// instead, which covers everything the record would have.
    CheckpointInstead,
}

pub(super) struct Durability {
    ring: Ring,
    checkpoint_seq: u64,
    /// The checkpoint slot the next checkpoint goes to.
    next_slot: u32,
    /// Changes not journaled yet, with the CRC of the block each maps.
    pub pending: Vec<journal::Entry>,
    /// Tail records written since the last synced one.
    tail_records: bool,
    /// The last tail record, while it is one block and the newest record: the next batch's
    /// entries are added to it and its block rewritten, rather than a block per batch.
    open_tail: Option<OpenTail>,
    /// Set by the first error that may have cost durability: from then on every FLUSH and
    /// FUA write fails, until a restart recovers what is durable.
    pub lost: Option<String>,
    /// Set with `lost` while every error that ended durability was a write that found a
    /// member's file system full: then the array may resume by itself once space returns.
    /// Cleared for good by any other error.
    pub full: Option<FullStop>,
    /// From the moment a full file system ends durability, writes are refused (ENOSPC)
    /// rather than acknowledged: the recovery that resumes the array would drop them.
    pub refusing_writes: bool,
    /// Writes since the last sync point.
    pub dirty: bool,
    /// Checkpoint after this many journal records (0: only when the ring is half full).
    pub checkpoint_every: u64,
    records_since_checkpoint: u64,
    pub sync_points: u64,
    pub journal_records: u64,
    pub checkpoints: u64,
}

impl Durability {
    pub fn new(ring: Ring, checkpoint_seq: u64, next_slot: u32) -> Durability {
        Durability {
            ring,
            checkpoint_seq,
            next_slot,
            pending: Vec::new(),
            tail_records: false,
            open_tail: None,
            lost: None,
            full: None,
            refusing_writes: false,
            dirty: false,
            checkpoint_every: 0,
            records_since_checkpoint: 0,
            sync_points: 0,
            journal_records: 0,
            checkpoints: 0,
        }
    }

    /// The first reason durability is lost, kept (later ones follow from it). A cause
    /// other than a full file system: only a restart recovers from it.
    pub fn lose(&mut self, why: impl FnOnce() -> String) {
        self.lost.get_or_insert_with(why);
        self.full = None;
    }

    /// Durability lost because writes found a member's file system full, at `places`
    /// (member path, operation). Resumable once space returns, unless something else
    /// ended durability first or ends it later.
    pub fn lose_to_full(&mut self, places: Vec<(PathBuf, Op)>, why: impl FnOnce() -> String) {
        self.refusing_writes = true;
        match (&self.lost, &mut self.full) {
            (None, _) => {
                self.lost = Some(why());
                self.full = Some(FullStop::new(places));
            }
            (Some(_), Some(stop)) => stop.add(places),
            (Some(_), None) => {}
        }
    }

    /// Durability lost to a member error: resumable if the member's file system was full.
    pub fn lose_to(&mut self, e: &MemberError) {
        if e.is_full() {
            self.lose_to_full(vec![(e.path().to_path_buf(), e.op())], || e.to_string());
        } else {
            self.lose(|| e.to_string());
        }
    }

    /// Durability lost to an engine error. One that only reports the loss already known
    /// adds no cause of its own.
    pub fn lose_to_engine(&mut self, e: &EngineError) {
        match e {
            EngineError::LostEarlier { .. } | EngineError::DurabilityLost { .. } | EngineError::NoCheckpoint { .. }
                if self.lost.is_some() => {}
            EngineError::Member(m) | EngineError::Checkpoint(CheckpointError::Member(m)) => self.lose_to(m),
            e => self.lose(|| e.to_string()),
        }
    }

    /// Whether anything was journaled unsynced since the last synced record.
    pub fn has_tail(&self) -> bool {
        self.tail_records
    }

    /// A sync point made everything durable: the tail records are covered.
    pub fn synced(&mut self) {
        self.sync_points += 1;
        self.dirty = false;
    }

    /// Append pending changes as records; a synced one is made durable on the metadata
    /// members.
    ///
    /// A batch's tail entries join the open tail record while it still fits one block: the
    /// block is written again whole, with the same sequence number and more entries. A
    /// batch of a few requests so costs its entries (16 bytes each), not a block of the
    /// ring, and checkpoints (which sync every member) come hundreds of times less often.
    /// Rewriting is safe because only an unsynced record at the head of the journal is
    /// rewritten: a torn rewrite (power loss) ends the replay at a record that no synced
    /// record follows, and after a kill -9 the page cache holds the last whole version.
    ///
    /// Only the first `upto` pending changes are appended; the rest stay queued.
    pub fn append(&mut self, io: &mut MemberIo, synced: bool, upto: usize) -> Result<Appended, MemberError> {
        let rest = self.pending.split_off(upto.min(self.pending.len()));
        let pending = std::mem::replace(&mut self.pending, rest);
        let uuid = io.sb.uuid;
        if !synced && !pending.is_empty() {
            if let Some(tail) =
                self.open_tail.as_mut().filter(|t| t.entries.len() + pending.len() <= journal::BLOCK_ENTRIES)
            {
                tail.entries.extend_from_slice(&pending);
                let record = journal::encode(&uuid, tail.seq, false, &tail.entries);
                let at = tail.at;
                write_record(io, at, &record)?;
                // Counted as a record for `checkpoint_every`, which spaces checkpoints by
                // journal writes in the crash tests.
                self.records_since_checkpoint += 1;
                self.tail_records = true;
                return Ok(Appended::Written);
            }
        }
        self.open_tail = None;
        let mut chunks: Vec<&[journal::Entry]> = pending.chunks(journal::MAX_ENTRIES).collect();
        if chunks.is_empty() {
            chunks.push(&[]); // a synced marker with no changes of its own
        }
        for chunk in chunks {
            let seq = self.ring.next_seq;
            let record = journal::encode(&uuid, seq, synced, chunk);
            let blocks = (record.len() / BLOCK) as u64;
            let due = self.checkpoint_every > 0 && self.records_since_checkpoint >= self.checkpoint_every;
            if !self.ring.has_room(blocks) || due {
                self.tail_records = false;
                return Ok(Appended::CheckpointInstead);
            }
            let at = self.ring.place(blocks);
            write_record(io, at, &record)?;
            self.journal_records += 1;
            self.records_since_checkpoint += 1;
            self.open_tail = (!synced && blocks == 1).then(|| OpenTail { at, seq, entries: chunk.to_vec() });
        }
        if synced {
            for m in 0..io.sb.meta_members() {
                io.sync(m)?;
            }
            self.tail_records = false;
        } else {
            self.tail_records = true;
        }
        Ok(Appended::Written)
    }

    /// Write the whole map of `image` to the next checkpoint slot (`parity_whole`: every row of
    /// every open segment has its parity on the members). Everything the map names must be
    /// durable already; the journal starts again after it.
    pub fn checkpoint(
        &mut self,
        io: &MemberIo,
        image: &CheckpointImage<'_>,
        parity_whole: bool,
    ) -> Result<(), CheckpointError> {
        io.mark("checkpoint-start");
        let header = checkpoint::Header {
            uuid: io.sb.uuid,
            seq: self.checkpoint_seq + 1,
            journal_pos: self.ring.pos,
            journal_seq: self.ring.next_seq,
            volume_blocks: 0,
            segments: 0,
            body_crc: 0,
            parity_whole,
        };
        // A failed copy is stale and never read; a copy being rebuilt is written as usual.
        let copies: Vec<&Member> = (0..io.sb.meta_members())
            .filter(|&m| io.members.health(m) != Health::Failed)
            .map(|m| &io.members[m as usize])
            .collect();
        checkpoint::write(
            &copies,
            io.sb.checkpoint_slot(self.next_slot),
            io.sb.checkpoint_blocks,
            header,
            image.l2p,
            &image.seqs,
        )?;
        io.mark("checkpoint-end");
        self.checkpoint_seq += 1;
        self.next_slot ^= 1;
        self.ring.checkpointed();
        self.open_tail = None;
        self.records_since_checkpoint = 0;
        self.checkpoints += 1;
        Ok(())
    }

    pub fn checkpoint_seq(&self) -> u64 {
        self.checkpoint_seq
    }

    /// The changes are covered without a record (a checkpoint follows, or the scheme has no
    /// journal).
    pub fn forget_pending(&mut self) {
        self.pending.clear();
    }

    /// Queue a change for the next record, with the CRC of the block it maps.
    pub fn push(&mut self, change: MapChange, crc: u32) {
        self.pending.push((change, crc));
    }
}

/// Write a journal record at block `at` of the ring, on every metadata member.
///
/// Through the page cache even on O_DIRECT members: a record is written after every batch,
/// before its replies, and only a sync point makes it durable, so waiting for the device
/// would only stall the batch.
fn write_record(io: &mut MemberIo, at: u64, record: &[u8]) -> Result<(), MemberError> {
    let start = io.sb.journal_start();
    for m in 0..io.sb.meta_members() {
        io.write_cached(m, start + at, record)?;
    }
    Ok(())
}
