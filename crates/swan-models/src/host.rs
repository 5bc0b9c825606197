//! The host: the CPU a request's path crosses outside the SSDs, as a model in virtual time.
//!
//! A served request crosses the client (fio's submit and reap), the server's connection
//! reader (the request and its payload off the socket), the engine (planning and carrying
//! the member operations out), the member SSDs, and the engine again (its reply, the
//! journal). Each of these is one thread, so one request at a time, in arrival order; and
//! every thread runs on one of a few cores shared with all the others. GC's member
//! operations are carried out by the engine thread too, and take its time from user requests.
//!
//! The model is that, as busy-until times like [`crate::link`]'s: each stage is a FIFO of one
//! thread, a job on it starts once its thread is free and a core is free, and holds both for
//! its cost, `per_request_ns + per_kib_ns × KiB`. A runnable job waits for the earliest core
//! to come free; it does not fill an idle gap before a core's booked work (cores are booked
//! at the time a job becomes ready, in event order). The costs are measured on the machine
//! the model describes (`swan host fit`, docs/host-model.md); the paper's own host is a
//! preset chosen on its Fig. 1.

use crate::Nanos;
use serde::{Deserialize, Serialize};
use thiserror::Error;

/// What one job on a stage costs: a fixed part and a part per KiB it carries.
#[derive(Clone, Copy, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct StageCost {
    pub per_request_ns: f64,
    pub per_kib_ns: f64,
}

impl StageCost {
    pub fn of(&self, bytes: u64) -> Nanos {
        (self.per_request_ns + self.per_kib_ns * bytes as f64 / 1024.0).max(0.0).round() as Nanos
    }
}

/// The stages of a request's path that use the host's CPU.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Stage {
    /// The client's own work per request (fio's submit and reap), on the same cores.
    Client = 0,
    /// The server's connection reader: the request and its payload off the socket.
    Reader = 1,
    /// The engine: taking the request, planning it, carrying its member operations out;
    /// and, as [`Stage::Engine`] too, its reply and journal record once the members are done
    /// ([`HostModel::engine_out`]) and GC's member operations ([`HostModel::gc`]).
    Engine = 2,
}

/// A host: its cores and the cost of each stage (see the module comment).
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct HostModel {
    /// What this model describes: "this machine" with how it was fitted, or a preset's name.
    pub name: String,
    /// Cores the client's and the server's threads share.
    pub cores: u32,
    pub client: StageCost,
    pub reader: StageCost,
    /// The engine's part before the member I/O (receiving, planning, carrying out).
    pub engine_in: StageCost,
    /// The engine's part after it (the reply, the journal, sync points).
    pub engine_out: StageCost,
    /// The engine's cost per GC member operation and per KiB GC reads or writes.
    pub gc: StageCost,
}

#[derive(Debug, Error, PartialEq)]
pub enum HostModelError {
    #[error("host model '{name}': cores is 0; a host has at least one core")]
    NoCores { name: String },
    #[error("host model '{name}': {stage} has a negative or non-finite cost ({value}); every cost is ≥ 0 ns")]
    BadCost { name: String, stage: &'static str, value: f64 },
}

impl HostModel {
    /// Refuse a model no host could be.
    pub fn validate(&self) -> Result<(), HostModelError> {
        if self.cores == 0 {
            return Err(HostModelError::NoCores { name: self.name.clone() });
        }
        for (stage, c) in [
            ("client", self.client),
            ("reader", self.reader),
            ("engine_in", self.engine_in),
            ("engine_out", self.engine_out),
            ("gc", self.gc),
        ] {
            for value in [c.per_request_ns, c.per_kib_ns] {
                if !value.is_finite() || value < 0.0 {
                    return Err(HostModelError::BadCost { name: self.name.clone(), stage, value });
                }
            }
        }
        Ok(())
    }
}

/// The host's threads and cores in virtual time.
#[derive(Clone, Debug)]
pub struct Host {
    model: HostModel,
    threads_free: [Nanos; 3],
    cores_free: Vec<Nanos>,
    /// CPU time booked, per stage, for reports.
    busy_ns: [Nanos; 3],
}

impl Host {
    pub fn new(model: HostModel) -> Result<Self, HostModelError> {
        model.validate()?;
        let cores = vec![0; model.cores as usize];
        Ok(Host { model, threads_free: [0; 3], cores_free: cores, busy_ns: [0; 3] })
    }

    pub fn model(&self) -> &HostModel {
        &self.model
    }

