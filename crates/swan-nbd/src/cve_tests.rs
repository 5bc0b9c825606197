//! One regression test per root cause behind the known CVEs of NBD servers (nbd-server,
//! qemu-nbd, nbdkit), at the level of the pure protocol code. The same root causes are
//! driven against the real `swan serve` over loopback in `crates/swan-cli/tests/nbd_hostile.rs`.
//! A CVE id is named only where its advisory was checked; otherwise the root cause alone.

use crate::consts::*;
use crate::*;

fn config() -> ServerConfig {
    let long = "n".repeat(MAX_STRING_LEN);
    ServerConfig::new(vec![
        ExportConfig { name: "swan".into(), description: "d".into(), limits: ExportLimits::new(1 << 30) },
        ExportConfig { name: long, description: String::new(), limits: ExportLimits::new(1 << 20) },
    ])
}

fn opt_bytes(option: u32, data: &[u8]) -> Vec<u8> {
    let mut v = OptionHeader { option, length: data.len() as u32 }.encode().to_vec();
    v.extend_from_slice(data);
    v
}

/// `NBD_OPT_GO`/`INFO` data with a name length field that need not match the name.
fn info_data(name_len_field: u32, name: &[u8], requests: &[u16]) -> Vec<u8> {
    let mut d = name_len_field.to_be_bytes().to_vec();
    d.extend_from_slice(name);
    d.extend_from_slice(&(requests.len() as u16).to_be_bytes());
    for r in requests {
        d.extend_from_slice(&r.to_be_bytes());
    }
    d
}

fn started() -> Handshake {
    let (mut hs, _) = Handshake::new(config());
    assert!(hs.on_bytes(&1u32.to_be_bytes()).is_empty());
    hs
}

/// The option replies in `actions`, as (option, reply type, data).
fn replies(actions: &[Action]) -> Vec<(u32, u32, Vec<u8>)> {
    let mut out = Vec::new();
    for a in actions {
        if let Action::Send(mut b) = a.clone() {
            while !b.is_empty() {
                let (r, n) = decode_option_reply(&b, 1 << 20).expect("well-formed reply").expect("whole reply");
                out.push((r.option, r.reply_type, r.data));
                b.drain(..n);
            }
        }
    }
    out
}

fn closes(actions: &[Action]) -> bool {
    matches!(actions.last(), Some(Action::Close { .. }))
}

fn rq(kind: Command, length: u32) -> Request {
    Request { flags: 0, kind, cookie: 7, offset: 0, length }
}

/// nbd-server CVE-2005-3534, and its regression CVE-2011-0530: the request length was
/// checked against the buffer size without counting the reply header sharing that buffer,
/// so a length just under the limit overflowed it by the header size. Here the bound is on
/// the payload alone (the header is a separate fixed array), exact at the maximum, and every
/// length from one past it up to past it by a request header is refused.
#[test]
fn cve_2005_3534_request_length_not_off_by_the_header_size() {
    // Minimum block 1, so that every length around the bound is aligned and only the bound
    // decides.
    let e = ExportLimits::new(1 << 40);
    let max = e.max_payload;
    for kind in [Command::Read, Command::Write] {
        assert_eq!(validate(&rq(kind, max), &e), Ok(()), "{kind:?} of exactly the maximum payload");
        assert_eq!(validate(&rq(kind, max - REQUEST_HEADER_LEN as u32 - 4), &e), Ok(()));
        for over in 1..=(REQUEST_HEADER_LEN as u32 + SIMPLE_REPLY_LEN as u32) {
            let over = max + over;
            assert_eq!(validate(&rq(kind, over), &e), Err(Errno::Inval), "{kind:?} of {over}");
        }
        assert_eq!(validate(&rq(kind, u32::MAX), &e), Err(Errno::Inval));
    }
    // The header decoder takes exactly 28 bytes whatever the length field says: the payload
    // is the connection's business, sized by the (validated) length.
    let h = Request { flags: 0, kind: Command::Write, cookie: 1, offset: 0, length: u32::MAX }.encode();
    let mut more = h.to_vec();
    more.extend_from_slice(&[0xee; 100]);
    assert_eq!(decode_request(&more).unwrap().unwrap().1, REQUEST_HEADER_LEN);
    // The reply header is its own 16 bytes, never sized from the request.
    assert_eq!(encode_simple_reply(1, None).len(), SIMPLE_REPLY_LEN);
}

