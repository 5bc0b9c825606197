//! The checksum each of swan's on-disk structures carries (superblock, checkpoint, journal
//! record, block CRC table, an emulated zoned device's block): CRC32C over the structure
//! with its own checksum field taken as zero. Apart from `layout` so that the members'
//! own structures use it without depending on the array's layout.

/// CRC32C (continuing `seed`) of `bytes` as if the 4-byte checksum field at `at` held zero:
/// how every on-disk structure here checks itself, without copying it to zero the field.
pub(crate) fn crc_with_field_zeroed(seed: u32, bytes: &[u8], at: usize) -> u32 {
    let crc = crc32c::crc32c_append(seed, &bytes[..at]);
    let crc = crc32c::crc32c_append(crc, &[0; 4]);
    crc32c::crc32c_append(crc, &bytes[at + 4..])
}
