//! `swan create`, `swan serve`, `swan status`, `swan check`: the real array over files or
//! block devices, served over NBD.

use anyhow::{anyhow, bail, Context, Result};
use std::path::PathBuf;
use swan_args::units::parse_size;
use swan_core::scheme::SchemeKind;
use swan_core::victim::VictimPolicy;
use swan_server::array::{self, CreateOptions, ZonedMembers};
use swan_server::control::ExportEntry;
use swan_server::layout::Superblock;
use swan_server::member::FileId;
use swan_server::nbd::{ClientAuth, Listen, Tls};

fn size(s: &str) -> Result<u64, String> {
    parse_size(s)
}

#[derive(clap::Args, Debug)]
#[command(
    after_help = "Example:\n  swan create --scheme swan0 --rgroups 3 --ssds-per-rgroup 2 --member-size 128M m0 m1 m2 m3 m4 m5\n\n\
Members are given in array order: R-group 0's SSDs first. Missing member files are created \
with --member-size; existing files and block devices are used as they are (the array uses \
--member-size bytes of each, or the smallest member's size). A member that belongs to another \
swan array is refused unless --force."
)]
pub struct CreateArgs {
    /// raid0|raid4|raid5 (in place), lograid0|4|5 (one log over all SSDs), swan0|4|5.
    #[arg(long, default_value = "swan0")]
    pub scheme: SchemeKind,
    /// R-groups (SWAN); in-place RAID and Log-RAID stripe over all rgroups × ssds-per-rgroup members.
    #[arg(long, default_value_t = 3)]
    pub rgroups: u32,
    #[arg(long, default_value_t = 2)]
    pub ssds_per_rgroup: u32,
    /// Size of each member (created if missing), e.g. 128M, 4G.
    #[arg(long, value_parser = size)]
    pub member_size: Option<u64>,
    /// Segment size per SSD (log-structured schemes), e.g. 8M. Make it a multiple of the
    /// SSD's erase stripe (an erase block on each of its dies), or the SSD's own GC copies
    /// what the array has already dropped. Default: 8M, the stripe of the SSD swan models;
    /// members smaller than 512 MiB get the largest power of two they hold 64 times.
    #[arg(long, value_parser = size)]
    pub segment: Option<u64>,
    /// Zoned members with zones of this size, e.g. 8M: each segment is one zone of each
    /// member, and the metadata lives in conventional zones at the start. Members that do
    /// not exist are made as emulated zoned devices (files that keep the zoned contract;
    /// FORMAT.md). Log-structured schemes only (SWAN, Log-RAID): in-place RAID overwrites,
    /// which zones forbid. Kernel zoned block devices are not served yet.
    #[arg(long, value_parser = size)]
    pub zone_size: Option<u64>,
    /// Zones each emulated zoned member lets be open or active at once, as a drive limits
    /// them (a ZN540 allows 14; ZNS Max Active Resources): a write that would exceed it is
    /// refused by the member. The array keeps at most three segments partly written on a
    /// member (the user's, GC's, one awaiting its summary), so 3 is the least that works.
    /// Default: no limit.
    #[arg(long, requires = "zone_size", value_parser = clap::value_parser!(u32).range(3..))]
    pub max_active_zones: Option<u32>,
    /// Chunk size (in-place RAID).
    #[arg(long, default_value = "512K", value_parser = size)]
    pub chunk: u64,
    /// GC victim policy: greedy or cost-benefit.
    #[arg(long, default_value = "greedy", value_parser = swan_args::parse_victim)]
    pub victim: VictimPolicy,
    /// Share of the data capacity kept out of the volume as spare room for GC, in percent
    /// (log-structured schemes; default 10). Less spare means a larger volume and, once it is
    /// full, more GC copying per user write.
    #[arg(long, value_name = "PERCENT", value_parser = swan_args::units::parse_spare_percent)]
    pub spare: Option<f64>,
    /// Reuse members that belong to another swan array (their data is lost).
    #[arg(long)]
    pub force: bool,
    /// Member files or block devices, in array order.
    #[arg(required = true)]
    pub members: Vec<PathBuf>,
}

