//! Stripe-row parity over the members: the XOR that checks a row (`swan check`, `swan
//! scrub`), rebuilds one block of it from the others (scrub, verified reads), and that the
//! engine accumulates as log-structured rows fill.

use crate::member::{Member, MemberError};

/// `acc ^= data`, byte by byte.
pub fn xor(acc: &mut [u8], data: &[u8]) {
    for (a, d) in acc.iter_mut().zip(data) {
        *a ^= d;
    }
}

/// The XOR of the block at `block` on each of `members`, into `acc` (`one` is scratch).
pub fn row_xor<'a>(
    members: impl Iterator<Item = &'a Member>,
    block: u64,
    one: &mut [u8],
    acc: &mut [u8],
) -> Result<(), MemberError> {
    acc.fill(0);
    for m in members {
        m.read(block, one)?;
        xor(acc, one);
    }
    Ok(())
}

/// Whether a stripe row (data and parity at `block` on `members`) XORs to zero; `acc` is
/// left holding the XOR.
pub fn row_is_consistent<'a>(
    members: impl Iterator<Item = &'a Member>,
    block: u64,
    one: &mut [u8],
    acc: &mut [u8],
) -> Result<bool, MemberError> {
    row_xor(members, block, one, acc)?;
    Ok(acc.iter().all(|&x| x == 0))
}
