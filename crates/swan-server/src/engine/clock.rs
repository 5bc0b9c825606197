//! Where the engine's time comes from: the wall clock when serving, or a clock that moves
//! only when a test tells it to, so a seed gives the same member I/O every time.

use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::Arc;
use std::time::{Duration, Instant};

/// Where the engine's time comes from.
#[derive(Clone, Debug, Default)]
pub enum Clock {
    #[default]
    Wall,
    Manual(Arc<ManualClock>),
}

impl Clock {
    pub fn now(&self) -> Instant {
        match self {
            Clock::Wall => Instant::now(),
            Clock::Manual(m) => m.now(),
        }
    }
}

/// A clock that moves only when [`ManualClock::advance`] is called.
#[derive(Debug)]
pub struct ManualClock {
    base: Instant,
    nanos: AtomicU64,
}

impl ManualClock {
    pub fn new() -> Arc<ManualClock> {
        Arc::new(ManualClock { base: Instant::now(), nanos: AtomicU64::new(0) })
    }

    pub fn now(&self) -> Instant {
        self.base + Duration::from_nanos(self.nanos.load(Ordering::Relaxed))
    }

    pub fn advance(&self, by: Duration) {
        self.nanos.fetch_add(by.as_nanos() as u64, Ordering::Relaxed);
    }
}