#[derive(clap::Args, Debug)]
#[command(after_help = "Example:\n  swan serve --listen 127.0.0.1:10809 m0 m1 m2 m3 m4 m5\n  \
nbdinfo nbd://127.0.0.1:10809\n\n\
Members may be given in any order: each one's superblock says where it belongs. The server \
recovers the array (newest checkpoint, then the journal), serves it until SIGINT or SIGTERM, \
then makes everything durable, writes a checkpoint and exits.")]
pub struct ServeArgs {
    /// IP:PORT, or unix:PATH for a unix socket.
    #[arg(long, default_value = "127.0.0.1:10809")]
    pub listen: String,
    /// Serve on a unix socket at PATH (same as --listen unix:PATH).
    #[arg(long)]
    pub socket: Option<PathBuf>,
    /// Export name clients ask for (default swan; the default export "" is served too).
    #[arg(long)]
    pub name: Option<String>,
    /// Serve several arrays, each its own export, described in a TOML file: one
    /// `[[export]]` section each, with its `name`, `members`, and optionally `read_only`,
    /// `allow` (client-certificate CNs that may open it; needs --tls-verify-peer), `direct`,
    /// `punch_holes` and `gc_target`. Replaces the member paths, --name, --read-only and
    /// --gc-target; the other options apply to every export. docs/server.md has an example.
    #[arg(long, value_name = "FILE")]
    pub config: Option<PathBuf>,
    /// Open members with O_DIRECT (bypass the page cache).
    #[arg(long)]
    pub direct: bool,
    /// Give up on a member operation (read, write, trim, sync) that has not returned after
    /// SECONDS and treat the member as failed, as on an I/O error: a parity array goes on
    /// degraded (swan replace rebuilds it), a RAID0 request fails with EIO. A write that
    /// finds the member's file system full is tried again for as long before it fails with
    /// ENOSPC; writes are then refused with ENOSPC and FLUSH fails until that file system has
    /// room again, when the array recovers and resumes by itself. Off by default: a block device already has the kernel's own per-command
    /// timeout (30 s for SCSI and NVMe), which reaches swan as EIO, and the deadline costs a
    /// thread hand-off per member operation (about twice the CPU per 4 KiB request). Set it
    /// (30 is the kernel's figure) for members on file systems that can hang without end
    /// (network, FUSE). With it, O_DIRECT reads go through the I/O threads rather than
    /// io_uring, whose reads cannot be given up on.
    #[arg(long, value_name = "SECONDS", default_value = "off", value_parser = swan_args::units::member_timeout)]
    pub member_timeout: swan_args::units::MemberTimeout,
    /// Refuse writes: the export is advertised read-only (NBD_FLAG_READ_ONLY) and writes,
    /// trims and write-zeroes fail with EPERM.
    #[arg(long)]
    pub read_only: bool,
    /// TLS (NBD_OPT_STARTTLS): off; on (offered, plaintext allowed); require (nothing but
    /// STARTTLS before TLS, the protocol's FORCEDTLS mode).
    #[arg(long, value_enum, default_value = "off")]
    pub tls: TlsArg,
    /// The server's certificate chain, PEM (leaf first). Needed with --tls on|require.
    #[arg(long, value_name = "PEM")]
    pub tls_cert: Option<PathBuf>,
    /// The certificate's private key, PEM. Needed with --tls on|require.
    #[arg(long, value_name = "PEM")]
    pub tls_key: Option<PathBuf>,
    /// Authenticate clients: only a client presenting a certificate signed by the CA of
    /// --tls-client-ca is served; any other is refused in the TLS handshake, before it sees
    /// an export. Needs --tls require (with --tls on a client could skip TLS altogether).
    #[arg(long)]
    pub tls_verify_peer: bool,
    /// The CA (a PEM bundle of one or more CA certificates) client certificates must be
    /// signed by, for --tls-verify-peer.
    #[arg(long, value_name = "PEM")]
    pub tls_client_ca: Option<PathBuf>,
    /// With --tls-verify-peer, serve only clients whose certificate subject has this common
    /// name (CN, compared exactly; subject alternative names are not looked at). Repeat it
    /// to allow several. Without it, every certificate the CA signed is allowed.
    #[arg(long, value_name = "CN")]
    pub tls_allow_subject: Vec<String>,
    /// Not supported: TLS-PSK (nbdkit's and qemu's `username:hexkey` key files). swan's TLS
    /// library, rustls, has no external pre-shared keys, so the option is refused with an
    /// explanation; authenticate clients with certificates instead (--tls-verify-peer).
    #[arg(long, value_name = "FILE")]
    pub tls_psk: Option<PathBuf>,
    /// Seconds a client gets from connecting to the end of the NBD handshake (TLS included)
    /// before it is dropped, so that sockets which never negotiate hold no thread for long.
    /// Once serving, an idle client may stay connected indefinitely.
    #[arg(long, value_name = "SECONDS", default_value_t = 10.0)]
    pub handshake_timeout: f64,
    /// Connections served at once (handshaking, idle or busy); one more is closed as soon as
    /// it is accepted, and the refusals are logged (one line per 10 s at most). Each costs two
    /// threads and at most 16 MiB of requests in flight, so this bounds the server's memory
    /// against a flood of clients.
    #[arg(long, value_name = "N", default_value_t = 256)]
    pub max_connections: usize,
    /// Put a modelled SSD (sata850pro, sata850pro-blockftl, harmonia, openchannel, apas-slc) in front
    /// of each member in wall-clock time, so the array behaves like one made of those SSDs. Zoned
    /// members take a zoned SSD (zn540, pm1731a) over their own zones.
    #[arg(long, value_name = "PRESET")]
    pub emulate: Option<String>,
    /// Age the emulated SSDs to this fraction of their capacity before serving (0..1).
    #[arg(long, default_value_t = 0.0)]
    pub emulate_age: f64,
    /// Whether host reads overtake the emulated SSDs' own GC (its copies and erases), as
    /// preemptible GC and erase suspension allow; host writes wait for it either way: on or
    /// off (default: the preset's, as for `swan sim --ssd-gc-preemptible`; on for sata850pro).
    #[arg(long, value_parser = swan_args::read_args::parse_on_off, value_name = "on|off", requires = "emulate")]
    pub emulate_gc_preemptible: Option<bool>,
    /// How user reads are served. Reads around a busy SSD need --emulate, whose model
    /// predicts which SSD is busy; without it only --parity-read-gain-us 0 (read around every
    /// block that may be, a test of the path) is accepted.
    #[command(flatten)]
    pub reads: swan_args::read_args::ReadArgs,
    /// SWAN: segments GC keeps ready for writes in the back-end R-groups (free, beyond each
    /// R-group's reserve). The default is the core's, the same the simulator runs: a
    /// quarter of an R-group, at most half the array's spare segments. Larger leaves SSDs
    /// more trimmed space for their own GC; smaller spreads more of the spare as dead
    /// blocks, so victims are cheaper on a full volume. From 1 up to the spare; `swan status`
    /// shows it.
    #[arg(long, value_name = "SEGMENTS")]
    pub gc_target: Option<u64>,
    /// Log arrays on file members: punch holes where the array frees segments (its TRIMs),
    /// giving the space back to the file system. Off by default: the log's next lap writes
    /// there again, and writing into a hole costs the file system an allocation each time.
    /// Block-device members (SSDs) always get their TRIMs.
    #[arg(long)]
    pub punch_holes: bool,
    /// Serve Prometheus metrics (text format) at http://ADDR/metrics — member I/O, R-group
    /// roles and free segments, GC, array WAF, request latency histograms, sync points,
    /// degraded/rebuild state, connections (docs/metrics.md lists them) — and a live
    /// dashboard of them at http://ADDR/ (open it in a browser). IP:PORT; port 0 picks a
    /// free port, which the server prints. With --config, one listener for every export,
    /// each export's series labelled export="NAME". Off by default.
    #[arg(long, value_name = "ADDR")]
    pub metrics: Option<std::net::SocketAddr>,
    /// Record the block trace the server is sent: every request the NBD front hands the
    /// engine (read, write, flush, trim, write-zeroes), with its arrival time since serving
    /// began, as blkparse text that `swan sim --trace FILE` replays (docs/traces.md). A thread
    /// of its own writes it; if it falls behind, requests are still served and left out of
    /// the trace, counted, marked in the file and reported. The file is created (or emptied)
    /// before the array is opened.
    #[arg(long, value_name = "FILE")]
    pub record_trace: Option<PathBuf>,
    /// Log connections and refused requests.
    #[arg(long, short)]
    pub verbose: bool,
    /// Member files or block devices; `missing` in place of a member that is gone (the array
    /// is then served degraded, and `swan replace` rebuilds it).
    #[arg(required_unless_present = "config", conflicts_with = "config")]
    pub members: Vec<PathBuf>,
}

