//! The server side of the fixed-newstyle handshake as a pure state machine:
//! feed it the client's bytes, get back what to send and when to stop. Simple
//! replies only (`NBD_OPT_STRUCTURED_REPLY` is answered `NBD_REP_ERR_UNSUP`,
//! which "clients SHOULD be prepared to also handle").
//!
//! TLS (`NBD_OPT_STARTTLS`) in the spec's three modes ([`TlsMode`]): the state
//! machine decides when TLS starts and what is allowed before it; the
//! connection owner runs the TLS session itself (this crate does no I/O) and,
//! after [`Action::StartTls`], feeds only decrypted bytes.

use crate::codec::{
    decode_client_flags, decode_export_name, decode_info_request, decode_option_header, encode_export_name_reply,
    encode_greeting, encode_info_block_size, encode_info_export, encode_info_string, encode_rep_ack, encode_rep_error,
    encode_rep_server, ClientFlags, DecodeError, OptionHeader,
};
use crate::consts::{handshake_flags, info, opt, rep, DEFAULT_MAX_OPTION_LEN};
use crate::validate::ExportLimits;

/// One export the server offers.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ExportConfig {
    /// Export name (empty = the default export).
    pub name: String,
    /// Human-readable description (`NBD_REP_SERVER` details, `NBD_INFO_DESCRIPTION`).
    pub description: String,
    /// Size, block sizes and transmission flags.
    pub limits: ExportLimits,
}

/// How the server treats TLS ("TLS support" in the spec).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum TlsMode {
    /// NOTLS: `NBD_OPT_STARTTLS` is answered `NBD_REP_ERR_UNSUP`.
    #[default]
    Off,
    /// SELECTIVETLS with no TLS-only export: a client may upgrade, or not.
    On,
    /// FORCEDTLS: nothing but `NBD_OPT_STARTTLS` and `NBD_OPT_ABORT` before TLS.
    Require,
}

/// Handshake configuration.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ServerConfig {
    /// Handshake flags to advertise (a subset of `consts::handshake_flags::ALL`).
    pub handshake_flags: u16,
    /// Largest option data accepted; beyond it the server hard-disconnects.
    pub max_option_len: u32,
    /// Exports offered.
    pub exports: Vec<ExportConfig>,
    /// The export an empty name selects when no export is named "" (the
    /// spec's default export, which a server may map to any export it
    /// offers). `None`: only an export actually named "" answers to it.
    pub default_export: Option<usize>,
    /// Whether `NBD_OPT_STARTTLS` is offered, and whether it is required.
    pub tls: TlsMode,
}

impl ServerConfig {
    /// Fixed newstyle with `NO_ZEROES`, 64 KiB option bound.
    pub fn new(exports: Vec<ExportConfig>) -> Self {
        ServerConfig {
            handshake_flags: handshake_flags::ALL,
            max_option_len: DEFAULT_MAX_OPTION_LEN,
            exports,
            default_export: None,
            tls: TlsMode::Off,
        }
    }

    /// Sets the TLS mode.
    pub fn with_tls(mut self, tls: TlsMode) -> Self {
        self.tls = tls;
        self
    }

    /// Makes an empty export name select `exports[index]`.
    pub fn with_default_export(mut self, index: usize) -> Self {
        self.default_export = Some(index);
        self
    }

    fn find(&self, name: &str) -> Option<usize> {
        let exact = self.exports.iter().position(|e| e.name == name);
        let default = || self.default_export.filter(|&i| name.is_empty() && i < self.exports.len());
        exact.or_else(default)
    }
}

