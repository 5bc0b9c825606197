//! The buffer of a gathered run, its bytes starting on a 4096-byte boundary.
//!
//! An O_DIRECT member wants aligned memory; a run in an ordinary `Vec` (malloc aligns to 16
//! bytes) is bounced through an aligned copy on the I/O thread first, which was about a
//! seventh of the server's CPU at 128 KiB sequential writes. Safe code cannot ask the
//! allocator for alignment, so the buffer starts with up to 4095 bytes of padding.

use std::ops::Range;

use crate::member::{gap_to_boundary, BLOCK};

pub(super) struct RunBuf {
    vec: Vec<u8>,
    /// Where the run's bytes start in `vec`: its first 4096-byte boundary.
    start: usize,
}

impl RunBuf {
    /// An empty run with room for `bytes` without moving (so its bytes stay aligned).
    pub fn with_capacity(bytes: usize) -> RunBuf {
        RunBuf::from_vec(Vec::with_capacity(bytes + BLOCK))
    }

    /// An empty run over `vec`'s allocation.
    pub fn from_vec(vec: Vec<u8>) -> RunBuf {
        let mut run = RunBuf { vec, start: 0 };
        run.clear();
        run
    }

    pub fn clear(&mut self) {
        self.vec.clear();
        self.start = gap_to_boundary(self.vec.as_ptr());
        self.vec.resize(self.start, 0);
    }

    pub fn len(&self) -> usize {
        self.vec.len() - self.start
    }

    pub fn capacity(&self) -> usize {
        self.vec.capacity() - self.start
    }

    /// Append `bytes`. Past the capacity the buffer moves and its bytes may lose their
    /// alignment: still correct, written through the member's bounce buffer.
    pub fn extend(&mut self, bytes: &[u8]) {
        self.vec.extend_from_slice(bytes);
    }

    pub fn bytes(&self) -> &[u8] {
        &self.vec[self.start..]
    }

    /// The whole buffer and where the run's bytes lie in it, to hand to another thread.
    pub fn into_parts(self) -> (Vec<u8>, Range<usize>) {
        let range = self.start..self.vec.len();
        (self.vec, range)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_run_starts_aligned_and_stays_so_within_its_capacity() {
        for _ in 0..8 {
            let mut run = RunBuf::with_capacity(64 << 10);
            assert_eq!(run.bytes().as_ptr() as usize % BLOCK, 0);
            assert_eq!(run.len(), 0);
            assert!(run.capacity() >= 64 << 10);
            for k in 0..16u8 {
                run.extend(&[k; BLOCK]);
            }
            assert_eq!(run.bytes().as_ptr() as usize % BLOCK, 0);
            assert_eq!(run.len(), 64 << 10);
            assert!(run.bytes().chunks(BLOCK).enumerate().all(|(k, b)| b.iter().all(|&x| x == k as u8)));
            let (vec, range) = run.into_parts();
            assert_eq!(range.len(), 64 << 10);
            assert_eq!(vec[range.start..].as_ptr() as usize % BLOCK, 0);
            let again = RunBuf::from_vec(vec);
            assert_eq!((again.len(), again.bytes().as_ptr() as usize % BLOCK), (0, 0));
        }
    }

    #[test]
    fn a_run_past_its_capacity_keeps_its_bytes() {
        let mut run = RunBuf::with_capacity(BLOCK);
        let data: Vec<u8> = (0..5 * BLOCK).map(|i| (i % 251) as u8).collect();
        for piece in data.chunks(BLOCK) {
            run.extend(piece);
        }
        assert_eq!(run.bytes(), &data[..]);
    }
}