impl ServeArgs {
    /// The export name of a lone array.
    pub fn name(&self) -> &str {
        self.name.as_deref().unwrap_or("swan")
    }

    /// Whether --name was given.
    pub fn name_given(&self) -> bool {
        self.name.is_some()
    }
}

/// `--tls`.
#[derive(clap::ValueEnum, Clone, Copy, Debug, PartialEq, Eq)]
pub enum TlsArg {
    Off,
    On,
    Require,
}

/// The warning `swan serve` prints before serving, if any: plain NBD anywhere but on loopback
/// or a unix socket lets anyone who reaches the address read and overwrite the volume, and
/// TLS without client certificates lets anyone who reaches it and speaks TLS do so.
pub(crate) fn exposure_warning(listen: &Listen, tls: TlsArg, verify_peer: bool) -> Option<String> {
    let Listen::Tcp(addr) = listen else { return None };
    if addr.ip().is_loopback() {
        return None;
    }
    match tls {
        TlsArg::Require if verify_peer => None,
        TlsArg::Require => Some(format!(
            "swan: warning: clients are not authenticated and {addr} is not a loopback address: anyone who can \
             reach it and speak TLS can read and overwrite the volume (use --tls-verify-peer --tls-client-ca CA.pem)"
        )),
        TlsArg::Off => Some(format!(
            "swan: warning: TLS is off and {addr} is not a loopback address: anyone who can reach it can read \
             and overwrite the volume in plain NBD (use --tls require with --tls-cert and --tls-key)"
        )),
        TlsArg::On => Some(format!(
            "swan: warning: TLS is optional (--tls on) and {addr} is not a loopback address: clients that do not \
             ask for TLS are served in plain NBD (use --tls require to refuse them)"
        )),
    }
}

/// Why `--tls-psk` is refused: rustls 0.23 resumes TLS 1.3 sessions from its own tickets
/// but takes no external pre-shared keys, and has no TLS 1.2 PSK cipher suites.
const NO_PSK: &str = "--tls-psk: TLS-PSK is not supported: swan's TLS library (rustls 0.23) has no external \
                      pre-shared keys (rustls issue #174). Authenticate clients with certificates instead: \
                      --tls require --tls-verify-peer --tls-client-ca CA.pem [--tls-allow-subject NAME] \
                      (see docs/security.md)";

