//! The seam between mapping and timing. An FTL decides where pages go and what internal
//! work (GC copies, merges, erases) that takes, and reports each NAND operation through
//! [`Nand`]; whoever implements it decides what the operation costs. The device charges
//! it to dies and channels ([`super::device`]); aging ignores time ([`Untimed`]).

/// NAND operations an FTL asks for, named by the unit (die) that performs them.
pub(crate) trait Nand {
    /// A host page is programmed on `die`.
    fn program(&mut self, die: u32);
    /// The device copies a valid page from `from` to `to` (read, then program).
    fn copy(&mut self, from: u32, to: u32);
    /// `n` such copies; lets untimed aging skip per-page work on block merges.
    fn copy_many(&mut self, from: u32, to: u32, n: u32) {
        for _ in 0..n {
            self.copy(from, to);
        }
    }
    /// The device copies a valid page inside `die` by copy-back: read and program there,
    /// the data never leaving the die.
    fn copy_back(&mut self, die: u32);
    /// A block on `die` is erased.
    fn erase(&mut self, die: u32);
}

/// Mapping without time: aging and warm-up, which the paper does before measuring.
pub(crate) struct Untimed;

impl Nand for Untimed {
    fn program(&mut self, _die: u32) {}
    fn copy(&mut self, _from: u32, _to: u32) {}
    fn copy_many(&mut self, _from: u32, _to: u32, _n: u32) {}
    fn copy_back(&mut self, _die: u32) {}
    fn erase(&mut self, _die: u32) {}
}
