//! One client connection: the handshake under a deadline, then the transmission phase
//! with a reader (this thread), and replies sent by whichever thread completes a request
//! or, when the socket would make it wait, by the connection's reply thread.

use std::collections::VecDeque;
use std::io::{self, BufReader, BufWriter, Cursor, Read, Write};
use std::net::Shutdown;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Condvar, Mutex, MutexGuard, PoisonError};
use std::thread;
use std::time::Instant;

use rustix::io::IoSlice;
use rustix::net::{SendAncillaryBuffer, SendFlags};
use swan_nbd::consts::{cmd_flags, DEFAULT_MAX_PAYLOAD, REQUEST_HEADER_LEN, SIMPLE_REPLY_LEN};
use swan_nbd::{
    decode_request, encode_simple_reply, validate, Action, Command, Errno, ExportLimits, Handshake, Request,
    ServerConfig,
};

use super::error::{Causes, ConnError};
use super::stream::Stream;
use super::{tls, Export, Log, Registry, ServerOptions, ServerStats, ThreadGuard, STOP_POLL};
use crate::metrics::requests::Op;
use crate::payload::{Payload, PayloadPool};
use crate::service::{gather, BlockOp, BlockRequest, Completion, Reply};

/// Buffer sizes for the socket: a request header is 28 bytes, so reading through a buffer
/// saves a system call per request; payloads bigger than this bypass it.
const IO_BUFFER: usize = 64 << 10;

/// Replies written before a flush, so a steady stream of completions still goes out.
const MAX_BATCH: usize = 32;

/// Replies gathered by a batch that one `sendmsg` carries at most (two iovecs each, well
/// under IOV_MAX); the rest go in the next call.
const GATHERED_PER_SEND: usize = 256;

/// One export as connections see it: with the limits its requests are checked against.
pub(super) struct Served {
    pub export: Export,
    pub limits: ExportLimits,
}

/// What every connection of one server shares.
pub(super) struct ConnContext {
    /// In the handshake's order: `Action::Transmission`'s index points here.
    pub exports: Vec<Served>,
    pub config: ServerConfig,
    pub opts: ServerOptions,
    pub stop: Arc<AtomicBool>,
    pub stats: Arc<ServerStats>,
    pub registry: Registry,
    pub log: Log,
}

/// Runs one connection to its end and logs how it ended.
pub(super) fn serve_connection(ctx: &Arc<ConnContext>, stream: Stream, id: u64) {
    let peer = stream.peer();
    ctx.log.say(format_args!("connection {id} from {peer}"));
    let outcome = match handshake(ctx, stream, id, &peer.to_string()) {
        Ok(Some((stream, export, leftover))) => transmission(ctx, stream, export, leftover, id),
        Ok(None) => Ok("closed during the handshake".to_string()),
        Err(e) => Err(ConnError::Handshake(Box::new(e))),
    };
    match outcome {
        Ok(why) => ctx.log.say(format_args!("connection {id} ({peer}) ended: {why}")),
        Err(e) => ctx.log.say(format_args!("connection {id} ({peer}) dropped: {}", Causes(&e))),
    }
}

// ---------------------------------------------------------------- handshake