/// Client authentication from `--tls-verify-peer`, `--tls-client-ca` and
/// `--tls-allow-subject`, checked against `--tls`.
fn client_auth(a: &ServeArgs) -> Result<Option<ClientAuth>> {
    if a.tls_psk.is_some() {
        bail!("{NO_PSK}");
    }
    if !a.tls_verify_peer {
        if a.tls_client_ca.is_some() || !a.tls_allow_subject.is_empty() {
            bail!("--tls-client-ca and --tls-allow-subject take effect with --tls-verify-peer; add it");
        }
        return Ok(None);
    }
    if a.tls != TlsArg::Require {
        bail!(
            "--tls-verify-peer needs --tls require: with --tls {}, a client could connect without TLS and so \
             without a certificate",
            format!("{:?}", a.tls).to_lowercase()
        );
    }
    let Some(ca) = &a.tls_client_ca else {
        bail!("--tls-verify-peer needs --tls-client-ca FILE: the CA client certificates must be signed by");
    };
    Ok(Some(ClientAuth { ca: ca.clone(), allow_subjects: a.tls_allow_subject.clone() }))
}

pub(crate) fn tls_options(a: &ServeArgs) -> Result<Tls> {
    let clients = client_auth(a)?;
    let files = match (&a.tls_cert, &a.tls_key) {
        (Some(c), Some(k)) => Some((c, k)),
        (None, None) => None,
        _ => bail!("--tls-cert and --tls-key go together"),
    };
    let load = |c, k| swan_server::nbd::tls::load_config(c, k, clients.as_ref());
    Ok(match (a.tls, files) {
        (TlsArg::Off, None) => Tls::Off,
        (TlsArg::Off, Some(_)) => bail!("--tls-cert/--tls-key given but --tls is off; add --tls on or --tls require"),
        (_, None) => bail!("--tls {:?} needs --tls-cert and --tls-key", a.tls),
        (TlsArg::On, Some((c, k))) => Tls::On(load(c, k)?),
        (TlsArg::Require, Some((c, k))) => Tls::Require(load(c, k)?),
    })
}

#[derive(clap::Args, Debug)]
pub struct StatusArgs {
    /// Print the raw JSON.
    #[arg(long)]
    pub json: bool,
    /// The control socket (default: found from the members' array UUID).
    #[arg(long)]
    pub control: Option<PathBuf>,
    /// Any member of the array (to find its server).
    pub members: Vec<PathBuf>,
}

#[derive(clap::Args, Debug)]
#[command(after_help = "Checks, offline (the array must not be served): superblocks, the newest \
checkpoint and journal, the map (no two blocks in one slot, valid counts), every sealed \
segment's summary (checksum, sequence number, and that it names each live block), and parity \
of every stripe row (RAID4/5). Exits 1 if anything is wrong.")]
pub struct CheckArgs {
    /// Member files or block devices.
    #[arg(required = true)]
    pub members: Vec<PathBuf>,
}

/// "10", "10%" or "12.5 %" → 0.10, 0.10, 0.125.
/// `swan create` without its report: the array's superblock as written to every member.
pub fn create_array(a: &CreateArgs) -> Result<Superblock> {
    let created = std::time::SystemTime::now().duration_since(std::time::UNIX_EPOCH).map_or(0, |d| d.as_secs());
    let o = CreateOptions {
        kind: a.scheme,
        rgroups: a.rgroups,
        ssds_per_rgroup: a.ssds_per_rgroup,
        member_bytes: a.member_size,
        segment_bytes: a.segment,
        chunk_bytes: a.chunk,
        victim: a.victim,
        spare: a.spare,
        force: a.force,
        created,
        zoned: a.zone_size.map(|zone_bytes| ZonedMembers { zone_bytes, max_active: a.max_active_zones }),
    };
    Ok(array::create(&a.members, &o)?)
}

pub fn create(a: &CreateArgs) -> Result<()> {
    let sb = create_array(a)?;
    let scheme = sb.array_spec().build()?;
    let mut spare = match scheme.gc_spare() {
        Some(spare) => format!(
            " ({:.1} % of the data capacity kept spare for GC), segments of {} KiB per SSD{}",
            100.0 * spare,
            u64::from(sb.segment_rows) * 4,
            if sb.zoned {
                " (one zone of each: the members are zoned, the metadata in their conventional zones)"
            } else {
                ""
            }
        ),
        None => String::new(),
    };
    let largest = u64::from(swan_server::engine::max_payload(scheme.largest_write_blocks()));
    if largest < u64::from(swan_server::engine::MAX_PAYLOAD) {
        spare += &format!(
            "; writes of up to {} KiB (the most GC can always make room for: more --spare or smaller --segment raise it)",
            largest >> 10
        );
    }
    println!(
        "created {} array {}: {} R-group(s) × {} SSD(s), {} MiB per member, volume {} MiB{spare}",
        sb.kind,
        sb.uuid_string(),
        sb.rgroups,
        sb.ssds_per_rgroup,
        (sb.member_blocks * 4096) >> 20,
        (sb.volume_blocks * 4096) >> 20
    );
    Ok(())
}

