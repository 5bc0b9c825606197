//! Where the engine's user requests come from: the [`ArrivalSource`] the engine asks for each
//! next request, and the synthetic source built on the fio-like [`Generator`].
//!
//! The engine knows only this seam; a block trace ([`crate::replay`]) is another source. A
//! source never reads a clock: a timed source states each arrival in simulated ns.

use crate::replay::ReplayError;
use crate::workload::{Arrival, ArrivalError, Generator};
use swan_core::scheme::Request;
use swan_models::Nanos;
use thiserror::Error;

/// Why a source could not be made, or could not give its next request.
#[derive(Debug, Error)]
pub enum SourceError {
    #[error(transparent)]
    Trace(#[from] ReplayError),
    /// A looped trace that gave requests on its first pass gave none on a later one.
    #[error("the trace had no request on its next pass")]
    EmptyPass,
}

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
    /// The measured window it belongs to, for a source that has windows (a trace's phases).
    pub window: Option<u16>,
}

/// A stream of user requests for the engine.
pub trait ArrivalSource {
    fn pacing(&self) -> Pacing;

    /// The next request, or `None` when the source is exhausted. Under [`Pacing::Timed`] the
    /// arrival is never earlier than `now` (the engine asks at the previous arrival). An error
    /// ends the run with [`crate::engine::SimError::Source`].
    fn next(&mut self, now: Nanos) -> Result<Option<Next>, SourceError>;

    /// Whether the source ends by itself (then the run may have no other stop rule).
    fn finite(&self) -> bool;

    /// Fraction of a finite source consumed so far, for progress.
    fn fraction_done(&self) -> Option<f64> {
        None
    }

    /// The request `distance` after the one [`ArrivalSource::next`] returned last, if the
    /// source knows it already (the engine warms the scheme's cache for it).
    fn ahead(&self, _distance: usize) -> Option<&Request> {
        None
    }
}

/// How many requests a synthetic source draws ahead of the one it hands out.
pub const LOOKAHEAD: usize = 8;

/// The fio-like generator as a source: endless, closed loop or fixed rate.
pub struct SyntheticSource {
    gen: Generator,
    arrival: Arrival,
    /// Whether the first request has been handed out (it arrives at 0).
    started: bool,
    /// Drawn ahead, in the generator's order: each request with the gap drawn before it.
    drawn: std::collections::VecDeque<(Option<Nanos>, Request)>,
}

impl SyntheticSource {
    /// Refuses an arrival process that cannot run (a rate that is not a positive finite
    /// number, burst lengths that are not).
    pub fn new(gen: Generator, arrival: Arrival) -> Result<Self, ArrivalError> {
        arrival.validate()?;
        let mut s = Self { gen, arrival, started: false, drawn: std::collections::VecDeque::new() };
        while s.drawn.len() <= LOOKAHEAD {
            s.draw();
        }
        Ok(s)
    }

    /// Draws the next gap and request from the generator, in the order it always draws them.
    fn draw(&mut self) {
        let gap = self.gen.next_gap_ns();
        let req = self.gen.next_request();
        self.drawn.push_back((gap, req));
    }
}

impl ArrivalSource for SyntheticSource {
    fn pacing(&self) -> Pacing {
        match self.arrival {
            Arrival::Closed { iodepth } => Pacing::Closed { depth: iodepth.max(1) },
            Arrival::Open { .. } | Arrival::Bursty { .. } => Pacing::Timed,
        }
    }

    fn next(&mut self, now: Nanos) -> Result<Option<Next>, SourceError> {
        // The first timed request arrives at 0; each later one the generator's gap (fixed
        // for a rate, drawn for bursts) after the last.
        self.draw();
        let (gap, req) = self.drawn.pop_front().expect("drawn ahead");
        let at = match gap {
            Some(gap) if self.started => now + gap,
            _ => now,
        };
        self.started = true;
        Ok(Some(Next { at, req, window: None }))
    }

    fn ahead(&self, distance: usize) -> Option<&Request> {
        self.drawn.get(distance.checked_sub(1)?).map(|(_, r)| r)
    }

    fn finite(&self) -> bool {
        false
    }
}
