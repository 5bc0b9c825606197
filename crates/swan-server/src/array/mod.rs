//! Creating an array over members, opening it again, and recovering its state.
//!
//! `create` writes the superblocks last, so a create that dies half-way leaves members no
//! swan will mistake for an array. `open` finds each member's place from its superblock,
//! so members may be named in any order. `recover` loads the newest whole checkpoint and
//! rolls the journal forward over it (FORMAT.md, "Recovery").

mod error;
mod recover;
mod repair;

pub use error::{CreateError, OpenError, RecoverError, RepairError, TornWhy};
pub use recover::{recover, Recovered};
pub use repair::{repair_superblock, Repaired};

use crate::checkpoint;
use crate::layout::{Superblock, SuperblockError, META_COPIES};
use crate::member::{Files, Member, MemberError, MemberSource, OpenOptions, BLOCK};
use crate::members::{Health, Members};
use std::path::PathBuf;
use std::sync::Arc;
use swan_core::geometry::{GeometryError, RaidLevel};
use swan_core::io::{IoKind, IoPlan};
use swan_core::scheme::SchemeKind;
use swan_core::victim::VictimPolicy;

/// What `swan create` asks for.
#[derive(Clone, Debug)]
pub struct CreateOptions {
    pub kind: SchemeKind,
    pub rgroups: u32,
    pub ssds_per_rgroup: u32,
    /// Create missing member files of this size; also the size used on every member.
    pub member_bytes: Option<u64>,
    /// Segment per SSD; `None` takes [`default_segment_bytes`] for the members' size.
    pub segment_bytes: Option<u64>,
    pub chunk_bytes: u64,
    pub victim: VictimPolicy,
    /// Share of the data capacity kept out of the volume as spare room for GC (log-structured
    /// schemes); `None` takes [`DEFAULT_SPARE`] for them and nothing for in-place RAID.
    pub spare: Option<f64>,
    /// Overwrite members that belong to another swan array.
    pub force: bool,
    /// Seconds since the epoch, recorded in the superblock.
    pub created: u64,
}

pub use swan_core::scheme::log::DEFAULT_SPARE;

/// The segment per SSD when `swan create` is given none: 8 MiB, the erase stripe of the SSD
/// swan models for the paper (its 850 PRO stripes consecutive pages over 16 dies with 512 KiB
/// erase blocks). An SSD frees an erase block without copying only when a TRIM covers the
/// block on every die it striped over, so a segment smaller than the stripe leaves the SSD's
/// own GC copying what the array already dropped: 1 MiB segments on that model run SWAN at a
/// seventh of its speed (docs/enospc.md). Real SSDs seldom publish their stripe; a larger
/// one costs the array only coarser GC, so give `--segment` when the stripe is known to be
/// larger.
pub const DEFAULT_SEGMENT_BYTES: u64 = 8 << 20;

/// Segments each member should hold at least when the segment is chosen for it.
const LEAST_DEFAULT_SEGMENTS: u64 = 64;

/// [`DEFAULT_SEGMENT_BYTES`], or for members too small to hold [`LEAST_DEFAULT_SEGMENTS`] of
/// it (files for trials and tests, not SSDs) the largest power of two, down to 64 KiB, that
/// they hold that many times: the GC reserves and the room kept for a write are counted in
/// segments, and on a handful of segments they would eat the volume.
pub fn default_segment_bytes(member_bytes: u64) -> u64 {
    let mut bytes = DEFAULT_SEGMENT_BYTES;
    while bytes > 64 << 10 && member_bytes / bytes < LEAST_DEFAULT_SEGMENTS {
        bytes /= 2;
    }
    bytes
}

fn blocks_of(bytes: u64, what: &'static str) -> Result<u32, CreateError> {
    if bytes == 0 || bytes % BLOCK as u64 != 0 {
        return Err(CreateError::NotBlocks { what, bytes });
    }
    u32::try_from(bytes / BLOCK as u64).map_err(|_| CreateError::TooLarge { what, bytes })
}

fn random_uuid() -> Result<[u8; 16], CreateError> {
    use std::io::Read;
    let mut u = [0u8; 16];
    std::fs::File::open("/dev/urandom").and_then(|mut f| f.read_exact(&mut u)).map_err(CreateError::Uuid)?;
    u[6] = (u[6] & 0x0f) | 0x40; // RFC 4122 version 4
    u[8] = (u[8] & 0x3f) | 0x80;
    Ok(u)
}

