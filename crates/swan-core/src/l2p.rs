//! The logical-to-physical block map, packed at 5 bytes per entry (4 where that suffices).
//!
//! SWAN keeps "a mapping table from the logical volume to the physical volume (L2P) ...
//! each entry takes up 5 bytes" (§4.1): 0.12 % of capacity. 40 bits address 2^40 blocks
//! (4 PiB of 4 KiB blocks); the all-ones value means "unmapped". An array with fewer than
//! 2^32 − 1 slots (16 TiB of 4 KiB blocks) needs only 32 bits, and [`PackedMap::for_values`]
//! then stores 4 bytes an entry: the map is most of a server's memory, and a fifth less of it
//! is what brings a fully written array under 5 bytes per block all told.
//! The same packed form serves as the reverse (P2L) map of open and sealed segments.
//!
//! Whatever the width in memory, [`PackedMap::encode40`] and [`PackedMap::decode40`] speak
//! the 5-byte form, so the server's checkpoint format does not depend on it.

use thiserror::Error;

/// A 40-bit entry [`PackedMap::decode40`] refused: its value is above the limit it was
/// given (or above what the map can hold).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Error)]
#[error("entry {index} holds {value:#x}, beyond the largest allowed, {limit:#x}")]
pub struct EntryBeyondLimit {
    pub index: u64,
    pub value: u64,
    pub limit: u64,
}

/// The sentinel for "no block here".
pub const UNMAPPED: u64 = (1 << 40) - 1;

/// Bytes of one entry in the 40-bit external form.
pub const ENTRY40_BYTES: usize = 5;

/// A dense array of 40-bit (or 32-bit) entries, all [`UNMAPPED`] initially.
#[derive(Clone, Debug)]
pub struct PackedMap {
    bytes: Vec<u8>,
    len: u64,
    /// Bytes per entry: 5, or 4 when every value the map will hold fits below `u32::MAX`.
    width: usize,
}

impl PackedMap {
    /// A map of `len` 40-bit entries.
    pub fn new(len: u64) -> Self {
        Self::with_width(len, ENTRY40_BYTES)
    }

    /// A map of `len` entries that will hold values up to `max_value` (and [`UNMAPPED`]):
    /// 4 bytes an entry when that fits in 32 bits, else 5.
    pub fn for_values(len: u64, max_value: u64) -> Self {
        Self::with_width(len, if max_value < u64::from(u32::MAX) { 4 } else { ENTRY40_BYTES })
    }

    fn with_width(len: u64, width: usize) -> Self {
        Self { bytes: vec![0xff; len as usize * width], len, width }
    }

    pub fn len(&self) -> u64 {
        self.len
    }

    pub fn is_empty(&self) -> bool {
        self.len == 0
    }

    /// Bytes per entry in memory (4 or 5).
    pub fn entry_bytes(&self) -> usize {
        self.width
    }

    /// The largest value (other than [`UNMAPPED`]) an entry can hold.
    pub fn max_value(&self) -> u64 {
        if self.width == 4 {
            u64::from(u32::MAX) - 1
        } else {
            UNMAPPED - 1
        }
    }

    /// Warm the cache for entry `index` (see [`crate::prefetch`]).
    #[inline]
    pub fn prefetch(&self, index: u64) {
        if let Some(b) = self.bytes.get(index as usize * self.width) {
            crate::prefetch::prefetch(b);
        }
    }

    #[inline]
    pub fn get(&self, index: u64) -> u64 {
        let at = index as usize * self.width;
        if self.width == 4 {
            let v = u32::from_le_bytes(self.bytes[at..at + 4].try_into().expect("4 bytes"));
            return if v == u32::MAX { UNMAPPED } else { u64::from(v) };
        }
        let b = &self.bytes[at..at + ENTRY40_BYTES];
        u64::from(b[0]) | u64::from(b[1]) << 8 | u64::from(b[2]) << 16 | u64::from(b[3]) << 24 | u64::from(b[4]) << 32
    }

    /// Set entry `index`. Panics if `value` is neither [`UNMAPPED`] nor at most
    /// [`PackedMap::max_value`]: a value that does not fit would silently become another.
    #[inline]
    pub fn set(&mut self, index: u64, value: u64) {
        assert!(value == UNMAPPED || value <= self.max_value(), "value {value:#x} does not fit the map's entries");
        let at = index as usize * self.width;
        if self.width == 4 {
            let v = if value == UNMAPPED { u32::MAX } else { value as u32 };
            self.bytes[at..at + 4].copy_from_slice(&v.to_le_bytes());
        } else {
            self.bytes[at..at + ENTRY40_BYTES].copy_from_slice(&value.to_le_bytes()[..ENTRY40_BYTES]);
        }
    }