/// Drives [`Handshake`] until transmission (returning the stream to serve it on, which is
/// the plaintext side of TLS once `NBD_OPT_STARTTLS` succeeded, the export chosen and the
/// bytes already received for it), an orderly close (`None`), or the deadline. The deadline
/// covers the TLS handshake too: a client that never completes it is dropped like any other.
///
/// Which exports the client may open is decided here: at first those open to every client;
/// once TLS is up, also those whose allow-list names the client's certificate.
fn handshake(ctx: &ConnContext, mut stream: Stream, id: u64, from: &str) -> Handshaken {
    let deadline = Instant::now() + ctx.opts.handshake_timeout;
    let (mut hs, greeting) = Handshake::new(ctx.config.clone());
    let restricted = ctx.exports.iter().any(|e| !e.export.allow_subjects.is_empty());
    if restricted {
        hs.permit(ctx.exports.iter().map(|e| e.export.admits(None)).collect());
    }
    // The TLS client's identity, until it has been applied to the handshake; then its CNs.
    let mut peer: Option<tls::Peer> = None;
    let mut client: Option<Vec<String>> = None;
    let mut actions = vec![greeting];
    let mut buf = [0u8; 4096];
    loop {
        for action in actions.drain(..) {
            match action {
                Action::Send(bytes) => send_before(&mut stream, &bytes, deadline)?,
                Action::Transmission { export, leftover } => {
                    let name = &ctx.config.exports[export].name;
                    ctx.log.say(format_args!("connection {id}: export {name:?}"));
                    return Ok(Some((stream, export, leftover)));
                }
                Action::StartTls { leftover } => {
                    // The handshake only starts TLS when the mode offers it.
                    let Some(config) = ctx.opts.tls.config() else {
                        return Err(ConnError::StartTlsUnconfigured);
                    };
                    let (stats, timeout, log) = (&ctx.stats, ctx.opts.send_timeout, ctx.log);
                    let (plain, identity) =
                        tls::start(config, stream, leftover, stats, timeout, log, id, from.to_string())?;
                    stream = plain;
                    peer = restricted.then_some(identity);
                    ctx.log.say(format_args!("connection {id}: TLS started"));
                }
                Action::Close { reason } => {
                    ctx.log.say(format_args!("handshake closed: {reason}"));
                    return Ok(None);
                }
            }
        }
        let n = recv_before(&mut stream, &mut buf, deadline, &ctx.stop)?;
        if n == 0 {
            return Err(ConnError::ClientClosed);
        }
        // Bytes under TLS come only after its handshake, so the identity is known by now
        // (if it somehow is not, the client keeps the exports open to every client).
        if let Some(cns) = peer.as_ref().and_then(|p| p.get()) {
            let cns = cns.as_deref();
            hs.permit(ctx.exports.iter().map(|e| e.export.admits(cns)).collect());
            if let Some(cns) = cns {
                let open: Vec<&str> = (ctx.exports.iter().zip(&ctx.config.exports))
                    .filter(|(e, _)| e.export.admits(Some(cns)))
                    .map(|(_, c)| c.name.as_str())
                    .collect();
                ctx.log.say(format_args!("connection {id}: {} may open {open:?}", who(Some(cns))));
            }
            client = cns.map(<[String]>::to_vec);
            peer = None;
        }
        // The state machine buffers at most one option, bounded by its max_option_len.
        actions = hs.on_bytes(&buf[..n]);
        // Logged verbose or not, like refusals in the TLS handshake.
        for name in hs.take_refused() {
            let who = who(client.as_deref());
            let why = match client.as_deref() {
                Some([]) => "no CN to check against its allow-list",
                Some([_, _, ..]) => "an ambiguous identity (several CNs), not all of them on its allow-list",
                _ => "not on its allow-list",
            };
            ctx.log.always(format_args!("connection {id} from {from}: refused export {name:?} to {who}: {why}"));
        }
    }
}

/// A client as the log names it by its certificate's common names (`None`: no certificate).
fn who(cns: Option<&[String]>) -> String {
    match cns {
        None => "a client without a certificate".into(),
        Some([]) => "a certificate without a CN".into(),
        Some([cn]) => format!("CN {cn:?}"),
        Some(many) => format!("CNs {}", many.iter().map(|cn| format!("{cn:?}")).collect::<Vec<_>>().join(", ")),
    }
}

/// What [`handshake`] ends with.
type Handshaken = Result<Option<(Stream, usize, Vec<u8>)>, ConnError>;

/// One read that gives up at `deadline` or when the server stops. Short read timeouts
/// keep both noticed while a client sends nothing.
fn recv_before(stream: &mut Stream, buf: &mut [u8], deadline: Instant, stop: &AtomicBool) -> Result<usize, ConnError> {
    loop {
        if stop.load(Ordering::Acquire) {
            return Err(ConnError::Stopping);
        }
        let left = deadline.saturating_duration_since(Instant::now());
        if left.is_zero() {
            return Err(ConnError::HandshakeTimeout);
        }
        stream.set_read_timeout(Some(left.min(STOP_POLL))).map_err(ConnError::io("setting a read timeout"))?;
        match stream.read(buf) {
            Ok(n) => return Ok(n),
            Err(e) if is_retry(&e) => continue,
            Err(e) => return Err(ConnError::io("receiving")(e)),
        }
    }
}