/// What the connection owner must do, in order.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Action {
    /// Write these bytes to the client.
    Send(Vec<u8>),
    /// Handshake done: serve export `export` (index into `ServerConfig::exports`)
    /// in the transmission phase; `leftover` are bytes already received that
    /// belong to it.
    Transmission {
        /// Index of the chosen export.
        export: usize,
        /// Bytes received after the final option.
        leftover: Vec<u8>,
    },
    /// Start TLS now: everything sent before this action goes out in plaintext
    /// (the `NBD_REP_ACK` to `NBD_OPT_STARTTLS`), then the owner runs the TLS
    /// handshake as the server and feeds [`Handshake::on_bytes`] only what it
    /// decrypts. `leftover` are bytes the client sent after its
    /// `NBD_OPT_STARTTLS` option: they belong to the TLS layer (the start of
    /// its ClientHello), never to option haggling, so plaintext a client or a
    /// meddler appended cannot be taken for options sent under TLS.
    StartTls {
        /// Bytes received after `NBD_OPT_STARTTLS`, to be read as TLS records.
        leftover: Vec<u8>,
    },
    /// Close the connection (after sending anything queued before it).
    Close {
        /// Why, for logs.
        reason: String,
    },
}

/// What follows one option.
enum Next {
    Haggle,
    Transmission(usize),
    StartTls,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum State {
    ClientFlags,
    OptionHeader,
    OptionData(OptionHeader),
    Done,
}

/// Server-side handshake for one connection.
#[derive(Debug)]
pub struct Handshake {
    config: ServerConfig,
    state: State,
    buf: Vec<u8>,
    client: ClientFlags,
    /// `NBD_OPT_STARTTLS` has been acknowledged: what arrives now is decrypted.
    tls: bool,
    /// Which exports this client may open (one flag per export); `None`: all of them.
    permitted: Option<Vec<bool>>,
    /// Exports asked for and refused by [`Handshake::permit`]'s policy, not yet taken.
    refused: Vec<String>,
}

impl Handshake {
    /// A new handshake; the greeting to send first is in the returned action.
    pub fn new(config: ServerConfig) -> (Self, Action) {
        let greeting = encode_greeting(config.handshake_flags).to_vec();
        let hs = Handshake {
            config,
            state: State::ClientFlags,
            buf: Vec::new(),
            client: ClientFlags::default(),
            tls: false,
            permitted: None,
            refused: Vec::new(),
        };
        (hs, Action::Send(greeting))
    }

    /// The client's flags (meaningful once received).
    pub fn client_flags(&self) -> ClientFlags {
        self.client
    }

    /// Whether the handshake has ended (transmission entered or closed).
    pub fn is_done(&self) -> bool {
        self.state == State::Done
    }

    /// Whether TLS has been started ([`Action::StartTls`] was returned).
    pub fn tls_started(&self) -> bool {
        self.tls
    }

    /// Which exports this client may open, one flag per export of the configuration (those
    /// beyond the list are closed to it). The others are left out of `NBD_OPT_LIST`, and
    /// `NBD_OPT_INFO`/`NBD_OPT_GO` for one of them is answered `NBD_REP_ERR_POLICY` ("the
    /// server [is] unwilling to continue negotiation as it is not allowed by server
    /// policy"); `NBD_OPT_EXPORT_NAME`, which cannot be answered with an error, ends the
    /// session. The connection owner sets it when it learns who the client is (its TLS
    /// certificate), which it may do between any two calls to [`Handshake::on_bytes`].
    pub fn permit(&mut self, permitted: Vec<bool>) {
        self.permitted = Some(permitted);
    }

    /// The names of the exports this client asked for and was refused by policy since the
    /// last call, for the owner to log who was turned away from what.
    pub fn take_refused(&mut self) -> Vec<String> {
        std::mem::take(&mut self.refused)
    }

    fn is_permitted(&self, export: usize) -> bool {
        self.permitted.as_ref().is_none_or(|p| p.get(export).copied().unwrap_or(false))
    }

