//! A WRITE's payload, whose buffer goes back to the connection that received it once the
//! service is done with it.
//!
//! A connection reading large writes would otherwise take a fresh buffer from malloc per
//! request and free it on the engine's thread: glibc then trims the top of the arena and the
//! next buffer is faulted in and cleared page by page, and the buffer is zeroed once more
//! before the socket fills it. Reused buffers are already mapped and already initialized, so
//! the socket's bytes are the only ones written into them.

use std::fmt;
use std::ops::Deref;
use std::sync::{Arc, Mutex};

/// Bytes of buffers a connection keeps for reuse: enough for a queue of large writes, small
/// beside the array's map, which is what the server's memory at rest should be.
const KEPT_BYTES: usize = 4 << 20;

/// A connection's buffers waiting to carry the next payloads.
#[derive(Default)]
pub struct PayloadPool {
    kept: Mutex<Kept>,
}

#[derive(Default)]
struct Kept {
    buffers: Vec<Vec<u8>>,
    bytes: usize,
}

impl PayloadPool {
    pub fn new() -> Arc<PayloadPool> {
        Arc::default()
    }

    /// A buffer of exactly `len` bytes whose contents are unspecified (to be overwritten).
    /// Only the part beyond what a reused buffer ever held is zeroed.
    pub fn take(self: &Arc<Self>, len: usize) -> Payload {
        let kept = {
            let mut k = self.kept.lock().unwrap_or_else(|p| p.into_inner());
            let found = k.buffers.pop();
            if let Some(b) = &found {
                k.bytes -= b.capacity();
            }
            found
        };
        let mut bytes = kept.unwrap_or_default();
        bytes.resize(len, 0);
        Payload { bytes, home: Some(Arc::clone(self)) }
    }

    fn give_back(&self, bytes: Vec<u8>) {
        let mut k = self.kept.lock().unwrap_or_else(|p| p.into_inner());
        if k.bytes + bytes.capacity() <= KEPT_BYTES {
            k.bytes += bytes.capacity();
            k.buffers.push(bytes);
        }
    }
}

/// The bytes of one WRITE. Dereferences to the bytes; dropping it returns the buffer to
/// its pool, if it came from one.
pub struct Payload {
    bytes: Vec<u8>,
    home: Option<Arc<PayloadPool>>,
}

impl Payload {
    /// The bytes, for filling from the socket.
    pub fn as_mut_slice(&mut self) -> &mut [u8] {
        &mut self.bytes
    }
}

impl From<Vec<u8>> for Payload {
    fn from(bytes: Vec<u8>) -> Payload {
        Payload { bytes, home: None }
    }
}

impl Deref for Payload {
    type Target = [u8];
    fn deref(&self) -> &[u8] {
        &self.bytes
    }
}

impl Drop for Payload {
    fn drop(&mut self) {
        if let Some(home) = self.home.take() {
            home.give_back(std::mem::take(&mut self.bytes));
        }
    }
}

impl PartialEq for Payload {
    fn eq(&self, other: &Payload) -> bool {
        self.bytes == other.bytes
    }
}

impl Eq for Payload {}

impl fmt::Debug for Payload {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "Payload({} bytes)", self.bytes.len())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_dropped_payload_is_reused_with_its_bytes() {
        let pool = PayloadPool::new();
        let mut p = pool.take(8192);
        p.as_mut_slice().fill(7);
        let at = p.as_ptr();
        drop(p);
        let q = pool.take(4096);
        assert_eq!(q.as_ptr(), at, "the same buffer comes back");
        assert_eq!(q.len(), 4096);
        assert!(q.iter().all(|&b| b == 7), "reused bytes are not cleared again");
        drop(q);
        let r = pool.take(16384);
        assert_eq!(r.len(), 16384);
        assert!(r[8192..].iter().all(|&b| b == 0), "bytes never held before are zeroed");
    }

    #[test]
    fn the_pool_keeps_a_bounded_amount() {
        let pool = PayloadPool::new();
        let all: Vec<Payload> = (0..8).map(|_| pool.take(1 << 20)).collect();
        drop(all);
        let k = pool.kept.lock().unwrap();
        assert_eq!(k.bytes, k.buffers.iter().map(Vec::capacity).sum::<usize>());
        assert!(k.bytes <= KEPT_BYTES && k.buffers.len() == 4, "kept {} buffers", k.buffers.len());
    }

    #[test]
    fn a_payload_from_a_vec_has_no_pool() {
        let p = Payload::from(vec![1, 2, 3]);
        assert_eq!(&*p, &[1, 2, 3]);
        assert_eq!(p, Payload::from(vec![1, 2, 3]));
    }
}
