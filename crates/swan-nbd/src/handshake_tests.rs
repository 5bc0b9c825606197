use crate::consts::*;
use crate::*;

fn config() -> ServerConfig {
    ServerConfig::new(vec![
        ExportConfig {
            name: "swan0".into(),
            description: "SWAN array".into(),
            limits: ExportLimits { min_block: 4096, ..ExportLimits::new(1 << 30) },
        },
        ExportConfig {
            name: String::new(),
            description: String::new(),
            limits: ExportLimits::new(1 << 20).with_read_only(true),
        },
    ])
}

fn opt_bytes(option: u32, data: &[u8]) -> Vec<u8> {
    let mut v = OptionHeader { option, length: data.len() as u32 }.encode().to_vec();
    v.extend_from_slice(data);
    v
}

fn sent(actions: &[Action]) -> Vec<u8> {
    actions
        .iter()
        .filter_map(|a| match a {
            Action::Send(b) => Some(b.clone()),
            _ => None,
        })
        .flatten()
        .collect()
}

fn replies(mut b: &[u8]) -> Vec<OptionReply> {
    let mut v = Vec::new();
    while !b.is_empty() {
        let (r, n) = decode_option_reply(b, 1 << 16).unwrap().unwrap();
        v.push(r);
        b = &b[n..];
    }
    v
}

fn started() -> Handshake {
    let (mut hs, first) = Handshake::new(config());
    assert_eq!(first, Action::Send(encode_greeting(handshake_flags::ALL).to_vec()));
    assert!(hs.on_bytes(&1u32.to_be_bytes()).is_empty());
    hs
}

#[test]
fn go_enters_transmission_with_info() {
    let mut hs = started();
    let go = InfoRequest { name: "swan0".into(), requests: vec![info::BLOCK_SIZE, info::NAME] };
    let mut input = opt_bytes(opt::GO, &go.encode());
    let next = Request { flags: 0, kind: Command::Read, cookie: 1, offset: 0, length: 4096 }.encode();
    input.extend_from_slice(&next);
    let actions = hs.on_bytes(&input);
    let r = replies(&sent(&actions));
    let types: Vec<u32> = r.iter().map(|r| r.reply_type).collect();
    assert_eq!(types, [rep::INFO, rep::INFO, rep::INFO, rep::ACK]);
    assert!(r.iter().all(|r| r.option == opt::GO));
    assert_eq!(&r[0].data[2..10], &(1u64 << 30).to_be_bytes());
    assert_eq!(&r[1].data[2..6], &4096u32.to_be_bytes());
    assert_eq!(&r[2].data[2..], b"swan0");
    assert_eq!(actions.last(), Some(&Action::Transmission { export: 0, leftover: next.to_vec() }));
    assert!(hs.is_done());
    assert!(hs.on_bytes(b"more").is_empty());
}

#[test]
fn byte_at_a_time_matches_bulk() {
    let mut input = 1u32.to_be_bytes().to_vec();
    input.extend(opt_bytes(opt::LIST, &[]));
    input.extend(opt_bytes(opt::STRUCTURED_REPLY, &[]));
    input.extend(opt_bytes(opt::INFO, &InfoRequest { name: "".into(), requests: vec![] }.encode()));
    input.extend(opt_bytes(opt::GO, &InfoRequest { name: "swan0".into(), requests: vec![] }.encode()));
    let (mut bulk, _) = Handshake::new(config());
    let a = bulk.on_bytes(&input);
    let (mut slow, _) = Handshake::new(config());
    let mut b = Vec::new();
    for byte in &input {
        b.extend(slow.on_bytes(std::slice::from_ref(byte)));
    }
    assert_eq!(sent(&a), sent(&b));
    assert_eq!(a.last(), b.last());
    assert_eq!(a.last(), Some(&Action::Transmission { export: 0, leftover: vec![] }));
}

