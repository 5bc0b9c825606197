//! The words the commands of both `swan`'s faces accept — sizes, on/off, read rules, policy
//! names — parsed once here, so that `swan serve` (the product) and `swan sim` (the
//! laboratory) take the same words and mean the same thing by them.

pub mod names;
pub mod read_args;
pub mod units;

pub use names::parse_victim;
pub use read_args::{parse_on_off, ReadArgs};
