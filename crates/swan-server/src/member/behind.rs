//! Write-behind in large ranges: a log's written bytes gathered until a range is worth one
//! `sync_file_range`.
//!
//! Starting the writeback of every run as it is written makes a bio, and on a virtual disk a
//! notification, per 64 KiB run; the kernel's flusher writes megabytes at a time
//! (docs/server-speed.md has the measurement). A log writes each member in ascending order, so its runs join into one range.

/// Bytes gathered before their writeback is started.
pub const BEHIND_BYTES: u64 = 1 << 20;

/// Written bytes whose writeback is not started yet: `start..end` of one member.
#[derive(Debug, Default)]
pub struct Behind {
    start: u64,
    end: u64,
}

impl Behind {
    /// Note `len` bytes written at `offset`; returns the ranges (offset, length) whose
    /// writeback should start now: the gathered range once it reaches [`BEHIND_BYTES`],
    /// and a range left behind when a write does not join it (a new lap of the log, or
    /// runs of another part of the member).
    pub fn add(&mut self, offset: u64, len: u64) -> [Option<(u64, u64)>; 2] {
        let end = offset + len;
        let mut due = [None, None];
        if self.end > self.start && offset <= self.end && end >= self.start {
            self.start = self.start.min(offset);
            self.end = self.end.max(end);
        } else {
            if self.end > self.start {
                due[0] = Some((self.start, self.end - self.start));
            }
            (self.start, self.end) = (offset, end);
        }
        if self.end - self.start >= BEHIND_BYTES {
            due[1] = Some((self.start, self.end - self.start));
            (self.start, self.end) = (0, 0);
        }
        due
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn ascending_runs_join_until_a_range_is_due() {
        let mut b = Behind::default();
        let run = 64 << 10;
        for i in 0..15 {
            assert_eq!(b.add(i * run, run), [None, None], "run {i}");
        }
        assert_eq!(b.add(15 * run, run), [None, Some((0, BEHIND_BYTES))]);
        // Gathering starts again after the range went out.
        assert_eq!(b.add(16 * run, run), [None, None]);
    }

    #[test]
    fn runs_out_of_order_or_overlapping_join() {
        let mut b = Behind::default();
        assert_eq!(b.add(8192, 4096), [None, None]);
        assert_eq!(b.add(4096, 4096), [None, None]);
        assert_eq!(b.add(4096, 8192), [None, None]);
        assert_eq!(b.add(0, BEHIND_BYTES), [None, Some((0, BEHIND_BYTES))]);
    }

    #[test]
    fn a_write_elsewhere_starts_what_was_gathered() {
        let mut b = Behind::default();
        assert_eq!(b.add(1 << 30, 8192), [None, None]);
        assert_eq!(b.add(0, 4096), [Some((1 << 30, 8192)), None]);
        assert_eq!(b.add(4096, 4096), [None, None]);
    }

    #[test]
    fn one_large_write_is_due_at_once() {
        let mut b = Behind::default();
        assert_eq!(b.add(0, 4 << 20), [None, Some((0, 4 << 20))]);
    }
}