#[test]
fn info_does_not_enter_transmission() {
    let mut hs = started();
    let a = hs.on_bytes(&opt_bytes(opt::INFO, &InfoRequest { name: "".into(), requests: vec![] }.encode()));
    let r = replies(&sent(&a));
    assert_eq!(r.last().unwrap().reply_type, rep::ACK);
    // Read-only flag advertised for the default export.
    let flags = u16::from_be_bytes([r[0].data[10], r[0].data[11]]);
    assert_ne!(flags & tflags::READ_ONLY, 0);
    assert!(!hs.is_done());
}

#[test]
fn list_and_list_with_data() {
    let mut hs = started();
    let r = replies(&sent(&hs.on_bytes(&opt_bytes(opt::LIST, &[]))));
    let types: Vec<u32> = r.iter().map(|r| r.reply_type).collect();
    assert_eq!(types, [rep::SERVER, rep::SERVER, rep::ACK]);
    assert_eq!(&r[0].data[4..9], b"swan0");
    let r = replies(&sent(&hs.on_bytes(&opt_bytes(opt::LIST, &[1]))));
    assert_eq!(r.len(), 1);
    assert_eq!(r[0].reply_type, rep::ERR_INVALID);
}

#[test]
fn unsupported_options_get_err_unsup() {
    let mut hs = started();
    for o in [opt::STARTTLS, opt::STRUCTURED_REPLY, opt::SET_META_CONTEXT, 0xdead] {
        let r = replies(&sent(&hs.on_bytes(&opt_bytes(o, &[1, 2, 3]))));
        assert_eq!((r.len(), r[0].option, r[0].reply_type), (1, o, rep::ERR_UNSUP));
    }
    assert!(!hs.is_done());
}

#[test]
fn go_errors_keep_haggling() {
    let mut hs = started();
    let r = replies(&sent(
        &hs.on_bytes(&opt_bytes(opt::GO, &InfoRequest { name: "nope".into(), requests: vec![] }.encode())),
    ));
    assert_eq!(r[0].reply_type, rep::ERR_UNKNOWN);
    let r = replies(&sent(&hs.on_bytes(&opt_bytes(opt::GO, &[0, 0, 0, 9, 0, 0]))));
    assert_eq!(r[0].reply_type, rep::ERR_INVALID);
    let r = replies(&sent(&hs.on_bytes(&opt_bytes(opt::GO, &[0, 0]))));
    assert_eq!(r[0].reply_type, rep::ERR_INVALID);
    assert!(!hs.is_done());
}

#[test]
fn export_name_known_and_unknown() {
    let mut hs = started();
    let a = hs.on_bytes(&opt_bytes(opt::EXPORT_NAME, b"swan0"));
    assert_eq!(sent(&a).len(), 134);
    assert_eq!(a.last(), Some(&Action::Transmission { export: 0, leftover: vec![] }));

    let (mut hs, _) = Handshake::new(config());
    hs.on_bytes(&3u32.to_be_bytes());
    assert!(hs.client_flags().no_zeroes);
    let a = hs.on_bytes(&opt_bytes(opt::EXPORT_NAME, b""));
    assert_eq!(sent(&a).len(), 10);
    assert_eq!(a.last(), Some(&Action::Transmission { export: 1, leftover: vec![] }));

    let mut hs = started();
    let a = hs.on_bytes(&opt_bytes(opt::EXPORT_NAME, b"nope"));
    assert!(matches!(a.as_slice(), [Action::Close { .. }]));
    assert!(hs.is_done());
}

#[test]
fn abort_acks_then_closes() {
    let mut hs = started();
    let a = hs.on_bytes(&opt_bytes(opt::ABORT, &[]));
    assert_eq!(replies(&sent(&a))[0].reply_type, rep::ACK);
    assert!(matches!(a.last(), Some(Action::Close { .. })));
}

#[test]
fn protocol_violations_close() {
    let (mut hs, _) = Handshake::new(config());
    assert!(matches!(hs.on_bytes(&4u32.to_be_bytes()).as_slice(), [Action::Close { .. }]));

    let mut hs = started();
    let huge = OptionHeader { option: opt::GO, length: u32::MAX }.encode();
    assert!(matches!(hs.on_bytes(&huge).as_slice(), [Action::Close { .. }]));

    let mut hs = started();
    assert!(matches!(hs.on_bytes(b"IHAVEOPX").as_slice(), [Action::Close { .. }]));
    assert!(hs.on_bytes(&opt_bytes(opt::LIST, &[])).is_empty());
}

