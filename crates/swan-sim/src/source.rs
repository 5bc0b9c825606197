//! Where the engine's user requests come from: the [`ArrivalSource`] the engine asks for each
//! next request, and the synthetic source built on the fio-like [`Generator`].
//!
//! The engine knows only this seam; a block trace ([`crate::replay`]) is another source. A
//! source never reads a clock: a timed source states each arrival in simulated ns.

use crate::workload::{Arrival, Generator};
use swan_core::scheme::Request;
use swan_models::Nanos;

/// How a source paces its requests.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Pacing {
    /// Keep `depth` requests outstanding: the engine asks for the next one when one completes.
    Closed { depth: u32 },
    /// Each request carries its arrival time, whatever the array is doing (open loop).
    Timed,
}

/// One request and when it arrives (simulated ns; ignored under [`Pacing::Closed`]).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Next {
    pub at: Nanos,
    pub req: Request,
}

/// A stream of user requests for the engine.
pub trait ArrivalSource {
    fn pacing(&self) -> Pacing;

    /// The next request, or `None` when the source is exhausted. Under [`Pacing::Timed`] the
    /// arrival is never earlier than `now` (the engine asks at the previous arrival). An error
    /// ends the run with [`crate::engine::SimError::Source`].
    fn next(&mut self, now: Nanos) -> Result<Option<Next>, String>;

    /// Whether the source ends by itself (then the run may have no other stop rule).
    fn finite(&self) -> bool;

    /// Fraction of a finite source consumed so far, for progress.
    fn fraction_done(&self) -> Option<f64> {
        None
    }
}

/// The fio-like generator as a source: endless, closed loop or fixed rate.
pub struct SyntheticSource {
    gen: Generator,
    arrival: Arrival,
    /// Whether the first request has been drawn (it arrives at 0).
    started: bool,
}

impl SyntheticSource {
    /// Refuses an arrival process that cannot run (a rate that is not a positive finite
    /// number, burst lengths that are not).
    pub fn new(gen: Generator, arrival: Arrival) -> Result<Self, String> {
        arrival.validate()?;
        Ok(Self { gen, arrival, started: false })
    }
}

impl ArrivalSource for SyntheticSource {
    fn pacing(&self) -> Pacing {
        match self.arrival {
            Arrival::Closed { iodepth } => Pacing::Closed { depth: iodepth.max(1) },
            Arrival::Open { .. } | Arrival::Bursty { .. } => Pacing::Timed,
        }
    }

    fn next(&mut self, now: Nanos) -> Result<Option<Next>, String> {
        // The first timed request arrives at 0; each later one the generator's gap (fixed
        // for a rate, drawn for bursts) after the last.
        let at = match self.gen.next_gap_ns() {
            Some(gap) if self.started => now + gap,
            _ => now,
        };
        self.started = true;
        Ok(Some(Next { at, req: self.gen.next_request() }))
    }

    fn finite(&self) -> bool {
        false
    }
}
