//! What `swan status` shows of a running engine.

use serde::Serialize;

/// What `swan status` shows.
#[derive(Clone, Debug, Serialize)]
pub struct StatusReport {
    pub uuid: String,
    pub scheme: String,
    pub volume_bytes: u64,
    /// Zoned members: their zone size, which is the segment per member (a member's
    /// `trims` count its zones' resets).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub zone_bytes: Option<u64>,
    pub uptime_s: f64,
    pub groups: Vec<GroupStatus>,
    pub members: Vec<MemberStatus>,
    pub free_segments: u64,
    pub segments: u64,
    /// SWAN: free segments GC keeps in the back-end R-groups (`swan serve --gc-target`).
    pub gc_target: Option<u64>,
    pub user_bytes_written: u64,
    pub user_bytes_read: u64,
    pub gc_blocks_moved: u64,
    pub victims: u64,
    /// User bytes written (since the server started) when GC took its first victim.
    pub gc_onset_user_bytes: Option<u64>,
    pub front_rotations: u64,
    /// User blocks read around a busy member from the rest of their stripe row
    /// (`--parity-reads`), and the member reads that cost beyond the direct ones.
    #[serde(default)]
    pub parity_read_blocks: u64,
    #[serde(default)]
    pub parity_extra_reads: u64,
    pub sync_points: u64,
    pub journal_records: u64,
    pub checkpoints: u64,
    /// Batches left with their O_DIRECT writes in flight while the next was served (their
    /// journal record and replies a round later).
    #[serde(default)]
    pub batches_overlapped: u64,
    pub queued_requests: usize,
    /// Blocks of pooled reads checked against their CRC, found not to match, rebuilt from
    /// parity, or answered with EIO; and blocks with no CRC to check (adopted segments).
    pub reads_verified: u64,
    pub read_mismatches: u64,
    pub read_repairs: u64,
    pub read_failures: u64,
    pub reads_unverified: u64,
    /// Blocks GC moved: checked against their CRC, rebuilt from parity first, lost (moved
    /// marked bad), or without a CRC to check.
    pub gc_verified: u64,
    pub gc_repaired: u64,
    pub gc_lost: u64,
    pub gc_unverified: u64,
    /// A replacement member being rebuilt (`swan replace`).
    pub rebuild: Option<RebuildStatus>,
    /// "on", or why every FLUSH fails: "stopped by a full file system (...)", which ends by
    /// itself once it has room, or "stopped until a restart (...)".
    #[serde(default)]
    pub durability: String,
    /// Durability is stopped by a full file system: writes are refused with ENOSPC until
    /// it has room, and the array then resumes by itself.
    #[serde(default)]
    pub stopped_by_full: bool,
    /// Times the array resumed by itself after a full file system.
    #[serde(default)]
    pub resumes: u64,
    /// With `--emulate`: how a request's time splits between the model SSDs and the engine.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub emulation: Option<EmulationTiming>,
    /// Where the engine thread's CPU went, part by part, and how long requests waited for
    /// it (`docs/host-model.md`).
    #[serde(default)]
    pub engine_cpu: super::EngineCpu,
    /// Every live thread's CPU time, by the stage of a request's path it serves.
    #[serde(default)]
    pub threads: Vec<crate::threads::StageCpu>,
}

/// Where the time of an emulated request goes: the model SSDs' part, and the engine's
/// lateness in sending the reply once the model is done. A
/// closed-loop client whose requests spend long outside the model keeps fewer of them in
/// the model SSDs' queues than the simulator does at the same depth.
#[derive(Clone, Copy, Debug, Default, PartialEq, Serialize)]
pub struct EmulationTiming {
    /// Requests answered at their model completion.
    pub replies: u64,
    /// Mean time from giving a request to the model SSDs to its completion there, µs
    /// (carrying it out on the members overlaps it).
    pub mean_model_us: f64,
    /// Mean time a reply went out after its model completion, µs (the engine was busy
    /// with a round, or woke late).
    pub mean_late_us: f64,
}

#[derive(Clone, Debug, Serialize)]
pub struct GroupStatus {
    pub group: u32,
    /// GC jobs (victims) started in this R-group since the server started.
    pub gc_jobs: u64,
    /// "front-end", "back-end GC", "back-end idle" (SWAN); "log" or "in-place" otherwise.
    pub role: String,
    pub free_segments: u64,
}

#[derive(Clone, Debug, Default, Serialize)]
pub struct MemberStatus {
    pub path: String,
    /// The file the server holds as this member (device and inode) and its canonical path:
    /// a client given a member's path finds, among the servers of one array UUID (an array
    /// and its copies), the one holding that very file.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub file: Option<crate::member::FileId>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub canonical: Option<String>,
    /// "healthy", "failed" or "rebuilding".
    pub health: String,
    pub user_bytes_written: u64,
    pub gc_bytes_written: u64,
    pub bytes_read: u64,
    pub gc_bytes_read: u64,
    /// Member operations of the array's plans (contiguous runs; user and GC alike).
    /// Adjacent writes of one batch may then go out in one system call.
    pub reads: u64,
    pub writes: u64,
    pub trims: u64,
    pub errors: u64,
    /// With `--emulate`: what the member's model SSD did (its own GC, WAF, latency), to
    /// compare with the simulator's SSDs.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub model: Option<crate::emulate::EmuStats>,
}

/// What `swan status` says of a rebuild.
#[derive(Clone, Debug, Serialize)]
pub struct RebuildStatus {
    pub member: u32,
    pub path: String,
    pub done_blocks: u64,
    pub total_blocks: u64,
}