#[test]
fn empty_name_selects_the_default_export() {
    let named = ExportConfig { name: "swan0".into(), description: String::new(), limits: ExportLimits::new(1 << 20) };
    let config = ServerConfig::new(vec![named.clone()]);
    assert_eq!(config.default_export, None);

    // Without a default, "" is an unknown export.
    let (mut hs, _) = Handshake::new(config.clone());
    hs.on_bytes(&1u32.to_be_bytes());
    let r =
        replies(&sent(&hs.on_bytes(&opt_bytes(opt::GO, &InfoRequest { name: "".into(), requests: vec![] }.encode()))));
    assert_eq!(r[0].reply_type, rep::ERR_UNKNOWN);

    // With one, GO and EXPORT_NAME with "" reach it; its real name still does.
    for name in ["", "swan0"] {
        let (mut hs, _) = Handshake::new(config.clone().with_default_export(0));
        hs.on_bytes(&1u32.to_be_bytes());
        let a = hs.on_bytes(&opt_bytes(opt::GO, &InfoRequest { name: name.into(), requests: vec![] }.encode()));
        assert_eq!(a.last(), Some(&Action::Transmission { export: 0, leftover: vec![] }));
        let (mut hs, _) = Handshake::new(config.clone().with_default_export(0));
        hs.on_bytes(&1u32.to_be_bytes());
        let a = hs.on_bytes(&opt_bytes(opt::EXPORT_NAME, name.as_bytes()));
        assert_eq!(a.last(), Some(&Action::Transmission { export: 0, leftover: vec![] }));
    }

    // An out-of-range default is ignored, and an export really named "" wins.
    let (mut hs, _) = Handshake::new(config.clone().with_default_export(7));
    hs.on_bytes(&1u32.to_be_bytes());
    let a = hs.on_bytes(&opt_bytes(opt::EXPORT_NAME, b""));
    assert!(matches!(a.as_slice(), [Action::Close { .. }]));
    let empty = ExportConfig { name: String::new(), ..named.clone() };
    let (mut hs, _) = Handshake::new(ServerConfig::new(vec![named, empty]).with_default_export(0));
    hs.on_bytes(&1u32.to_be_bytes());
    let a = hs.on_bytes(&opt_bytes(opt::EXPORT_NAME, b""));
    assert_eq!(a.last(), Some(&Action::Transmission { export: 1, leftover: vec![] }));
}

// ------------------------------------------------------------------ TLS

fn started_tls(mode: TlsMode) -> Handshake {
    let (mut hs, _) = Handshake::new(config().with_tls(mode));
    assert!(hs.on_bytes(&1u32.to_be_bytes()).is_empty());
    hs
}

fn go(name: &str) -> Vec<u8> {
    opt_bytes(opt::GO, &InfoRequest { name: name.into(), requests: vec![] }.encode())
}

/// Feeds `input`, expects exactly one `NBD_OPT_STARTTLS` acknowledged, and returns its leftover.
fn start_tls(hs: &mut Handshake, input: &[u8]) -> Vec<u8> {
    let a = hs.on_bytes(input);
    let Some(Action::StartTls { leftover }) = a.last() else { panic!("no StartTls in {a:?}") };
    let r = replies(&sent(&a));
    assert_eq!((r.last().unwrap().option, r.last().unwrap().reply_type), (opt::STARTTLS, rep::ACK));
    assert!(hs.tls_started());
    leftover.clone()
}

#[test]
fn tls_off_answers_starttls_unsup() {
    let mut hs = started_tls(TlsMode::Off);
    let r = replies(&sent(&hs.on_bytes(&opt_bytes(opt::STARTTLS, &[]))));
    assert_eq!((r.len(), r[0].reply_type), (1, rep::ERR_UNSUP));
    assert!(!hs.tls_started());
}

