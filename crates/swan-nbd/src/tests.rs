use crate::consts::*;
use crate::*;

// ------------------------------------------------------------ handshake

#[test]
fn greeting_bytes() {
    let g = encode_greeting(handshake_flags::FIXED_NEWSTYLE | handshake_flags::NO_ZEROES);
    assert_eq!(&g[0..8], b"NBDMAGIC");
    assert_eq!(&g[8..16], b"IHAVEOPT");
    assert_eq!(&g[16..18], &[0, 3]);
}

#[test]
fn client_flags_round_trip_and_partial() {
    let all = handshake_flags::ALL;
    for (bits, f) in [
        (0u32, ClientFlags::default()),
        (1, ClientFlags { fixed_newstyle: true, no_zeroes: false }),
        (3, ClientFlags { fixed_newstyle: true, no_zeroes: true }),
    ] {
        let b = bits.to_be_bytes();
        for n in 0..4 {
            assert_eq!(decode_client_flags(&b[..n], all), Ok(None));
        }
        assert_eq!(decode_client_flags(&b, all), Ok(Some((f, 4))));
        assert_eq!(f.bits(), bits);
    }
}

#[test]
fn client_flags_unknown_bits_rejected() {
    for bits in [4u32, 1 << 31, 0xffff_ffff, 0x5] {
        let e = decode_client_flags(&bits.to_be_bytes(), handshake_flags::ALL).unwrap_err();
        assert!(matches!(e, DecodeError::UnknownClientFlags { .. }), "{bits:#x}");
    }
}

#[test]
fn client_no_zeroes_rejected_unless_advertised() {
    let b = 3u32.to_be_bytes();
    let e = decode_client_flags(&b, handshake_flags::FIXED_NEWSTYLE).unwrap_err();
    assert_eq!(e, DecodeError::UnknownClientFlags { flags: 3, unknown: 2 });
}

#[test]
fn option_header_round_trip() {
    let h = OptionHeader { option: opt::GO, length: 10 };
    let b = h.encode();
    assert_eq!(decode_option_header(&b, DEFAULT_MAX_OPTION_LEN), Ok(Some((h, 16))));
    // Trailing bytes are not consumed.
    let mut more = b.to_vec();
    more.extend_from_slice(&[9; 5]);
    assert_eq!(decode_option_header(&more, DEFAULT_MAX_OPTION_LEN), Ok(Some((h, 16))));
    for n in 0..16 {
        assert_eq!(decode_option_header(&b[..n], DEFAULT_MAX_OPTION_LEN), Ok(None), "{n}");
    }
}

#[test]
fn option_header_bad_magic_full_and_prefix() {
    let mut b = OptionHeader { option: 1, length: 0 }.encode();
    b[3] ^= 0xff;
    assert!(matches!(
        decode_option_header(&b, DEFAULT_MAX_OPTION_LEN),
        Err(DecodeError::BadMagic { expected: magic::IHAVEOPT, .. })
    ));
    // The wrong byte is refused as soon as it arrives.
    assert!(decode_option_header(&b[..4], DEFAULT_MAX_OPTION_LEN).is_err());
    assert_eq!(decode_option_header(&b[..3], DEFAULT_MAX_OPTION_LEN), Ok(None));
}

#[test]
fn option_length_bounded() {
    let b = OptionHeader { option: opt::GO, length: u32::MAX }.encode();
    assert_eq!(
        decode_option_header(&b, DEFAULT_MAX_OPTION_LEN),
        Err(DecodeError::OptionTooLong { option: opt::GO, length: u32::MAX, max: 65536 })
    );
    let b = OptionHeader { option: opt::GO, length: 65536 }.encode();
    assert!(decode_option_header(&b, DEFAULT_MAX_OPTION_LEN).unwrap().is_some());
    let b = OptionHeader { option: opt::GO, length: 65537 }.encode();
    assert!(decode_option_header(&b, DEFAULT_MAX_OPTION_LEN).is_err());
    // A configurable bound.
    let b = OptionHeader { option: opt::LIST, length: 1 }.encode();
    assert!(decode_option_header(&b, 0).is_err());
}