/// Read a member's superblock, if it has one.
pub fn read_superblock(m: &Member) -> Result<Superblock, SuperblockError> {
    let mut b = vec![0u8; BLOCK];
    m.read(0, &mut b).map_err(|_| SuperblockError::NotSwan)?;
    Superblock::decode(&b)
}

/// [`read_superblock`], falling back to [`Superblock::decode_torn`] on a checksum mismatch:
/// (superblock, whether it was torn).
fn read_superblock_or_torn(m: &Member) -> Result<(Superblock, bool), SuperblockError> {
    let mut b = vec![0u8; BLOCK];
    m.read(0, &mut b).map_err(|_| SuperblockError::NotSwan)?;
    match Superblock::decode(&b) {
        Ok(sb) => Ok((sb, false)),
        Err(e @ SuperblockError::Checksum { .. }) => Superblock::decode_torn(&b).map(|sb| (sb, true)).map_err(|_| e),
        Err(e) => Err(e),
    }
}

/// Make a new array over `paths` (in array order). Member files it had to create are
/// removed again if it fails, so the suggested retry finds nothing in its way.
pub fn create(paths: &[PathBuf], o: &CreateOptions) -> Result<Superblock, CreateError> {
    create_in(&Files, paths, o, random_uuid()?)
}

/// [`create`] over members that `source` names, with a given array UUID (the deterministic
/// crash tests create in memory with a UUID from their seed, so a seed gives the same bytes
/// on the members every time).
pub fn create_in(
    source: &dyn MemberSource,
    paths: &[PathBuf],
    o: &CreateOptions,
    uuid: [u8; 16],
) -> Result<Superblock, CreateError> {
    let mut created = Vec::new();
    let result = create_inner(source, paths, o, uuid, &mut created);
    if result.is_err() {
        // Only what this create made: a path that was there before (a file, a symlink, even
        // a dangling one) is the operator's.
        for p in &created {
            source.remove(p);
        }
    }
    result
}

/// [`create_in`]; every member file it creates is added to `created` as soon as it exists.
fn create_inner(
    source: &dyn MemberSource,
    paths: &[PathBuf],
    o: &CreateOptions,
    uuid: [u8; 16],
    created: &mut Vec<PathBuf>,
) -> Result<Superblock, CreateError> {
    let members = o.rgroups.checked_mul(o.ssds_per_rgroup).ok_or(CreateError::TooManyMembers)?;
    if members == 0 {
        return Err(CreateError::NoMembers);
    }
    if paths.len() != members as usize {
        let (rgroups, ssds_per_rgroup, given) = (o.rgroups, o.ssds_per_rgroup, paths.len());
        return Err(CreateError::MemberCount { rgroups, ssds_per_rgroup, members, given });
    }
    for (i, p) in paths.iter().enumerate() {
        if paths[..i].contains(p) {
            return Err(CreateError::NamedTwice { path: p.clone() });
        }
    }
    // Checked before any member is touched; `lay_out` takes them as given.
    if let Some(bytes) = o.segment_bytes {
        blocks_of(bytes, "the segment size (per SSD)")?;
    }
    blocks_of(o.chunk_bytes, "the chunk size")?;
    let mut opened: Vec<Member> = Vec::with_capacity(paths.len());
    for p in paths {
        let m = open_new_member(source, p, o, &opened, created)?;
        opened.push(m);
    }
    let member_blocks = match o.member_bytes {
        Some(b) => b / BLOCK as u64,
        None => opened.iter().map(Member::blocks).min().unwrap_or(0),
    };
    let spare = spare_share(o)?;
    let sb = match lay_out(o, members, member_blocks, spare, uuid) {
        Ok(sb) if sb.volume_blocks > 0 => sb,
        Ok(sb) => {
            return Err(CreateError::NoRoom {
                member_mib: (member_blocks * BLOCK as u64) >> 20,
                meta_mib: (sb.meta_blocks * BLOCK as u64) >> 20,
                advice: size_advice(o, members, spare),
            })
        }
        Err(error @ GeometryError::MemberTooSmall { .. }) => {
            return Err(CreateError::MembersTooSmall { error, advice: size_advice(o, members, spare) })
        }
        Err(e) => return Err(e.into()),
    };
    format_members(&opened, &sb)?;
    for m in &opened {
        m.sync()?;
    }
    put_superblocks(opened.iter().enumerate(), &sb)?;
    Ok(sb)
}

