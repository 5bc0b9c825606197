//! `swan repair-superblock`: rewrite the one member superblock that cannot be read from
//! its peers'. A RAID0 member whose superblock was damaged has intact data but cannot be
//! served `missing` or rebuilt (no parity); every field of its superblock but its index is
//! the same on every member, and its index is the one no peer holds.

use super::{read_superblock, shape, RepairError};
use crate::layout::Superblock;
use crate::member::{Files, Member, MemberSource, OpenOptions};
use std::path::PathBuf;

/// The superblock written: to which member file, as which index.
#[derive(Debug)]
pub struct Repaired {
    pub path: PathBuf,
    pub index: u32,
    pub sb: Superblock,
}

/// Rewrite the damaged superblock among `paths` (every member of one array, offline) from
/// the others': refused unless exactly one is unreadable and the rest agree on the array.
pub fn repair_superblock(paths: &[PathBuf]) -> Result<Repaired, RepairError> {
    let mut good: Vec<(PathBuf, Member, Superblock)> = Vec::new();
    let mut bad: Vec<(PathBuf, Member)> = Vec::new();
    for p in paths {
        let m = Files.open(p, OpenOptions { direct: false, read_only: false }).map_err(super::OpenError::from)?;
        let same = good.iter().map(|g| (&g.0, &g.1)).chain(bad.iter().map(|b| (&b.0, &b.1)));
        if let Some((first, _)) = same.into_iter().find(|(_, o)| o.identity().is_some() && o.identity() == m.identity())
        {
            let (first, second) = (first.clone(), p.clone());
            return Err(super::OpenError::SameFile { first, second, index: 0 }.into());
        }
        m.lock(true).map_err(super::OpenError::from)?;
        // A checksum mismatch is damage here, torn by a crash or not: the peers say it all.
        match read_superblock(&m) {
            Ok(sb) => good.push((p.clone(), m, sb)),
            Err(_) => bad.push((p.clone(), m)),
        }
    }
    let (path, member) = match bad.len() {
        0 => return Err(RepairError::NothingToRepair),
        1 => bad.pop().expect("one"),
        _ => {
            let names: Vec<String> = bad.iter().map(|b| b.0.display().to_string()).collect();
            return Err(RepairError::SeveralDamaged { paths: names.join(", ") });
        }
    };
    let Some((ref_path, _, reference)) = good.first() else { return Err(RepairError::NoPeers) };
    if paths.len() != reference.members as usize {
        let (uuid, members, given) = (reference.uuid_string(), reference.members, paths.len());
        return Err(RepairError::MemberCount { uuid, members, given });
    }
    let mut held = vec![false; reference.members as usize];
    for (p, _, sb) in &good {
        let taken = held.get(sb.member_index as usize).copied().unwrap_or(true);
        if shape(sb) != shape(reference) || taken {
            return Err(RepairError::Disagree { path: p.clone(), reference: ref_path.clone() });
        }
        held[sb.member_index as usize] = true;
    }
    let index = held.iter().position(|&h| !h).expect("one index left for one member") as u32;
    if member.blocks() < reference.member_blocks {
        let (blocks, wanted) = (member.blocks(), reference.member_blocks);
        return Err(RepairError::Truncated { path, blocks, wanted });
    }
    // The newest count and failed set, as open would work them out: the member then agrees.
    let newest = good.iter().map(|g| &g.2).max_by_key(|s| s.events).expect("a peer");
    let sb = Superblock { member_index: index, ..newest.clone() };
    member.write(0, &sb.encode())?;
    member.sync()?;
    Ok(Repaired { path, index, sb })
}
