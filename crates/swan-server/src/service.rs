//! The seam between the NBD front and whatever stores the blocks.
//!
//! Connections decode and validate requests at the edge, then hand each one to a
//! [`BlockService`] with a [`Completion`] to call when it is done. The service may complete
//! requests out of order and from any thread; the connection matches replies to
//! requests by cookie. A service never sees a request the export's advertised limits
//! forbid (range, alignment, length, flags): those are answered by the connection.

use swan_nbd::Errno;

pub use crate::payload::Payload;

/// What a service offers, as advertised during the handshake.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ExportInfo {
    pub name: String,
    pub description: String,
    pub size_bytes: u64,
    /// Requests' offset and length are multiples of this.
    pub min_block: u32,
    pub preferred_block: u32,
    pub max_payload: u32,
    pub read_only: bool,
    /// Advertise `NBD_FLAG_CAN_MULTI_CONN`: only if a FLUSH on one connection covers
    /// writes replied to on every connection.
    pub multi_conn: bool,
}

/// One request, already validated against [`ExportInfo`].
#[derive(Debug, PartialEq, Eq)]
pub enum BlockOp {
    Read,
    /// The payload, exactly `len` bytes.
    Write(Payload),
    Flush,
    Trim,
    /// Write zeroes. `may_trim` is false when the client sent `NBD_CMD_FLAG_NO_HOLE`.
    WriteZeroes {
        may_trim: bool,
    },
}

#[derive(Debug, PartialEq, Eq)]
pub struct BlockRequest {
    pub op: BlockOp,
    pub offset: u64,
    pub len: u32,
    /// Force unit access: durable before the reply.
    pub fua: bool,
}

/// The outcome: the data for a read (exactly `len` bytes), empty otherwise.
pub type Reply = Result<Vec<u8>, Errno>;

/// Called exactly once per request, from any thread.
pub type Completion = Box<dyn FnOnce(Reply) + Send + 'static>;

pub trait BlockService: Send + Sync + 'static {
    fn info(&self) -> ExportInfo;

    /// Start `req`; call `done` when it has completed (possibly before returning).
    fn submit(&self, req: BlockRequest, done: Completion);
}

/// Replies sent together: a thread that completes a batch of requests (the engine, at the
/// end of a round) gathers their replies and sends each connection's in one system call,
/// instead of one `sendmsg` (and one wake-up of the client) per reply. Over loopback each
/// send also runs the receiving side's network stack on the sender's CPU, so per-reply
/// sends cost the engine a third of its time at 4 KiB writes.
pub mod gather {
    use std::cell::RefCell;
    use std::sync::Arc;

    /// Where gathered replies go out: called once at the end of the gathering.
    pub trait Flush: Send + Sync {
        fn flush(&self);
    }

    thread_local! {
        static GATHERING: RefCell<Option<Vec<Arc<dyn Flush>>>> = const { RefCell::new(None) };
    }

    /// Runs `f`; replies completed inside it on this thread go out when it returns.
    pub fn replies<R>(f: impl FnOnce() -> R) -> R {
        let outer = GATHERING.with(|g| g.borrow_mut().replace(Vec::new()));
        // Flushed even if `f` panics, so no reply is left queued with nobody to send it.
        struct Done(Option<Option<Vec<Arc<dyn Flush>>>>);
        impl Drop for Done {
            fn drop(&mut self) {
                let outer = self.0.take().expect("once");
                let mine = GATHERING.with(|g| std::mem::replace(&mut *g.borrow_mut(), outer));
                for f in mine.unwrap_or_default() {
                    f.flush();
                }
            }
        }
        let _done = Done(Some(outer));
        f()
    }

    /// True while this thread gathers replies.
    pub fn active() -> bool {
        GATHERING.with(|g| g.borrow().is_some())
    }

    /// Flush `target` when this thread's gathering ends. False (and nothing registered)
    /// when the thread is not gathering: the caller sends at once.
    pub fn defer(target: Arc<dyn Flush>) -> bool {
        GATHERING.with(|g| match &mut *g.borrow_mut() {
            Some(list) => {
                list.push(target);
                true
            }
            None => false,
        })
    }
}
