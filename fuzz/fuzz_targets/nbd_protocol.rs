//! Fuzzes swan's NBD protocol handling as a server sees it: the fixed-newstyle handshake
//! (option haggling, NBD_OPT_STARTTLS in all three TLS modes) fed a client's byte stream in
//! arbitrary pieces, then the transmission phase's request headers and their validation.
//!
//! Input: byte 0 picks the server's configuration, byte 1 how the stream is cut into reads,
//! the rest is everything the client sends. When the handshake starts TLS, the rest of the
//! stream is fed on as if the TLS layer had decrypted it (the pump is I/O, not protocol).
//! Beyond "no panic", the target checks what the spec requires of the replies.
#![no_main]

use libfuzzer_sys::fuzz_target;
use swan_nbd::consts::{cmd_flags, opt, rep, tflags, GREETING_LEN, REQUEST_HEADER_LEN};
use swan_nbd::{
    decode_option_reply, decode_request, validate, Action, Command, ExportConfig, ExportLimits, Handshake,
    ServerConfig, TlsMode,
};

fn config(pick: u8) -> ServerConfig {
    // Bits: 0-1 TLS mode, 2 minimum block 4096, 3 read-only, 4 large export, 5 a second
    // export with a 4096-byte name, 6 no default export.
    let tls = match pick & 3 {
        0 => TlsMode::Off,
        1 => TlsMode::On,
        _ => TlsMode::Require,
    };
    let min_block = if pick & 4 != 0 { 4096 } else { 1 };
    let read_only = pick & 8 != 0;
    let size = if pick & 16 != 0 { 127 << 20 } else { (1 << 20) + 4096 };
    let limits = ExportLimits { min_block, ..ExportLimits::new(size) }.with_read_only(read_only);
    let mut exports = vec![ExportConfig { name: "swan".into(), description: "fuzz".into(), limits }];
    if pick & 32 != 0 {
        exports.push(ExportConfig { name: "n".repeat(4096), description: String::new(), limits });
    }
    let mut c = ServerConfig::new(exports).with_tls(tls);
    if pick & 64 == 0 {
        c = c.with_default_export(0);
    }
    c
}

/// Checks one batch of bytes the server sends during option haggling.
fn check_replies(mut out: &[u8], mode: TlsMode, tls: bool) {
    while !out.is_empty() {
        let (r, n) = match decode_option_reply(out, 1 << 20) {
            Ok(Some(x)) => x,
            // The export-name reply (size, flags, maybe zeroes) is not an option reply.
            _ => return,
        };
        // "The server MUST NOT send NBD_REP_ERR_TLS_REQD in reply to any option if TLS has
        // already been initiated", nor ever in NOTLS mode.
        if r.reply_type == rep::ERR_TLS_REQD {
            assert!(mode == TlsMode::Require && !tls, "TLS_REQD in {mode:?} (tls active: {tls})");
        }
        // FORCEDTLS before TLS: nothing but refusals (of STARTTLS too: with data, or from a
        // client without fixed newstyle), and the ACKs of STARTTLS and ABORT.
        if mode == TlsMode::Require && !tls {
            let allowed = r.reply_type == rep::ERR_TLS_REQD
                || (r.option == opt::STARTTLS && matches!(r.reply_type, rep::ACK | rep::ERR_INVALID | rep::ERR_POLICY))
                || (r.option == opt::ABORT && r.reply_type == rep::ACK);
            assert!(allowed, "reply {:#x} to option {} before TLS under FORCEDTLS", r.reply_type, r.option);
        }
        out = &out[n..];
    }
}

