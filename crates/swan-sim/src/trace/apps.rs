//! Application ids: which application issued each request, as far as the trace format says.
//!
//! Apas (and any per-application policy) needs to know whose request it is. The formats name
//! their source differently: SPC/UMass the ASU, MSR Cambridge a host and a disk on it (the
//! volume `hm_0` is host `hm`, disk 0: disk numbers repeat across hosts, so the pair is the
//! key), MQSim, DiskSim and Heimdall a device number, blkparse the `maj,min` device,
//! Microsoft's ETW dumps the DiskNum. The [`TraceReader`](super::TraceReader) numbers the keys
//! 0, 1, 2, … in order of first appearance, so the same trace always gives the same ids. A format with no such field
//! (CloudPhysics: one virtual disk per file) gives every request application 0 and says so
//! through [`ApplicationIds::warning`], for the caller to report: requests are never merged
//! silently.

use super::TraceFormat;
use std::collections::HashMap;

/// The dense application ids of one trace, in order of first appearance.
#[derive(Clone, Debug)]
pub struct ApplicationIds {
    format: TraceFormat,
    /// Device number → (MSR host, id) pairs seen with it; the host is empty for other formats.
    by_device: HashMap<u32, Vec<(Box<str>, u32)>>,
    names: Vec<String>,
}

impl TraceFormat {
    /// The field a format names the issuing application by, or `None` if it has none.
    pub fn application_field(self) -> Option<&'static str> {
        match self {
            TraceFormat::Msr => Some("Hostname and DiskNumber (the volume, e.g. hm_0)"),
            TraceFormat::Spc => Some("ASU"),
            TraceFormat::MqSim | TraceFormat::DiskSim | TraceFormat::Heimdall => Some("device"),
            TraceFormat::Blkparse => Some("maj,min device"),
            TraceFormat::CloudPhysics => None,
            // The traces record several disks of one server: the disk stands for the
            // application using it, as the issues ask ("use the trace's device number").
            TraceFormat::Etw => Some("DiskNum (the disk)"),
        }
    }
}

impl ApplicationIds {
    pub fn new(format: TraceFormat) -> Self {
        ApplicationIds { format, by_device: HashMap::new(), names: Vec::new() }
    }

    /// The id of the application with `device` (and, for MSR, `host`); a new key gets the
    /// next id. A format without application ids maps everything to 0.
    pub fn id(&mut self, host: &str, device: u32) -> u32 {
        if self.format.application_field().is_none() {
            if self.names.is_empty() {
                self.names.push("all".into());
            }
            return 0;
        }
        let hosts = self.by_device.entry(device).or_default();
        if let Some(&(_, id)) = hosts.iter().find(|(h, _)| &**h == host) {
            return id;
        }
        let id = u32::try_from(self.names.len()).expect("fewer than 2^32 applications");
        hosts.push((host.into(), id));
        self.names.push(name(self.format, host, device));
        id
    }

    /// How many applications have been seen.
    pub fn count(&self) -> u64 {
        self.names.len() as u64
    }

    /// Application names by id (`hm_0`, `ASU 1`, `device 3`, `8,16`, `disk 2`; `all` without ids).
    pub fn names(&self) -> &[String] {
        &self.names
    }

    /// Set when the format has no application ids: every request was given application 0.
    pub fn warning(&self) -> Option<String> {
        match self.format.application_field() {
            Some(_) => None,
            None => Some(format!(
                "{} traces name no application: every request is given to one application (id 0)",
                self.format
            )),
        }
    }
}

fn name(format: TraceFormat, host: &str, device: u32) -> String {
    match format {
        TraceFormat::Msr => format!("{host}_{device}"),
        TraceFormat::Spc => format!("ASU {device}"),
        TraceFormat::Blkparse => format!("{},{}", device >> 20, device & ((1 << 20) - 1)),
        TraceFormat::Etw => format!("disk {device}"),
        _ => format!("device {device}"),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn ids_are_dense_in_order_of_first_appearance() {
        let mut a = ApplicationIds::new(TraceFormat::Spc);
        assert_eq!([a.id("", 7), a.id("", 2), a.id("", 7), a.id("", 0)], [0, 1, 0, 2]);
        assert_eq!(a.names(), ["ASU 7", "ASU 2", "ASU 0"]);
        assert_eq!(a.count(), 3);
        assert_eq!(a.warning(), None);
    }

    #[test]
    fn msr_volumes_are_host_and_disk() {
        let mut a = ApplicationIds::new(TraceFormat::Msr);
        // Disk 0 of two hosts are two volumes; two disks of one host too.
        assert_eq!([a.id("hm", 0), a.id("prxy", 0), a.id("hm", 1), a.id("hm", 0)], [0, 1, 2, 0]);
        assert_eq!(a.names(), ["hm_0", "prxy_0", "hm_1"]);
    }

    #[test]
    fn blkparse_names_are_maj_min() {
        let mut a = ApplicationIds::new(TraceFormat::Blkparse);
        a.id("", 8 << 20 | 16);
        assert_eq!(a.names(), ["8,16"]);
    }

    #[test]
    fn a_format_without_ids_is_one_application_and_a_warning() {
        let mut a = ApplicationIds::new(TraceFormat::CloudPhysics);
        assert_eq!([a.id("", 0), a.id("", 5)], [0, 0]);
        assert_eq!(a.count(), 1);
        let w = a.warning().expect("a warning");
        assert!(w.contains("cloudphysics") && w.contains("one application"), "{w}");
    }
}
