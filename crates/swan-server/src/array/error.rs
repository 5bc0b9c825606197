//! Why an array could not be created, opened or recovered. Each error names the member (its
//! path, and its index where it has one) and what is wrong, in words an operator can act on.
//!
//! swan's own errors that an array error adds to (a superblock's, a member's, the geometry's)
//! are part of its message; errors passed on unchanged are transparent.

use super::MISSING;
use crate::checkpoint::CheckpointError;
use crate::layout::{ImpossibleGeometry, SuperblockError};
use crate::member::MemberError;
use std::io;
use std::path::PathBuf;
use swan_core::geometry::GeometryError;
use swan_core::scheme::{MapChange, RestoreError};
use thiserror::Error;

/// Why `swan create` made no array. The member files it created are gone again by then; a
/// path that was there before it started is left as it was.
#[derive(Debug, Error)]
pub enum CreateError {
    #[error("too many members")]
    TooManyMembers,
    #[error("an array needs at least one R-group of at least one SSD")]
    NoMembers,
    #[error("{rgroups} R-groups × {ssds_per_rgroup} SSDs per R-group need {members} members, but {given} were given")]
    MemberCount { rgroups: u32, ssds_per_rgroup: u32, members: u32, given: usize },
    #[error("member {} is named twice", .path.display())]
    NamedTwice { path: PathBuf },
    #[error(
        "members {first} ({}) and {second} ({}) are the same file (one device and inode under two names): \
         each member needs a file or device of its own",
        .first_path.display(),
        .second_path.display()
    )]
    SameFile { first: u32, first_path: PathBuf, second: u32, second_path: PathBuf },
    #[error(
        "member {} is a symbolic link to {}, which does not exist: swan create makes no file through a link; \
         create the file it points to, or name a path that is not a link",
        .path.display(),
        .target.display()
    )]
    DanglingLink { path: PathBuf, target: PathBuf },
    /// A segment or chunk size (`what`) that is not a whole number of blocks.
    #[error("{what} must be a positive multiple of 4 KiB (got {bytes} bytes)")]
    NotBlocks { what: &'static str, bytes: u64 },
    #[error("{what} of {bytes} bytes is too large")]
    TooLarge { what: &'static str, bytes: u64 },
    #[error("--spare applies to log-structured schemes; in-place RAID has no GC to leave room for")]
    SpareInPlace,
    #[error(
        "in-place RAID cannot run over zoned members: a zone takes no overwrite (choose a SWAN or Log-RAID scheme)"
    )]
    ZonedInPlace,
    #[error("over zoned members a segment is one zone: --segment {segment} differs from --zone-size {zone} (leave --segment out)")]
    ZonedSegment { segment: u64, zone: u64 },
    #[error("member {}: cannot serve in this zoned array: {why}", .path.display())]
    ZonedMember { path: PathBuf, why: String },
    #[error("the spare share must be at least 0 % and below 90 % (got {:.1} %)", .share * 100.0)]
    SpareRange { share: f64 },
    #[error("member {} does not exist; give --member-size to create member files", .path.display())]
    MemberMissing { path: PathBuf },
    #[error("member {} holds {holds} bytes, less than --member-size {wanted}", .path.display())]
    MemberTooSmall { path: PathBuf, holds: u64, wanted: u64 },
    #[error(
        "{} is member {index} of {members} of swan array {uuid}; refusing to overwrite it (use --force to reuse it)",
        .path.display()
    )]
    OtherArray { path: PathBuf, index: u32, members: u32, uuid: String },
    #[error(
        "{} carries a swan superblock that cannot be read ({error}); it may belong to an array whose other members \
         are intact; refusing to overwrite it (use --force to reuse it)",
        .path.display()
    )]
    UnreadableSuperblock { path: PathBuf, error: SuperblockError },
    /// `advice`: the member size that would work (see `size_advice`).
    #[error(
        "members of {member_mib} MiB leave no room for data once the metadata ({meta_mib} MiB) and GC reserve are \
         set aside; use {advice}"
    )]
    NoRoom { member_mib: u64, meta_mib: u64, advice: String },
    #[error("{error}: {advice}")]
    MembersTooSmall { error: GeometryError, advice: String },
    #[error(transparent)]
    Geometry(#[from] GeometryError),
    #[error("reading /dev/urandom for the array UUID")]
    Uuid(#[source] io::Error),
    #[error(transparent)]
    Member(#[from] MemberError),
    #[error(transparent)]
    Checkpoint(#[from] CheckpointError),
}

/// Why the members given do not open as one array (or not as the tool needs it).
#[derive(Debug, Error)]
pub enum OpenError {
    #[error("member {}: cannot serve in this array: {why}", .path.display())]
    Zoned { path: PathBuf, why: String },
    #[error("no members given")]
    NoMembers,
    #[error("every member was given as `{MISSING}`: at least one member must be there to say what the array is")]
    AllMissing,
    #[error(
        "{}: {}; if it is a replacement whose rebuild did not finish, give `{MISSING}` in its place and run swan \
         replace again",
        .path.display(),
        SuperblockError::NotSwan
    )]
    NotSwan { path: PathBuf },
    #[error("{}: {error}", .path.display())]
    Superblock { path: PathBuf, error: SuperblockError },
    /// RAID0 has no parity, so `missing` and `swan replace` cannot help; the superblock can be
    /// rewritten from the peers' (`swan repair-superblock`). `why` is the superblock's error,
    /// naming the member.
    #[error(
        "{why}. This is a RAID0 array: with no parity it cannot be served with the member `{MISSING}`, nor the \
         member rebuilt. If only its superblock (its first 4 KiB block) was damaged, its data is intact: \
         `swan repair-superblock` with every member of the array (this one included) rewrites its superblock from \
         the other members', after which the array serves again"
    )]
    Raid0Superblock { path: PathBuf, why: String },
    #[error(
        "{}: superblock checksum mismatch, and so does every other member's: nothing to trust about the array",
        .path.display()
    )]
    AllTorn { path: PathBuf },
    /// A superblock torn by a crash that disagrees with the intact ones: it cannot be
    /// trusted to say even which member it is.
    #[error("{}: superblock checksum mismatch, and {why}: the superblock is corrupt", .path.display())]
    TornCorrupt { path: PathBuf, why: TornWhy },
    #[error(
        "{} belongs to swan array {uuid}, but {} belongs to {other_uuid}: members of two arrays were given",
        .path.display(),
        .other.display()
    )]
    TwoArrays { path: PathBuf, uuid: String, other: PathBuf, other_uuid: String },
    #[error("{}: its superblock disagrees with the other members' about the array's geometry", .path.display())]
    GeometryDisagrees { path: PathBuf },
    #[error("{}: holds {blocks} blocks, but the array uses {wanted} per member (was it truncated?)", .path.display())]
    Truncated { path: PathBuf, blocks: u64, wanted: u64 },
    #[error(
        "{} and {} are the same file (one device and inode under two names; member {index} of the array): \
         give each member once",
        .first.display(),
        .second.display()
    )]
    SameFile { first: PathBuf, second: PathBuf, index: u32 },
    #[error("{} and {} both claim to be member {index}", .first.display(), .second.display())]
    SameIndex { first: PathBuf, second: PathBuf, index: u32 },
    #[error(
        "array {uuid} has {members} members but {given} were given (missing member index {}; a member that is gone \
         may be given as `{MISSING}`)",
        list(.missing)
    )]
    MemberCount { uuid: String, members: u32, given: usize, missing: Vec<u32> },
    #[error(
        "member {member} ({}) of this RAID0 array has failed: its data is lost, and swan cannot serve the array",
        .path.display()
    )]
    Raid0Failed { member: u32, path: PathBuf },
    #[error(
        "member {member} ({}) is stale: its superblock's event count {events} is older than its peers' {newest}, \
         which count member {member} as healthy, so it was rebuilt onto another file or device (swan replace) \
         since this one was last written. Give that replacement (the --new member of the swan replace) in its \
         place, or `{MISSING}` to serve without member {member} and rebuild it again; served, this one would be \
         kept out and the replacement made stale as well",
        .path.display()
    )]
    Superseded { member: u32, path: PathBuf, events: u64, newest: u64 },
    #[error("members {member} and {peer} of one parity group have both failed: their rows cannot be rebuilt")]
    TwoFailed { member: u32, peer: u32 },
    #[error("both metadata members (0 and 1) have failed: the map's checkpoints and journal are lost")]
    MetadataLost,
    #[error("bringing the members' superblocks into agreement: {0}")]
    Agreement(MemberError),
    /// An offline tool (`tool`) reads every member as it is.
    #[error(
        "member {member} ({}) has failed; {tool} needs every member: rebuild it first with `swan replace`",
        .path.display()
    )]
    Degraded { member: u32, path: PathBuf, tool: &'static str },
    #[error(transparent)]
    Member(#[from] MemberError),
}

/// Why `swan repair-superblock` rewrote nothing.
#[derive(Debug, Error)]
pub enum RepairError {
    #[error(transparent)]
    Open(#[from] OpenError),
    #[error("every member's superblock reads: nothing to repair")]
    NothingToRepair,
    #[error("the superblocks of {} cannot be read: only one member's superblock can be rewritten from its peers'", .paths)]
    SeveralDamaged { paths: String },
    #[error("no member with a readable superblock was given: its peers are needed to say what the array is")]
    NoPeers,
    #[error("array {uuid} has {members} members but {given} were given: give every member, the damaged one included")]
    MemberCount { uuid: String, members: u32, given: usize },
    #[error("{}: its superblock disagrees with {}'s about the array", .path.display(), .reference.display())]
    Disagree { path: PathBuf, reference: PathBuf },
    #[error("{}: holds {blocks} blocks, but the array uses {wanted} per member", .path.display())]
    Truncated { path: PathBuf, blocks: u64, wanted: u64 },
    #[error("writing the superblock: {0}")]
    Write(#[from] MemberError),
}

/// What a torn superblock disagrees with the intact ones about.
#[derive(Debug)]
pub enum TornWhy {
    OtherArray,
    Geometry,
    /// Its member index is that of `other`, which has an intact superblock.
    Index {
        index: u32,
        other: PathBuf,
    },
}

impl std::fmt::Display for TornWhy {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            TornWhy::OtherArray => f.write_str("it names another array"),
            TornWhy::Geometry => f.write_str("its geometry disagrees with the other members'"),
            TornWhy::Index { index, other } => write!(f, "its member index {index} is {}'s", other.display()),
        }
    }
}

/// Why the map could not be recovered from the metadata members.
#[derive(Debug, Error)]
pub enum RecoverError {
    #[error(transparent)]
    Geometry(#[from] ImpossibleGeometry),
    #[error(
        "the superblock says {recorded} volume blocks but its geometry gives {built}: written by another swan version?"
    )]
    VolumeMismatch { recorded: u64, built: u64 },
    /// Every checkpoint slot tried, with why it was not whole.
    #[error(
        "no whole checkpoint on the metadata members ({}): the volume's map is lost. Restore the metadata members \
         from a copy taken while the array was stopped, or create the array anew and restore its data",
        slots(.tried)
    )]
    NoCheckpoint { tried: Vec<(PathBuf, u32, CheckpointError)> },
    #[error("journal entry {0:?} is outside the array: the journal is corrupt")]
    JournalEntry(MapChange),
    /// The map restored into no array ([`swan_core::scheme::LogArray::restore`]); the
    /// reason is part of the message, as its only cause.
    #[error("the recovered map is inconsistent: {0}")]
    Inconsistent(RestoreError),
    #[error("reading the journal: {0}")]
    Journal(MemberError),
    #[error(transparent)]
    Member(#[from] MemberError),
}

/// "1, 3": member indices as a list.
fn list(indices: &[u32]) -> String {
    indices.iter().map(u32::to_string).collect::<Vec<_>>().join(", ")
}

/// "PATH slot N: why; …": the checkpoint slots recovery tried.
fn slots(tried: &[(PathBuf, u32, CheckpointError)]) -> String {
    let each: Vec<String> = tried.iter().map(|(p, slot, e)| format!("{} slot {slot}: {e}", p.display())).collect();
    each.join("; ")
}