fn send_before(stream: &mut Stream, bytes: &[u8], deadline: Instant) -> Result<(), ConnError> {
    let left = deadline.saturating_duration_since(Instant::now());
    if left.is_zero() {
        return Err(ConnError::HandshakeTimeout);
    }
    stream.set_write_timeout(Some(left)).map_err(ConnError::io("setting a write timeout"))?;
    stream.write_all(bytes).map_err(ConnError::io("sending"))
}

fn is_retry(e: &io::Error) -> bool {
    matches!(e.kind(), io::ErrorKind::WouldBlock | io::ErrorKind::TimedOut | io::ErrorKind::Interrupted)
}

// ------------------------------------------------------------- transmission

/// Serves requests until the client disconnects, sends `NBD_CMD_DISC`, breaks the
/// protocol beyond recovery, or the writer fails; then waits for every in-flight reply
/// to be sent (or fail) and closes.
fn transmission(
    ctx: &Arc<ConnContext>,
    stream: Stream,
    export: usize,
    leftover: Vec<u8>,
    id: u64,
) -> Result<String, ConnError> {
    // Idle clients may stay connected indefinitely; a stuck send may not.
    let timeouts = stream.set_read_timeout(None).and_then(|()| stream.set_write_timeout(Some(ctx.opts.send_timeout)));
    timeouts.map_err(ConnError::io("setting the socket's timeouts"))?;
    let clone = || stream.try_clone().map_err(ConnError::io("cloning the socket"));
    let flight = Arc::new(Inflight::new(ctx.opts.max_inflight_per_conn, ctx.opts.max_inflight_bytes_per_conn));
    let replies = Arc::new(Replies::new(clone()?, Arc::clone(&flight), Arc::clone(&ctx.stats)));
    let writer = spawn_writer(ctx, clone()?, Arc::clone(&replies), id)?;
    let input = BufReader::with_capacity(IO_BUFFER, Cursor::new(leftover).chain(clone()?));
    let export = &ctx.exports[export];
    let outcome = Reader {
        last_large: false,
        ctx,
        export,
        flight,
        replies: Arc::clone(&replies),
        input,
        payloads: PayloadPool::new(),
    }
    .run();
    // The writer ends once the reader is done and every in-flight reply is out.
    replies.reader_done();
    let _ = writer.join();
    let _ = stream.shutdown(Shutdown::Both);
    outcome
}

fn spawn_writer(
    ctx: &ConnContext,
    stream: Stream,
    replies: Arc<Replies>,
    id: u64,
) -> Result<thread::JoinHandle<()>, ConnError> {
    let counted = ThreadGuard::new(&ctx.stats);
    let (log, limit) = (ctx.log, ctx.opts.send_timeout);
    let spawned = thread::Builder::new().name(format!("nbd-send-{id}")).spawn(move || {
        let _counted = counted;
        if let Err(e) = write_replies(&stream, &replies) {
            if is_retry(&e) {
                log.say(format_args!("connection {id}: client read nothing for {limit:?}"));
            } else {
                log.say(format_args!("connection {id}: sending a reply failed: {e}"));
            }
            // Wake the reader wherever it waits: on admission, or on the socket.
            replies.kill();
            let _ = stream.shutdown(Shutdown::Both);
        }
    });
    spawned.map_err(ConnError::io("starting the reply thread"))
}

/// One reply, ready to send.
struct Outgoing {
    header: [u8; SIMPLE_REPLY_LEN],
    data: Vec<u8>,
    /// Released from the in-flight budget once sent.
    cost: usize,
    /// Bytes of header and data already on the socket (a direct send that went out in part).
    sent: usize,
}

impl Outgoing {
    fn error(cookie: u64, errno: Errno) -> Self {
        Outgoing { header: encode_simple_reply(cookie, Some(errno)), data: Vec::new(), cost: 0, sent: 0 }
    }

    /// The reply to a service's outcome; `read_len` is the data a successful read owes.
    fn from_reply(cookie: u64, read_len: usize, cost: usize, reply: Reply) -> Self {
        let ok = |data| Outgoing { header: encode_simple_reply(cookie, None), data, cost, sent: 0 };
        match reply {
            Ok(_) if read_len == 0 => ok(Vec::new()),
            Ok(data) if data.len() == read_len => ok(data),
            // A short or long read would desynchronise the client: report an I/O error.
            Ok(_) => Outgoing { cost, ..Outgoing::error(cookie, Errno::Io) },
            Err(errno) => Outgoing { cost, ..Outgoing::error(cookie, errno) },
        }
    }

