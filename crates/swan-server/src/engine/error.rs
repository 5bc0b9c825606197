//! Why the engine could not start, keep the array durable, or stop cleanly.

use crate::checkpoint::CheckpointError;
use crate::layout::ImpossibleGeometry;
use crate::member::MemberError;
use std::io;
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
    /// Recovering in-process after a full file system ([`super::resume`]).
    #[error("recovering the array: {0}")]
    Recover(#[from] crate::array::RecoverError),
}
