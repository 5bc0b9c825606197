//! [`Fabric`]: the whole network — the root complex, its switches and their clusters —
//! and the route of one operation through it, hop by hop. A hop moves a packet train
//! from one node's queue over one link into the next node's queue: it waits for entries
//! in the next queue (credit flow control), then for the link, and gives its entries in
//! the sending queue back once its last byte has left. Each node then forwards after its
//! latency (store-and-forward of the train: with 4 KB packets a cut-through switch would
//! save at most one packet time per hop, about 1 µs on an x4 link).

use super::cluster::{Answer, Cluster, Sender};
use super::config::{FabricConfig, FabricConfigError};
use super::credit::CreditQueue;
use super::{Cause, Completion, FabricOpError, FimmAddr, Level};
use crate::calendar::Calendar;
use crate::fimm::{FimmOp, FimmOpKind};
use crate::Nanos;

/// One switch: its queue each way and its up-link to the RC, each direction.
#[derive(Clone, Debug)]
struct Switch {
    down: CreditQueue,
    up: CreditQueue,
    uplink_down: Calendar,
    uplink_up: Calendar,
}

/// A Triple-A flash array network in virtual time.
#[derive(Clone, Debug)]
pub struct Fabric {
    config: FabricConfig,
    rc_down: CreditQueue,
    rc_up: CreditQueue,
    switches: Vec<Switch>,
    /// Switch-major: cluster `c` of switch `s` is at `s × clusters_per_switch + c`.
    clusters: Vec<Cluster>,
}

/// A train of `tlps` packets ready to leave a node at `ready` (charged to `level`) waits
/// for `tlps` entries in `next`, then crosses `link` in `wire_ns` of its idle time (a
/// link interleaves TLPs of different requests, so the train may use several gaps). Returns when its last
/// byte has left, and what kept it (the cause its entries in the sending queue carry).
fn cross(
    ready: Nanos,
    tlps: u32,
    wire_ns: Nanos,
    link: &mut Calendar,
    next: &mut CreditQueue,
    level: Level,
    c: &mut Completion,
) -> (Nanos, Cause) {
    let (credited, credit_cause) = next.acquire(ready, tlps);
    c.charge(level, credit_cause, credited - ready);
    let left = link.fill(credited, wire_ns);
    let link_wait = left - credited - wire_ns;
    c.charge(level, Cause::Link, link_wait);
    let why = if credited - ready > link_wait { credit_cause } else { Cause::Link };
    (left, why)
}

impl Fabric {
    pub fn new(config: FabricConfig) -> Result<Self, FabricConfigError> {
        config.validate()?;
        let switch = Switch {
            down: CreditQueue::new(config.switch.queue_entries),
            up: CreditQueue::new(config.switch.queue_entries),
            uplink_down: Calendar::new(),
            uplink_up: Calendar::new(),
        };
        Ok(Self {
            rc_down: CreditQueue::new(config.root_complex.queue_entries),
            rc_up: CreditQueue::new(config.root_complex.queue_entries),
            switches: vec![switch; config.switches as usize],
            clusters: (0..config.clusters()).map(|_| Cluster::new(&config)).collect(),
            config,
        })
    }

    pub fn config(&self) -> &FabricConfig {
        &self.config
    }

    fn cluster_index(&self, switch: u32, cluster: u32) -> Result<usize, FabricOpError> {
        let c = &self.config;
        if switch >= c.switches {
            return Err(FabricOpError::NoSuch { what: "switch", index: switch, count: c.switches });
        }
        if cluster >= c.clusters_per_switch {
            return Err(FabricOpError::NoSuch { what: "cluster", index: cluster, count: c.clusters_per_switch });
        }
        Ok((switch * c.clusters_per_switch + cluster) as usize)
    }

    pub fn cluster(&self, switch: u32, cluster: u32) -> Result<&Cluster, FabricOpError> {
        Ok(&self.clusters[self.cluster_index(switch, cluster)?])
    }

    /// One cluster as a member device (see [`Cluster::submit`]). Driving a cluster both
    /// through here and through [`Fabric::submit`] shares its endpoint, bus and FIMMs.
    pub fn cluster_mut(&mut self, switch: u32, cluster: u32) -> Result<&mut Cluster, FabricOpError> {
        let i = self.cluster_index(switch, cluster)?;
        Ok(&mut self.clusters[i])
    }