    fn len(&self) -> usize {
        self.header.len() + self.data.len()
    }

    /// What is left to send, as (part of header, part of data).
    fn rest(&self) -> (&[u8], &[u8]) {
        let h = self.header.len();
        if self.sent < h {
            (&self.header[self.sent..], &self.data)
        } else {
            (&[], &self.data[self.sent - h..])
        }
    }
}

/// Where a connection's replies go. Whichever thread completes a request (the engine, a
/// reader of the pool) sends its reply straight onto the socket when the socket takes it
/// at once and nothing is queued before it; otherwise the reply is queued for the reply
/// thread, which may block (up to the send timeout) on a client slow to read. Each request
/// so costs one thread handoff less than a reply thread for everything, without ever
/// letting a client that stops reading stall the engine: a direct send never waits.
///
/// Bytes of two replies never interleave: a direct send happens under the lock, only when
/// the reply thread is not writing and nothing is queued; a reply that went out in part is
/// queued with what is left, first in line. NBD lets replies come in any order, matched by
/// cookie, so the two paths need no ordering between them.
struct Replies {
    socket: Stream,
    flight: Arc<Inflight>,
    /// Where completed requests are counted (held here so a request clones no `Arc`).
    stats: Arc<ServerStats>,
    state: Mutex<ReplyState>,
    ready: Condvar,
}

#[derive(Default)]
struct ReplyState {
    queue: VecDeque<Outgoing>,
    /// The reply thread is writing outside the lock: nobody else may write now.
    writing: bool,
    /// Completions not yet called (or dropped), and the reader still running: the reply
    /// thread stays until both are over.
    pending: usize,
    reader_done: bool,
    /// Sending failed: the connection is over; replies are dropped.
    dead: bool,
    /// Replies were queued by a thread gathering them (see [`gather`]), which will flush.
    gathered: bool,
}

impl Replies {
    fn new(socket: Stream, flight: Arc<Inflight>, stats: Arc<ServerStats>) -> Self {
        Replies { socket, flight, stats, state: Mutex::default(), ready: Condvar::new() }
    }