/// Open (creating the file if `o` gives a size, and noting it in `created`) and lock one
/// member of a new array, and refuse it if it is one of the `earlier` members under
/// another name, too small or, unless `o.force`, a member of another swan array.
fn open_new_member(
    source: &dyn MemberSource,
    p: &std::path::Path,
    o: &CreateOptions,
    earlier: &[Member],
    created: &mut Vec<PathBuf>,
) -> Result<Member, CreateError> {
    let path = || p.to_path_buf();
    if !source.exists(p) {
        let bytes = o.member_bytes.ok_or_else(|| CreateError::MemberMissing { path: path() })?;
        source.create(p, bytes, false)?;
        created.push(path());
    }
    let m = source.open(p, OpenOptions { direct: false, read_only: false }).map_err(|e| dangling(p, e))?;
    // Before the lock, which the earlier name's handle would make look like another process's.
    if let Some((first, f)) = same_file(earlier, &m) {
        let (first_path, second, second_index) = (f.path().to_path_buf(), path(), earlier.len() as u32);
        return Err(CreateError::SameFile {
            first: first as u32,
            first_path,
            second: second_index,
            second_path: second,
        });
    }
    m.lock(true)?;
    if let Some(wanted) = o.member_bytes {
        let holds = m.blocks() * BLOCK as u64;
        if holds < wanted {
            return Err(CreateError::MemberTooSmall { path: path(), holds, wanted });
        }
    }
    if !o.force {
        match read_superblock(&m) {
            Ok(sb) => {
                let (index, members, uuid) = (sb.member_index, sb.members, sb.uuid_string());
                return Err(CreateError::OtherArray { path: path(), index, members, uuid });
            }
            Err(SuperblockError::NotSwan) => {}
            // A damaged superblock is still a member of some array: one bad bit must not
            // make it look blank.
            Err(error) => return Err(CreateError::UnreadableSuperblock { path: path(), error }),
        }
    }
    Ok(m)
}

/// A member that cannot be opened because it is a symbolic link to nothing, said so.
fn dangling(p: &std::path::Path, e: MemberError) -> CreateError {
    match (&e, std::fs::read_link(p)) {
        (MemberError::Io { error, .. }, Ok(target)) if error.kind() == std::io::ErrorKind::NotFound => {
            CreateError::DanglingLink { path: p.to_path_buf(), target }
        }
        _ => e.into(),
    }
}

/// The earlier member (its index and handle) that `m` is the same file as, if any.
fn same_file<'a>(earlier: &'a [Member], m: &Member) -> Option<(usize, &'a Member)> {
    let id = m.identity()?;
    earlier.iter().enumerate().find(|(_, e)| e.identity() == Some(id))
}

/// Write a new array's starting state to its members, superblocks aside: clear what an
/// earlier array left (trimmed where that frees space), an empty CRC table (in-place RAID), every segment trimmed and the
/// first checkpoint (log-structured).
fn format_members(opened: &[Member], sb: &Superblock) -> Result<(), CreateError> {
    let mut scheme = sb.array_spec().build()?;
    for m in opened {
        m.write(0, &vec![0u8; BLOCK])?;
        // A file member's metadata area stays allocated: its journal and checkpoints are
        // rewritten in place, and nothing an earlier array left there can pass for this
        // one's (every record and checkpoint carries the UUID in its CRC).
        if m.trims_free_space() {
            m.trim(1, sb.meta_blocks - 1)?;
        }
    }
    // In-place RAID: an empty CRC table (nothing known yet), marked clean.
    if sb.crc_table_blocks > 0 {
        let crcs = crate::blockcrc::BlockCrcs::empty(sb);
        for (i, m) in opened.iter().enumerate() {
            crcs.write_member(i as u32, m, sb)?;
        }
    }
    // A log array starts with every segment trimmed (a free segment is a trimmed segment),
    // where a TRIM is worth it: not on file members (see `Member::trims_free_space`).
    let mut plan = IoPlan::new();
    scheme.format(&mut plan);
    for io in plan.ios() {
        if io.kind == IoKind::Trim && opened[io.member as usize].trims_free_space() {
            opened[io.member as usize].trim(io.block, u64::from(io.count))?;
        }
    }
    if let Some(la) = scheme.log() {
        let header = checkpoint::Header {
            uuid: sb.uuid,
            seq: 1,
            journal_pos: 0,
            journal_seq: 1,
            volume_blocks: 0,
            segments: 0,
            body_crc: 0,
            parity_whole: false,
        };
        let copies: Vec<&Member> = opened.iter().take(sb.meta_members() as usize).collect();
        let seqs = vec![0u64; la.geometry().segments() as usize];
        checkpoint::write(&copies, sb.checkpoint_slot(0), sb.checkpoint_blocks, header, la.l2p(), &seqs)?;
    }
    Ok(())
}