#[test]
fn forcedtls_refuses_everything_but_starttls_and_abort_before_tls() {
    let mut hs = started_tls(TlsMode::Require);
    let info = InfoRequest { name: "swan0".into(), requests: vec![info::BLOCK_SIZE] }.encode();
    for (o, data) in [
        (opt::LIST, vec![]),
        (opt::INFO, info.clone()),
        (opt::GO, info.clone()),
        (opt::STRUCTURED_REPLY, vec![]),
        (opt::SET_META_CONTEXT, vec![1, 2, 3]),
        (0xdead, vec![9; 40]),
    ] {
        let a = hs.on_bytes(&opt_bytes(o, &data));
        let r = replies(&sent(&a));
        assert_eq!((r.len(), r[0].option, r[0].reply_type), (1, o, rep::ERR_TLS_REQD), "option {o}");
        assert!(!hs.is_done());
    }
    // "it MUST terminate the session" on NBD_OPT_EXPORT_NAME before TLS, even for a real export.
    let a = hs.on_bytes(&opt_bytes(opt::EXPORT_NAME, b"swan0"));
    assert!(matches!(a.as_slice(), [Action::Close { .. }]), "{a:?}");
    assert!(hs.is_done());
    // ABORT is still answered.
    let mut hs = started_tls(TlsMode::Require);
    let a = hs.on_bytes(&opt_bytes(opt::ABORT, &[]));
    assert_eq!(replies(&sent(&a))[0].reply_type, rep::ACK);
    assert!(matches!(a.last(), Some(Action::Close { .. })));
}

#[test]
fn forcedtls_serves_after_starttls_and_never_says_tls_reqd_again() {
    let mut hs = started_tls(TlsMode::Require);
    assert!(start_tls(&mut hs, &opt_bytes(opt::STARTTLS, &[])).is_empty());
    // Now decrypted bytes: options work, a second STARTTLS is invalid, unknown ones unsupported.
    let r = replies(&sent(&hs.on_bytes(&opt_bytes(opt::STARTTLS, &[]))));
    assert_eq!((r.len(), r[0].reply_type), (1, rep::ERR_INVALID));
    let r = replies(&sent(&hs.on_bytes(&opt_bytes(0xdead, &[]))));
    assert_eq!(r[0].reply_type, rep::ERR_UNSUP);
    let r = replies(&sent(&hs.on_bytes(&opt_bytes(opt::LIST, &[]))));
    assert_eq!(r.last().unwrap().reply_type, rep::ACK);
    let a = hs.on_bytes(&go("swan0"));
    assert_eq!(a.last(), Some(&Action::Transmission { export: 0, leftover: vec![] }));
}

#[test]
fn forcedtls_export_name_after_starttls_enters_transmission() {
    let mut hs = started_tls(TlsMode::Require);
    start_tls(&mut hs, &opt_bytes(opt::STARTTLS, &[]));
    let a = hs.on_bytes(&opt_bytes(opt::EXPORT_NAME, b"swan0"));
    assert_eq!(a.last(), Some(&Action::Transmission { export: 0, leftover: vec![] }));
}

#[test]
fn starttls_needs_a_fixed_newstyle_client() {
    for mode in [TlsMode::On, TlsMode::Require] {
        let (mut hs, _) = Handshake::new(config().with_tls(mode));
        assert!(hs.on_bytes(&0u32.to_be_bytes()).is_empty());
        let r = replies(&sent(&hs.on_bytes(&opt_bytes(opt::STARTTLS, &[]))));
        assert_eq!((r.len(), r[0].reply_type), (1, rep::ERR_POLICY), "{mode:?}");
        assert!(!hs.tls_started());
        // Under FORCEDTLS such a client gets nothing; with TLS optional it is served plainly.
        let a = hs.on_bytes(&go("swan0"));
        if mode == TlsMode::Require {
            assert_eq!(replies(&sent(&a))[0].reply_type, rep::ERR_TLS_REQD);
        } else {
            assert_eq!(a.last(), Some(&Action::Transmission { export: 0, leftover: vec![] }));
        }
    }
}