/// nbd-server CVE-2022-26495 (a name length of 0xffffffff wrapped a `len + 1` allocation to
/// 0) and CVE-2022-26496 (names longer than the 1024-byte stack buffer in
/// NBD_OPT_INFO/GO). The name length is checked against the option's own length before
/// anything is read or allocated, in 64-bit arithmetic.
#[test]
fn cve_2022_26495_26496_option_name_length_0xffffffff_and_over_1024() {
    for option in [opt::INFO, opt::GO] {
        let mut hs = started();
        for field in [u32::MAX, u32::MAX - 3, 0x8000_0000, 1025, 7] {
            let a = hs.on_bytes(&opt_bytes(option, &info_data(field, b"swan", &[])));
            let r = replies(&a);
            assert_eq!((r.len(), r[0].1), (1, rep::ERR_INVALID), "option {option}, name length {field:#x}");
            assert!(!hs.is_done(), "a bad name length ends nothing but the option");
        }
        // Names of 1025 .. 4096 bytes are legal: looked up, not copied into a fixed buffer.
        for len in [1023usize, 1024, 1025, 2000, MAX_STRING_LEN - 1] {
            let name = vec![b'x'; len];
            let r = replies(&hs.on_bytes(&opt_bytes(option, &info_data(len as u32, &name, &[info::NAME]))));
            assert_eq!((r.len(), r[0].1), (1, rep::ERR_UNKNOWN), "{len}-byte name");
        }
        // And the haggling is still in step.
        let r = replies(&hs.on_bytes(&opt_bytes(opt::INFO, &info_data(4, b"swan", &[]))));
        assert_eq!(r.last().unwrap().1, rep::ACK);
    }
    assert!(matches!(decode_info_request(&info_data(u32::MAX, b"", &[]), 6), Err(DecodeError::MalformedOption(_))));
}

/// qemu-nbd's CVE-2017-15118: names up to the spec's 4096 bytes were copied into a 256-byte
/// stack buffer. A 4096-byte name must work everywhere a name goes (GO, INFO with
/// NBD_INFO_NAME echoing it, EXPORT_NAME), and 4097 must be refused, never truncated.
#[test]
fn cve_2017_15118_4096_byte_export_names() {
    let long = vec![b'n'; MAX_STRING_LEN];
    let mut hs = started();
    let r = replies(&hs.on_bytes(&opt_bytes(opt::INFO, &info_data(4096, &long, &[info::NAME]))));
    let name = r.iter().find(|r| r.1 == rep::INFO && r.2[..2] == info::NAME.to_be_bytes()).expect("NBD_INFO_NAME");
    assert_eq!(name.2[2..], long[..], "the 4096-byte name comes back whole");
    assert_eq!(r.last().unwrap().1, rep::ACK);
    let too_long = vec![b'n'; MAX_STRING_LEN + 1];
    let r = replies(&hs.on_bytes(&opt_bytes(opt::GO, &info_data(4097, &too_long, &[]))));
    assert_eq!((r.len(), r[0].1), (1, rep::ERR_INVALID));
    let a = hs.on_bytes(&opt_bytes(opt::GO, &info_data(4096, &long, &[])));
    assert_eq!(a.last(), Some(&Action::Transmission { export: 1, leftover: vec![] }));

    let mut hs = started();
    let a = hs.on_bytes(&opt_bytes(opt::EXPORT_NAME, &long));
    assert_eq!(a.last(), Some(&Action::Transmission { export: 1, leftover: vec![] }));
    let mut hs = started();
    assert!(closes(&hs.on_bytes(&opt_bytes(opt::EXPORT_NAME, &too_long))));
    assert!(decode_export_name(&too_long, 4097).is_err());
}