    /// A job of `cost_ns` on `stage`, ready at `ready`: when it is done.
    pub fn run(&mut self, stage: Stage, ready: Nanos, cost_ns: Nanos) -> Nanos {
        let (core, core_free) =
            self.cores_free.iter().copied().enumerate().min_by_key(|&(_, t)| t).expect("validated: ≥ 1 core");
        let start = ready.max(self.threads_free[stage as usize]).max(core_free);
        let done = start + cost_ns;
        self.threads_free[stage as usize] = done;
        self.cores_free[core] = done;
        self.busy_ns[stage as usize] += cost_ns;
        done
    }

    /// The client's work on a request of `bytes`, ready at `ready`.
    pub fn client(&mut self, ready: Nanos, bytes: u64) -> Nanos {
        let c = self.model.client.of(bytes);
        self.run(Stage::Client, ready, c)
    }

    /// The connection reader's.
    pub fn reader(&mut self, ready: Nanos, bytes: u64) -> Nanos {
        let c = self.model.reader.of(bytes);
        self.run(Stage::Reader, ready, c)
    }

    /// The engine's, before the member I/O.
    pub fn engine_in(&mut self, ready: Nanos, bytes: u64) -> Nanos {
        let c = self.model.engine_in.of(bytes);
        self.run(Stage::Engine, ready, c)
    }

    /// The engine's, after it.
    pub fn engine_out(&mut self, ready: Nanos, bytes: u64) -> Nanos {
        let c = self.model.engine_out.of(bytes);
        self.run(Stage::Engine, ready, c)
    }

    /// The engine's work on `ops` GC member operations carrying `bytes`.
    pub fn gc(&mut self, ready: Nanos, ops: u64, bytes: u64) -> Nanos {
        let g = self.model.gc;
        let c = (g.per_request_ns * ops as f64 + g.per_kib_ns * bytes as f64 / 1024.0).max(0.0).round() as Nanos;
        self.run(Stage::Engine, ready, c)
    }

    /// CPU time booked on each stage so far: client, reader, engine.
    pub fn busy_ns(&self) -> [Nanos; 3] {
        self.busy_ns
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn model(cores: u32, client: f64, reader: f64, engine: f64) -> HostModel {
        let c = |ns| StageCost { per_request_ns: ns, per_kib_ns: 0.0 };
        HostModel {
            name: "test".into(),
            cores,
            client: c(client),
            reader: c(reader),
            engine_in: c(engine),
            engine_out: c(0.0),
            gc: c(0.0),
        }
    }

    #[test]
    fn one_thread_serves_one_job_at_a_time_in_order() {
        let mut h = Host::new(model(4, 0.0, 0.0, 10_000.0)).unwrap();
        assert_eq!(h.engine_in(0, 0), 10_000);
        assert_eq!(h.engine_in(0, 0), 20_000, "the second waits for the engine's thread");
        assert_eq!(h.reader(0, 0), 0, "another thread is free at once");
    }

    #[test]
    fn threads_wait_for_a_core_when_all_are_busy() {
        let mut h = Host::new(model(1, 5_000.0, 5_000.0, 5_000.0)).unwrap();
        assert_eq!(h.client(0, 0), 5_000);
        assert_eq!(h.reader(0, 0), 10_000, "one core: the reader waits for the client's job");
        let mut two = Host::new(model(2, 5_000.0, 5_000.0, 5_000.0)).unwrap();
        assert_eq!(two.client(0, 0), 5_000);
        assert_eq!(two.reader(0, 0), 5_000, "two cores: both at once");
    }

    #[test]
    fn a_stage_saturates_at_its_cost() {
        // 100 000 requests through a 10 µs engine take 1 s however early they are ready.
        let mut h = Host::new(model(2, 0.0, 0.0, 10_000.0)).unwrap();
        let mut done = 0;
        for _ in 0..100_000 {
            done = h.engine_in(0, 8192);
        }
        assert_eq!(done, 1_000_000_000);
        assert_eq!(h.busy_ns()[Stage::Engine as usize], 1_000_000_000);
    }

    #[test]
    fn costs_grow_with_the_bytes_carried() {
        let c = StageCost { per_request_ns: 1_000.0, per_kib_ns: 100.0 };
        assert_eq!(c.of(0), 1_000);
        assert_eq!(c.of(8192), 1_800);
    }

    #[test]
    fn impossible_models_are_refused() {
        assert!(matches!(Host::new(model(0, 1.0, 1.0, 1.0)), Err(HostModelError::NoCores { .. })));
        let e = Host::new(model(2, -1.0, 1.0, 1.0)).unwrap_err();
        assert!(e.to_string().contains("client"), "{e}");
    }
}