/// The spare share `o` asks for, checked: the default for log-structured schemes, none for
/// in-place RAID, which has no GC to leave room for.
fn spare_share(o: &CreateOptions) -> Result<f64, CreateError> {
    let spare = match (o.kind.is_log_structured(), o.spare) {
        (true, s) => s.unwrap_or(DEFAULT_SPARE),
        (false, None | Some(0.0)) => 0.0,
        (false, Some(_)) => return Err(CreateError::SpareInPlace),
    };
    if !(0.0..0.9).contains(&spare) {
        return Err(CreateError::SpareRange { share: spare });
    }
    Ok(spare)
}

/// The superblock `swan create` writes for `members` members of `member_blocks` blocks, its
/// volume worked out (0 when nothing is left for data), without touching a member or
/// building the scheme's maps.
fn lay_out(
    o: &CreateOptions,
    members: u32,
    member_blocks: u64,
    spare: f64,
    uuid: [u8; 16],
) -> Result<Superblock, GeometryError> {
    let segment_bytes = o.segment_bytes.unwrap_or_else(|| default_segment_bytes(member_blocks * BLOCK as u64));
    let rows = |bytes: u64| u32::try_from(bytes / BLOCK as u64).unwrap_or(u32::MAX);
    let (segment_rows, chunk_blocks) = (rows(segment_bytes), rows(o.chunk_bytes));
    let log = o.kind.is_log_structured();
    let (checkpoint_blocks, journal_blocks, crc_table_blocks, meta_blocks) =
        metadata_sizes(members, member_blocks, if log { segment_rows } else { chunk_blocks }, log);
    let mut sb = Superblock {
        uuid,
        member_index: 0,
        members,
        kind: o.kind,
        rgroups: o.rgroups,
        ssds_per_rgroup: o.ssds_per_rgroup,
        segment_rows,
        chunk_blocks,
        victim: o.victim,
        member_blocks,
        meta_blocks,
        checkpoint_blocks,
        journal_blocks,
        crc_table_blocks,
        volume_blocks: 0,
        created: o.created,
        events: 0,
        failed: Default::default(),
    };
    let largest = sb.array_spec().volume_blocks()?;
    if let Some(cfg) = sb.array_spec().log_config()? {
        let wanted = cfg.volume_for_spare(spare);
        if wanted < largest {
            // The superblock records the volume; every later open builds the same scheme.
            sb.volume_blocks = wanted.max(1);
            sb.volume_blocks = sb.array_spec().volume_blocks()?;
            return Ok(sb);
        }
    }
    sb.volume_blocks = largest;
    Ok(sb)
}

/// What to do about members too small for `o`: the smallest member size that works,
/// found by trying sizes (the default segment and the metadata both grow with the member).
fn size_advice(o: &CreateOptions, members: u32, spare: f64) -> String {
    let works = |mib: u64| lay_out(o, members, mib << 8, spare, [0; 16]).is_ok_and(|sb| sb.volume_blocks > 0);
    let (mut lo, mut hi) = (0u64, 1u64);
    while !works(hi) {
        if hi >= 1 << 30 {
            return "no member size makes this geometry work; a smaller --segment or --chunk".into();
        }
        (lo, hi) = (hi, hi * 2);
    }
    while hi - lo > 1 {
        let mid = lo + (hi - lo) / 2;
        if works(mid) {
            hi = mid;
        } else {
            lo = mid;
        }
    }
    let knob = if o.kind.is_log_structured() { "--segment" } else { "--chunk" };
    format!("--member-size {hi}M or more, or a smaller {knob}")
}

/// An array's members, in array order, with the superblock they agree on (its `failed`
/// set and `events` count are the array's, worked out from every member's).
pub struct Opened {
    pub sb: Superblock,
    pub members: Members,
    /// Where the members came from; a replacement is opened there too.
    pub source: Arc<dyn MemberSource>,
}

impl Opened {
    /// Refuse an array with a failed member: for tools that read every member as it is.
    pub fn require_all_healthy(&self, tool: &'static str) -> Result<(), OpenError> {
        if let Some(&member) = self.sb.failed.iter().next() {
            let path = self.members[member as usize].path().to_path_buf();
            return Err(OpenError::Degraded { member, path, tool });
        }
        Ok(())
    }
}

