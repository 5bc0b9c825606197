//! What a Triple-A flash array network is made of ([`FabricConfig`]): how many switches
//! hang off the root complex, how many clusters (endpoints) off each switch, how many
//! FIMMs on each endpoint's local bus; PCIe link widths and packet sizes; queue
//! capacities and per-hop latencies. Every value is a preset (see [`super::presets`])
//! a user may change; [`FabricConfig::validate`] rejects a topology that cannot exist
//! and names what is wrong ([`FabricConfigError`]).

use serde::{Deserialize, Serialize};

use crate::fimm::{BusConfig, FimmConfig, FimmConfigError};
use crate::Nanos;

/// PCIe packet and lane figures shared by every link.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct PcieConfig {
    /// Payload rate of one lane, each way, in MB/s after line encoding.
    pub lane_mbps: u64,
    /// Bytes a TLP adds to its payload on the wire (header, sequence number, LCRC, framing).
    pub tlp_overhead_bytes: u32,
    /// Largest payload of one TLP; larger transfers are split.
    pub max_payload_bytes: u32,
    /// Bytes of a TLP that carries no data (a read request, a completion message).
    pub request_bytes: u32,
}

impl PcieConfig {
    /// TLPs needed for `payload` bytes (one for a packet without data).
    pub fn tlps(&self, payload: u32) -> u32 {
        payload.div_ceil(self.max_payload_bytes).max(1)
    }

    /// Bytes on the wire for `payload` bytes (a header-only packet when `payload` is 0).
    pub fn wire_bytes(&self, payload: u32) -> u64 {
        if payload == 0 {
            return u64::from(self.request_bytes);
        }
        u64::from(payload) + u64::from(self.tlps(payload)) * u64::from(self.tlp_overhead_bytes)
    }

    /// Time for `payload` bytes to cross a link of `lanes` lanes, rounded up.
    pub fn wire_ns(&self, lanes: u32, payload: u32) -> Nanos {
        let mb_per_s = self.lane_mbps * u64::from(lanes);
        (self.wire_bytes(payload) * 1_000).div_ceil(mb_per_s.max(1))
    }
}

/// The root complex (§2.1): ports to switches, one I/O request queue.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct RootComplexConfig {
    pub ports: u32,
    /// Entries of the RC's queue, each direction (one entry per TLP).
    pub queue_entries: u32,
    /// Time to pass a packet between host memory and a port.
    pub latency_ns: Nanos,
}

/// A PCIe switch (§2.1): one upstream port to the RC, the rest to endpoints.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct SwitchConfig {
    /// Ports in all, the upstream one included.
    pub ports: u32,
    /// Lanes in all, to be shared among the ports.
    pub lanes: u32,
    /// Width of the link to the root complex.
    pub uplink_lanes: u32,
    /// Entries of the switch-level queue, each direction (one entry per TLP).
    pub queue_entries: u32,
    /// Time to forward a packet from one port to another.
    pub latency_ns: Nanos,
}

/// A cluster's endpoint (§3.4): its PCIe link, buffers, HAL and the local bus to its FIMMs.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct EndpointConfig {
    /// Width of the link to the switch.
    pub link_lanes: u32,
    /// Downstream buffer entries (one per TLP): packets wait here for the HAL.
    pub down_buffer_entries: u32,
    /// Upstream buffer entries (one per TLP): read data and acks wait here for the link.
    pub up_buffer_entries: u32,
    /// Write buffer entries (one per TLP of write data). A write is acknowledged once its
    /// data is here and leaves when programmed; 0 = no buffer, a write is acknowledged
    /// when programmed.
    pub write_buffer_entries: u32,
    /// A buffered write to a flash page whose program is still waiting for its die joins
    /// that program instead of queueing one of its own, as any write-back buffer merges
    /// data it has not written out yet (§4.2: the buffer "evicts" to the FIMMs, so it
    /// holds data until then). Without it every write programs a page of its own, and a
    /// page rewritten faster than one program time queues programs without end.
    #[serde(default = "merging_by_default")]
    pub write_merging: bool,
    /// Time from a buffered write's data being in the buffer to its acknowledgement
    /// leaving the endpoint (the HAL's bookkeeping for it): pure latency, on no resource.
    #[serde(default)]
    pub write_ack_ns: Nanos,
    /// Time to disassemble a packet and build the NAND command, or to assemble a packet.
    pub latency_ns: Nanos,
    /// The shared local bus from the endpoint to its FIMMs.
    pub local_bus: BusConfig,
}

fn merging_by_default() -> bool {
    true
}

/// A whole array: root complex → switches → endpoints (clusters) → FIMMs.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct FabricConfig {
    pub name: String,
    /// Switches, one per root-complex port in use.
    pub switches: u32,
    /// Clusters (endpoints) under each switch.
    pub clusters_per_switch: u32,
    /// FIMMs on each endpoint's local bus.
    pub fimms_per_cluster: u32,
    pub root_complex: RootComplexConfig,
    pub switch: SwitchConfig,
    pub endpoint: EndpointConfig,
    pub pcie: PcieConfig,
    pub fimm: FimmConfig,
}

