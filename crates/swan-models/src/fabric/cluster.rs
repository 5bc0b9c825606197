//! One cluster (Triple-A §3.4, Fig. 4): a PCIe endpoint with its downstream, upstream and
//! write buffers and its HAL, the shared local bus, and the FIMMs on that bus. The link
//! from the cluster's switch port to the endpoint belongs here too, since no other
//! cluster uses it: contention on one cluster's bus or link never slows another cluster.
//!
//! A cluster is also a member device on its own ([`Cluster::submit`]): an operation that
//! arrives at the endpoint's PCIe port and is answered there, with no switch or RC above.

use super::config::{EndpointConfig, FabricConfig};
use super::credit::CreditQueue;
use super::{Cause, Completion, FabricOpError, Level};
use crate::calendar::Calendar;
use crate::fimm::{Fimm, FimmOp, FimmOpKind, PageAddr};
use crate::Nanos;
use std::collections::HashMap;

/// What the endpoint sends back up after serving an operation.
#[derive(Clone, Copy, Debug)]
pub(crate) struct Answer {
    /// When the packet is assembled in the upstream buffer's doorway.
    pub(crate) ready: Nanos,
    /// Payload bytes: the read data, or 0 for an acknowledgement.
    pub(crate) payload: u32,
    /// When the FIMM's die took the command.
    pub(crate) issued: Nanos,
    /// When the FIMM finished the operation.
    pub(crate) media_done: Nanos,
}

/// Who sent an operation to the endpoint.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Sender {
    /// The host (through the fabric, or to the cluster as a member device).
    Host,
    /// Another cluster's endpoint: a migration's copy.
    Migration,
}

/// A buffered single-plane program, when its die takes it and when it ends.
#[derive(Clone, Copy, Debug)]
struct Waiting {
    issued: Nanos,
    done: Nanos,
}

/// An endpoint, its local bus and its FIMMs.
#[derive(Clone, Debug)]
pub struct Cluster {
    endpoint: EndpointConfig,
    max_payload_bytes: u32,
    pub(crate) down_buffer: CreditQueue,
    pub(crate) up_buffer: CreditQueue,
    write_buffer: Option<CreditQueue>,
    /// Buffered programs not yet taken by their die, by FIMM and flash page: a write to
    /// the same page before then joins the program (`EndpointConfig::write_merging`).
    waiting_programs: HashMap<(u32, PageAddr), Waiting>,
    /// The switch port → endpoint link, each direction.
    pub(crate) link_down: Calendar,
    pub(crate) link_up: Calendar,
    bus: Calendar,
    fimms: Vec<Fimm>,
}

impl Cluster {
    /// A cluster of a validated `config`.
    pub(crate) fn new(config: &FabricConfig) -> Self {
        let ep = config.endpoint;
        let fimm = Fimm::new(config.fimm.clone()).expect("the fabric config was validated");
        Self {
            endpoint: ep,
            max_payload_bytes: config.pcie.max_payload_bytes,
            down_buffer: CreditQueue::new(ep.down_buffer_entries),
            up_buffer: CreditQueue::new(ep.up_buffer_entries),
            write_buffer: (ep.write_buffer_entries > 0).then(|| CreditQueue::new(ep.write_buffer_entries)),
            waiting_programs: HashMap::new(),
            link_down: Calendar::new(),
            link_up: Calendar::new(),
            bus: Calendar::new(),
            fimms: vec![fimm; config.fimms_per_cluster as usize],
        }
    }

    pub fn fimms(&self) -> &[Fimm] {
        &self.fimms
    }

    /// The shared local bus: its busy stretches and total reserved time (its utilisation,
    /// the `uBus` of the paper's Eq. 2).
    pub fn local_bus(&self) -> &Calendar {
        &self.bus
    }

    /// Most entries the endpoint's downstream and upstream buffers ever held at once.
    pub fn buffer_peaks(&self) -> (usize, usize) {
        (self.down_buffer.peak(), self.up_buffer.peak())
    }

    /// When everything submitted so far has finished: FIMMs, bus and link.
    pub fn busy_until(&self) -> Nanos {
        let fimms = self.fimms.iter().map(Fimm::busy_until).max().unwrap_or(0);
        fimms.max(self.bus.busy_until()).max(self.link_down.busy_until()).max(self.link_up.busy_until())
    }

    /// Checks that FIMM `fimm` exists and can run `op`.
    pub(crate) fn check(&self, fimm: u32, op: &FimmOp) -> Result<(), FabricOpError> {
        let count = self.fimms.len() as u32;
        let f = self.fimms.get(fimm as usize).ok_or(FabricOpError::NoSuch { what: "FIMM", index: fimm, count })?;
        Ok(f.check(op)?)
    }

    /// Packets (TLPs) `bytes` of payload take.
    pub(crate) fn tlps(&self, bytes: u32) -> u32 {
        bytes.div_ceil(self.max_payload_bytes).max(1)
    }

    /// Forgets wire reservations that ended by `now` on this cluster's side.
    pub(crate) fn prune(&mut self, now: Nanos, fimm: u32) {
        self.link_down.prune(now);
        self.link_up.prune(now);
        self.bus.prune(now);
        self.fimms[fimm as usize].prune(now);
        if self.waiting_programs.len() > 2 * self.endpoint.write_buffer_entries as usize + 64 {
            self.waiting_programs.retain(|_, w| w.issued > now);
        }
    }