fuzz_target!(|data: &[u8]| {
    if data.len() < 2 {
        return;
    }
    let cfg = config(data[0]);
    let mode = cfg.tls;
    let mut cut = u32::from(data[1]) | 1;
    let mut stream = &data[2..];
    let (mut hs, greeting) = Handshake::new(cfg.clone());
    assert!(matches!(greeting, Action::Send(ref g) if g.len() == GREETING_LEN));

    let mut transmission = None;
    let mut closed = false;
    while !stream.is_empty() && transmission.is_none() && !closed {
        // Pieces of 1 to 64 bytes, from a tiny LCG seeded by byte 1.
        cut = cut.wrapping_mul(1_103_515_245).wrapping_add(12_345);
        let n = ((cut >> 16) as usize % 64 + 1).min(stream.len());
        let (piece, rest) = stream.split_at(n);
        stream = rest;
        let tls_before = hs.tls_started();
        let actions = hs.on_bytes(piece);
        for a in actions {
            match a {
                Action::Send(out) => check_replies(&out, mode, tls_before),
                Action::StartTls { leftover } => {
                    assert!(mode != TlsMode::Off, "TLS started in NOTLS mode");
                    assert!(!tls_before, "TLS started twice");
                    assert!(leftover.len() <= piece.len());
                    // Model: the TLS layer decrypts the rest of the stream into the same
                    // bytes. `leftover` came from this piece, so it is in front of `stream`.
                    let mut joined = leftover;
                    joined.extend_from_slice(stream);
                    let actions = hs.on_bytes(&joined);
                    for a in actions {
                        match a {
                            Action::Send(out) => check_replies(&out, mode, true),
                            Action::StartTls { .. } => panic!("TLS started twice"),
                            Action::Transmission { export, leftover } => transmission = Some((export, leftover)),
                            Action::Close { .. } => closed = true,
                        }
                    }
                    stream = &[];
                    break;
                }
                Action::Transmission { export, leftover } => {
                    if mode == TlsMode::Require {
                        assert!(hs.tls_started(), "transmission without TLS under FORCEDTLS");
                    }
                    transmission = Some((export, leftover));
                }
                Action::Close { .. } => closed = true,
            }
        }
        if closed || transmission.is_some() {
            assert!(hs.is_done());
            assert!(hs.on_bytes(b"IHAVEOPT after the end").is_empty(), "bytes accepted after the end");
        }
    }

    // Transmission: decode and validate requests as the connection's reader does.
    let Some((export, leftover)) = transmission else { return };
    let limits = cfg.exports[export].limits;
    let mut input = leftover;
    input.extend_from_slice(stream);
    let mut at = 0;
    while at < input.len() {
        let req = match decode_request(&input[at..]) {
            Ok(Some((req, n))) => {
                assert_eq!(n, REQUEST_HEADER_LEN);
                at += n;
                req
            }
            Ok(None) | Err(_) => break,
        };
        if req.kind == Command::Disc {
            break;
        }
        let ok = validate(&req, &limits).is_ok();
        if ok {
            match req.kind {
                Command::Read | Command::Write | Command::Trim | Command::WriteZeroes => {
                    let end = req.offset.checked_add(u64::from(req.length)).expect("validated range overflows");
                    assert!(end <= limits.size_bytes, "validated request beyond the export: {req:?}");
                    assert!(req.length > 0);
                    let min = u64::from(limits.min_block);
                    assert!(req.offset % min == 0 && u64::from(req.length) % min == 0, "misaligned: {req:?}");
                }
                Command::Flush => assert!(req.offset == 0 && req.length == 0),
                other => panic!("validate() let {other:?} through"),
            }
            if matches!(req.kind, Command::Read | Command::Write) {
                assert!(req.length <= limits.max_payload);
            }
            if matches!(req.kind, Command::Write | Command::Trim | Command::WriteZeroes) {
                assert!(limits.transmission_flags & tflags::READ_ONLY == 0, "write allowed on a read-only export");
            }
            assert!(req.flags & !cmd_flags::ALL == 0, "unknown flags allowed: {req:?}");
        }
        // A write's payload follows its header, refused or not.
        if req.kind == Command::Write {
            at = at.saturating_add(req.length as usize);
        }
    }
});