/// A topology or parameter that cannot exist.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
pub enum FabricConfigError {
    #[error("fabric `{fabric}`: `{field}` is zero; it must be at least 1")]
    Zero { fabric: String, field: &'static str },
    #[error("fabric `{fabric}`: {switches} switches but the root complex has {ports} ports (one switch per port)")]
    MoreSwitchesThanRootPorts { fabric: String, switches: u32, ports: u32 },
    #[error(
        "fabric `{fabric}`: {clusters} clusters per switch but a switch of {ports} ports has {} downstream ports \
         (one is upstream)",
        ports.saturating_sub(1)
    )]
    MoreClustersThanSwitchPorts { fabric: String, clusters: u32, ports: u32 },
    #[error(
        "fabric `{fabric}`: a switch needs {needed} lanes (x{uplink} up-link + {clusters} × x{endpoint} endpoint \
         links) but has {lanes}"
    )]
    SwitchLanes { fabric: String, needed: u64, lanes: u32, uplink: u32, clusters: u32, endpoint: u32 },
    #[error("fabric `{fabric}`: `{field}` = x{lanes} is not a PCIe link width (1, 2, 4, 8, 12, 16 or 32)")]
    LinkWidth { fabric: String, field: &'static str, lanes: u32 },
    #[error("fabric `{fabric}`: max payload {bytes} B is not a PCIe max payload size (a power of two, 128 to 4096)")]
    MaxPayload { fabric: String, bytes: u32 },
    #[error(
        "fabric `{fabric}`: {switches} × {clusters} clusters × {fimms} FIMMs is more FIMMs than the model can index"
    )]
    TooLarge { fabric: String, switches: u32, clusters: u32, fimms: u32 },
    #[error("fabric `{fabric}`: {source}")]
    Fimm {
        fabric: String,
        #[source]
        source: FimmConfigError,
    },
}

const LINK_WIDTHS: [u32; 7] = [1, 2, 4, 8, 12, 16, 32];

impl FabricConfig {
    pub fn clusters(&self) -> u32 {
        self.switches * self.clusters_per_switch
    }

    pub fn fimms(&self) -> u32 {
        self.clusters() * self.fimms_per_cluster
    }

    pub fn capacity_bytes(&self) -> u64 {
        u64::from(self.fimms()) * self.fimm.capacity_bytes()
    }

    /// Rejects a fabric that cannot exist, naming what is wrong.
    pub fn validate(&self) -> Result<(), FabricConfigError> {
        let fabric = || self.name.clone();
        let nonzero = [
            ("switches", self.switches as u64),
            ("clusters_per_switch", self.clusters_per_switch as u64),
            ("fimms_per_cluster", self.fimms_per_cluster as u64),
            ("root_complex.queue_entries", self.root_complex.queue_entries as u64),
            ("switch.queue_entries", self.switch.queue_entries as u64),
            ("endpoint.down_buffer_entries", self.endpoint.down_buffer_entries as u64),
            ("endpoint.up_buffer_entries", self.endpoint.up_buffer_entries as u64),
            ("endpoint.local_bus.pins", self.endpoint.local_bus.pins as u64),
            ("endpoint.local_bus.mega_transfers_per_s", self.endpoint.local_bus.mega_transfers_per_s as u64),
            ("pcie.lane_mbps", self.pcie.lane_mbps),
            ("pcie.request_bytes", self.pcie.request_bytes as u64),
        ];
        if let Some(&(field, _)) = nonzero.iter().find(|(_, v)| *v == 0) {
            return Err(FabricConfigError::Zero { fabric: fabric(), field });
        }
        if self.switches > self.root_complex.ports {
            let (switches, ports) = (self.switches, self.root_complex.ports);
            return Err(FabricConfigError::MoreSwitchesThanRootPorts { fabric: fabric(), switches, ports });
        }
        if u64::from(self.clusters_per_switch) + 1 > u64::from(self.switch.ports) {
            let (clusters, ports) = (self.clusters_per_switch, self.switch.ports);
            return Err(FabricConfigError::MoreClustersThanSwitchPorts { fabric: fabric(), clusters, ports });
        }
        for (field, lanes) in
            [("switch.uplink_lanes", self.switch.uplink_lanes), ("endpoint.link_lanes", self.endpoint.link_lanes)]
        {
            if !LINK_WIDTHS.contains(&lanes) {
                return Err(FabricConfigError::LinkWidth { fabric: fabric(), field, lanes });
            }
        }
        let needed = u64::from(self.switch.uplink_lanes)
            + u64::from(self.clusters_per_switch) * u64::from(self.endpoint.link_lanes);
        if needed > u64::from(self.switch.lanes) {
            return Err(FabricConfigError::SwitchLanes {
                fabric: fabric(),
                needed,
                lanes: self.switch.lanes,
                uplink: self.switch.uplink_lanes,
                clusters: self.clusters_per_switch,
                endpoint: self.endpoint.link_lanes,
            });
        }
        let fimms =
            [self.clusters_per_switch, self.fimms_per_cluster].iter().try_fold(self.switches, |a, &n| a.checked_mul(n));
        if fimms.is_none() {
            let (switches, clusters, fimms) = (self.switches, self.clusters_per_switch, self.fimms_per_cluster);
            return Err(FabricConfigError::TooLarge { fabric: fabric(), switches, clusters, fimms });
        }
        let mps = self.pcie.max_payload_bytes;
        if !(mps.is_power_of_two() && (128..=4096).contains(&mps)) {
            return Err(FabricConfigError::MaxPayload { fabric: fabric(), bytes: mps });
        }
        self.fimm.validate().map_err(|source| FabricConfigError::Fimm { fabric: fabric(), source })
    }
}
