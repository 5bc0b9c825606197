//! Where a GC domain's next page goes: a cursor over the domain's units that stays on a
//! unit for a chunk of pages and then moves to the next ([`super::config::WriteLayout`]).
//! A chunk of one page is page striping. The page FTL keeps one cursor for host writes and,
//! with a GC frontier ([`super::config::SsdConfig::gc_frontier`]), a second for GC copies,
//! so one stream's pages are not interleaved with the other's on the same units' blocks.

#[derive(Clone, Debug)]
pub(crate) struct Cursor {
    /// The units it visits: `first..first + units`.
    first: u32,
    units: u32,
    /// Unit that receives the next page.
    unit: u32,
    /// Pages a unit receives before the cursor moves on.
    chunk: u32,
    /// Pages the current unit still receives before the cursor moves on.
    left: u32,
}

impl Cursor {
    /// A cursor over `units` units from `first`, `chunk` (≥ 1) pages to each in turn.
    pub(crate) fn new(first: u32, units: u32, chunk: u32) -> Self {
        let chunk = chunk.max(1);
        Self { first, units, unit: first, chunk, left: chunk }
    }

    /// The unit that receives the next page.
    #[inline]
    pub(crate) fn next(&mut self) -> u32 {
        let unit = self.unit;
        self.left -= 1;
        if self.left == 0 {
            self.left = self.chunk;
            self.unit = if unit + 1 == self.first + self.units { self.first } else { unit + 1 };
        }
        unit
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_chunk_of_one_page_stripes_and_larger_chunks_stay_put() {
        let mut striped = Cursor::new(4, 3, 1);
        let got: Vec<u32> = (0..7).map(|_| striped.next()).collect();
        assert_eq!(got, [4, 5, 6, 4, 5, 6, 4]);
        let mut chunked = Cursor::new(0, 3, 2);
        let got: Vec<u32> = (0..8).map(|_| chunked.next()).collect();
        assert_eq!(got, [0, 0, 1, 1, 2, 2, 0, 0]);
    }
}