#[test]
fn starttls_with_data_is_invalid() {
    for mode in [TlsMode::On, TlsMode::Require] {
        let mut hs = started_tls(mode);
        let r = replies(&sent(&hs.on_bytes(&opt_bytes(opt::STARTTLS, &[0; 4]))));
        assert_eq!((r.len(), r[0].reply_type), (1, rep::ERR_INVALID));
        assert!(!hs.tls_started());
    }
}

#[test]
fn selective_tls_serves_plaintext_and_upgrades_on_request() {
    let mut hs = started_tls(TlsMode::On);
    let a = hs.on_bytes(&go("swan0"));
    assert_eq!(a.last(), Some(&Action::Transmission { export: 0, leftover: vec![] }));
    let mut hs = started_tls(TlsMode::On);
    let r = replies(&sent(&hs.on_bytes(&opt_bytes(opt::LIST, &[]))));
    assert_eq!(r.last().unwrap().reply_type, rep::ACK);
    start_tls(&mut hs, &opt_bytes(opt::STARTTLS, &[]));
    let a = hs.on_bytes(&go(""));
    assert_eq!(a.last(), Some(&Action::Transmission { export: 1, leftover: vec![] }));
}

/// Root cause of nbdkit's CVE-2021-3716 and of the STARTTLS buffering bugs of SMTP/IMAP
/// servers: state (or buffered bytes) from before the upgrade acted on after it. A meddler
/// injects plaintext options before STARTTLS and appends more after it in the same segment:
/// the ones after it must go to the TLS layer as ciphertext, never be haggled.
#[test]
fn cve_2021_3716_state_is_not_carried_across_starttls() {
    for mode in [TlsMode::On, TlsMode::Require] {
        let mut hs = started_tls(mode);
        let mut input = opt_bytes(opt::STRUCTURED_REPLY, &[]);
        input.extend(opt_bytes(opt::STARTTLS, &[]));
        let injected = [go("swan0"), opt_bytes(opt::LIST, &[])].concat();
        input.extend(&injected);
        let a = hs.on_bytes(&input);
        let r = replies(&sent(&a));
        // STRUCTURED_REPLY refused (TLS_REQD or UNSUP), STARTTLS acknowledged, nothing else answered.
        let expect_sr = if mode == TlsMode::Require { rep::ERR_TLS_REQD } else { rep::ERR_UNSUP };
        let got: Vec<(u32, u32)> = r.iter().map(|r| (r.option, r.reply_type)).collect();
        assert_eq!(got, [(opt::STRUCTURED_REPLY, expect_sr), (opt::STARTTLS, rep::ACK)], "{mode:?}");
        assert_eq!(a.last(), Some(&Action::StartTls { leftover: injected.clone() }));
        assert!(!a.iter().any(|a| matches!(a, Action::Transmission { .. })));
        // Under TLS the handshake starts from an empty buffer: a decrypted GO is served with
        // simple-reply semantics exactly as if nothing had come before.
        let a = hs.on_bytes(&go("swan0"));
        let r = replies(&sent(&a));
        assert!(r.iter().all(|r| r.option == opt::GO), "{r:?}");
        assert_eq!(a.last(), Some(&Action::Transmission { export: 0, leftover: vec![] }));
    }
}

/// Byte-at-a-time delivery across the STARTTLS boundary: the leftover is exactly what came
/// after the option, however it was split.
#[test]
fn starttls_split_anywhere_hands_over_the_same_bytes() {
    let mut input = 1u32.to_be_bytes().to_vec();
    input.extend(opt_bytes(opt::STARTTLS, &[]));
    let tail = b"\x16\x03\x01 not plaintext options".to_vec();
    input.extend(&tail);
    for split in 0..input.len() {
        let (mut hs, _) = Handshake::new(config().with_tls(TlsMode::Require));
        let mut actions = hs.on_bytes(&input[..split]);
        let mut after = Vec::new();
        if hs.tls_started() {
            after.extend_from_slice(&input[split..]);
        } else {
            actions.extend(hs.on_bytes(&input[split..]));
        }
        let leftover = actions
            .iter()
            .find_map(|a| match a {
                Action::StartTls { leftover } => Some(leftover.clone()),
                _ => None,
            })
            .unwrap_or_else(|| panic!("split {split}: no StartTls"));
        assert_eq!([leftover, after].concat(), tail, "split {split}");
    }
}