/// The server a control command reaches: its socket, the superblock of the member it was
/// found from, that member file's identity (which mutating requests carry, so the server
/// refuses them if it does not hold that file), and its status where it was asked already.
struct Target {
    socket: PathBuf,
    sb: Option<Superblock>,
    via: Option<FileId>,
    status: Option<serde_json::Value>,
}

/// The server of the member file `member` (or the one on `control`). Copies of one array
/// share its UUID, and each served copy has a socket of its own: the server chosen is the one
/// whose status lists this very file (device and inode) among its members.
fn find_server(control: &Option<PathBuf>, member: Option<&PathBuf>) -> Result<Target> {
    let via = match member {
        Some(m) => Some(FileId::of(m).with_context(|| format!("{}", m.display()))?),
        None => None,
    };
    let m = match (control, member) {
        (Some(p), _) => return Ok(Target { socket: p.clone(), sb: None, via, status: None }),
        (None, Some(m)) => m,
        (None, None) => bail!("name a member of the array (or --control PATH)"),
    };
    let opened =
        swan_server::member::Member::open(m, swan_server::member::OpenOptions { direct: false, read_only: true })?;
    let sb = array::read_superblock(&opened).map_err(|e| anyhow!("{}: {e}", m.display()))?;
    let uuid = sb.uuid_string();
    let candidates = swan_server::control::candidates(&uuid);
    let mut others = Vec::new();
    for socket in &candidates {
        let Ok(status) = swan_server::control::query(socket) else { continue };
        let holds = |f: &serde_json::Value| serde_json::from_value::<FileId>(f.clone()).ok() == via;
        if status["members"].as_array().into_iter().flatten().any(|x| holds(&x["file"])) {
            return Ok(Target { socket: socket.clone(), sb: Some(sb), via, status: Some(status) });
        }
        let paths: Vec<&str> =
            status["members"].as_array().into_iter().flatten().filter_map(|x| x["path"].as_str()).collect();
        others.push(format!("{} (members {})", socket.display(), paths.join(", ")));
    }
    if others.is_empty() {
        bail!(
            "no swan server answers for array {uuid} in {} (is the array being served?)",
            swan_server::control::run_dir().display()
        );
    }
    bail!(
        "no running swan server holds {} (array {uuid}); the servers of that array's UUID serve other files: {}. \
         Is {} a member of a copy of the array that is not being served?",
        m.display(),
        others.join("; "),
        m.display()
    )
}

pub fn status(a: &StatusArgs) -> Result<()> {
    let t = find_server(&a.control, a.members.first())?;
    let v = match t.status {
        Some(v) => v,
        None => swan_server::control::query(&t.socket).with_context(|| {
            format!("no swan server answers on {} (is the array being served?)", t.socket.display())
        })?,
    };
    if a.json {
        println!("{}", serde_json::to_string_pretty(&v)?);
        return Ok(());
    }
    // The array asked about first, then every other export of its server, each from its
    // own control socket: an engine that does not answer is reported, the rest still shown.
    let exports: Vec<ExportEntry> =
        v.get("exports").and_then(|e| serde_json::from_value(e.clone()).ok()).unwrap_or_default();
    let this = v["uuid"].as_str().unwrap_or("").to_string();
    if let Some(e) = exports.iter().find(|e| e.uuid == this) {
        println!("{}", export_line(e, exports.len()));
    }
    print_array(&v);
    for e in exports.iter().filter(|e| e.uuid != this) {
        println!();
        println!("{}", export_line(e, exports.len()));
        match swan_server::control::query(&e.control) {
            Ok(other) => print_array(&other),
            Err(err) => println!("no answer from its engine on {}: {err}", e.control.display()),
        }
    }
    Ok(())
}

/// `export "db" (1 of 2): read-only, open to CN alice, bob`.
fn export_line(e: &ExportEntry, of: usize) -> String {
    let access = if e.read_only { "read-only" } else { "read-write" };
    let who = match e.allow_subjects.as_slice() {
        [] => "open to every client served".to_string(),
        names => format!("open to CN {}", names.join(", ")),
    };
    let count = if of > 1 { format!(" (one of {of} exports of this server)") } else { String::new() };
    format!("export {:?}{count}: {access}, {who}", e.name)
}