    fn lock(&self) -> MutexGuard<'_, ReplyState> {
        self.state.lock().unwrap_or_else(PoisonError::into_inner)
    }

    /// Send `out` now if the socket takes it without waiting, else queue it. A thread
    /// gathering replies queues it, and sends the queue when its batch ends.
    fn deliver(self: &Arc<Self>, out: Outgoing) {
        let mut st = self.lock();
        if st.dead {
            return;
        }
        // Sent at once only when nothing is queued before it and the socket is ours.
        let send = !st.writing && st.queue.is_empty();
        st.queue.push_back(out);
        if gather::active() {
            if !std::mem::replace(&mut st.gathered, true) {
                drop(st);
                gather::defer(Arc::clone(self) as Arc<dyn gather::Flush>);
            }
            return;
        }
        self.send_or_hand_over(st, send);
    }

    /// Send what is queued now if `send` (the reply thread is not writing), without
    /// waiting; whatever the socket does not take (an error, EAGAIN included, or a reply
    /// that went out in part) is left to the reply thread, which retries it blocking and
    /// reports what still fails.
    fn send_or_hand_over(&self, mut st: MutexGuard<'_, ReplyState>, send: bool) {
        let (count, cost) = if send { self.send_queued(&mut st) } else { (0, 0) };
        if !st.queue.is_empty() {
            self.ready.notify_all();
        }
        drop(st);
        if count > 0 {
            self.flight.release(count, cost);
        }
    }

    /// Send what is queued, in as few `sendmsg` calls as the socket takes without waiting;
    /// returns the replies and cost that went out whole. The caller holds the lock and has
    /// checked that the reply thread is not writing.
    fn send_queued(&self, st: &mut ReplyState) -> (usize, usize) {
        let (mut count, mut cost) = (0, 0);
        while !st.queue.is_empty() {
            let iov: Vec<IoSlice<'_>> = st
                .queue
                .iter()
                .take(GATHERED_PER_SEND)
                .flat_map(|o| {
                    let (h, d) = o.rest();
                    [IoSlice::new(h), IoSlice::new(d)]
                })
                .collect();
            let offered: usize = iov.iter().map(|s| s.len()).sum();
            let flags = SendFlags::DONTWAIT | SendFlags::NOSIGNAL;
            // An error (EAGAIN included) leaves the rest to the reply thread.
            let Ok(mut sent) = rustix::net::sendmsg(&self.socket, &iov, &mut SendAncillaryBuffer::default(), flags)
            else {
                break;
            };
            drop(iov);
            let whole = sent == offered;
            while let Some(front) = st.queue.front_mut() {
                let left = front.len() - front.sent;
                if sent < left {
                    // A reply that went out in part stays first in line with what is left.
                    front.sent += sent;
                    break;
                }
                sent -= left;
                count += 1;
                cost += front.cost;
                st.queue.pop_front();
            }
            if !whole {
                break;
            }
        }
        (count, cost)
    }

    /// A completion is handed out: its reply (or its being dropped) is still to come.
    fn expect_one(&self) {
        self.lock().pending += 1;
    }

    fn one_done(&self) {
        let mut st = self.lock();
        st.pending -= 1;
        // Only the reply thread's end waits for this, and only once the reader is done: a
        // wakeup per emptied queue cost two context switches per 128 KiB write.
        if st.pending == 0 && st.reader_done {
            self.ready.notify_all();
        }
    }

    fn reader_done(&self) {
        self.lock().reader_done = true;
        self.ready.notify_all();
    }

    fn kill(&self) {
        let mut st = self.lock();
        st.dead = true;
        st.queue.clear();
        drop(st);
        self.flight.kill();
    }

    /// The next batch for the reply thread (the thread then owns the socket until
    /// [`Replies::written`]); `None` once nothing more can come.
    fn next_batch(&self) -> Option<Vec<Outgoing>> {
        let mut st = self.lock();
        loop {
            if st.dead {
                return None;
            }
            if !st.queue.is_empty() {
                st.writing = true;
                let n = st.queue.len().min(MAX_BATCH);
                return Some(st.queue.drain(..n).collect());
            }
            if st.reader_done && st.pending == 0 {
                return None;
            }
            st = self.ready.wait(st).unwrap_or_else(PoisonError::into_inner);
        }
    }

    fn written(&self, count: usize, bytes: usize) {
        self.lock().writing = false;
        // One release per batch: the reader waiting for room wakes once, not per reply.
        self.flight.release(count, bytes);
    }
}

impl gather::Flush for Replies {
    /// The end of a gathering thread's batch: its replies go out together, or to the
    /// reply thread when the socket is busy or full.
    fn flush(&self) {
        let mut st = self.lock();
        st.gathered = false;
        if st.dead || st.queue.is_empty() {
            return;
        }
        let send = !st.writing;
        self.send_or_hand_over(st, send);
    }
}

/// Calls [`Replies::one_done`] when the completion holding it is called or dropped, so a
/// completion the service drops without calling cannot keep the connection open forever.
struct PendingReply(Arc<Replies>);

impl Drop for PendingReply {
    fn drop(&mut self) {
        self.0.one_done();
    }
}

/// Sends queued replies in batches, releasing their budget once they are on the socket.
fn write_replies(stream: &Stream, replies: &Replies) -> io::Result<()> {
    let mut out = BufWriter::with_capacity(IO_BUFFER, stream.try_clone()?);
    let result = send_batches(&mut out, replies);
    if result.is_err() {
        // Drop what is buffered: flushing it on drop would wait out the send timeout again.
        let _ = out.into_parts();
    }
    result
}

fn send_batches(out: &mut impl Write, replies: &Replies) -> io::Result<()> {
    while let Some(batch) = replies.next_batch() {
        let (count, bytes) = (batch.len(), batch.iter().map(|o| o.cost).sum());
        for msg in &batch {
            let (h, d) = msg.rest();
            out.write_all(h)?;
            out.write_all(d)?;
        }
        out.flush()?;
        replies.written(count, bytes);
    }
    Ok(())
}

/// What the reader does after one request.
enum Flow {
    Continue,
    End(String),
}

struct Reader<'a, R> {
    /// The last request was a WRITE whose payload is not worth buffering
    /// ([`Reader::next_request`]).
    last_large: bool,
    ctx: &'a ConnContext,
    /// The export this connection chose in its handshake.
    export: &'a Served,
    flight: Arc<Inflight>,
    replies: Arc<Replies>,
    input: R,
    /// Buffers for WRITE payloads, back from the service once it is done with them.
    payloads: Arc<PayloadPool>,
}