/// Sizes of the metadata area for an array, before its exact volume is known: the
/// checkpoint is sized for the largest volume the members could expose. Returns
/// (checkpoint blocks, journal blocks, CRC table blocks, metadata blocks).
pub fn metadata_sizes(
    members: u32,
    member_blocks: u64,
    segment_rows: u32,
    log_structured: bool,
) -> (u64, u64, u64, u64) {
    let (checkpoint_blocks, journal_blocks, crc_table_blocks) = if log_structured {
        let bound = u64::from(members) * member_blocks;
        let segments_bound = bound / u64::from(segment_rows.max(1)) + 1;
        (checkpoint::blocks_for(bound, segments_bound), (member_blocks / 8).clamp(4096, 65_536), 0)
    } else {
        (0, 0, crate::blockcrc::table_blocks(member_blocks))
    };
    let used = 1 + 2 * checkpoint_blocks + journal_blocks + crc_table_blocks;
    let align = u64::from(segment_rows.max(1));
    let meta_blocks = used.div_ceil(align) * align;
    (checkpoint_blocks, journal_blocks, crc_table_blocks, meta_blocks)
}

/// Members per parity group of an array (0: RAID0, no parity).
pub fn parity_width(sb: &Superblock) -> u32 {
    match sb.kind.raid() {
        RaidLevel::Raid0 => 0,
        _ => sb.array_spec().parity_group_width(),
    }
}

/// Write every healthy member's superblock (its own index, the array's `failed` set and
/// `events` count) and make it durable: how a failure or a finished rebuild is recorded.
pub fn write_superblocks(members: &Members, sb: &Superblock) -> Result<(), MemberError> {
    put_superblocks(members.iter().enumerate().filter(|&(i, _)| members.health(i as u32) != Health::Failed), sb)
}

/// [`write_superblocks`] at the end of a rebuild of member `first`: its own superblock
/// first. Peers raised to the new count before it would leave it two counts behind after a
/// crash (its last superblock predates the failure), and a whole replacement would then be
/// taken for one superseded since; written first, it is never behind a peer that counts it
/// healthy.
pub fn write_superblocks_rebuilt(members: &Members, sb: &Superblock, first: u32) -> Result<(), MemberError> {
    let first = first as usize;
    let rest = members.iter().enumerate().filter(|&(i, _)| i != first && members.health(i as u32) != Health::Failed);
    put_superblocks(std::iter::once((first, &members[first])).chain(rest), sb)
}

/// Write `sb` to each (index, member), with the member's own index, synced before the next:
/// a crash leaves at most one superblock torn.
fn put_superblocks<'a>(
    members: impl IntoIterator<Item = (usize, &'a Member)>,
    sb: &Superblock,
) -> Result<(), MemberError> {
    for (i, m) in members {
        m.write(0, &Superblock { member_index: i as u32, ..sb.clone() }.encode())?;
        m.sync()?;
    }
    Ok(())
}

/// What stands in the member list for a member that is gone (a dead device), as in mdadm.
pub const MISSING: &str = "missing";

/// Open the members of one array, in any order. A member that is gone may be given as
/// [`MISSING`]: the array then opens degraded, with that index failed, if its parity
/// group can spare it.
///
/// Which members are current is decided from the superblocks' event counts. Every change of
/// the failed set bumps the count and is written to each healthy member in turn, so a crash
/// can leave the healthy members one count apart; the newest say which members failed. A
/// member that lags by one and is not among them only missed that last write (its data is
/// as current as anyone's); one that lags by two or more missed a change that completed
/// (it was away while others moved on) and is stale: failed. Opened read-write, the
/// superblocks are made to agree again, so a lag of two never arises among healthy members.
pub fn open(paths: &[PathBuf], direct: bool, read_only: bool) -> Result<Opened, OpenError> {
    open_from(Arc::new(Files), paths, direct, read_only)
}