// ------------------------------------------------------------ permitted exports

/// Three exports, of which the client may open "a" and "c".
fn permitted_abc() -> Handshake {
    let export = |name: &str| ExportConfig {
        name: name.into(),
        description: format!("export {name}"),
        limits: ExportLimits::new(1 << 20),
    };
    let (mut hs, _) = Handshake::new(ServerConfig::new(vec![export("a"), export("b"), export("c")]));
    hs.on_bytes(&1u32.to_be_bytes());
    hs.permit(vec![true, false, true]);
    hs
}

#[test]
fn list_shows_only_the_exports_the_client_may_open() {
    let mut hs = permitted_abc();
    let r = replies(&sent(&hs.on_bytes(&opt_bytes(opt::LIST, &[]))));
    // Each reply: the name's length, the name, then its description.
    let name = |d: &[u8]| d[4..4 + u32::from_be_bytes(d[..4].try_into().unwrap()) as usize].to_vec();
    let names: Vec<Vec<u8>> = r.iter().filter(|r| r.reply_type == rep::SERVER).map(|r| name(&r.data)).collect();
    assert_eq!(names, [b"a".to_vec(), b"c".to_vec()]);
    assert_eq!(r.last().unwrap().reply_type, rep::ACK);
}

#[test]
fn info_and_go_of_a_closed_export_are_refused_by_policy() {
    let mut hs = permitted_abc();
    for o in [opt::INFO, opt::GO] {
        let r =
            replies(&sent(&hs.on_bytes(&opt_bytes(o, &InfoRequest { name: "b".into(), requests: vec![] }.encode()))));
        assert_eq!((r.len(), r[0].option, r[0].reply_type), (1, o, rep::ERR_POLICY));
        assert!(String::from_utf8_lossy(&r[0].data).contains("\"b\" is not open to this client"));
    }
    assert_eq!(hs.take_refused(), ["b", "b"]);
    assert!(hs.take_refused().is_empty());
    // An unknown name is still unknown, and the client may go on to an export it may open.
    assert_eq!(replies(&sent(&hs.on_bytes(&go("zz"))))[0].reply_type, rep::ERR_UNKNOWN);
    let a = hs.on_bytes(&go("c"));
    assert_eq!(a.last(), Some(&Action::Transmission { export: 2, leftover: vec![] }));
}

#[test]
fn export_name_of_a_closed_export_ends_the_session() {
    let mut hs = permitted_abc();
    let a = hs.on_bytes(&opt_bytes(opt::EXPORT_NAME, b"b"));
    assert!(matches!(a.as_slice(), [Action::Close { reason }] if reason.contains("may not open")), "{a:?}");
    assert!(hs.is_done());
    let mut hs = permitted_abc();
    let a = hs.on_bytes(&opt_bytes(opt::EXPORT_NAME, b"a"));
    assert_eq!(a.last(), Some(&Action::Transmission { export: 0, leftover: vec![] }));
}

#[test]
fn the_default_export_is_closed_when_its_export_is() {
    let named = ExportConfig { name: "swan".into(), description: String::new(), limits: ExportLimits::new(1 << 20) };
    let (mut hs, _) = Handshake::new(ServerConfig::new(vec![named]).with_default_export(0));
    hs.on_bytes(&1u32.to_be_bytes());
    hs.permit(vec![false]);
    assert_eq!(replies(&sent(&hs.on_bytes(&go(""))))[0].reply_type, rep::ERR_POLICY);
    let r = replies(&sent(&hs.on_bytes(&opt_bytes(opt::LIST, &[]))));
    assert_eq!(r.iter().map(|r| r.reply_type).collect::<Vec<_>>(), [rep::ACK]);
    // What the owner learns later (a certificate under TLS) opens it.
    hs.permit(vec![true]);
    assert_eq!(hs.on_bytes(&go("")).last(), Some(&Action::Transmission { export: 0, leftover: vec![] }));
}