    /// When everything submitted so far has finished, buffered writes' programs included.
    pub fn busy_until(&self) -> Nanos {
        let clusters = self.clusters.iter().map(Cluster::busy_until).max().unwrap_or(0);
        let uplinks = self.switches.iter().map(|s| s.uplink_down.busy_until().max(s.uplink_up.busy_until()));
        uplinks.fold(clusters, Nanos::max)
    }

    /// Most entries the RC's queue ever held at once, down and up.
    pub fn rc_queue_peaks(&self) -> (usize, usize) {
        (self.rc_down.peak(), self.rc_up.peak())
    }

    /// Most entries switch `switch`'s queue ever held at once, down and up.
    pub fn switch_queue_peaks(&self, switch: u32) -> Option<(usize, usize)> {
        self.switches.get(switch as usize).map(|s| (s.down.peak(), s.up.peak()))
    }

    /// Time reserved so far on switch `switch`'s up-link, down and up.
    pub fn uplink_reserved_ns(&self, switch: u32) -> Option<(Nanos, Nanos)> {
        self.switches.get(switch as usize).map(|s| (s.uplink_down.reserved_ns(), s.uplink_up.reserved_ns()))
    }

    /// Routes `op` from the host to FIMM `target` and back, submitted at `now`. Calls must
    /// come in non-decreasing `now`.
    pub fn submit(&mut self, now: Nanos, target: FimmAddr, op: FimmOp) -> Result<Completion, FabricOpError> {
        let ci = self.cluster_index(target.switch, target.cluster)?;
        self.clusters[ci].check(target.fimm, &op)?;
        let payload = if op.kind == FimmOpKind::Program { op.bytes } else { 0 };
        Ok(self.route(now, target.switch, ci, target.fimm, payload, |cl, left, c| {
            cl.serve(left, target.fimm, op, c, Sender::Host)
        }))
    }

    /// A member device behind cluster `cluster` of switch `switch` in place of its FIMMs —
    /// a cluster as an SSD, for array schemes run over the fabric: `down` payload bytes
    /// (a write's data) travel host → RC → switch → endpoint, `service(at)` is the device's
    /// answer to a command handed over at `at` (when, and with how many payload bytes: a
    /// read's data), and the answer travels back to the host. The fabric charges its own
    /// waits as for a FIMM operation; the device's time is the caller's, so the
    /// completion's `media_done` is when the device answered. Calls must come in
    /// non-decreasing `now`; `service` may be called with times that do not.
    pub fn carry(
        &mut self,
        now: Nanos,
        switch: u32,
        cluster: u32,
        down: u32,
        service: impl FnOnce(Nanos) -> (Nanos, u32),
    ) -> Result<Completion, FabricOpError> {
        let ci = self.cluster_index(switch, cluster)?;
        Ok(self.route(now, switch, ci, 0, down, |cl, left, _| cl.hand_over(left, down, service)))
    }

    /// The path host → endpoint `ci` → host, with `serve` at the endpoint.
    fn route(
        &mut self,
        now: Nanos,
        switch: u32,
        ci: usize,
        fimm: u32,
        payload: u32,
        serve: impl FnOnce(&mut Cluster, Nanos, &mut Completion) -> Answer,
    ) -> Completion {
        let Fabric { config, rc_down, rc_up, switches, clusters } = self;
        let (rc, sw_cfg, pcie) = (config.root_complex, config.switch, config.pcie);
        let (up_lanes, ep_lanes) = (sw_cfg.uplink_lanes, config.endpoint.link_lanes);
        let sw = &mut switches[switch as usize];
        let cl = &mut clusters[ci];
        sw.uplink_down.prune(now);
        sw.uplink_up.prune(now);
        cl.prune(now, fimm);
        let mut c = Completion { submitted: now, ..Completion::default() };

        // Down: host → RC → switch → endpoint.
        let tlps = pcie.tlps(payload);
        let (admitted, cause) = rc_down.acquire(now, tlps);
        c.charge(Level::RootComplex, cause, admitted - now);
        let wire = pcie.wire_ns(up_lanes, payload);
        let at_switch = admitted + rc.latency_ns;
        c.switch_queue_full = sw.down.full_at(at_switch, tlps);
        let (left, why) = cross(at_switch, tlps, wire, &mut sw.uplink_down, &mut sw.down, Level::RootComplex, &mut c);
        rc_down.release(left, tlps, why);
        let wire = pcie.wire_ns(ep_lanes, payload);
        let (left, why) =
            cross(left + sw_cfg.latency_ns, tlps, wire, &mut cl.link_down, &mut cl.down_buffer, Level::Switch, &mut c);
        sw.down.release(left, tlps, why);

        let answer = serve(cl, left, &mut c);

        // Up: endpoint → switch → RC → host.
        let tlps = pcie.tlps(answer.payload);
        let (taken, cause) = cl.up_buffer.acquire(answer.ready, tlps);
        c.charge(Level::Endpoint, cause, taken - answer.ready);
        let wire = pcie.wire_ns(ep_lanes, answer.payload);
        let (left, why) = cross(taken, tlps, wire, &mut cl.link_up, &mut sw.up, Level::Endpoint, &mut c);
        cl.up_buffer.release(left, tlps, why);
        let wire = pcie.wire_ns(up_lanes, answer.payload);
        let (left, why) = cross(left + sw_cfg.latency_ns, tlps, wire, &mut sw.uplink_up, rc_up, Level::Switch, &mut c);
        sw.up.release(left, tlps, why);
        c.done = left + rc.latency_ns;
        rc_up.release(c.done, tlps, Cause::Link);
        c.issued = answer.issued;
        c.media_done = answer.media_done;
        c
    }