/// One array's status report, as tables.
fn print_array(v: &serde_json::Value) {
    let g = |k: &str| v.get(k).cloned().unwrap_or_default();
    let zoned = g("zone_bytes").as_u64().map(|z| format!(" over zoned members (zones of {} KiB)", z >> 10));
    println!(
        "array {} ({}{}), volume {} MiB, up {:.0} s, free segments {}/{}{}",
        g("uuid").as_str().unwrap_or("?"),
        g("scheme").as_str().unwrap_or("?"),
        zoned.unwrap_or_default(),
        g("volume_bytes").as_u64().unwrap_or(0) >> 20,
        g("uptime_s").as_f64().unwrap_or(0.0),
        g("free_segments"),
        g("segments"),
        g("gc_target")
            .as_u64()
            .map(|t| format!(" (GC keeps {t} ready for writes in the back-end)"))
            .unwrap_or_default()
    );
    println!(
        "user written {} MiB, read {} MiB; GC moved {} blocks from {} victims; {} front-end rotations; {} sync points, {} checkpoints",
        g("user_bytes_written").as_u64().unwrap_or(0) >> 20,
        g("user_bytes_read").as_u64().unwrap_or(0) >> 20,
        g("gc_blocks_moved"),
        g("victims"),
        g("front_rotations"),
        g("sync_points"),
        g("checkpoints")
    );
    println!(
        "reads verified against their CRC: {} blocks ({} without one); {} mismatched: {} rebuilt from parity, {} answered EIO",
        g("reads_verified"),
        g("reads_unverified"),
        g("read_mismatches"),
        g("read_repairs"),
        g("read_failures")
    );
    let resumed = match g("resumes").as_u64().unwrap_or(0) {
        0 => String::new(),
        n => format!(" (resumed {n} time(s) after a full file system)"),
    };
    println!("durability: {}{resumed}", g("durability").as_str().unwrap_or("?"));
    println!("{:>7}  {:<14} {:>13}", "R-group", "role", "free segments");
    for gr in g("groups").as_array().into_iter().flatten() {
        println!("{:>7}  {:<14} {:>13}", gr["group"], gr["role"].as_str().unwrap_or("?"), gr["free_segments"]);
    }
    if let Some(r) = v.get("rebuild").filter(|r| !r.is_null()) {
        let (done, total) = (r["done_blocks"].as_u64().unwrap_or(0), r["total_blocks"].as_u64().unwrap_or(1).max(1));
        println!(
            "rebuilding member {} onto {}: {:.1} % ({} of {} MiB)",
            r["member"],
            r["path"].as_str().unwrap_or("?"),
            done as f64 * 100.0 / total as f64,
            done >> 8,
            total >> 8
        );
    }
    println!(
        "{:<40} {:<10} {:>12} {:>12} {:>12} {:>12}",
        "member", "health", "user MiB w", "GC MiB w", "read MiB", "GC MiB r"
    );
    for m in g("members").as_array().into_iter().flatten() {
        let mib = |k: &str| m[k].as_u64().unwrap_or(0) >> 20;
        println!(
            "{:<40} {:<10} {:>12} {:>12} {:>12} {:>12}",
            m["path"].as_str().unwrap_or("?"),
            m["health"].as_str().unwrap_or("?"),
            mib("user_bytes_written"),
            mib("gc_bytes_written"),
            mib("bytes_read"),
            mib("gc_bytes_read")
        );
    }
    let members = g("members").as_array().cloned().unwrap_or_default();
    if members.iter().any(|m| m.get("model").is_some()) {
        println!(
            "{:<40} {:>12} {:>12} {:>8} {:>9} {:>11} {:>11}",
            "model SSD (--emulate)", "host MiB w", "GC copies", "SSD WAF", "free blk", "write p99", "read p99"
        );
        for m in &members {
            let e = &m["model"];
            let n = |k: &str| e[k].as_u64().unwrap_or(0);
            println!(
                "{:<40} {:>12} {:>12} {:>8.2} {:>8.1}% {:>9}µs {:>9}µs",
                m["path"].as_str().unwrap_or("?"),
                n("host_pages_written") >> 8,
                n("gc_pages_copied"),
                e["waf"].as_f64().unwrap_or(0.0),
                e["free_block_fraction"].as_f64().unwrap_or(0.0) * 100.0,
                n("write_p99_us"),
                n("read_p99_us")
            );
        }
        let (resets, refused) = members.iter().fold((0, 0), |(r, x), m| {
            (r + m["model"]["zone_resets"].as_u64().unwrap_or(0), x + m["model"]["zone_refused"].as_u64().unwrap_or(0))
        });
        if resets + refused > 0 {
            println!(
                "zoned models: {resets} zone resets; {refused} commands their contract refused (timed in place; 0 \
                 expected); \"free blk\" is their empty zones"
            );
        }
    }
    if let Some(t) = v.get("emulation").filter(|t| !t.is_null()) {
        println!(
            "emulated replies: {}; mean {:.0} µs on the model SSDs, then sent {:.0} µs after the model finished",
            t["replies"],
            t["mean_model_us"].as_f64().unwrap_or(0.0),
            t["mean_late_us"].as_f64().unwrap_or(0.0)
        );
    }
    print_host_stages(v);
}

