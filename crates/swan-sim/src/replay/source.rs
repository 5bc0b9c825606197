//! A trace as the simulator's request source, and the engine built around it.

use super::{open, ReplayMode, ReplayReport, Replayer, WindowIndex};
use crate::engine::{build, build_synthetic, Built, SimConfig, SimError};
use crate::source::{ArrivalSource, Next, Pacing, SourceError};
use crate::trace::TraceOp;
use std::io::BufRead;
use swan_core::scheme::{ReqOp, Request};
use swan_models::Nanos;

/// Replays a trace into the engine: timed (recorded, accelerated) or a closed loop.
pub struct TraceSource<R> {
    replayer: Replayer<R>,
    pacing: Pacing,
    windows: WindowIndex,
}

impl<R: BufRead> TraceSource<R> {
    /// `windows`: the windows of recorded time each request is measured in (may be empty).
    pub fn new(replayer: Replayer<R>, mode: ReplayMode, windows: WindowIndex) -> Self {
        let pacing = match mode {
            ReplayMode::Closed(depth) => Pacing::Closed { depth },
            ReplayMode::Recorded | ReplayMode::Accel(_) => Pacing::Timed,
        };
        TraceSource { replayer, pacing, windows }
    }
}

impl<R: BufRead> ArrivalSource for TraceSource<R> {
    fn pacing(&self) -> Pacing {
        self.pacing
    }

    fn next(&mut self, now: Nanos) -> Result<Option<Next>, SourceError> {
        let Some(r) = self.replayer.next() else { return Ok(None) };
        let r = r?;
        let op = match r.op {
            TraceOp::Read => ReqOp::Read,
            TraceOp::Write => ReqOp::Write,
        };
        // Pieces are at most MAX_REQUEST_BLOCKS, far below u32::MAX.
        let blocks = u32::try_from(r.blocks).expect("a replay request fits in u32 blocks");
        let window = self.windows.find(r.trace_ns);
        Ok(Some(Next { at: r.at_ns.max(now), req: Request::new(op, r.block, blocks), window }))
    }

    fn finite(&self) -> bool {
        true
    }

    fn fraction_done(&self) -> Option<f64> {
        Some(self.replayer.records_done() as f64 / self.replayer.records_total().max(1) as f64)
    }
}

/// The engine for `cfg`: its trace replayed when `cfg.trace` is set (then with what the
/// replay states), its synthetic workload otherwise. Reads the trace once here (format,
/// errors, span) and streams it again during the run.
pub fn engine(cfg: &SimConfig) -> Result<(Built, Option<ReplayReport>), SimError> {
    let Some(spec) = &cfg.trace else { return Ok((build_synthetic(cfg.clone())?, None)) };
    let trace = open(spec)?;
    let mut report = None;
    let engine = build(cfg.clone(), |volume_blocks| {
        report = Some(trace.report(spec, volume_blocks));
        let replayer = trace.replayer(spec, volume_blocks)?;
        Ok(Box::new(TraceSource::new(replayer, spec.mode, WindowIndex::new(&spec.windows))))
    })?;
    Ok((engine, report))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::replay::ReplayError;

    /// The run's error carries the failed read's cause, for the CLI to print after it.
    #[test]
    fn a_source_error_keeps_its_cause() {
        let source = std::io::Error::other("disk on fire");
        let e = SimError::from(SourceError::from(ReplayError::Read { path: "t.mqsim".into(), line: 5, source }));
        let mut text = e.to_string();
        let mut cause = std::error::Error::source(&e);
        while let Some(c) = cause {
            text = format!("{text}: {c}");
            cause = c.source();
        }
        assert_eq!(text, "t.mqsim:5: read failed: disk on fire");
    }
}
