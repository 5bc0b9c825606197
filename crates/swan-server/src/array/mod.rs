//! Creating an array over members, opening it again, and recovering its state.
//!
//! `create` writes the superblocks last, so a create that dies half-way leaves members no
//! swan will mistake for an array. `open` finds each member's place from its superblock,
//! so members may be named in any order. `recover` loads the newest whole checkpoint and
//! rolls the journal forward over it (FORMAT.md, "Recovery").

mod create;
mod error;
mod recover;
mod repair;

pub use create::{create, create_in, default_segment_bytes, metadata_sizes, CreateOptions, ZonedMembers};
pub use error::{CreateError, OpenError, RecoverError, RepairError, TornWhy};
pub use recover::{recover, Recovered};
pub use repair::{repair_superblock, Repaired};

use crate::checkpoint;
use crate::layout::{Superblock, SuperblockError, META_COPIES};
use crate::member::{Files, Member, MemberError, MemberSource, OpenOptions, ZonedLayout, BLOCK};
use crate::members::{Health, Members};
use std::path::PathBuf;
use std::sync::Arc;
use swan_core::geometry::{GeometryError, RaidLevel};
use swan_core::io::{IoKind, IoPlan};
use swan_core::scheme::{ArrayScheme, SchemeKind};
use swan_core::victim::VictimPolicy;
use swan_models::zns::zones::ZoneGeometry;

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

/// Why member `m` cannot be a member of `sb`'s array as a zoned device, or as a device
/// written anywhere: None if it fits.
pub(crate) fn zoned_mismatch(m: &Member, sb: &Superblock) -> Option<String> {
    match (m.zoned(), sb.zoned) {
        (None, false) => None,
        (None, true) => {
            Some("it is not a zoned device (an emulated one is made only for a member that does not exist yet)".into())
        }
        (Some(_), false) => Some("it is a zoned device, and the array was made for members written anywhere".into()),
        (Some(l), true)
            if l.zones.zone_blocks != u64::from(sb.segment_rows) || l.zones.capacity_blocks != l.zones.zone_blocks =>
        {
            Some(format!(
                "its zones are {} blocks with {} writable; the array needs zones of {} blocks, all writable",
                l.zones.zone_blocks, l.zones.capacity_blocks, sb.segment_rows
            ))
        }
        (Some(l), true) if l.conventional_blocks != sb.meta_blocks => Some(format!(
            "it has {} conventional blocks; the array's metadata needs exactly {}",
            l.conventional_blocks, sb.meta_blocks
        )),
        (Some(_), true) => None,
    }
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
    let Decided { failed, newest, agree, behind } = decide_failed(&found, &torn_members, &absent);
    refuse_superseded(&found, &torn_members, newest)?;
    // Past the refusal of a superseded member, what is left behind is a torn superblock two
    // counts back: counted failed by the counts alone, said, or the member would come up
    // failed with nothing in the log to tell why.
    for (m, events) in behind {
        eprintln!(
            "swan: member {m} ({}): its superblock is at event {events}, the newest at {newest}: it missed the \
             array's updates since, so it is counted failed (rebuild it: swan replace --member {m} NEW ...)",
            paths[m as usize].display()
        );
    }
    for (m, _) in found.iter().flatten() {
        if let Some(why) = zoned_mismatch(m, &sb) {
            return Err(OpenError::Zoned { path: m.path().to_path_buf(), why });
        }
    }
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

/// What the members' superblocks say of the array, as [`decide_failed`] reads them.
struct Decided {
    failed: std::collections::BTreeSet<u32>,
    /// The newest superblock's event count.
    newest: u64,
    /// Every member's superblock is the newest and whole.
    agree: bool,
    /// Members the newest superblocks do not count failed, counted failed for being two or
    /// more events behind, with their own count.
    behind: Vec<(u32, u64)>,
}

/// Which members are failed, the newest event count, and whether every superblock already
/// agrees (see [`open`]): from the members `found` (some `torn`) and those `absent`.
fn decide_failed(found: &[Option<(Member, Superblock)>], torn: &[u32], absent: &[u32]) -> Decided {
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
    let mut behind = Vec::new();
    for (i, (_, s)) in found.iter().enumerate().filter_map(|(i, f)| f.as_ref().map(|f| (i, f))) {
        // A torn superblock is the old or the new version of the last update: at most one
        // behind, never ahead.
        let events = if intact(i) { s.events } else { s.events.min(newest) };
        if events + 1 < newest && failed.insert(i as u32) {
            behind.push((i as u32, events));
        }
        agree &= events == newest;
    }
    for &i in absent {
        // Gone without the array having recorded it: it is failed from now on.
        agree &= failed.contains(&i);
        failed.insert(i);
    }
    Decided { failed, newest, agree, behind }
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
            zoned: None,
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