#[test]
fn info_request_round_trip() {
    for r in [
        InfoRequest { name: String::new(), requests: vec![] },
        InfoRequest { name: "swan0".into(), requests: vec![info::EXPORT, info::BLOCK_SIZE] },
        InfoRequest { name: "x".repeat(4096), requests: vec![info::NAME] },
    ] {
        let b = r.encode();
        let len = b.len() as u32;
        assert_eq!(decode_info_request(&b, len), Ok(Some((r.clone(), b.len()))));
        for n in 0..b.len() {
            assert_eq!(decode_info_request(&b[..n], len), Ok(None));
        }
    }
    let r = InfoRequest { name: "a".into(), requests: vec![3] };
    assert!(r.wants_block_size());
}

#[test]
fn info_request_name_too_long() {
    let r = InfoRequest { name: "x".repeat(4097), requests: vec![] };
    let b = r.encode();
    assert_eq!(decode_info_request(&b, b.len() as u32), Err(DecodeError::StringTooLong(4097)));
}

#[test]
fn info_request_name_length_exceeds_option() {
    // Name length claims more than option length - 6.
    let mut b = InfoRequest { name: "abc".into(), requests: vec![] }.encode();
    b[3] = 4;
    assert!(matches!(decode_info_request(&b, b.len() as u32), Err(DecodeError::MalformedOption(_))));
    // 0xffffffff name length: error, nothing allocated.
    b[0..4].copy_from_slice(&u32::MAX.to_be_bytes());
    assert!(matches!(decode_info_request(&b, b.len() as u32), Err(DecodeError::MalformedOption(_))));
}

#[test]
fn info_request_count_inconsistent() {
    let r = InfoRequest { name: "n".into(), requests: vec![0, 3] };
    let mut b = r.encode();
    // Claim 3 requests with room for 2.
    b[5..7].copy_from_slice(&3u16.to_be_bytes());
    assert!(matches!(decode_info_request(&b, b.len() as u32), Err(DecodeError::MalformedOption(_))));
    // Claim 1 with room for 2 (trailing garbage).
    b[5..7].copy_from_slice(&1u16.to_be_bytes());
    assert!(matches!(decode_info_request(&b, b.len() as u32), Err(DecodeError::MalformedOption(_))));
    // Odd trailing byte.
    let mut b = r.encode();
    b.push(0);
    assert!(matches!(decode_info_request(&b, b.len() as u32), Err(DecodeError::MalformedOption(_))));
}

#[test]
fn info_request_too_short_and_bad_strings() {
    for len in 0..6 {
        assert!(decode_info_request(&[0; 6], len).is_err());
    }
    let mut b = InfoRequest { name: "ab".into(), requests: vec![] }.encode();
    b[4] = 0;
    assert_eq!(decode_info_request(&b, b.len() as u32), Err(DecodeError::BadString));
    b[4] = 0xff;
    assert_eq!(decode_info_request(&b, b.len() as u32), Err(DecodeError::BadString));
}

#[test]
fn export_name_decode() {
    assert_eq!(decode_export_name(b"swan0zz", 5), Ok(Some(("swan0".to_string(), 5))));
    assert_eq!(decode_export_name(b"", 0), Ok(Some((String::new(), 0))));
    assert_eq!(decode_export_name(b"swa", 5), Ok(None));
    assert_eq!(decode_export_name(b"", 4097), Err(DecodeError::StringTooLong(4097)));
    assert_eq!(decode_export_name(b"a\0b", 3), Err(DecodeError::BadString));
}