impl<I: Read> Reader<'_, BufReader<I>> {
    fn run(mut self) -> Result<String, ConnError> {
        loop {
            let Some(req) = self.next_request()? else {
                return Ok("client closed the connection".into());
            };
            if let Flow::End(why) = self.handle(req)? {
                return Ok(why);
            }
        }
    }

    /// The next request header; `None` on a clean end of stream between requests.
    ///
    /// After a large WRITE the next is likely large too: its header is read alone, so the
    /// buffer does not fill with up to 64 KiB of its payload, which would then be copied
    /// out of the buffer again.
    fn next_request(&mut self) -> Result<Option<Request>, ConnError> {
        let mut header = [0u8; REQUEST_HEADER_LEN];
        let got = if self.last_large && self.input.buffer().is_empty() {
            read_full(self.input.get_mut(), &mut header)
        } else {
            read_full(&mut self.input, &mut header)
        };
        let got = got.map_err(ConnError::io("receiving"))?;
        if got == 0 {
            return Ok(None);
        }
        if got < header.len() {
            return Err(ConnError::ClosedInHeader);
        }
        // A bad magic means the stream is out of step: nothing after it can be trusted,
        // and there is no cookie to reply to.
        match decode_request(&header) {
            Ok(Some((req, _))) => Ok(Some(req)),
            Ok(None) => unreachable!("a whole header always decodes"),
            Err(e) => Err(ConnError::BadRequest(e)),
        }
    }

    fn handle(&mut self, req: Request) -> Result<Flow, ConnError> {
        if req.kind == Command::Disc {
            // No reply, even to a malformed DISC: the client sends nothing after it.
            return Ok(Flow::End("client sent NBD_CMD_DISC".into()));
        }
        match validate(&req, &self.export.limits) {
            Ok(()) => self.submit(req),
            Err(errno) => self.refuse(req, errno),
        }
    }

    /// Answers a request the export's limits forbid, keeping the stream in step.
    fn refuse(&mut self, req: Request, errno: Errno) -> Result<Flow, ConnError> {
        self.ctx.log.say(format_args!("refusing {req:?}: {errno}"));
        let payload = u64::from(req.payload_len());
        if payload > self.discard_limit() {
            // Skipping that much would let one client tie up the connection for a long
            // time; the spec allows a hard disconnect for such a payload.
            self.reply(Outgoing::error(req.cookie, errno))?;
            return Ok(Flow::End(format!("WRITE payload of {payload} bytes too large to skip")));
        }
        let skipped =
            io::copy(&mut (&mut self.input).take(payload), &mut io::sink()).map_err(ConnError::io("receiving"))?;
        if skipped < payload {
            return Ok(Flow::End("client closed the connection inside a WRITE payload".into()));
        }
        self.reply(Outgoing::error(req.cookie, errno))?;
        Ok(Flow::Continue)
    }

    /// Payload bytes of a refused WRITE the reader reads and drops rather than
    /// disconnecting. At least the spec's 32 MiB, which "SHOULD NOT be considered a
    /// denial of service attack" whatever the advertised maximum.
    fn discard_limit(&self) -> u64 {
        let max = self.export.limits.max_payload.max(DEFAULT_MAX_PAYLOAD);
        2 * u64::from(max)
    }

    /// Sends a reply that needs no service, within the in-flight budget.
    fn reply(&mut self, out: Outgoing) -> Result<(), ConnError> {
        if !self.flight.acquire(out.cost) {
            return Err(ConnError::ReplyThreadGone);
        }
        self.replies.deliver(out);
        Ok(())
    }

    /// Hands a validated request to the service once the in-flight budget allows.
    fn submit(&mut self, req: Request) -> Result<Flow, ConnError> {
        let len = req.length as usize;
        let cost = match req.kind {
            Command::Read | Command::Write => len,
            _ => 0,
        };
        // Admission before reading a WRITE payload: that payload is what the budget bounds.
        if !self.flight.acquire(cost) {
            return Err(ConnError::ReplyThreadGone);
        }
        self.last_large = req.kind == Command::Write && len >= IO_BUFFER / 2;
        let op = match req.kind {
            Command::Read => BlockOp::Read,
            Command::Write => match self.read_payload(len).map_err(ConnError::io("receiving"))? {
                Some(data) => BlockOp::Write(data),
                None => {
                    self.flight.release(1, cost);
                    return Ok(Flow::End("client closed the connection inside a WRITE payload".into()));
                }
            },
            Command::Flush => BlockOp::Flush,
            Command::Trim => BlockOp::Trim,
            Command::WriteZeroes => BlockOp::WriteZeroes { may_trim: req.flags & cmd_flags::NO_HOLE == 0 },
            // validate() refuses everything else (CACHE and BLOCK_STATUS are not
            // advertised); kept total in case it ever lets one through.
            _ => {
                self.replies.deliver(Outgoing { cost, ..Outgoing::error(req.cookie, Errno::Inval) });
                return Ok(Flow::Continue);
            }
        };
        let read_len = if req.kind == Command::Read { len } else { 0 };
        self.replies.expect_one();
        let pending = PendingReply(Arc::clone(&self.replies));
        let (cookie, length, counted) = (req.cookie, req.length, Op::of(&op));
        // Latency as the client sees it from the server: from the request handed to the
        // service (its payload already read) to its reply being ready to send.
        let start = Instant::now();
        let export_requests = Arc::clone(&self.export.export.requests);
        let done: Completion = Box::new(move |reply| {
            let took = start.elapsed();
            pending.0.stats.requests().completed(counted, length, took, reply.is_ok());
            export_requests.completed(counted, length, took, reply.is_ok());
            pending.0.deliver(Outgoing::from_reply(cookie, read_len, cost, reply));
        });
        let fua = req.flags & cmd_flags::FUA != 0;
        self.export.export.service.submit(BlockRequest { op, offset: req.offset, len: req.length, fua }, done);
        Ok(Flow::Continue)
    }

    /// Exactly `len` payload bytes, or `None` if the stream ended first.
    fn read_payload(&mut self, len: usize) -> io::Result<Option<Payload>> {
        let mut data = self.payloads.take(len);
        let got = read_full(&mut self.input, data.as_mut_slice())?;
        Ok((got == len).then_some(data))
    }
}