/// The server's own stages since it started: the engine thread's CPU per request by part,
/// the wait before the engine took a request, every thread's share of a core.
fn print_host_stages(v: &serde_json::Value) {
    let e = &v["engine_cpu"];
    let requests = e["requests"].as_f64().unwrap_or(0.0);
    if requests >= 1.0 {
        let us = |k: &str| e[k].as_f64().unwrap_or(0.0) * 1e6 / requests;
        println!(
            "engine CPU per request: {:.1} µs serving, {:.1} GC, {:.1} durability, {:.1} replies, {:.1} receiving; \
             requests waited {:.0} µs for the engine",
            us("serving_s"),
            us("gc_s"),
            us("durability_s"),
            us("replies_s"),
            us("receiving_s"),
            us("queued_s")
        );
    }
    let uptime = v["uptime_s"].as_f64().unwrap_or(0.0);
    if let (Some(ts), true) = (v["threads"].as_array(), uptime > 0.0) {
        let shares: Vec<String> = ts
            .iter()
            .filter(|t| t["cpu_s"].as_f64().unwrap_or(0.0) / uptime >= 0.005)
            .map(|t| {
                format!(
                    "{} {:.2} (waited {:.2})",
                    t["stage"].as_str().unwrap_or("?"),
                    t["cpu_s"].as_f64().unwrap_or(0.0) / uptime,
                    t["runq_wait_s"].as_f64().unwrap_or(0.0) / uptime
                )
            })
            .collect();
        if !shares.is_empty() {
            println!("threads, cores used since start: {}", shares.join(", "));
        }
    }
}