#[test]
fn option_replies_round_trip() {
    let mut out = Vec::new();
    encode_rep_ack(&mut out, opt::ABORT);
    encode_rep_server(&mut out, opt::LIST, "swan0", "SWAN array").unwrap();
    encode_info_export(&mut out, opt::GO, 1 << 30, tflags::HAS_FLAGS | tflags::SEND_FLUSH);
    encode_info_block_size(&mut out, opt::GO, 512, 4096, 1 << 25);
    encode_info_string(&mut out, opt::INFO, info::NAME, "swan0").unwrap();
    encode_rep_error(&mut out, opt::GO, rep::ERR_UNKNOWN, "no such export").unwrap();
    let mut at = 0;
    let mut got = Vec::new();
    while at < out.len() {
        let (r, n) = decode_option_reply(&out[at..], 1 << 16).unwrap().unwrap();
        got.push(r);
        at += n;
    }
    assert_eq!(got.len(), 6);
    assert_eq!((got[0].option, got[0].reply_type, got[0].data.len()), (opt::ABORT, rep::ACK, 0));
    assert_eq!(got[1].reply_type, rep::SERVER);
    assert_eq!(&got[1].data[..4], &5u32.to_be_bytes());
    assert_eq!(&got[1].data[4..9], b"swan0");
    assert_eq!(&got[1].data[9..], b"SWAN array");
    assert_eq!(got[2].data.len(), 12);
    assert_eq!(&got[2].data[0..2], &info::EXPORT.to_be_bytes());
    assert_eq!(&got[2].data[2..10], &(1u64 << 30).to_be_bytes());
    assert_eq!(&got[2].data[10..12], &5u16.to_be_bytes());
    assert_eq!(got[3].data.len(), 14);
    assert_eq!(&got[3].data[0..2], &info::BLOCK_SIZE.to_be_bytes());
    assert_eq!(&got[3].data[2..6], &512u32.to_be_bytes());
    assert_eq!(&got[3].data[6..10], &4096u32.to_be_bytes());
    assert_eq!(&got[3].data[10..14], &(1u32 << 25).to_be_bytes());
    assert_eq!(&got[4].data[2..], b"swan0");
    assert_eq!(got[5].reply_type, 0x8000_0006);
    assert_eq!(got[5].data, b"no such export");
    // Header bytes exactly as specified.
    assert_eq!(&out[0..8], &0x0003_e889_0455_65a9u64.to_be_bytes());
    // Partial replies need more bytes.
    for n in 0..20 {
        assert_eq!(decode_option_reply(&out[..n], 1 << 16), Ok(None));
    }
}

#[test]
fn encode_errors() {
    let mut out = Vec::new();
    assert_eq!(encode_rep_error(&mut out, 1, rep::ACK, "x"), Err(EncodeError::NotAnError(1)));
    assert_eq!(
        encode_rep_error(&mut out, 1, rep::ERR_INVALID, &"m".repeat(4097)),
        Err(EncodeError::StringTooLong(4097))
    );
    assert_eq!(encode_rep_server(&mut out, 3, "a\0", ""), Err(EncodeError::BadString));
    assert!(out.is_empty());
    encode_rep_error(&mut out, 1, rep::ERR_POLICY, &"m".repeat(4096)).unwrap();
}

#[test]
fn rep_error_constants() {
    assert_eq!(rep::ERR_UNSUP, 0x8000_0001);
    assert_eq!(rep::ERR_POLICY, 0x8000_0002);
    assert_eq!(rep::ERR_INVALID, 0x8000_0003);
    assert_eq!(rep::ERR_TLS_REQD, 0x8000_0005);
    assert_eq!(rep::ERR_SHUTDOWN, 0x8000_0007);
    assert_eq!(rep::ERR_BLOCK_SIZE_REQD, 0x8000_0008);
    assert_eq!(magic::NBDMAGIC.to_be_bytes(), *b"NBDMAGIC");
    assert_eq!(magic::IHAVEOPT.to_be_bytes(), *b"IHAVEOPT");
}

#[test]
fn export_name_reply() {
    let r = encode_export_name_reply(4096, 0x0105, false);
    assert_eq!(r.len(), 8 + 2 + 124);
    assert_eq!(&r[0..8], &4096u64.to_be_bytes());
    assert_eq!(&r[8..10], &[0x01, 0x05]);
    assert!(r[10..].iter().all(|&b| b == 0));
    assert_eq!(encode_export_name_reply(4096, 1, true).len(), 10);
}

// --------------------------------------------------------- transmission

fn req(kind: Command, flags: u16, offset: u64, length: u32) -> Request {
    Request { flags, kind, cookie: 0xdead_beef_0000_0001, offset, length }
}

