//! The array resumes by itself once a member's file system has room again.
//!
//! A write that finds a member's file system full past the member timeout ends durability
//! like any failed write ([`super::durability`]): the map may name slots the write never
//! filled. Unlike an I/O error, nothing was written back and dropped, so what a restart
//! would recover is all on the members (and in the page cache, as after `kill -9`). While
//! durability is stopped so, writes are refused (ENOSPC) and nothing is journaled, reads go
//! on, and every [`super::full_stop::PROBE_EVERY`] the engine writes back, unchanged, the blocks the failed
//! writes were for ([`Member::probe_room`]). When they fit, it runs the recovery a restart
//! runs (newest checkpoint, synced records, tail while its blocks' CRCs match) on the same
//! members, opens the result for writes as a start does (parity of adopted rows, a fresh
//! checkpoint) and serves from it: the state is the one a `kill -9` at the stop would have
//! left, which the crash tests check recovery against.
//!
//! Only a full file system resumes so. After any other error (EIO, a failed sync, a member
//! failed or being rebuilt) the page cache may hold what the members lost, and only a
//! restart recovers.

use super::store::Store;
use super::EngineError;
use crate::array::Opened;
use crate::member::Member;
use crate::members::Members;

/// Recover the array in-process as a restart would, from what `old`'s members hold, and
/// open it for writes (parity of adopted rows, a fresh checkpoint). `old` must have no
/// member I/O in flight. On success `old` is to be dropped; its counters carry over. On
/// failure `old` is as it was (still stopped), bar any parity the new one wrote, which is
/// the XOR of what the rows hold and so harmless.
pub(super) fn recover_in_place(old: &mut Store) -> Result<Store, EngineError> {
    let sb = old.io.sb.clone();
    let list: Vec<Member> = old.io.members.to_vec();
    let members = Members::new(list, crate::array::parity_width(&sb));
    let opened = Opened { sb, members, source: old.io.source() };
    let mut recovered = crate::array::recover(&opened)?;
    // Settings a start applies to the recovered scheme (`swan serve --gc-target`).
    if let Some(target) = old.scheme.swan_gc_target() {
        if recovered.scheme.swan_gc_target() != Some(target) {
            // It was accepted for this array once, so it is again.
            let _ = recovered.scheme.set_swan_gc_target(target);
        }
    }
    let opts = old.reopen_options();
    let mut new = Store::new(opened, recovered, opts, old.clock.clone(), old.exec.pool.is_some())?;
    if let Err(e) = new.open_for_writes() {
        old.exec.emu = new.exec.emu.take();
        return Err(e);
    }
    new.carry_counters(old);
    Ok(new)
}