    /// Feeds bytes received from the client.
    pub fn on_bytes(&mut self, data: &[u8]) -> Vec<Action> {
        let mut actions = Vec::new();
        if self.state == State::Done {
            return actions;
        }
        self.buf.extend_from_slice(data);
        let mut at = 0;
        loop {
            let rest = &self.buf[at..];
            match self.state {
                State::Done => break,
                State::ClientFlags => match decode_client_flags(rest, self.config.handshake_flags) {
                    Ok(Some((f, n))) => {
                        self.client = f;
                        at += n;
                        self.state = State::OptionHeader;
                    }
                    Ok(None) => break,
                    Err(e) => {
                        // "the server MUST drop the TCP connection if the client
                        // sets an unknown flag".
                        self.close(&mut actions, e);
                        break;
                    }
                },
                State::OptionHeader => match decode_option_header(rest, self.config.max_option_len) {
                    Ok(Some((h, n))) => {
                        at += n;
                        self.state = State::OptionData(h);
                    }
                    Ok(None) => break,
                    Err(e) => {
                        self.close(&mut actions, e);
                        break;
                    }
                },
                State::OptionData(h) => {
                    let len = h.length as usize;
                    if rest.len() < len {
                        break;
                    }
                    let data = rest[..len].to_vec();
                    at += len;
                    self.state = State::OptionHeader;
                    match self.on_option(h, &data, &mut actions) {
                        Next::Haggle => {}
                        Next::Transmission(export) => {
                            let leftover = self.buf[at..].to_vec();
                            actions.push(Action::Transmission { export, leftover });
                            self.state = State::Done;
                        }
                        Next::StartTls => {
                            // Whatever follows the option in this buffer is TLS's,
                            // not ours: hand it over and forget it.
                            let leftover = self.buf[at..].to_vec();
                            at = self.buf.len();
                            actions.push(Action::StartTls { leftover });
                            break;
                        }
                    }
                }
            }
        }
        self.buf.drain(..at.min(self.buf.len()));
        if self.state == State::Done {
            self.buf = Vec::new();
        }
        actions
    }

    fn close(&mut self, actions: &mut Vec<Action>, e: DecodeError) {
        actions.push(Action::Close { reason: e.to_string() });
        self.state = State::Done;
    }

    fn error(actions: &mut Vec<Action>, option: u32, kind: u32, msg: &str) {
        let mut out = Vec::new();
        // Messages here are short constants or bounded export names.
        if encode_rep_error(&mut out, option, kind, msg).is_err() {
            encode_rep_error(&mut out, option, kind, "").unwrap_or(());
        }
        actions.push(Action::Send(out));
    }

    /// Handles one complete option.
    fn on_option(&mut self, h: OptionHeader, data: &[u8], actions: &mut Vec<Action>) -> Next {
        if h.option == opt::STARTTLS {
            return self.on_starttls(h, data, actions);
        }
        // FORCEDTLS: "If the server receives any other option, including
        // `NBD_OPT_INFO` and unsupported options, it MUST reply with
        // `NBD_REP_ERR_TLS_REQD` if TLS has not been initiated ... If the server
        // receives a request to enter transmission mode via `NBD_OPT_EXPORT_NAME`
        // when TLS has not been initiated, then as this request cannot error, it
        // MUST terminate the session." `NBD_OPT_ABORT` is answered as always.
        if self.config.tls == TlsMode::Require && !self.tls && h.option != opt::ABORT {
            if h.option == opt::EXPORT_NAME {
                actions.push(Action::Close { reason: "NBD_OPT_EXPORT_NAME before TLS, which is required".into() });
                self.state = State::Done;
            } else {
                Self::error(actions, h.option, rep::ERR_TLS_REQD, "TLS is required: send NBD_OPT_STARTTLS first");
            }
            return Next::Haggle;
        }
        match self.on_plain_option(h, data, actions) {
            Some(export) => Next::Transmission(export),
            None => Next::Haggle,
        }
    }