    /// Append entries `first..first + count` to `out` in the 40-bit little-endian form (the
    /// server's checkpoint format).
    pub fn encode40(&self, first: u64, count: u64, out: &mut Vec<u8>) {
        if self.width == ENTRY40_BYTES {
            let at = first as usize * ENTRY40_BYTES;
            out.extend_from_slice(&self.bytes[at..at + count as usize * ENTRY40_BYTES]);
            return;
        }
        out.reserve(count as usize * ENTRY40_BYTES);
        for i in first..first + count {
            out.extend_from_slice(&self.get(i).to_le_bytes()[..ENTRY40_BYTES]);
        }
    }

    /// Set entries from `first` on from whole 40-bit entries in `bytes`. Fails, naming the
    /// entry, on a value above `limit` (other than [`UNMAPPED`]) or one this map cannot hold.
    pub fn decode40(&mut self, first: u64, bytes: &[u8], limit: u64) -> Result<(), EntryBeyondLimit> {
        let limit = limit.min(self.max_value());
        debug_assert!(bytes.len().is_multiple_of(ENTRY40_BYTES));
        for (i, e) in bytes.chunks_exact(ENTRY40_BYTES).enumerate() {
            let mut v = [0u8; 8];
            v[..ENTRY40_BYTES].copy_from_slice(e);
            let value = u64::from_le_bytes(v);
            let index = first + i as u64;
            if value != UNMAPPED && value > limit {
                return Err(EntryBeyondLimit { index, value, limit });
            }
            self.set(index, value);
        }
        Ok(())
    }

    /// Memory the map occupies, for the bytes-per-block accounting.
    pub fn heap_bytes(&self) -> u64 {
        self.bytes.len() as u64
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn stores_40_bit_values_independently() {
        let mut m = PackedMap::new(10);
        assert!((0..10).all(|i| m.get(i) == UNMAPPED));
        m.set(3, 0x12_3456_789a);
        m.set(4, 0);
        m.set(2, UNMAPPED - 1);
        assert_eq!(m.get(3), 0x12_3456_789a);
        assert_eq!(m.get(4), 0);
        assert_eq!(m.get(2), UNMAPPED - 1);
        assert_eq!(m.get(5), UNMAPPED);
        assert_eq!(m.heap_bytes(), 50);
    }

    #[test]
    fn narrow_map_takes_four_bytes_and_keeps_the_sentinel() {
        let mut m = PackedMap::for_values(10, 1 << 20);
        assert_eq!(m.entry_bytes(), 4);
        assert_eq!(m.heap_bytes(), 40);
        assert!((0..10).all(|i| m.get(i) == UNMAPPED));
        m.set(1, u64::from(u32::MAX) - 1);
        m.set(2, 7);
        m.set(2, UNMAPPED);
        assert_eq!(m.get(1), u64::from(u32::MAX) - 1);
        assert_eq!(m.get(2), UNMAPPED);
        assert_eq!(PackedMap::for_values(1, u64::from(u32::MAX)).entry_bytes(), 5);
    }

    #[test]
    #[should_panic(expected = "does not fit")]
    fn narrow_map_refuses_a_value_it_cannot_hold() {
        PackedMap::for_values(1, 10).set(0, u64::from(u32::MAX));
    }

    #[test]
    fn the_40_bit_form_is_the_same_whatever_the_width() {
        let mut wide = PackedMap::new(6);
        let mut narrow = PackedMap::for_values(6, 1000);
        for (i, v) in [(0, 5), (2, 999), (5, 0)] {
            wide.set(i, v);
            narrow.set(i, v);
        }
        let (mut a, mut b) = (Vec::new(), Vec::new());
        wide.encode40(0, 6, &mut a);
        narrow.encode40(0, 6, &mut b);
        assert_eq!(a, b);
        assert_eq!(a.len(), 30);
        let mut back = PackedMap::for_values(6, 1000);
        back.decode40(0, &a, 999).unwrap();
        assert_eq!(
            back.clone().decode40(0, &a, 998).unwrap_err(),
            EntryBeyondLimit { index: 2, value: 999, limit: 998 }
        );
        assert!((0..6).all(|i| back.get(i) == wide.get(i)));
        let mut big = Vec::new();
        PackedMap::new(1).encode40(0, 1, &mut big);
        big[0] = 0x00; // 0xff_ffff_ff00: a real value, too big for 32 bits
        let err = back.decode40(3, &big, UNMAPPED).unwrap_err();
        assert_eq!(err.index, 3, "{err}");
        assert!(err.to_string().starts_with("entry 3 holds 0xffffffff00"), "{err}");
    }
}