    /// The cluster as a member device: `op` for FIMM `fimm` arrives at the endpoint's PCIe
    /// port at `now`; done when the answer (read data or acknowledgement) is back at the
    /// port. Waits are all the endpoint's.
    pub fn submit(&mut self, now: Nanos, fimm: u32, op: FimmOp) -> Result<Completion, FabricOpError> {
        self.check(fimm, &op)?;
        self.prune(now, fimm);
        let mut c = Completion { submitted: now, ..Completion::default() };
        let down = if op.kind == FimmOpKind::Program { op.bytes } else { 0 };
        let (admitted, cause) = self.down_buffer.acquire(now, self.tlps(down));
        c.charge(Level::Endpoint, cause, admitted - now);
        let answer = self.serve(admitted, fimm, op, &mut c, Sender::Host);
        let up = self.tlps(answer.payload);
        let (sent, cause) = self.up_buffer.acquire(answer.ready, up);
        c.charge(Level::Endpoint, cause, sent - answer.ready);
        self.up_buffer.release(sent, up, cause);
        c.done = sent;
        c.issued = answer.issued;
        c.media_done = answer.media_done;
        Ok(c)
    }

    /// The endpoint's work when a member device stands behind it instead of its FIMMs (a
    /// cluster as an SSD, [`super::Fabric::carry`]): the command and its `down` payload,
    /// arrived in the downstream buffer at `arrived`, are handed over after the endpoint's
    /// latency; `service(at)` says when the device answers and with how many payload bytes.
    /// The device's own waits are its own: none is charged here.
    pub(crate) fn hand_over(
        &mut self,
        arrived: Nanos,
        down: u32,
        service: impl FnOnce(Nanos) -> (Nanos, u32),
    ) -> Answer {
        let at = arrived + self.endpoint.latency_ns;
        self.down_buffer.release(at, self.tlps(down), Cause::Link);
        let (done, payload) = service(at);
        let done = done.max(at);
        Answer { ready: done + self.endpoint.latency_ns, payload, issued: at, media_done: done }
    }

    /// The endpoint's work on a checked `op` whose packets arrived in the downstream
    /// buffer at `arrived` (having taken their entries there): the HAL builds the command,
    /// the FIMM runs it over the local bus, and the answer is assembled. Gives the
    /// downstream entries back when the command has taken the data (or been issued).
    pub(crate) fn serve(&mut self, arrived: Nanos, fimm: u32, op: FimmOp, c: &mut Completion, from: Sender) -> Answer {
        let latency = self.endpoint.latency_ns;
        let at = arrived + latency;
        let tlps = self.tlps(if op.kind == FimmOpKind::Program { op.bytes } else { 0 });
        let f = &mut self.fimms[fimm as usize];
        if let (FimmOpKind::Program, Some(buffer)) = (op.kind, self.write_buffer.as_mut()) {
            // Buffered write: acknowledged once its data is in the write buffer; the
            // buffer entry stays taken until the page is programmed.
            let (buffered, _) = buffer.acquire(at, tlps);
            c.charge(Level::Endpoint, Cause::Storage, buffered - at);
            self.down_buffer.release(buffered, tlps, if buffered > at { Cause::Storage } else { Cause::Link });
            let key = (fimm, op.addr);
            let merging = self.endpoint.write_merging && op.planes == 1;
            let joined = self.waiting_programs.get(&key).filter(|w| merging && w.issued > buffered).copied();
            let (issued, done) = match joined {
                // The page's program has not begun: it takes this data too. Its entries
                // stay taken until that program ends, as the page's own do.
                Some(w) => (w.issued, w.done),
                None => {
                    let run = f.run(buffered, op, Some(&mut self.bus));
                    if merging {
                        self.waiting_programs.insert(key, Waiting { issued: run.issued, done: run.done });
                    }
                    (run.issued, run.done)
                }
            };
            buffer.release(done, tlps, Cause::Storage);
            // The acknowledgement's cost is fitted to host writes (Table 2); a migration's
            // copy is the management module's own and is not charged it.
            let ack = if from == Sender::Host { self.endpoint.write_ack_ns } else { 0 };
            let ready = buffered + ack + latency;
            return Answer { ready, payload: 0, issued, media_done: done };
        }
        if op.kind == FimmOpKind::Erase {
            // A page erased is a page no waiting program may take later data for.
            let a = op.addr;
            self.waiting_programs
                .retain(|&(f, p), _| f != fimm || (p.package, p.die, p.block) != (a.package, a.die, a.block));
        }
        let run = f.run(at, op, Some(&mut self.bus));
        c.charge(Level::Endpoint, Cause::Storage, run.storage_contention_ns);
        c.charge(Level::Endpoint, Cause::Link, run.link_contention_ns);
        let held = if run.storage_contention_ns >= run.link_contention_ns { Cause::Storage } else { Cause::Link };
        match op.kind {
            FimmOpKind::Read => {
                self.down_buffer.release(run.issued, tlps, held);
                Answer { ready: run.data_done + latency, payload: op.bytes, issued: run.issued, media_done: run.done }
            }
            FimmOpKind::Program | FimmOpKind::Erase => {
                self.down_buffer.release(run.data_done, tlps, held);
                Answer { ready: run.done + latency, payload: 0, issued: run.issued, media_done: run.done }
            }
        }
    }
}