    /// `NBD_OPT_STARTTLS`: "If the server receives `NBD_OPT_STARTTLS` prior to
    /// negotiating TLS, it MUST reply with `NBD_REP_ACK`. If the server receives
    /// `NBD_OPT_STARTTLS` when TLS has already been negotiated, it MUST reply
    /// with `NBD_REP_ERR_INVALID`." In NOTLS mode it "MUST respond with ...
    /// `NBD_REP_ERR_UNSUP` (if it does not support the `NBD_OPT_STARTTLS` option
    /// at all)".
    fn on_starttls(&mut self, h: OptionHeader, data: &[u8], actions: &mut Vec<Action>) -> Next {
        if self.config.tls == TlsMode::Off {
            Self::error(actions, h.option, rep::ERR_UNSUP, "TLS is not configured on this server");
            return Next::Haggle;
        }
        if self.tls {
            Self::error(actions, h.option, rep::ERR_INVALID, "TLS is already active");
            return Next::Haggle;
        }
        // "The server MUST operate in NOTLS mode unless the server set flag
        // `NBD_FLAG_FIXED_NEWSTYLE` and the client replied with
        // `NBD_FLAG_C_FIXED_NEWSTYLE`." Under FORCEDTLS such a client is then
        // served nothing at all.
        if !self.client.fixed_newstyle {
            Self::error(actions, h.option, rep::ERR_POLICY, "TLS needs NBD_FLAG_C_FIXED_NEWSTYLE");
            return Next::Haggle;
        }
        // The option carries no data ("Data: none"); a request with some is
        // malformed, and starting TLS on a stream already out of step would only
        // hide that.
        if !data.is_empty() {
            Self::error(actions, h.option, rep::ERR_INVALID, "NBD_OPT_STARTTLS takes no data");
            return Next::Haggle;
        }
        let mut out = Vec::new();
        encode_rep_ack(&mut out, h.option);
        actions.push(Action::Send(out));
        // Nothing negotiated in plaintext survives the upgrade (the lesson of
        // nbdkit's CVE-2021-3716, where a meddler's plaintext
        // NBD_OPT_STRUCTURED_REPLY outlived STARTTLS): haggling starts over, and
        // only the client flags, which precede all options, are kept.
        // (The bytes buffered after this option are taken by on_bytes.)
        self.tls = true;
        self.state = State::OptionHeader;
        Next::StartTls
    }

    /// An option other than `NBD_OPT_STARTTLS`, once TLS rules allow it; returns
    /// the export index on entering transmission.
    fn on_plain_option(&mut self, h: OptionHeader, data: &[u8], actions: &mut Vec<Action>) -> Option<usize> {
        match h.option {
            opt::EXPORT_NAME => self.on_export_name(h, data, actions),
            // "The server MUST reply with `NBD_REP_ACK`" (and "SHOULD ignore any
            // data sent by the client"); the client then drops the connection.
            opt::ABORT => {
                let mut out = Vec::new();
                encode_rep_ack(&mut out, h.option);
                actions.push(Action::Send(out));
                actions.push(Action::Close { reason: "client sent NBD_OPT_ABORT".into() });
                self.state = State::Done;
                None
            }
            opt::LIST => {
                self.on_list(h, data, actions);
                None
            }
            opt::INFO | opt::GO => self.on_info_or_go(h, data, actions),
            // "Servers that receive messages which they do not implement MUST
            // reply to them with `NBD_REP_ERR_UNSUP`".
            _ => {
                Self::error(actions, h.option, rep::ERR_UNSUP, "option not supported");
                None
            }
        }
    }