/// [`open`] over members that `source` names; the array keeps it to open a replacement.
pub fn open_from(
    source: Arc<dyn MemberSource>,
    paths: &[PathBuf],
    direct: bool,
    read_only: bool,
) -> Result<Opened, OpenError> {
    if paths.is_empty() {
        return Err(OpenError::NoMembers);
    }
    let absent_given = paths.iter().filter(|p| p.as_os_str() == MISSING).count();
    let present: Vec<&PathBuf> = paths.iter().filter(|p| p.as_os_str() != MISSING).collect();
    if present.is_empty() {
        return Err(OpenError::AllMissing);
    }
    // Read every superblock first: the reference for the others is an intact one.
    let read = read_superblocks(&*source, &present, direct, read_only)?;
    let Some((ref_path, _, reference, _)) = read.iter().find(|r| !r.3) else {
        return Err(OpenError::AllTorn { path: present[0].clone() });
    };
    let (ref_path, reference) = ((*ref_path).clone(), reference.clone());
    let raid0 = reference.kind.raid() == RaidLevel::Raid0;
    let (found, torn_members) =
        place_members(read, &ref_path, &reference).map_err(|e| if raid0 { raid0_superblock(e) } else { e })?;
    let sb = reference;
    let absent: Vec<u32> = (0..sb.members).filter(|&i| found[i as usize].is_none()).collect();
    if paths.len() != sb.members as usize || absent.len() != absent_given {
        let (uuid, members, given) = (sb.uuid_string(), sb.members, paths.len());
        return Err(OpenError::MemberCount { uuid, members, given, missing: absent });
    }
    let (failed, newest, agree) = decide_failed(&found, &torn_members, &absent);
    refuse_superseded(&found, &torn_members, newest)?;
    let members: Vec<Member> = found
        .into_iter()
        .enumerate()
        .map(|(i, f)| f.map_or_else(|| Member::absent(i as u32, sb.member_blocks), |(m, _)| m))
        .collect();
    let sb = Superblock { member_index: 0, events: newest, failed, ..sb };
    let members = Members::new(members, parity_width(&sb));
    for &m in &sb.failed {
        members.set(m, Health::Failed);
    }
    refuse_lost_data(&sb, &members)?;
    let mut opened = Opened { sb, members, source };
    if !agree && !read_only {
        opened.sb.events += 1;
        write_superblocks(&opened.members, &opened.sb).map_err(OpenError::Agreement)?;
    }
    Ok(opened)
}

/// One member as [`open`] read it: its path, the open member, its superblock, and whether
/// that superblock was torn by a crash (see `Superblock::decode_torn`).
type ReadMember<'a> = (&'a PathBuf, Member, Superblock, bool);

/// Open and lock every member in `present` and read its superblock.
fn read_superblocks<'a>(
    source: &dyn MemberSource,
    present: &[&'a PathBuf],
    direct: bool,
    read_only: bool,
) -> Result<Vec<ReadMember<'a>>, OpenError> {
    let mut read = Vec::new();
    let mut bad: Option<(PathBuf, SuperblockError)> = None;
    for &p in present {
        let m = source.open(p, OpenOptions { direct, read_only })?;
        // Before the lock, which the earlier name's handle would make look like another process's.
        let id = m.identity();
        if let Some((first, _, sb, _)) = read.iter().find(|r: &&ReadMember<'_>| id.is_some() && r.1.identity() == id) {
            let (first, second, index) = ((*first).clone(), p.clone(), sb.member_index);
            return Err(OpenError::SameFile { first, second, index });
        }
        m.lock(!read_only)?;
        match read_superblock_or_torn(&m) {
            Ok((sb, torn)) => read.push((p, m, sb, torn)),
            Err(error) => {
                bad.get_or_insert((p.clone(), error));
            }
        }
    }
    // The peers say what the array is, and so what can be done about the damaged one.
    let Some((path, error)) = bad else { return Ok(read) };
    let raid0 = read.iter().find(|r| !r.3).is_some_and(|r| r.2.kind.raid() == RaidLevel::Raid0);
    let plain = match error {
        SuperblockError::NotSwan => OpenError::NotSwan { path },
        error => OpenError::Superblock { path, error },
    };
    Err(if raid0 { raid0_superblock(plain) } else { plain })
}

/// A RAID0 member's superblock error, with what RAID0 allows doing about it.
fn raid0_superblock(e: OpenError) -> OpenError {
    let path = match &e {
        OpenError::NotSwan { path } | OpenError::Superblock { path, .. } | OpenError::TornCorrupt { path, .. } => {
            path.clone()
        }
        _ => return e,
    };
    let why = match e {
        OpenError::NotSwan { path } => format!("{}: {}", path.display(), SuperblockError::NotSwan),
        e => e.to_string(),
    };
    OpenError::Raid0Superblock { path, why }
}

/// What every member's superblock shares: all but its index, event count and failed set.
fn shape(s: &Superblock) -> Superblock {
    Superblock { member_index: 0, events: 0, failed: Default::default(), ..s.clone() }
}

