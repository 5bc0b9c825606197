//! HWSR, the baseline, as the Apas paper describes it, simplified.
//!
//! Luo et al.'s hybrid wave-like shingled recording disk system (TPDS 2016), in the Apas
//! paper's words: "the memory was used to buffer hot writes and the SSD was used as a read
//! cache" (§II); "in HWSR the sizes of cache spaces allocated to read requests and write
//! requests are fixed" (§IV-B); it "uses a replacement policy and segment-based data layout
//! to reduce write amplification" whose updates and random accesses Apas's authors blame
//! for its slower writes and reads. What swan models of that:
//!
//! - **Fixed read and write caches**, one of each for all applications, never re-sized: a
//!   share `read_fraction` of the cache reads (LRU, clean blocks), the rest writes
//!   (write-back LRU, destaged least recently written first). Both sit on the same SSD model
//!   as Apas's cache, so the two policies get the same fast space (HWSR's write buffer is
//!   memory in Luo et al.; giving it SSD timing charges HWSR 200 µs per write it would not
//!   pay, and is said wherever results are reported).
//! - **Cleaning**: the drive-managed STL's own, greedy and lazy (see [`super::disks`]); no
//!   idle-time cleaning, no band types.
//! - **Not modelled**: the wave-like shingled layout and HWSR's segments (their sizes and
//!   update rules are in Luo et al., not in the Apas paper): HWSR's disks are the same
//!   drive-managed SWDs as Apas's.

use super::HwsrError;
use swan_core::apas::{AppPartition, Partition};

/// Default read share of HWSR's cache: half. Nothing in the Apas paper fixes it; an even
/// split favours neither reads nor writes, which is what "fixed" without a workload means.
pub const DEFAULT_READ_FRACTION: f64 = 0.5;

/// HWSR's cache: one application's worth of partition (every request maps to it), a fixed
/// `read_fraction` of `cache_blocks` reading, at least one block each way.
pub fn partition(cache_blocks: u64, read_fraction: f64) -> Result<Partition, HwsrError> {
    if !(0.0..=1.0).contains(&read_fraction) {
        return Err(HwsrError::ReadFraction { fraction: read_fraction });
    }
    if cache_blocks < 2 {
        return Err(HwsrError::CacheTooSmall { blocks: cache_blocks });
    }
    let read = ((cache_blocks as f64 * read_fraction).round() as u64).clamp(1, cache_blocks - 1);
    Ok(Partition { apps: vec![AppPartition { read_blocks: read, write_blocks: cache_blocks - read }] })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_split_is_fixed_and_whole() {
        let p = partition(1000, 0.5).unwrap();
        assert_eq!((p.apps.len(), p.read_total(), p.write_total()), (1, 500, 500));
        let p = partition(10, 0.0).unwrap();
        assert_eq!((p.read_total(), p.write_total()), (1, 9), "at least a block each way");
        assert_eq!(partition(10, 1.5).unwrap_err(), HwsrError::ReadFraction { fraction: 1.5 });
        assert_eq!(partition(1, 0.5).unwrap_err(), HwsrError::CacheTooSmall { blocks: 1 });
    }
}