#[derive(clap::Args, Debug)]
#[command(after_help = "Takes a member of a running array out of service, as if it had failed \
(md's --fail): it is no longer read or written, its blocks are rebuilt from parity on every \
read, and the failure is recorded in the other members' superblocks, so a restart keeps it \
out too. Only a member whose parity group has no other failure can go (RAID0 has no parity: \
refused). Bring it back with `swan replace`.\n\nExample:\n  swan fail --member 2 m0")]
pub struct FailArgs {
    /// Index of the member to fail (array order, as `swan status` lists them).
    #[arg(long)]
    pub member: u32,
    /// The control socket (default: found from the members' array UUID).
    #[arg(long)]
    pub control: Option<PathBuf>,
    /// Any healthy member of the array (to find its server).
    pub members: Vec<PathBuf>,
}

pub fn fail(a: &FailArgs) -> Result<()> {
    let t = find_server(&a.control, a.members.first())?;
    control_request(&t.socket, &format!("fail {}{}", a.member, via_word(t.via)))
}

/// ` @DEV:INO` for a request made through a member file, so that only its server acts on it.
fn via_word(via: Option<FileId>) -> String {
    via.map(|id| format!(" @{id}")).unwrap_or_default()
}

#[derive(clap::Args, Debug)]
#[command(after_help = "Rebuilds a failed member of a running array onto a new file or block \
device, while the array serves: every row of the member is rebuilt from the other members of \
its parity group (the metadata area from its mirror), a slice at a time between user \
requests; `swan status` shows the progress. The new member is written like a healthy one from \
the start, and its superblock last: if the server stops before the rebuild ends, the member \
stays failed and `swan replace` starts again. A missing NEW file is created at the array's \
member size.\n\nExample:\n  swan replace --member 2 --new m2b m0")]
pub struct ReplaceArgs {
    /// Index of the failed member.
    #[arg(long)]
    pub member: u32,
    /// The new member: a file (created if missing: for a zoned array, an emulated zoned
    /// device like its members) or block device.
    #[arg(long)]
    pub new: PathBuf,
    /// The control socket (default: found from the members' array UUID).
    #[arg(long)]
    pub control: Option<PathBuf>,
    /// Wait until the rebuild is done.
    #[arg(long)]
    pub wait: bool,
    /// Any healthy member of the array (to find its server and the member size).
    pub members: Vec<PathBuf>,
}

pub fn replace(a: &ReplaceArgs) -> Result<()> {
    let Target { socket: path, sb, via, .. } = find_server(&a.control, a.members.first())?;
    if !a.new.exists() {
        let sb = sb.ok_or_else(|| {
            anyhow!("{} does not exist; name a member of the array so its size is known", a.new.display())
        })?;
        // A zoned array's replacement is made as an emulated zoned device like the member
        // named (the server would make it so too, were it given no file).
        let zoned = a.members.first().and_then(|m| {
            swan_server::member::Member::open(m, swan_server::member::OpenOptions { direct: false, read_only: true })
                .ok()
                .and_then(|m| m.zoned())
        });
        match zoned.filter(|_| sb.zoned) {
            Some(layout) => swan_server::member::Member::create_zoned(&a.new, &layout, false)?,
            None => swan_server::member::Member::create_file(&a.new, sb.member_blocks * 4096, false)?,
        }
    }
    let new = a.new.canonicalize().with_context(|| format!("{}", a.new.display()))?;
    control_request(&path, &format!("replace {}{} {}", a.member, via_word(via), new.display()))?;
    if a.wait {
        loop {
            std::thread::sleep(std::time::Duration::from_millis(200));
            let v = swan_server::control::query(&path).context("the server stopped answering")?;
            let health = v["members"][a.member as usize]["health"].as_str().unwrap_or("?").to_string();
            match health.as_str() {
                "healthy" => break,
                "rebuilding" => continue,
                other => {
                    bail!("the rebuild of member {} stopped: the member is {other} (see the server's log)", a.member)
                }
            }
        }
        println!("member {} rebuilt", a.member);
    }
    Ok(())
}

/// Send one control request; print its answer, or fail with the server's error.
fn control_request(path: &std::path::Path, line: &str) -> Result<()> {
    let v = swan_server::control::request(path, line)
        .with_context(|| format!("no swan server answers on {} (is the array being served?)", path.display()))?;
    if let Some(e) = v.get("error").and_then(|e| e.as_str()) {
        bail!("{e}");
    }
    println!("{}", v.get("ok").and_then(|m| m.as_str()).unwrap_or("done"));
    Ok(())
}

#[derive(clap::Args, Debug)]
#[command(after_help = "Reads, offline (the array must not be served), every live block of a \
log-structured array and compares it with the CRC32C its segment's summary recorded when the \
segment was sealed. A block that does not match (bit rot, a zeroed block, a misdirected write) \
is rebuilt from the other blocks of its stripe row and its parity, where the R-group has \
parity, checked against the CRC, and written back; a row whose parity alone is wrong gets its \
parity rewritten. Without parity (RAID0), or when the rebuild does not match either, the block \
is reported as LOST by logical block address. Segments sealed before block CRCs existed, and \
segments still open at a crash, are counted as unverified. In-place RAID: every member block \
(data and parity) against the CRC table the server keeps; the array must have been stopped \
cleanly (after a crash, serve it once: it resyncs first). Exits 1 if any block is lost or \
anything else is wrong.\n\nExample:\n  swan scrub m0 m1 m2 m3 m4 m5\n  swan scrub --no-repair m0 m1 m2 m3 m4 m5")]
pub struct ScrubArgs {
    /// Only report: write nothing to the members.
    #[arg(long)]
    pub no_repair: bool,
    /// Member files or block devices.
    #[arg(required = true)]
    pub members: Vec<PathBuf>,
}

pub fn scrub(a: &ScrubArgs) -> Result<()> {
    let report = swan_server::scrub::scrub(&a.members, !a.no_repair)?;
    print!("{}", report.text);
    if !report.lost.is_empty() || report.problems > 0 {
        bail!("{} block(s) lost, {} other problem(s)", report.lost.len(), report.problems);
    }
    Ok(())
}

#[derive(clap::Args, Debug)]
#[command(after_help = "Offline (the array must not be served): given every member of an array, \
one of which has a superblock that cannot be read (damaged, or its first block overwritten), \
rewrites that superblock from the other members': the same array, geometry, event count and \
failed set, and the one member index no other member holds. Nothing else is written. Only \
the superblock is mended: if more of the member was overwritten, its data is not brought back \
(a parity array rebuilds such a member instead: serve it as `missing` and swan replace it). \
Refused unless exactly one superblock is unreadable and the others agree.\n\nExample:\n  \
swan repair-superblock m0 m1 m2 m3")]
pub struct RepairSuperblockArgs {
    /// Every member of the array, the damaged one included, in any order.
    #[arg(required = true)]
    pub members: Vec<PathBuf>,
}

pub fn repair_superblock(a: &RepairSuperblockArgs) -> Result<()> {
    let r = array::repair_superblock(&a.members)?;
    println!(
        "rewrote the superblock of {} as member {} of {} array {} (event count {}); serve the array again",
        r.path.display(),
        r.index,
        r.sb.kind,
        r.sb.uuid_string(),
        r.sb.events
    );
    Ok(())
}

pub fn check(a: &CheckArgs) -> Result<()> {
    let report = swan_server::check::check(&a.members)?;
    print!("{}", report.text);
    if report.problems > 0 {
        bail!("{} problem(s) found", report.problems);
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn plain_nbd_off_loopback_warns_that_tls_is_off() {
        let any: Listen = "0.0.0.0:10809".parse().unwrap();
        let lan: Listen = "192.168.1.5:10809".parse().unwrap();
        let v6: Listen = "[::]:10809".parse().unwrap();
        for l in [&any, &lan, &v6] {
            let w = exposure_warning(l, TlsArg::Off, false).expect("a warning");
            assert!(w.contains("TLS is off") && w.contains("--tls require"), "{w}");
            let w = exposure_warning(l, TlsArg::On, false).expect("a warning");
            assert!(w.contains("TLS is optional"), "{w}");
            let w = exposure_warning(l, TlsArg::Require, false).expect("a warning");
            assert!(w.contains("not authenticated") && w.contains("--tls-verify-peer"), "{w}");
            assert_eq!(
                exposure_warning(l, TlsArg::Require, true),
                None,
                "clients authenticated: nothing to warn about"
            );
        }
        for quiet in ["127.0.0.1:10809", "127.3.4.5:1", "[::1]:10809", "unix:/tmp/x.sock"] {
            let l: Listen = quiet.parse().unwrap();
            assert_eq!(exposure_warning(&l, TlsArg::Off, false), None, "{quiet}");
        }
    }
}
