//! Each member SSD's I/O as the array sent it, recorded and replayed on one SSD alone: how
//! SWAN's authors measured Fig. 12 (they traced each SSD of SWAN0 and RAID0 under fio and
//! replayed every per-SSD trace on an open-channel SSD).
//!
//! - [`MemberIoSink`]: where the engine hands every member operation it submits, with its
//!   time ([`crate::engine::Engine::record_member_io`]); the engine itself writes nothing.
//! - [`TraceFiles`]: a sink writing one blkparse text file per member
//!   (`ssdN.blkparse.gz`): reads, writes, discards (the array's TRIMs) and flushes, as
//!   blktrace would have seen them issued to the device, each with its issuer in blkparse's
//!   process field: `[user]` for a user request's I/O, `[gc]` for the array's GC (and
//!   other background work). `swan sim --trace` replays such a file over an array (it
//!   passes over the discards, which carry no data).
//! - [`replay`]: one member's trace replayed open loop, at its recorded times, on one SSD
//!   model started as that member was, discards carried out; each read's and write's
//!   latency split into service (its own work on the SSD idle) and queueing (the rest), and
//!   told apart by issuer.
//!
//! A trace carries no priority: replayed, SWAN's reads no longer overtake its array GC on
//! the SSD, as they do in the array (read priority), which a blktrace replay cannot show
//! either.

mod replay;
#[cfg(test)]
mod tests;

pub use replay::{member_ssd, replay, replay_lines, ByIssuer, MemberReplay, ReplayError, Split};

use flate2::write::GzEncoder;
use flate2::Compression;
use std::fs::File;
use std::io::{self, BufWriter, Write};
use std::path::{Path, PathBuf};
use swan_core::BLOCK_BYTES;
use swan_models::{DevOp, DevOpKind, IoClass, Nanos};

/// Where the engine hands each member operation as it submits it.
pub trait MemberIoSink {
    /// `op` was submitted to member `member` at `at`.
    fn record(&mut self, at: Nanos, member: u32, op: &DevOp);
    /// The run is over: write out what is kept. An error fails the run.
    fn finish(&mut self) -> Result<(), RecordError>;
}

/// A member's trace could not be written: the first write that failed.
#[derive(Debug, thiserror::Error)]
#[error("writing {}: {source}", path.display())]
pub struct RecordError {
    pub path: PathBuf,
    #[source]
    pub source: io::Error,
}

/// Member `member`'s trace in `dir`.
pub fn trace_path(dir: &Path, member: u32) -> PathBuf {
    dir.join(format!("ssd{member}.blkparse.gz"))
}

/// The end of a line the array's GC issued.
const GC_ISSUER: &str = " [gc]\n";

/// Sectors per 4 KiB block.
const SECTORS: u64 = BLOCK_BYTES / crate::trace::SECTOR_BYTES;

/// Bytes of a member's lines gathered before they go to its compressor.
const CHUNK: usize = 1 << 16;

/// Appends `v` in decimal, at least `width` digits (zero-padded).
fn push_u64(out: &mut Vec<u8>, mut v: u64, width: usize) {
    let mut digits = [0u8; 20];
    let mut n = 0;
    while v > 0 || n < width.max(1) {
        digits[n] = b'0' + (v % 10) as u8;
        v /= 10;
        n += 1;
    }
    out.extend(digits[..n].iter().rev());
}

/// One blkparse line: `op` issued (action `D`) to member `member` at `at`, its `seq`-th:
/// `8,MINOR 0 SEQ SEC.NSEC 0 D RWBS SECTOR + SECTORS [ISSUER]`, the member as device
/// `8,16·member` (sda, sdb, …); RWBS `R`, `W`, `D` (discard) or `F` (flush, `0 + 0`);
/// ISSUER `gc` for `op.class` [`IoClass::Gc`], `user` otherwise.
pub fn push_line(out: &mut Vec<u8>, at: Nanos, member: u32, seq: u64, op: &DevOp) {
    out.extend_from_slice(b"8,");
    push_u64(out, u64::from(member) * 16, 1);
    out.extend_from_slice(b" 0 ");
    push_u64(out, seq, 1);
    out.push(b' ');
    push_u64(out, at / 1_000_000_000, 1);
    out.push(b'.');
    push_u64(out, at % 1_000_000_000, 9);
    let (rwbs, sector, sectors) = match op.kind {
        DevOpKind::Read => (b"R", op.block * SECTORS, u64::from(op.count) * SECTORS),
        DevOpKind::Write => (b"W", op.block * SECTORS, u64::from(op.count) * SECTORS),
        DevOpKind::Trim => (b"D", op.block * SECTORS, u64::from(op.count) * SECTORS),
        DevOpKind::Flush => (b"F", 0, 0),
    };
    out.extend_from_slice(b" 0 D ");
    out.extend_from_slice(rwbs);
    out.push(b' ');
    push_u64(out, sector, 1);
    out.extend_from_slice(b" + ");
    push_u64(out, sectors, 1);
    out.extend_from_slice(if op.class == IoClass::Gc { GC_ISSUER.as_bytes() } else { b" [user]\n" });
}

/// One member's trace file being written.
struct Member {
    file: GzEncoder<BufWriter<File>>,
    lines: Vec<u8>,
    seq: u64,
}

/// Writes each member's operations to its own gzipped blkparse file ([`trace_path`]).
pub struct TraceFiles {
    dir: PathBuf,
    members: Vec<Member>,
    /// The first write that failed; the rest are not attempted.
    error: Option<RecordError>,
}

impl TraceFiles {
    /// Creates `dir` and one trace file per member.
    pub fn create(dir: &Path, members: u32) -> io::Result<Self> {
        std::fs::create_dir_all(dir)?;
        let members = (0..members)
            .map(|m| {
                let f = File::create(trace_path(dir, m))?;
                // Fast compression: the traces are written once, at run speed.
                let file = GzEncoder::new(BufWriter::with_capacity(1 << 16, f), Compression::fast());
                Ok(Member { file, lines: Vec::with_capacity(CHUNK + 128), seq: 0 })
            })
            .collect::<io::Result<Vec<_>>>()?;
        Ok(TraceFiles { dir: dir.to_path_buf(), members, error: None })
    }

    fn fail(&mut self, member: usize, source: io::Error) {
        if self.error.is_none() {
            self.error = Some(RecordError { path: trace_path(&self.dir, member as u32), source });
        }
    }
}

impl MemberIoSink for TraceFiles {
    fn record(&mut self, at: Nanos, member: u32, op: &DevOp) {
        if self.error.is_some() {
            return;
        }
        let i = member as usize;
        let m = &mut self.members[i];
        m.seq += 1;
        push_line(&mut m.lines, at, member, m.seq, op);
        if m.lines.len() >= CHUNK {
            let r = m.file.write_all(&m.lines);
            m.lines.clear();
            if let Err(e) = r {
                self.fail(i, e);
            }
        }
    }

    fn finish(&mut self) -> Result<(), RecordError> {
        for i in 0..self.members.len() {
            let m = &mut self.members[i];
            let r =
                m.file.write_all(&m.lines).and_then(|()| m.file.try_finish()).and_then(|()| m.file.get_mut().flush());
            m.lines.clear();
            if let Err(e) = r {
                self.fail(i, e);
            }
        }
        self.error.take().map_or(Ok(()), Err)
    }
}