    /// `NBD_OPT_EXPORT_NAME`: "If the chosen export does not exist ... the server MUST
    /// terminate the session."
    fn on_export_name(&mut self, h: OptionHeader, data: &[u8], actions: &mut Vec<Action>) -> Option<usize> {
        let idx = match decode_export_name(data, h.length) {
            Ok(Some((name, _))) => self.config.find(&name),
            _ => None,
        };
        match idx {
            Some(i) if !self.is_permitted(i) => {
                self.refused.push(self.config.exports[i].name.clone());
                actions.push(Action::Close {
                    reason: format!(
                        "NBD_OPT_EXPORT_NAME for export {:?}, which this client may not open",
                        self.config.exports[i].name
                    ),
                });
                self.state = State::Done;
                None
            }
            Some(i) => {
                let l = &self.config.exports[i].limits;
                actions.push(Action::Send(encode_export_name_reply(
                    l.size_bytes,
                    l.transmission_flags,
                    self.client.no_zeroes,
                )));
                Some(i)
            }
            None => {
                actions.push(Action::Close { reason: "NBD_OPT_EXPORT_NAME for an unknown export".into() });
                self.state = State::Done;
                None
            }
        }
    }

    /// `NBD_OPT_LIST`: "The client MUST NOT send any additional data with the option, and
    /// the server SHOULD reject a request that includes data with `NBD_REP_ERR_INVALID`."
    fn on_list(&self, h: OptionHeader, data: &[u8], actions: &mut Vec<Action>) {
        if !data.is_empty() {
            Self::error(actions, h.option, rep::ERR_INVALID, "NBD_OPT_LIST takes no data");
            return;
        }
        let mut out = Vec::new();
        for (_, e) in self.config.exports.iter().enumerate().filter(|(i, _)| self.is_permitted(*i)) {
            if encode_rep_server(&mut out, h.option, &e.name, &e.description).is_err() {
                encode_rep_server(&mut out, h.option, &e.name, "").unwrap_or(());
            }
        }
        encode_rep_ack(&mut out, h.option);
        actions.push(Action::Send(out));
    }

    /// `NBD_OPT_INFO` and `NBD_OPT_GO`: describe the export; GO then enters transmission.
    fn on_info_or_go(&mut self, h: OptionHeader, data: &[u8], actions: &mut Vec<Action>) -> Option<usize> {
        let req = match decode_info_request(data, h.length) {
            Ok(Some((r, _))) => r,
            _ => {
                Self::error(actions, h.option, rep::ERR_INVALID, "malformed INFO/GO request");
                return None;
            }
        };
        let Some(i) = self.config.find(&req.name) else {
            Self::error(actions, h.option, rep::ERR_UNKNOWN, "no such export");
            return None;
        };
        if !self.is_permitted(i) {
            self.refused.push(self.config.exports[i].name.clone());
            let msg = format!("export {:?} is not open to this client", self.config.exports[i].name);
            Self::error(actions, h.option, rep::ERR_POLICY, &msg);
            return None;
        }
        let e = &self.config.exports[i];
        let l = &e.limits;
        let mut out = Vec::new();
        // "The server MUST send an `NBD_INFO_EXPORT` information type at
        // some point before sending an `NBD_REP_ACK`".
        encode_info_export(&mut out, h.option, l.size_bytes, l.transmission_flags);
        // Always sent: "The server MAY send information requests back
        // which are not explicitly requested", and it "MUST send this
        // info if it is requested and it intends to enforce block size
        // constraints other than the defaults".
        encode_info_block_size(&mut out, h.option, l.min_block, l.preferred_block, l.max_payload);
        if req.requests.contains(&info::NAME) {
            encode_info_string(&mut out, h.option, info::NAME, &e.name).unwrap_or(());
        }
        if req.requests.contains(&info::DESCRIPTION) && !e.description.is_empty() {
            encode_info_string(&mut out, h.option, info::DESCRIPTION, &e.description).unwrap_or(());
        }
        encode_rep_ack(&mut out, h.option);
        actions.push(Action::Send(out));
        // "if the reply indicates success (i.e. ends with
        // `NBD_REP_ACK`), the client and the server both immediately
        // enter the transmission phase."
        (h.option == opt::GO).then_some(i)
    }
}
