//! What the management module can see of the fabric: the requests outstanding on each FIMM
//! (which of them are still stalled, not issued to the FIMM), and each cluster's local-bus
//! utilisation over the last window (Eq. 2's `uBus`).

use swan_core::triple_a::OpKind;
use swan_models::fabric::Fabric;
use swan_models::Nanos;

/// One page operation on a FIMM, as routed.
#[derive(Clone, Copy, Debug)]
pub(super) struct Outstanding {
    pub(super) lpn: u64,
    pub(super) kind: OpKind,
    /// When the FIMM took it; before that it is stalled.
    pub(super) issued: Nanos,
    /// When its answer is back at the host.
    pub(super) done: Nanos,
}

pub(super) struct Watch {
    /// Per FIMM (array-wide index): operations not yet answered.
    outstanding: Vec<Vec<Outstanding>>,
    /// Per cluster: the local bus's reserved time at the last sample, and its utilisation
    /// over the window before.
    bus_reserved: Vec<Nanos>,
    pub(super) bus_utilisation: Vec<f64>,
}

impl Watch {
    pub(super) fn new(fimms: u32, clusters: u32) -> Self {
        Self {
            outstanding: vec![Vec::new(); fimms as usize],
            bus_reserved: vec![0; clusters as usize],
            bus_utilisation: vec![0.0; clusters as usize],
        }
    }

    /// Records an operation routed at `now` to `fimm`, forgetting those answered by then.
    pub(super) fn routed(&mut self, now: Nanos, fimm: u32, op: Outstanding) {
        let list = &mut self.outstanding[fimm as usize];
        list.retain(|o| o.done > now);
        list.push(op);
    }

    /// The operations on `fimm` still stalled at `now`.
    pub(super) fn stalled(&self, fimm: u32, now: Nanos) -> impl Iterator<Item = &Outstanding> {
        self.outstanding[fimm as usize].iter().filter(move |o| o.issued > now)
    }

    /// When the read of `lpn` on `fimm` in flight at `now`, if any, brings its page to the endpoint.
    pub(super) fn read_in_flight(&self, fimm: u32, lpn: u64, now: Nanos) -> Option<Nanos> {
        let list = &self.outstanding[fimm as usize];
        list.iter().filter(|o| o.lpn == lpn && o.kind == OpKind::Read && o.done > now).map(|o| o.done).max()
    }

    /// Each cluster's bus utilisation over the `window` ending now. Time reserved for
    /// transfers that will happen later counts now: the calendar knows it already.
    pub(super) fn sample_buses(&mut self, fabric: &Fabric, window: Nanos) {
        let cps = fabric.config().clusters_per_switch;
        for (c, last) in self.bus_reserved.iter_mut().enumerate() {
            let cluster = fabric.cluster(c as u32 / cps, c as u32 % cps).expect("every cluster exists");
            let reserved = cluster.local_bus().reserved_ns();
            self.bus_utilisation[c] = (reserved - *last) as f64 / window as f64;
            *last = reserved;
        }
    }
}
