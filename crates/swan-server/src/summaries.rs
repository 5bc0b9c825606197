//! Segment summaries read back from the members: GC learns a victim's P2L from its summary
//! (the array keeps no P2L of sealed segments in memory), and `swan check` compares each
//! summary with the map.

use crate::member::{MemberError, BLOCK};
use crate::members::Members;
use swan_core::geometry::Geometry;
use swan_core::scheme::SummarySource;
use swan_core::summary::Summary;

/// Read the summary blocks of `segment` into `buf` (resized to fit). The summary occupies
/// the segment's last slots, which may lie on several members: read them slot by slot (a
/// failed member's from its parity group: a sealed segment's rows are whole).
pub fn read_raw(members: &Members, geo: &Geometry, segment: u64, buf: &mut Vec<u8>) -> Result<(), MemberError> {
    buf.resize(geo.summary_blocks as usize * BLOCK, 0);
    let payload = geo.payload_slots();
    for i in 0..geo.summary_blocks {
        let (m, b) = geo.slot_location(segment, payload + i);
        members
            .read(m, b, &mut buf[i as usize * BLOCK..(i as usize + 1) * BLOCK])
            .map_err(|e| e.into_member_error(members, m, b, 1))?;
    }
    Ok(())
}

/// The summary of `segment` as it was sealed with `seq`, if it is on the members whole: it
/// reads, its checksum holds, and it names that segment and sequence number (a torn one,
/// or one left from an earlier use of the segment, does not).
pub fn read_sealed(members: &Members, geo: &Geometry, segment: u64, seq: u64, buf: &mut Vec<u8>) -> Option<Summary> {
    read_raw(members, geo, segment, buf).ok()?;
    Summary::decode(buf).ok().filter(|s| s.segment == segment && s.seq == seq)
}

/// GC's [`SummarySource`] over the members. A summary that cannot be read or decoded is
/// `None`: the scheme then rebuilds the victim's P2L from its map (slower, never wrong).
pub struct MemberSummaries<'a> {
    pub members: &'a Members,
    pub buf: &'a mut Vec<u8>,
}

impl SummarySource for MemberSummaries<'_> {
    fn read_summary(&mut self, geo: &Geometry, segment: u64) -> Option<Summary> {
        match read_raw(self.members, geo, segment, self.buf) {
            Ok(()) => Summary::decode(self.buf).ok(),
            Err(e) => {
                eprintln!("swan: reading the summary of segment {segment}: {e}");
                None
            }
        }
    }
}
