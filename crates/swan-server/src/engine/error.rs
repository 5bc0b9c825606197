//! Why the engine could not start, keep the array durable, or stop cleanly; and why it
//! refused to fail or replace a member.

use crate::checkpoint::CheckpointError;
use crate::layout::ImpossibleGeometry;
use crate::member::MemberError;
use std::io;
use std::path::PathBuf;
use thiserror::Error;

/// An engine failure the caller sees: at start (opening the array for writes), at a sync
/// point or checkpoint, or at the stop. Member, checkpoint and geometry errors pass through
/// unchanged. `why` in the durability variants is the first error that may have cost
/// durability (see [`super::durability`]): from then on nothing claims durability again.
#[derive(Debug, Error)]
pub enum EngineError {
    #[error("starting the I/O pool's threads")]
    Pool(#[source] io::Error),
    #[error("starting the engine thread")]
    Thread(#[source] io::Error),
    #[error("the engine thread panicked")]
    Panicked,
    /// A sync point found durability lost while it ran.
    #[error("durability was lost ({why}); restart to recover")]
    DurabilityLost { why: String },
    /// A sync point asked for after durability was lost.
    #[error("durability was lost earlier ({why}); restart to recover")]
    LostEarlier { why: String },
    #[error("no checkpoint: durability was lost ({why}); restart to recover")]
    NoCheckpoint { why: String },
    #[error(transparent)]
    Geometry(#[from] ImpossibleGeometry),
    #[error(transparent)]
    Member(#[from] MemberError),
    #[error(transparent)]
    Checkpoint(#[from] CheckpointError),
    /// Zoned members that cannot be brought to where the map says before serving.
    #[error("opening zoned members: {0}")]
    Zoned(String),
    /// Recovering in-process after a full file system ([`super::resume`]).
    #[error("recovering the array: {0}")]
    Recover(#[from] crate::array::RecoverError),
}

/// Why `swan fail` left member `member` in service.
#[derive(Debug, Error)]
pub enum FailError {
    #[error("the array has {members} members; there is no member {member}")]
    NoSuchMember { member: u32, members: usize },
    #[error("a RAID0 array has no parity: failing a member would lose its data")]
    NoParity,
    #[error("member {member} has failed already")]
    AlreadyFailed { member: u32 },
    #[error("member {member} is being rebuilt")]
    Rebuilding { member: u32 },
    /// `health`: the peer's, as [`crate::members::Health::name`] says it.
    #[error("member {peer} of the same parity group is {health}: failing {member} too would lose data")]
    PeerDown { member: u32, peer: u32, health: &'static str },
    #[error("member {member} cannot be spared")]
    CannotSpare { member: u32 },
}

/// Why `swan replace` started no rebuild of member `member`.
#[derive(Debug, Error)]
pub enum ReplaceError {
    #[error("the array has {members} members; there is no member {member}")]
    NoSuchMember { member: u32, members: usize },
    #[error("member {rebuilding} is being rebuilt already; one rebuild at a time")]
    RebuildUnderWay { rebuilding: u32 },
    #[error("member {member} is {health}; only a failed member is replaced (swan fail it first)")]
    NotFailed { member: u32, health: &'static str },
    #[error("the array is served read-only")]
    ReadOnly,
    #[error(
        "member {member} ({}) has had an operation stuck for {stuck_s:.0} s, which may still write to it: \
         rebuilding onto the same file could be overwritten by that late write; replace it with another file \
         or device, or wait until the member answers",
        .path.display()
    )]
    SameFileStuck { member: u32, path: PathBuf, stuck_s: f64 },
    /// Opening or locking the replacement failed.
    #[error(transparent)]
    Member(#[from] MemberError),
    #[error("{} holds {blocks} blocks; a member of this array needs {wanted}", .path.display())]
    TooSmall { path: PathBuf, blocks: u64, wanted: u64 },
    #[error("{} is member {index} of swan array {uuid}: wipe its first block to use it here", .path.display())]
    OtherArray { path: PathBuf, index: u32, uuid: String },
    #[error("{} cannot replace a member of this zoned array: {why}", .path.display())]
    NotZonedLikePeers { path: PathBuf, why: String },
}

/// Why [`super::Engine::fail`] or [`super::Engine::replace`] did nothing: the engine's
/// refusal, or no answer from it.
#[derive(Debug, Error)]
pub enum CommandError {
    #[error("the server is stopping")]
    Stopping,
    #[error("the engine did not answer")]
    NoAnswer,
    #[error(transparent)]
    Fail(#[from] FailError),
    #[error(transparent)]
    Replace(#[from] ReplaceError),
}
