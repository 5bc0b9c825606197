//! One recorded request as a line of blkparse's default text output, and the file those
//! lines go to, laid out so that a crash leaves whole lines only.
//!
//! blkparse's line is `maj,min cpu seq sec.nsec pid action RWBS sector + nsectors [process]`.
//! swan writes action `D` (issued to the device: here the server is the device), device
//! `0,0`, CPU 0 and pid 0, and spells RWBS as the kernel's `blk_fill_rwbs` does: `R` read,
//! `W` write (`WF` with FUA), `F` flush, `D` discard (NBD TRIM), `N` any other operation (NBD
//! WRITE_ZEROES, which carries no data). The process field names the NBD command, so a reader
//! can tell a write-zeroes from other `N`s. swan's blkparse reader replays `R` and `W` lines
//! and passes over the others.

use std::io::{self, Write};

/// The operations a trace line can carry.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum RecordedOp {
    Read,
    Write,
    Flush,
    Trim,
    WriteZeroes,
}

impl RecordedOp {
    pub const ALL: [RecordedOp; 5] =
        [RecordedOp::Read, RecordedOp::Write, RecordedOp::Flush, RecordedOp::Trim, RecordedOp::WriteZeroes];

    /// The NBD command's name, as the process field carries it.
    pub fn name(self) -> &'static str {
        match self {
            RecordedOp::Read => "read",
            RecordedOp::Write => "write",
            RecordedOp::Flush => "flush",
            RecordedOp::Trim => "trim",
            RecordedOp::WriteZeroes => "write_zeroes",
        }
    }

    /// The kernel's RWBS letters for it.
    fn rwbs(self, fua: bool) -> &'static str {
        match (self, fua) {
            (RecordedOp::Read, _) => "R",
            (RecordedOp::Write, false) => "W",
            (RecordedOp::Write, true) => "WF",
            (RecordedOp::Flush, _) => "F",
            (RecordedOp::Trim, _) => "D",
            (RecordedOp::WriteZeroes, _) => "N",
        }
    }

    pub(crate) fn index(self) -> usize {
        self as usize
    }
}

/// One request as the NBD front handed it to the engine.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Recorded {
    /// Arrival, in ns since the recorder started.
    pub time_ns: u64,
    pub op: RecordedOp,
    pub offset_bytes: u64,
    pub len_bytes: u32,
    pub fua: bool,
}

const SECTOR: u64 = 512;

/// Appends the blkparse line for `r`, numbered `seq`, to `out`.
pub fn format_line(out: &mut Vec<u8>, seq: u64, r: &Recorded) {
    let (sec, nsec) = (r.time_ns / 1_000_000_000, r.time_ns % 1_000_000_000);
    // Requests are 4 KiB-aligned (the export's minimum block), so sectors are exact.
    let (sector, sectors) = (r.offset_bytes / SECTOR, u64::from(r.len_bytes) / SECTOR);
    let _ = writeln!(
        out,
        "  0,0    0 {seq:8} {sec:5}.{nsec:09}     0  D {:>3} {sector} + {sectors} [{}]",
        r.op.rwbs(r.fua),
        r.op.name()
    );
}

/// The page the kernel copies a `write` in: a process killed inside a `write` system call
/// stops at a boundary of this size (it checks for a fatal signal before each page).
const PAGE: u64 = 4096;

/// Lines to a writer such that no line crosses a [`PAGE`] boundary of the file: a line that
/// would is preceded by a blank line padding the page (blank lines are passed over by every
/// trace reader). A write cut short by `kill -9` ends at a page boundary, so the file then
/// ends with a whole line. The cost is a few blank bytes per page.
pub struct PageLines<W: Write> {
    out: W,
    offset: u64,
}

impl<W: Write> PageLines<W> {
    pub fn new(out: W) -> Self {
        PageLines { out, offset: 0 }
    }

    /// Appends `line` (ending in `\n`). A line longer than a page (only a long header line
    /// can be) is written as it is.
    pub fn line(&mut self, line: &[u8]) -> io::Result<()> {
        debug_assert!(line.ends_with(b"\n"));
        let len = line.len() as u64;
        let room = PAGE - self.offset % PAGE;
        if len > room && len <= PAGE {
            const BLANKS: [u8; PAGE as usize] = [b' '; PAGE as usize];
            self.out.write_all(&BLANKS[..room as usize - 1])?;
            self.out.write_all(b"\n")?;
            self.offset += room;
        }
        self.out.write_all(line)?;
        self.offset += len;
        Ok(())
    }

    pub fn flush(&mut self) -> io::Result<()> {
        self.out.flush()
    }

    pub fn get_ref(&self) -> &W {
        &self.out
    }

    pub fn into_inner(self) -> W {
        self.out
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn line(r: Recorded) -> String {
        let mut out = Vec::new();
        format_line(&mut out, 7, &r);
        String::from_utf8(out).unwrap()
    }

    #[test]
    fn lines_spell_rwbs_as_the_kernel() {
        let r =
            Recorded { time_ns: 1_234_567_891, op: RecordedOp::Write, offset_bytes: 8192, len_bytes: 4096, fua: true };
        assert_eq!(line(r), "  0,0    0        7     1.234567891     0  D  WF 16 + 8 [write]\n");
        let r = Recorded { time_ns: 5, op: RecordedOp::Read, offset_bytes: 0, len_bytes: 65536, fua: false };
        assert_eq!(line(r), "  0,0    0        7     0.000000005     0  D   R 0 + 128 [read]\n");
        let flush = Recorded { time_ns: 0, op: RecordedOp::Flush, offset_bytes: 0, len_bytes: 0, fua: false };
        assert!(line(flush).contains(" D   F 0 + 0 [flush]"), "{}", line(flush));
        let trim = Recorded { op: RecordedOp::Trim, len_bytes: 4096, ..flush };
        assert!(line(trim).contains(" D   D 0 + 8 [trim]"));
        let zero = Recorded { op: RecordedOp::WriteZeroes, ..trim };
        assert!(line(zero).contains(" D   N 0 + 8 [write_zeroes]"));
    }

    #[test]
    fn no_line_crosses_a_page() {
        let mut lines = PageLines::new(Vec::new());
        let mut n = 0u64;
        for i in 0..5000u64 {
            let r = Recorded {
                time_ns: i * 1_000_003,
                op: RecordedOp::ALL[(i % 5) as usize],
                offset_bytes: (i * 7919 % 100_000) * 4096,
                len_bytes: 4096 << (i % 6),
                fua: i % 3 == 0,
            };
            let mut l = Vec::new();
            format_line(&mut l, i, &r);
            lines.line(&l).unwrap();
            n += 1;
        }
        let bytes = lines.into_inner();
        assert!(bytes.len() > 10 * PAGE as usize, "several pages written");
        for (p, page) in bytes.chunks(PAGE as usize).enumerate() {
            let whole = page.len() < PAGE as usize || page.ends_with(b"\n");
            assert!(whole, "page {p} ends inside a line");
        }
        let text = String::from_utf8(bytes).unwrap();
        assert_eq!(text.lines().filter(|l| !l.trim().is_empty()).count() as u64, n, "padding adds blank lines only");
    }
}
