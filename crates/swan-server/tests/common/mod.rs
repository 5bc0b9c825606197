//! Shared by the server crate's integration tests.

use std::path::{Path, PathBuf};
use swan_core::victim::VictimPolicy;
use swan_server::array::{self, CreateOptions};
use swan_server::layout::Superblock;

/// A small array over member files `m0`, `m1`, ... in `dir`: `rgroups` × `ssds` members of
/// 24 MiB, 128 KiB segments.
pub fn small_array(dir: &Path, scheme: &str, rgroups: u32, ssds: u32) -> (Vec<PathBuf>, Superblock) {
    let paths: Vec<PathBuf> = (0..rgroups * ssds).map(|i| dir.join(format!("m{i}"))).collect();
    let o = CreateOptions {
        kind: scheme.parse().unwrap(),
        rgroups,
        ssds_per_rgroup: ssds,
        member_bytes: Some(24 << 20),
        segment_bytes: 128 << 10,
        chunk_bytes: 64 << 10,
        victim: VictimPolicy::Greedy,
        spare: None,
        force: false,
        created: 0,
    };
    let sb = array::create(&paths, &o).unwrap();
    (paths, sb)
}