    /// Triple-A's data migration of one page (§4.1, Fig. 7): data already in the endpoint
    /// of `from`'s cluster (shadow cloning put it there) goes up to their switch and down to
    /// `to`'s endpoint, whose FIMM programs it (`op`, a program). `done` is when `to`'s
    /// endpoint acknowledges it at the switch. The two clusters must share a switch: the
    /// paper never migrates across switches, and the root complex is not on this path.
    pub fn migrate(
        &mut self,
        now: Nanos,
        from: FimmAddr,
        to: FimmAddr,
        op: FimmOp,
    ) -> Result<Completion, FabricOpError> {
        if from.switch != to.switch || op.kind != FimmOpKind::Program {
            return Err(FabricOpError::NotAMigration { from: from.switch, to: to.switch });
        }
        let src = self.cluster_index(from.switch, from.cluster)?;
        let dst = self.cluster_index(to.switch, to.cluster)?;
        self.clusters[dst].check(to.fimm, &op)?;
        let Fabric { config, switches, clusters, .. } = self;
        let (sw_cfg, pcie, ep_lanes) = (config.switch, config.pcie, config.endpoint.link_lanes);
        let sw = &mut switches[from.switch as usize];
        let mut c = Completion { submitted: now, ..Completion::default() };
        let tlps = pcie.tlps(op.bytes);
        let wire = pcie.wire_ns(ep_lanes, op.bytes);

        // Up from the source endpoint into the switch, across it, down to the target endpoint.
        let source = &mut clusters[src];
        source.prune(now, from.fimm);
        let (taken, cause) = source.up_buffer.acquire(now, tlps);
        c.charge(Level::Endpoint, cause, taken - now);
        let (left, why) = cross(taken, tlps, wire, &mut source.link_up, &mut sw.down, Level::Endpoint, &mut c);
        source.up_buffer.release(left, tlps, why);
        let target = &mut clusters[dst];
        target.prune(left, to.fimm);
        let (left, why) = cross(
            left + sw_cfg.latency_ns,
            tlps,
            wire,
            &mut target.link_down,
            &mut target.down_buffer,
            Level::Switch,
            &mut c,
        );
        sw.down.release(left, tlps, why);
        let answer = target.serve(left, to.fimm, op, &mut c, Sender::Migration);

        // The acknowledgement back to the switch, where the management module sees it.
        let (taken, cause) = target.up_buffer.acquire(answer.ready, 1);
        c.charge(Level::Endpoint, cause, taken - answer.ready);
        let (left, why) =
            cross(taken, 1, pcie.wire_ns(ep_lanes, 0), &mut target.link_up, &mut sw.up, Level::Endpoint, &mut c);
        target.up_buffer.release(left, 1, why);
        sw.up.release(left + sw_cfg.latency_ns, 1, Cause::Link);
        c.done = left + sw_cfg.latency_ns;
        c.issued = answer.issued;
        c.media_done = answer.media_done;
        Ok(c)
    }
}