/// Reads until `buf` is full or the stream ends; returns the bytes read.
fn read_full(input: &mut impl Read, buf: &mut [u8]) -> io::Result<usize> {
    let mut got = 0;
    while got < buf.len() {
        match input.read(&mut buf[got..]) {
            Ok(0) => break,
            Ok(n) => got += n,
            Err(e) if e.kind() == io::ErrorKind::Interrupted => {}
            Err(e) => return Err(e),
        }
    }
    Ok(got)
}

// ---------------------------------------------------------------- budget

/// Requests of one connection between admission and their reply being sent.
struct Inflight {
    max_count: usize,
    max_bytes: usize,
    state: Mutex<FlightState>,
    changed: Condvar,
}

#[derive(Default)]
struct FlightState {
    count: usize,
    bytes: usize,
    /// The writer failed: admit nothing more.
    dead: bool,
    /// The reader waits for room (a release with nobody waiting wakes nobody: a futex
    /// call per reply saved).
    waiting: bool,
}

impl Inflight {
    fn new(max_count: usize, max_bytes: usize) -> Self {
        Inflight { max_count, max_bytes, state: Mutex::default(), changed: Condvar::new() }
    }

    fn lock(&self) -> MutexGuard<'_, FlightState> {
        self.state.lock().unwrap_or_else(PoisonError::into_inner)
    }

    /// Blocks until a request of `cost` bytes fits; false once the writer is dead. With
    /// nothing in flight anything fits, so a request larger than the byte budget still
    /// goes through, alone.
    fn acquire(&self, cost: usize) -> bool {
        let mut s = self.lock();
        loop {
            if s.dead {
                return false;
            }
            if s.count == 0 || (s.count < self.max_count && s.bytes + cost <= self.max_bytes) {
                s.count += 1;
                s.bytes += cost;
                return true;
            }
            s.waiting = true;
            s = self.changed.wait(s).unwrap_or_else(PoisonError::into_inner);
            s.waiting = false;
        }
    }

    /// `count` requests of `bytes` in all have been answered.
    fn release(&self, count: usize, bytes: usize) {
        let mut s = self.lock();
        s.count -= count;
        s.bytes -= bytes;
        if s.waiting {
            self.changed.notify_all();
        }
    }

    fn kill(&self) {
        self.lock().dead = true;
        self.changed.notify_all();
    }
}
