//! The running parity of stripe rows still filling.
//!
//! A log-structured segment's stripe row fills over many requests and gets its parity when
//! its last data block is written; until then the engine holds the row's XOR here. A failed
//! member's block in such a row is that XOR less the row's other blocks written so far, so
//! nothing acknowledged in an open row is lost. In-place RAID's read-modify-write uses the
//! same accumulator within one plan.

use crate::member::BLOCK;
use crate::parity::xor;
use std::collections::HashMap;

/// An open stripe row: the XOR of the data written into it so far, and by which members.
#[derive(Debug)]
pub(super) struct OpenRow {
    pub xor: Vec<u8>,
    pub written: Vec<u32>,
}

/// Every open row, keyed (parity group, row's block on the members).
#[derive(Debug, Default)]
pub(super) struct OpenRows {
    rows: HashMap<(u32, u64), OpenRow>,
}

impl OpenRows {
    /// `data` was written by `member` at row `block` of parity `group`; `old` is what it
    /// overwrote (in-place read-modify-write), which leaves the parity.
    pub fn add(&mut self, group: u32, block: u64, member: u32, data: &[u8], old: Option<&[u8]>) {
        let row =
            self.rows.entry((group, block)).or_insert_with(|| OpenRow { xor: vec![0u8; BLOCK], written: Vec::new() });
        xor(&mut row.xor, data);
        if !row.written.contains(&member) {
            row.written.push(member);
        }
        if let Some(old) = old {
            xor(&mut row.xor, old);
        }
    }

    /// The row's parity, now that it is written: it is open no more.
    pub fn close(&mut self, group: u32, block: u64) -> Vec<u8> {
        self.rows.remove(&(group, block)).map_or_else(|| vec![0u8; BLOCK], |r| r.xor)
    }

    /// The open row at `block` of parity `group`, if it is open.
    pub fn get(&self, group: u32, block: u64) -> Option<&OpenRow> {
        self.rows.get(&(group, block))
    }

    pub fn is_empty(&self) -> bool {
        self.rows.is_empty()
    }

    /// Every open row, in no particular order: callers sort what they derive.
    pub fn iter(&self) -> impl Iterator<Item = (u32, u64, &OpenRow)> {
        self.rows.iter().map(|(&(g, b), r)| (g, b, r))
    }
}