/// Each member read, checked against the intact `reference` (from `ref_path`) and put at
/// its index; and the indices of those whose superblock was torn.
type Placed = (Vec<Option<(Member, Superblock)>>, Vec<u32>);

fn place_members(
    read: Vec<ReadMember<'_>>,
    ref_path: &std::path::Path,
    reference: &Superblock,
) -> Result<Placed, OpenError> {
    let mut found: Vec<Option<(Member, Superblock)>> = Vec::new();
    let mut torn_members: Vec<u32> = Vec::new();
    for (p, m, sb, torn) in read {
        // A torn superblock is trusted only as far as it agrees with an intact one.
        let corrupt = |why| OpenError::TornCorrupt { path: p.clone(), why };
        if sb.uuid != reference.uuid {
            if torn {
                return Err(corrupt(TornWhy::OtherArray));
            }
            return Err(OpenError::TwoArrays {
                path: p.clone(),
                uuid: sb.uuid_string(),
                other: ref_path.to_path_buf(),
                other_uuid: reference.uuid_string(),
            });
        }
        if shape(&sb) != shape(reference) || (torn && sb.member_index >= reference.members) {
            if torn {
                return Err(corrupt(TornWhy::Geometry));
            }
            return Err(OpenError::GeometryDisagrees { path: p.clone() });
        }
        if m.blocks() < sb.member_blocks {
            return Err(OpenError::Truncated { path: p.clone(), blocks: m.blocks(), wanted: sb.member_blocks });
        }
        found.resize_with(sb.members as usize, || None);
        let i = sb.member_index as usize;
        if let Some((other, _)) = &found[i] {
            let (index, other) = (sb.member_index, other.path().to_path_buf());
            if torn {
                return Err(corrupt(TornWhy::Index { index, other }));
            }
            return Err(OpenError::SameIndex { first: other, second: p.clone(), index });
        }
        if torn {
            eprintln!(
                "swan: {}: superblock torn by a crash (checksum mismatch, first sector whole): taken as member {i}",
                p.display()
            );
            torn_members.push(i as u32);
        }
        found[i] = Some((m, sb));
    }
    Ok((found, torn_members))
}

/// Which members are failed, the newest event count, and whether every superblock already
/// agrees (see [`open`]): from the members `found` (some `torn`) and those `absent`.
fn decide_failed(
    found: &[Option<(Member, Superblock)>],
    torn: &[u32],
    absent: &[u32],
) -> (std::collections::BTreeSet<u32>, u64, bool) {
    let intact = |i: usize| !torn.contains(&(i as u32));
    let intact_sbs =
        || found.iter().enumerate().filter(move |&(i, _)| intact(i)).filter_map(|(_, f)| f.as_ref().map(|(_, s)| s));
    let newest = intact_sbs().map(|s| s.events).max().unwrap_or(0);
    let mut failed = std::collections::BTreeSet::new();
    for s in intact_sbs() {
        if s.events == newest {
            failed.extend(s.failed.iter().copied());
        }
    }
    let mut agree = torn.is_empty();
    for (i, (_, s)) in found.iter().enumerate().filter_map(|(i, f)| f.as_ref().map(|f| (i, f))) {
        // A torn superblock is the old or the new version of the last update: at most one
        // behind, never ahead.
        let events = if intact(i) { s.events } else { s.events.min(newest) };
        if events + 1 < newest {
            failed.insert(i as u32);
        }
        agree &= events == newest;
    }
    for &i in absent {
        // Gone without the array having recorded it: it is failed from now on.
        agree &= failed.contains(&i);
        failed.insert(i);
    }
    (failed, newest, agree)
}

/// Refuse a member whose index was rebuilt onto another device since it was last written:
/// it is two or more events behind, yet the newest superblocks count its index healthy. Kept
/// out and served around, its index would be recorded failed, and the replacement that holds
/// the index's data would then be stale too and need a rebuild of its own.
fn refuse_superseded(found: &[Option<(Member, Superblock)>], torn: &[u32], newest: u64) -> Result<(), OpenError> {
    let newest_failed: std::collections::BTreeSet<u32> = found
        .iter()
        .enumerate()
        .filter(|&(i, _)| !torn.contains(&(i as u32)))
        .filter_map(|(_, f)| f.as_ref().map(|(_, s)| s))
        .filter(|s| s.events == newest)
        .flat_map(|s| s.failed.iter().copied())
        .collect();
    for (i, (m, s)) in found.iter().enumerate().filter_map(|(i, f)| f.as_ref().map(|f| (i as u32, f))) {
        if !torn.contains(&i) && s.events + 1 < newest && !newest_failed.contains(&i) {
            let (path, events) = (m.path().to_path_buf(), s.events);
            return Err(OpenError::Superseded { member: i, path, events, newest });
        }
    }
    Ok(())
}

