//! `swan create`: lay an array out over new members and write its starting state.
//!
//! The superblocks are written last, so a create that dies half-way leaves members no swan
//! will mistake for an array; a create that fails removes only the files it made itself.

use super::*;

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
    /// The members are zoned devices, each segment one zone of each member (`--segment`
    /// must then be unset or the zone size); members `create` makes are emulated in files
    /// (`member/zoned.rs`). None: members written anywhere.
    pub zoned: Option<ZonedMembers>,
}

/// What zoned members `swan create` makes (and expects).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct ZonedMembers {
    pub zone_bytes: u64,
    /// Zones each emulated member lets be open or active at once (a ZN540 allows 14);
    /// None: no limit.
    pub max_active: Option<u32>,
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
    let spare = spare_share(o)?;
    let (zoned, o) = match o.zoned {
        Some(z) => {
            let (layout, o) = zoned_options(o, members, z, spare)?;
            (Some(layout), o)
        }
        None => (None, o.clone()),
    };
    let o = &o;
    let mut opened: Vec<Member> = Vec::with_capacity(paths.len());
    for p in paths {
        let m = open_new_member(source, p, o, zoned.as_ref(), &opened, created)?;
        opened.push(m);
    }
    let member_blocks = match o.member_bytes {
        Some(b) => b / BLOCK as u64,
        None => opened.iter().map(Member::blocks).min().unwrap_or(0),
    };
    let mut sb = laid_out(o, members, member_blocks, spare, uuid)?;
    if o.zoned.is_some() {
        sb.zoned = true;
        for m in &opened {
            check_zoned_member(m, &sb)?;
        }
    }
    format_members(&opened, &sb)?;
    for m in &opened {
        m.sync()?;
    }
    put_superblocks(opened.iter().enumerate(), &sb)?;
    Ok(sb)
}

/// The superblock [`lay_out`] gives, or the error that says what to change.
fn laid_out(
    o: &CreateOptions,
    members: u32,
    member_blocks: u64,
    spare: f64,
    uuid: [u8; 16],
) -> Result<Superblock, CreateError> {
    match lay_out(o, members, member_blocks, spare, uuid) {
        Ok(sb) if sb.volume_blocks > 0 => Ok(sb),
        Ok(sb) => Err(CreateError::NoRoom {
            member_mib: (member_blocks * BLOCK as u64) >> 20,
            meta_mib: (sb.meta_blocks * BLOCK as u64) >> 20,
            advice: size_advice(o, members, spare),
        }),
        Err(error @ GeometryError::MemberTooSmall { .. }) => {
            Err(CreateError::MembersTooSmall { error, advice: size_advice(o, members, spare) })
        }
        Err(e) => Err(e.into()),
    }
}

/// A zoned array's options: the segment is one zone, and members made here are emulated
/// zoned devices whose conventional zones are exactly the metadata area and whose
/// sequential zones fill the rest (the member size rounds down to whole zones). Returns the
/// layout of such a member (meaningful when `o` gives a member size) and the options with
/// the segment and member size so settled.
fn zoned_options(
    o: &CreateOptions,
    members: u32,
    zoned: ZonedMembers,
    spare: f64,
) -> Result<(ZonedLayout, CreateOptions), CreateError> {
    let zone_bytes = zoned.zone_bytes;
    let zone_blocks = u64::from(blocks_of(zone_bytes, "the zone size")?);
    if !o.kind.is_log_structured() {
        return Err(CreateError::ZonedInPlace);
    }
    if o.segment_bytes.is_some_and(|s| s != zone_bytes) {
        return Err(CreateError::ZonedSegment { segment: o.segment_bytes.unwrap_or(0), zone: zone_bytes });
    }
    let mut o = CreateOptions { segment_bytes: Some(zone_bytes), ..o.clone() };
    let mut layout = ZonedLayout {
        conventional_blocks: 0,
        zones: ZoneGeometry {
            zones: 0,
            zone_blocks,
            capacity_blocks: zone_blocks,
            max_open: zoned.max_active,
            max_active: zoned.max_active,
        },
    };
    if let Some(bytes) = o.member_bytes {
        // The metadata shrinks (never grows) as the member does, so this settles in a step
        // or two on a member size that is the metadata and whole zones.
        let mut member_blocks = bytes / BLOCK as u64;
        loop {
            let sb = laid_out(&o, members, member_blocks, spare, [0; 16])?;
            let zones = (member_blocks - sb.meta_blocks) / zone_blocks;
            let whole = sb.meta_blocks + zones * zone_blocks;
            if whole == member_blocks {
                layout.conventional_blocks = sb.meta_blocks;
                layout.zones.zones =
                    u32::try_from(zones).map_err(|_| CreateError::TooLarge { what: "the zone count", bytes: zones })?;
                break;
            }
            member_blocks = whole;
        }
        o.member_bytes = Some(layout.member_blocks() * BLOCK as u64);
    }
    Ok((layout, o))
}

/// Refuse a member of a zoned array `sb` that is not the zoned device it needs.
fn check_zoned_member(m: &Member, sb: &Superblock) -> Result<(), CreateError> {
    match zoned_mismatch(m, sb) {
        Some(why) => Err(CreateError::ZonedMember { path: m.path().to_path_buf(), why }),
        None => Ok(()),
    }
}

/// Open (creating the file if `o` gives a size, and noting it in `created`; an emulated
/// zoned device of `zoned` if given) and lock one member of a new array, and refuse it if
/// it is one of the `earlier` members under another name, too small or, unless `o.force`,
/// a member of another swan array.
fn open_new_member(
    source: &dyn MemberSource,
    p: &std::path::Path,
    o: &CreateOptions,
    zoned: Option<&ZonedLayout>,
    earlier: &[Member],
    created: &mut Vec<PathBuf>,
) -> Result<Member, CreateError> {
    let path = || p.to_path_buf();
    if !source.exists(p) {
        let bytes = o.member_bytes.ok_or_else(|| CreateError::MemberMissing { path: path() })?;
        match zoned {
            Some(layout) => source.create_zoned(p, layout, false)?,
            None => source.create(p, bytes, false)?,
        }
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
    if let ArrayScheme::Log(la) = &scheme {
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
        zoned: false,
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
