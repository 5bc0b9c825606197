//! The bytes a write carries: every 4 KiB is tagged with its logical block and a version
//! and filled from both, so a block read back names the write it came from, and a torn or
//! misplaced block is recognised.

use crate::rng::SplitMix64;
use swan_server::member::BLOCK;

const MAGIC: &[u8; 8] = b"SWANCRS1";

/// The 4 KiB a write puts at `lba` as its version `version` (version 0 is zeroes).
pub fn payload(seed: u64, lba: u64, version: u64) -> Vec<u8> {
    let mut b = vec![0u8; BLOCK];
    b[..8].copy_from_slice(MAGIC);
    b[8..16].copy_from_slice(&lba.to_le_bytes());
    b[16..24].copy_from_slice(&version.to_le_bytes());
    let mut r = SplitMix64(seed ^ lba.wrapping_mul(0x2545_f491_4f6c_dd1d) ^ version.rotate_left(29));
    for c in b[24..].chunks_mut(8) {
        let v = r.next_u64().to_le_bytes();
        c.copy_from_slice(&v[..c.len()]);
    }
    b
}

/// What a block read back is: a version of this block, or something else.
pub(super) fn identify(seed: u64, lba: u64, data: &[u8]) -> std::result::Result<u64, String> {
    if data.iter().all(|&b| b == 0) {
        return Ok(0);
    }
    if &data[..8] != MAGIC {
        return Err("bytes that no write of this workload carries".into());
    }
    let at = u64::from_le_bytes(data[8..16].try_into().expect("8"));
    let version = u64::from_le_bytes(data[16..24].try_into().expect("8"));
    if at != lba {
        return Err(format!("block {at}'s data (version {version})"));
    }
    if data != payload(seed, lba, version) {
        return Err(format!("a torn or corrupt copy of version {version}"));
    }
    Ok(version)
}