/// Refuse an array whose failures lost data: a failed RAID0 member, two failed members of
/// one parity group, or both metadata members.
fn refuse_lost_data(sb: &Superblock, members: &Members) -> Result<(), OpenError> {
    for &member in &sb.failed {
        if !members.has_parity() {
            return Err(OpenError::Raid0Failed { member, path: members[member as usize].path().to_path_buf() });
        }
        if let Some(peer) = members.peers(member).find(|&p| members.health(p) == Health::Failed) {
            return Err(OpenError::TwoFailed { member, peer });
        }
    }
    if sb.meta_members() as usize == META_COPIES as usize && (0..META_COPIES).all(|m| sb.failed.contains(&m)) {
        return Err(OpenError::MetadataLost);
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::member::MemoryMembers;
    use swan_core::scheme::SchemeKind;

    fn swan5(member_bytes: Option<u64>) -> CreateOptions {
        CreateOptions {
            kind: SchemeKind::Swan(RaidLevel::Raid5),
            rgroups: 1,
            ssds_per_rgroup: 3,
            member_bytes,
            segment_bytes: Some(256 << 10),
            chunk_bytes: 64 << 10,
            victim: VictimPolicy::Greedy,
            spare: None,
            force: false,
            created: 0,
        }
    }

    #[test]
    fn errors_say_which_member_and_what_is_wrong() {
        let images = MemoryMembers::new();
        let paths: Vec<PathBuf> = (0..3).map(|i| PathBuf::from(format!("m{i}"))).collect();
        let e = create_in(&*images, &paths, &swan5(None), [7; 16]).unwrap_err();
        assert_eq!(e.to_string(), "member m0 does not exist; give --member-size to create member files");
        let e = create_in(&*images, &paths[..2], &swan5(Some(64 << 20)), [7; 16]).unwrap_err();
        assert_eq!(e.to_string(), "1 R-groups × 3 SSDs per R-group need 3 members, but 2 were given");
        let sb = create_in(&*images, &paths, &swan5(Some(64 << 20)), [7; 16]).expect("create");
        let e = create_in(&*images, &paths, &swan5(Some(64 << 20)), [8; 16]).unwrap_err();
        assert!(e.to_string().ends_with("refusing to overwrite it (use --force to reuse it)"), "{e}");

        let given = [paths[0].clone(), PathBuf::from(MISSING)];
        let Err(e) = open_from(images.clone(), &given, false, true) else { panic!("opened with a member short") };
        assert_eq!(
            e.to_string(),
            format!(
                "array {} has 3 members but 2 were given (missing member index 1, 2; a member that is gone may be \
                 given as `missing`)",
                sb.uuid_string()
            )
        );
        let mut opened = open_from(images.clone(), &paths, false, true).expect("open");
        opened.sb.failed.insert(2);
        let e = opened.require_all_healthy("swan check").unwrap_err();
        assert_eq!(
            e.to_string(),
            "member 2 (m2) has failed; swan check needs every member: rebuild it first with `swan replace`"
        );
    }

    #[test]
    fn the_default_segment_is_8_mib_unless_members_hold_too_few() {
        assert_eq!(default_segment_bytes(240 << 30), 8 << 20, "an SSD");
        assert_eq!(default_segment_bytes(512 << 20), 8 << 20);
        assert_eq!(default_segment_bytes(511 << 20), 4 << 20);
        assert_eq!(default_segment_bytes(128 << 20), 2 << 20);
        assert_eq!(default_segment_bytes(64 << 20), 1 << 20);
        // Never below 64 KiB, however small the member.
        assert_eq!(default_segment_bytes(1 << 20), 64 << 10);
    }

    #[test]
    fn metadata_is_segment_aligned_and_sized_for_the_map() {
        let (c, j, t, m) = metadata_sizes(6, 32_768, 256, true);
        assert!(c * BLOCK as u64 >= 6 * 32_768 * 5, "checkpoint holds 5 bytes per block");
        assert_eq!((t, m % 256), (0, 0));
        assert!(m > 1 + 2 * c + j - 1);
        // In-place: a header and 4 bytes per member block (32 blocks), aligned to the chunk.
        assert_eq!(metadata_sizes(4, 32_768, 128, false), (0, 0, 33, 128));
    }
}