#[test]
fn request_round_trip() {
    for kind in [
        Command::Read,
        Command::Write,
        Command::Disc,
        Command::Flush,
        Command::Trim,
        Command::Cache,
        Command::WriteZeroes,
        Command::BlockStatus,
        Command::Other(99),
    ] {
        let r = req(kind, 0x1f, u64::MAX - 7, u32::MAX);
        let b = r.encode();
        assert_eq!(decode_request(&b), Ok(Some((r, 28))));
        assert_eq!(Command::from_u16(kind.to_u16()), kind);
    }
    let r = req(Command::Write, 0, 0, 512);
    assert_eq!(r.payload_len(), 512);
    assert_eq!(req(Command::Read, 0, 0, 512).payload_len(), 0);
    let b = r.encode();
    assert_eq!(&b[0..4], &[0x25, 0x60, 0x95, 0x13]);
}

#[test]
fn request_truncated_at_every_length() {
    let b = req(Command::Read, 0, 4096, 4096).encode();
    for n in 0..28 {
        assert_eq!(decode_request(&b[..n]), Ok(None), "{n}");
    }
    let mut more = b.to_vec();
    more.extend_from_slice(&b);
    assert_eq!(decode_request(&more).unwrap().unwrap().1, 28);
}

#[test]
fn request_bad_magic() {
    let mut b = req(Command::Read, 0, 0, 512).encode();
    b[0] = 0x67;
    assert!(matches!(decode_request(&b), Err(DecodeError::BadRequestMagic(_))));
    assert!(matches!(decode_request(&b[..1]), Err(DecodeError::BadRequestMagic(_))));
    // The simple reply magic is not a request.
    b[0..4].copy_from_slice(&magic::SIMPLE_REPLY.to_be_bytes());
    assert_eq!(decode_request(&b), Err(DecodeError::BadRequestMagic(magic::SIMPLE_REPLY)));
}

#[test]
fn simple_reply_round_trip() {
    for e in [None, Some(Errno::Perm), Some(Errno::Inval), Some(Errno::Shutdown)] {
        let b = encode_simple_reply(42, e);
        let (r, n) = decode_simple_reply(&b).unwrap().unwrap();
        assert_eq!(n, 16);
        assert_eq!(r.cookie, 42);
        assert_eq!(Errno::from_code(r.error), e);
    }
    let b = encode_simple_reply(7, Some(Errno::NoSpc));
    assert_eq!(&b[0..4], &[0x67, 0x44, 0x66, 0x98]);
    assert_eq!(&b[4..8], &28u32.to_be_bytes());
    let mut bad = b;
    bad[0] = 0;
    assert!(decode_simple_reply(&bad).is_err());
}

#[test]
fn errno_values() {
    let v: Vec<u32> = [
        Errno::Perm,
        Errno::Io,
        Errno::NoMem,
        Errno::Inval,
        Errno::NoSpc,
        Errno::Overflow,
        Errno::NotSup,
        Errno::Shutdown,
    ]
    .iter()
    .map(|e| e.code())
    .collect();
    assert_eq!(v, [1, 5, 12, 22, 28, 75, 95, 108]);
    assert_eq!(Errno::from_code(2), None);
}

// ----------------------------------------------------------- validation

const MIB: u64 = 1 << 20;

fn export() -> ExportLimits {
    ExportLimits { min_block: 512, ..ExportLimits::new(64 * MIB) }
}

#[test]
fn valid_requests_pass() {
    let e = export();
    assert_eq!(e.check(), Ok(()));
    assert_eq!(validate(&req(Command::Read, 0, 0, 4096), &e), Ok(()));
    assert_eq!(validate(&req(Command::Write, cmd_flags::FUA, 64 * MIB - 512, 512), &e), Ok(()));
    assert_eq!(validate(&req(Command::Read, cmd_flags::FUA, 0, 512), &e), Ok(()), "FUA valid on all commands");
    assert_eq!(validate(&req(Command::Flush, 0, 0, 0), &e), Ok(()));
    assert_eq!(validate(&req(Command::Disc, 0, 0, 0), &e), Ok(()));
    assert_eq!(validate(&req(Command::Trim, 0, 0, 64 * MIB as u32), &e), Ok(()), "TRIM not bounded by max payload");
    assert_eq!(validate(&req(Command::WriteZeroes, cmd_flags::NO_HOLE, 0, 1 << 25), &e), Ok(()));
    assert_eq!(validate(&req(Command::Write, 0, 0, 1 << 25), &e), Ok(()));
}