/// qemu-nbd's CVE-2017-15119: an option announcing up to 4 GB of data made the server read
/// and discard all of it. Here an option longer than the configured bound ends the
/// connection at its header, before a byte of its data is awaited or buffered.
#[test]
fn cve_2017_15119_4gb_option_payload_ends_the_connection_at_its_header() {
    for length in [u32::MAX, 1 << 31, DEFAULT_MAX_OPTION_LEN + 1] {
        for option in [opt::GO, opt::EXPORT_NAME, opt::LIST, 0xdead] {
            let mut hs = started();
            let a = hs.on_bytes(&OptionHeader { option, length }.encode());
            assert!(closes(&a), "option {option} of {length} bytes: {a:?}");
            assert!(hs.is_done());
            assert!(hs.on_bytes(&[0; 4096]).is_empty(), "nothing is read after the close");
        }
    }
    // At the bound the option is awaited, and it is answered once whole.
    let mut hs = started();
    assert!(hs.on_bytes(&OptionHeader { option: 0xdead, length: DEFAULT_MAX_OPTION_LEN }.encode()).is_empty());
    let a = hs.on_bytes(&vec![0; DEFAULT_MAX_OPTION_LEN as usize]);
    assert_eq!(replies(&a)[0].1, rep::ERR_UNSUP);
}

/// qemu-nbd's CVE-2017-7539 (unexpected data during negotiation hit an assertion) and
/// nbd-server's CVE-2013-7441 (a client closing during negotiation, or naming a missing
/// export, killed the server). Garbage at every point of the handshake closes that handshake
/// with a reason, and bytes after a close are ignored.
#[test]
fn cve_2017_7539_cve_2013_7441_unexpected_data_during_the_handshake() {
    let mut valid = 1u32.to_be_bytes().to_vec();
    // Where a new message (and so a magic or the flags) starts.
    let mut boundaries = vec![0, valid.len()];
    for option in [opt_bytes(opt::LIST, &[]), opt_bytes(opt::INFO, &info_data(4, b"swan", &[]))] {
        valid.extend(option);
        boundaries.push(valid.len());
    }
    valid.extend(opt_bytes(opt::GO, &info_data(4, b"swan", &[])));
    // Cut the valid transcript anywhere and append garbage: a close, a clean transmission
    // (if the cut is past the GO), or a wait for more, never anything else.
    let garbage: [&[u8]; 4] = [b"GET / HTTP/1.1\r\n\r\n", &[0xff; 40], b"SSH-2.0-OpenSSH\r\n", &[0; 33]];
    for cut in 0..=valid.len() {
        for g in garbage {
            let (mut hs, _) = Handshake::new(config());
            let mut input = valid[..cut].to_vec();
            input.extend_from_slice(g);
            let a = hs.on_bytes(&input);
            let entered = a.iter().any(|a| matches!(a, Action::Transmission { .. }));
            assert!(entered || closes(&a) || !hs.is_done(), "cut {cut}: {a:?}");
            // Inside a message garbage may pass for its data; where a message starts it
            // cannot (the zero bytes are valid client flags, hence the exception).
            if boundaries.contains(&cut) && g[0] != 0 {
                assert!(closes(&a), "garbage after {cut} bytes of the handshake was not refused: {a:?}");
            }
        }
    }
    // A missing export by EXPORT_NAME: the session ends, nothing else.
    let mut hs = started();
    let a = hs.on_bytes(&opt_bytes(opt::EXPORT_NAME, b"missing"));
    assert!(closes(&a));
    assert!(hs.on_bytes(&opt_bytes(opt::LIST, &[])).is_empty());
}

/// Root cause of several servers' crashes: transmission-phase commands accepted (or
/// half-parsed) before option haggling ended. Before NBD_OPT_GO/EXPORT_NAME succeeds a
/// request header is not an option: its magic is refused and the handshake closes; after
/// NBD_OPT_INFO (which does not end negotiation) likewise.
#[test]
fn commands_before_negotiation_ends_are_refused() {
    let read = Request { flags: 0, kind: Command::Read, cookie: 1, offset: 0, length: 4096 }.encode();
    let disc = Request { flags: 0, kind: Command::Disc, cookie: 2, offset: 0, length: 0 }.encode();
    for req in [read, disc] {
        let mut hs = started();
        assert!(closes(&hs.on_bytes(&req)), "a request instead of the first option");
        let mut hs = started();
        let mut input = opt_bytes(opt::INFO, &info_data(4, b"swan", &[]));
        input.extend_from_slice(&req);
        let a = hs.on_bytes(&input);
        assert_eq!(replies(&a).last().unwrap().1, rep::ACK);
        assert!(closes(&a), "a request after NBD_OPT_INFO: {a:?}");
        assert!(!a.iter().any(|a| matches!(a, Action::Transmission { .. })));
        // Even before the client flags: 4 bytes of a request magic are unknown flags.
        let (mut hs, _) = Handshake::new(config());
        assert!(closes(&hs.on_bytes(&req)));
    }
}
