//! The logical-to-physical block map, packed at 5 bytes per entry.
//!
//! SWAN keeps "a mapping table from the logical volume to the physical volume (L2P) ...
//! each entry takes up 5 bytes" (§4.1): 0.12 % of capacity. 40 bits address 2^40 blocks
//! (4 PiB of 4 KiB blocks); the all-ones value means "unmapped".
//! The same packed form serves as the reverse (P2L) map of open and sealed segments.

/// The sentinel for "no block here".
pub const UNMAPPED: u64 = (1 << 40) - 1;

const ENTRY_BYTES: usize = 5;

/// A dense array of 40-bit entries, all [`UNMAPPED`] initially.
#[derive(Clone, Debug)]
pub struct PackedMap {
    bytes: Vec<u8>,
    len: u64,
}

impl PackedMap {
    pub fn new(len: u64) -> Self {
        Self { bytes: vec![0xff; len as usize * ENTRY_BYTES], len }
    }

    pub fn len(&self) -> u64 {
        self.len
    }

    pub fn is_empty(&self) -> bool {
        self.len == 0
    }

    #[inline]
    pub fn get(&self, index: u64) -> u64 {
        let at = index as usize * ENTRY_BYTES;
        let b = &self.bytes[at..at + ENTRY_BYTES];
        u64::from(b[0]) | u64::from(b[1]) << 8 | u64::from(b[2]) << 16 | u64::from(b[3]) << 24 | u64::from(b[4]) << 32
    }

    #[inline]
    pub fn set(&mut self, index: u64, value: u64) {
        debug_assert!(value <= UNMAPPED, "value {value} does not fit 40 bits");
        let at = index as usize * ENTRY_BYTES;
        self.bytes[at..at + ENTRY_BYTES].copy_from_slice(&value.to_le_bytes()[..ENTRY_BYTES]);
    }

    /// The entries as stored: 5 bytes each, little-endian (the server's checkpoint format).
    pub fn as_bytes(&self) -> &[u8] {
        &self.bytes
    }

    /// A map from entries in [`PackedMap::as_bytes`] form; `None` unless a whole number of entries.
    pub fn from_bytes(bytes: Vec<u8>) -> Option<Self> {
        if !bytes.len().is_multiple_of(ENTRY_BYTES) {
            return None;
        }
        Some(Self { len: (bytes.len() / ENTRY_BYTES) as u64, bytes })
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
}