#[test]
fn offset_length_overflow() {
    let e = ExportLimits::new(u64::MAX);
    assert_eq!(validate(&req(Command::Read, 0, u64::MAX, 1), &e), Err(Errno::Inval));
    assert_eq!(validate(&req(Command::Write, 0, u64::MAX - 10, 512), &e), Err(Errno::NoSpc));
    assert_eq!(validate(&req(Command::Trim, 0, u64::MAX, u32::MAX), &e), Err(Errno::Inval));
    assert_eq!(validate(&req(Command::WriteZeroes, 0, u64::MAX, 1), &e), Err(Errno::NoSpc));
    assert_eq!(validate(&req(Command::Read, 0, u64::MAX - 1, 1), &e), Ok(()));
}

#[test]
fn beyond_end() {
    let e = export();
    assert_eq!(validate(&req(Command::Read, 0, 64 * MIB, 512), &e), Err(Errno::Inval));
    assert_eq!(validate(&req(Command::Read, 0, 64 * MIB - 512, 1024), &e), Err(Errno::Inval));
    assert_eq!(validate(&req(Command::Write, 0, 64 * MIB, 512), &e), Err(Errno::NoSpc));
    assert_eq!(validate(&req(Command::Trim, 0, 64 * MIB, 512), &e), Err(Errno::Inval));
    assert_eq!(validate(&req(Command::WriteZeroes, 0, 64 * MIB, 512), &e), Err(Errno::NoSpc));
}

#[test]
fn misaligned() {
    let e = export();
    assert_eq!(validate(&req(Command::Read, 0, 1, 512), &e), Err(Errno::Inval));
    assert_eq!(validate(&req(Command::Read, 0, 0, 513), &e), Err(Errno::Inval));
    assert_eq!(validate(&req(Command::Write, 0, 256, 512), &e), Err(Errno::Inval));
    assert_eq!(validate(&req(Command::Trim, 0, 512, 100), &e), Err(Errno::Inval));
    // No advertised minimum: byte granularity.
    let e1 = ExportLimits::new(MIB);
    assert_eq!(validate(&req(Command::Read, 0, 1, 3), &e1), Ok(()));
}

#[test]
fn zero_length() {
    let e = export();
    for k in [Command::Read, Command::Write, Command::Trim, Command::WriteZeroes] {
        assert_eq!(validate(&req(k, 0, 0, 0), &e), Err(Errno::Inval), "{k:?}");
    }
    assert_eq!(validate(&req(Command::Flush, 0, 0, 512), &e), Err(Errno::Inval));
    assert_eq!(validate(&req(Command::Flush, 0, 512, 0), &e), Err(Errno::Inval));
    assert_eq!(validate(&req(Command::Disc, 0, 0, 1), &e), Err(Errno::Inval));
}

#[test]
fn over_max_payload() {
    let e = export();
    let over = (1u32 << 25) + 512;
    let big = ExportLimits { size_bytes: 1 << 40, ..e };
    assert_eq!(validate(&req(Command::Read, 0, 0, over), &big), Err(Errno::Inval));
    assert_eq!(validate(&req(Command::Write, 0, 0, over), &big), Err(Errno::Inval));
    assert_eq!(validate(&req(Command::WriteZeroes, 0, 0, over), &big), Err(Errno::Inval));
    assert_eq!(validate(&req(Command::Trim, 0, 0, over), &big), Ok(()));
    let fast = ExportLimits { transmission_flags: big.transmission_flags | tflags::SEND_FAST_ZERO, ..big };
    assert_eq!(validate(&req(Command::WriteZeroes, cmd_flags::FAST_ZERO, 0, over), &fast), Ok(()));
}

#[test]
fn read_only_writes() {
    let e = export().with_read_only(true);
    assert!(e.read_only());
    for k in [Command::Write, Command::Trim, Command::WriteZeroes] {
        assert_eq!(validate(&req(k, 0, 0, 512), &e), Err(Errno::Perm), "{k:?}");
    }
    assert_eq!(validate(&req(Command::Read, 0, 0, 512), &e), Ok(()));
    assert_eq!(validate(&req(Command::Flush, 0, 0, 0), &e), Ok(()));
    assert!(!e.with_read_only(false).read_only());
    // As a read-only export is advertised (no TRIM, WRITE_ZEROES, FUA): still EPERM, not the
    // EINVAL of a command not advertised.
    let bare = ExportLimits { transmission_flags: tflags::HAS_FLAGS | tflags::READ_ONLY | tflags::SEND_FLUSH, ..e };
    for k in [Command::Write, Command::Trim, Command::WriteZeroes] {
        assert_eq!(validate(&req(k, 0, 0, 512), &bare), Err(Errno::Perm), "{k:?}");
    }
    assert_eq!(validate(&req(Command::Read, cmd_flags::FUA, 0, 512), &bare), Err(Errno::Inval), "FUA not advertised");
}

#[test]
fn unknown_or_unadvertised_command() {
    let e = export();
    for k in [Command::Other(9), Command::Other(0xffff), Command::Cache, Command::BlockStatus] {
        assert_eq!(validate(&req(k, 0, 0, 512), &e), Err(Errno::Inval), "{k:?}");
    }
    let bare = ExportLimits { transmission_flags: tflags::HAS_FLAGS, ..e };
    assert_eq!(validate(&req(Command::Flush, 0, 0, 0), &bare), Err(Errno::Inval));
    assert_eq!(validate(&req(Command::Trim, 0, 0, 512), &bare), Err(Errno::Inval));
    assert_eq!(validate(&req(Command::WriteZeroes, 0, 0, 512), &bare), Err(Errno::Inval));
    assert_eq!(validate(&req(Command::Read, 0, 0, 512), &bare), Ok(()));
}

#[test]
fn unknown_or_inapplicable_flags() {
    let e = export();
    // Unknown bits.
    for bit in 5..16 {
        assert_eq!(validate(&req(Command::Read, 1 << bit, 0, 512), &e), Err(Errno::Inval), "bit {bit}");
    }
    // Defined but not applicable.
    assert_eq!(validate(&req(Command::Write, cmd_flags::NO_HOLE, 0, 512), &e), Err(Errno::Inval));
    assert_eq!(validate(&req(Command::Read, cmd_flags::REQ_ONE, 0, 512), &e), Err(Errno::Inval));
    assert_eq!(validate(&req(Command::Read, cmd_flags::DF, 0, 512), &e), Err(Errno::Inval), "DF needs SEND_DF");
    assert_eq!(validate(&req(Command::Write, cmd_flags::DF, 0, 512), &e), Err(Errno::Inval));
    assert_eq!(
        validate(&req(Command::WriteZeroes, cmd_flags::FAST_ZERO, 0, 512), &e),
        Err(Errno::Inval),
        "needs SEND_FAST_ZERO"
    );
    let df = ExportLimits { transmission_flags: e.transmission_flags | tflags::SEND_DF, ..e };
    assert_eq!(validate(&req(Command::Read, cmd_flags::DF, 0, 512), &df), Ok(()));
    // FUA without SEND_FUA.
    let nofua = ExportLimits { transmission_flags: e.transmission_flags & !tflags::SEND_FUA, ..e };
    assert_eq!(validate(&req(Command::Write, cmd_flags::FUA, 0, 512), &nofua), Err(Errno::Inval));
    // Flags are checked before the range.
    assert_eq!(validate(&req(Command::Write, 1 << 9, 1 << 62, 512), &e), Err(Errno::Inval));
}

#[test]
fn limits_check() {
    assert_eq!(ExportLimits::new(MIB).check(), Ok(()));
    assert!(ExportLimits { min_block: 3, ..ExportLimits::new(MIB) }.check().is_err());
    assert!(ExportLimits { min_block: 1 << 17, ..ExportLimits::new(MIB) }.check().is_err());
    assert!(ExportLimits { preferred_block: 256, ..ExportLimits::new(MIB) }.check().is_err());
    assert!(ExportLimits { min_block: 4096, max_payload: 4096 * 3 + 1, ..ExportLimits::new(MIB) }.check().is_err());
    assert!(ExportLimits { transmission_flags: 0, ..ExportLimits::new(MIB) }.check().is_err());
    let fz = ExportLimits { transmission_flags: tflags::HAS_FLAGS | tflags::SEND_FAST_ZERO, ..ExportLimits::new(MIB) };
    assert!(fz.check().is_err());
}
