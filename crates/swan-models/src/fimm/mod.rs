//! A FIMM (Flash Inline Memory Module, Triple-A §3.3) in virtual time: NAND packages on
//! one ONFi channel, each with its own chip enable, and nothing else — no controller, no
//! DRAM, no FTL. It answers "when would this page read, page program or block erase
//! finish, and how long did it wait for its die (storage contention) or for the wire
//! (link contention)?"
//!
//! # Where address translation lives
//! Not here. Triple-A moves the flash control logic — address translation, garbage
//! collection, I/O scheduling, page allocation — out of the module into the autonomic
//! flash array management module on the host's multicores (§4, Fig. 5); the endpoint's
//! HAL only turns a packet into NAND commands (§3.4). So a FIMM operation names a physical
//! page ([`PageAddr`]): package, die, plane, block, page. Whoever sits above (a future
//! Triple-A FTL in the simulator) decides which.
//!
//! # Timing
//! - A **die** is a strict FIFO server: the HAL issues commands to a die in order, and a
//!   die busy with earlier work is what the paper calls storage contention. Planes are
//!   not independent: a multi-plane command drives `planes` planes of one die for one
//!   array time and moves all their pages over the channel.
//! - The **channel** is a [`Calendar`]: a page transfer takes the earliest idle stretch at
//!   or after its data is ready. Inside a cluster the channel is wired onto the endpoint's
//!   local bus, so a transfer must find both idle at once ([`crate::calendar::joint_fit`]).
//! - **Cache mode** adds a page register per die: a read's array phase ends when its page
//!   is in the register (the next read may sense while this one's data moves out), and a
//!   program's data may be loaded while the previous page still programs.
//! - Reads move `bytes` (a part of a page may be read out); programs move `bytes` and
//!   program whole pages (a short program is padded — filling pages is the FTL's job).

mod config;
#[cfg(test)]
mod tests;

pub use config::{fimm_64gb, BusConfig, FimmConfig, FimmConfigError};

use crate::calendar::{joint_fit, Calendar};
use crate::Nanos;

/// A physical page inside one FIMM.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct PageAddr {
    pub package: u32,
    pub die: u32,
    pub plane: u32,
    pub block: u32,
    pub page: u32,
}

impl PageAddr {
    /// The flat physical page number: pages, then blocks, planes, dies, packages, so that
    /// consecutive numbers run through one block. The inverse of [`PageAddr::from_ppn`].
    pub fn ppn(&self, c: &FimmConfig) -> u64 {
        let die = u64::from(self.package) * u64::from(c.dies_per_package) + u64::from(self.die);
        let plane = die * u64::from(c.planes_per_die) + u64::from(self.plane);
        let block = plane * u64::from(c.blocks_per_plane) + u64::from(self.block);
        block * u64::from(c.pages_per_block) + u64::from(self.page)
    }

    pub fn from_ppn(ppn: u64, c: &FimmConfig) -> Self {
        let mut rest = ppn;
        let mut take = |n: u32| {
            let v = rest % u64::from(n);
            rest /= u64::from(n);
            v as u32
        };
        let page = take(c.pages_per_block);
        let block = take(c.blocks_per_plane);
        let plane = take(c.planes_per_die);
        let die = take(c.dies_per_package);
        PageAddr { package: rest as u32, die, plane, block, page }
    }
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum FimmOpKind {
    Read,
    Program,
    Erase,
}

/// One NAND command on one die: `planes` planes from `addr.plane` on (multi-plane when
/// more than one), `bytes` over the channel (none for an erase).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct FimmOp {
    pub kind: FimmOpKind,
    pub addr: PageAddr,
    pub planes: u32,
    pub bytes: u32,
}

impl FimmOp {
    pub fn read(addr: PageAddr, bytes: u32) -> Self {
        Self { kind: FimmOpKind::Read, addr, planes: 1, bytes }
    }

    pub fn program(addr: PageAddr, bytes: u32) -> Self {
        Self { kind: FimmOpKind::Program, addr, planes: 1, bytes }
    }

    pub fn erase(addr: PageAddr) -> Self {
        Self { kind: FimmOpKind::Erase, addr, planes: 1, bytes: 0 }
    }

    /// The same command on `planes` planes at once (multi-plane mode).
    pub fn multi_plane(self, planes: u32) -> Self {
        Self { planes, ..self }
    }
}

/// An operation the FIMM cannot perform, naming what is out of range.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
pub enum FimmOpError {
    #[error("FIMM address: `{field}` = {value} is out of range (the module has {limit})")]
    Address { field: &'static str, value: u32, limit: u32 },
    #[error("FIMM op: {planes} plane(s) from plane {first} do not fit a die of {per_die} planes")]
    Planes { first: u32, planes: u32, per_die: u32 },
    #[error("FIMM op: {bytes} bytes do not fit {planes} page(s) of {page_bytes} bytes (reads and programs move 1 byte or more)")]
    Bytes { bytes: u32, planes: u32, page_bytes: u32 },
}

/// When a FIMM operation happened and what it waited for.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct FimmCompletion {
    /// When the die took the command: the endpoint's HAL has issued it.
    pub issued: Nanos,
    /// When the last byte crossed the channel (out for a read, in for a program; `issued`
    /// for an erase).
    pub data_done: Nanos,
    /// When the operation is over: a read's data is out, a program or erase has finished.
    pub done: Nanos,
    /// Waiting for the die or its page register (busy with earlier work).
    pub storage_contention_ns: Nanos,
    /// Waiting for the channel (or the local bus it is wired to).
    pub link_contention_ns: Nanos,
}

/// One die's busy state.
#[derive(Clone, Copy, Debug, Default)]
struct Die {
    /// When the array (sense, program, erase) is free.
    array_free: Nanos,
    /// When the page register is free to take new data (equal to `array_free` without cache mode).
    register_free: Nanos,
}

/// A FIMM model: its dies and its channel.
#[derive(Clone, Debug)]
pub struct Fimm {
    config: FimmConfig,
    dies: Vec<Die>,
    channel: Calendar,
}

impl Fimm {
    pub fn new(config: FimmConfig) -> Result<Self, FimmConfigError> {
        config.validate()?;
        Ok(Self { dies: vec![Die::default(); config.dies() as usize], channel: Calendar::new(), config })
    }

    pub fn config(&self) -> &FimmConfig {
        &self.config
    }

    /// The module's channel: its busy stretches and total reserved time.
    pub fn channel(&self) -> &Calendar {
        &self.channel
    }

    /// Checks `op` against the geometry.
    pub fn check(&self, op: &FimmOp) -> Result<(), FimmOpError> {
        let c = &self.config;
        let a = op.addr;
        let fields = [
            ("package", a.package, c.packages),
            ("die", a.die, c.dies_per_package),
            ("plane", a.plane, c.planes_per_die),
            ("block", a.block, c.blocks_per_plane),
            ("page", a.page, c.pages_per_block),
        ];
        for (field, value, limit) in fields {
            if value >= limit {
                return Err(FimmOpError::Address { field, value, limit });
            }
        }
        if op.planes == 0 || a.plane + op.planes > c.planes_per_die {
            return Err(FimmOpError::Planes { first: a.plane, planes: op.planes, per_die: c.planes_per_die });
        }
        let max = u64::from(op.planes) * u64::from(c.page_bytes);
        let bytes_ok = match op.kind {
            FimmOpKind::Erase => op.bytes == 0,
            FimmOpKind::Read | FimmOpKind::Program => op.bytes > 0 && u64::from(op.bytes) <= max,
        };
        if !bytes_ok {
            return Err(FimmOpError::Bytes { bytes: op.bytes, planes: op.planes, page_bytes: c.page_bytes });
        }
        Ok(())
    }

    /// The FIMM on its own (a member device): `op` submitted at `now` with its data (for a
    /// program) at the module's slot at `now`; only the module's channel is shared.
    pub fn submit(&mut self, now: Nanos, op: FimmOp) -> Result<FimmCompletion, FimmOpError> {
        self.check(&op)?;
        self.prune(now);
        Ok(self.run(now, op, None))
    }

    /// Forgets channel reservations that ended by `now`.
    pub(crate) fn prune(&mut self, now: Nanos) {
        self.channel.prune(now);
    }

    /// Runs a checked `op` whose command (and program data) is at the slot at `ready`;
    /// with `bus`, every transfer must also find the cluster's local bus idle.
    pub(crate) fn run(&mut self, ready: Nanos, op: FimmOp, bus: Option<&mut Calendar>) -> FimmCompletion {
        let die = (op.addr.package * self.config.dies_per_package + op.addr.die) as usize;
        let at_die = ready + self.config.t_cmd_ns;
        let xfer = self.config.channel.xfer_ns(u64::from(op.bytes));
        match op.kind {
            FimmOpKind::Read => self.read(die, at_die, xfer, bus),
            FimmOpKind::Program => self.program(die, at_die, xfer, bus),
            FimmOpKind::Erase => self.erase(die, at_die),
        }
    }

    /// Reserves `dur` on the channel (and the bus) from `ready`; returns the start.
    fn transfer(&mut self, ready: Nanos, dur: Nanos, bus: Option<&mut Calendar>) -> Nanos {
        match bus {
            None => self.channel.reserve(ready, dur),
            Some(bus) => {
                let start = joint_fit(&self.channel, bus, ready, dur);
                self.channel.occupy(start, dur);
                bus.occupy(start, dur);
                start
            }
        }
    }

    fn read(&mut self, die: usize, at_die: Nanos, xfer: Nanos, bus: Option<&mut Calendar>) -> FimmCompletion {
        let d = self.dies[die];
        let start = at_die.max(d.array_free);
        // The sensed page moves into the register once the previous page has left it.
        let in_register = (start + self.config.t_read_ns).max(d.register_free);
        let storage = (start - at_die) + (in_register - (start + self.config.t_read_ns));
        let out = self.transfer(in_register, xfer, bus);
        let out_end = out + xfer;
        let d = &mut self.dies[die];
        d.array_free = if self.config.cache_mode { in_register } else { out_end };
        d.register_free = out_end;
        FimmCompletion {
            issued: start,
            data_done: out_end,
            done: out_end,
            storage_contention_ns: storage,
            link_contention_ns: out - in_register,
        }
    }

    fn program(&mut self, die: usize, at_die: Nanos, xfer: Nanos, bus: Option<&mut Calendar>) -> FimmCompletion {
        let d = self.dies[die];
        // Without cache mode the register is the array's: both free together.
        let load_from = at_die.max(d.register_free);
        let data_in = self.transfer(load_from, xfer, bus);
        let loaded = data_in + xfer;
        let prog_start = loaded.max(self.dies[die].array_free);
        let done = prog_start + self.config.t_prog_ns;
        let d = &mut self.dies[die];
        d.array_free = done;
        d.register_free = if self.config.cache_mode { prog_start } else { done };
        FimmCompletion {
            issued: load_from,
            data_done: loaded,
            done,
            storage_contention_ns: (load_from - at_die) + (prog_start - loaded),
            link_contention_ns: data_in - load_from,
        }
    }

    fn erase(&mut self, die: usize, at_die: Nanos) -> FimmCompletion {
        let d = &mut self.dies[die];
        let start = at_die.max(d.array_free).max(d.register_free);
        let done = start + self.config.t_erase_ns;
        d.array_free = done;
        d.register_free = done;
        FimmCompletion {
            issued: start,
            data_done: start,
            done,
            storage_contention_ns: start - at_die,
            link_contention_ns: 0,
        }
    }

    /// When every operation submitted so far has finished.
    pub fn busy_until(&self) -> Nanos {
        let dies = self.dies.iter().map(|d| d.array_free.max(d.register_free)).max().unwrap_or(0);
        dies.max(self.channel.busy_until())
    }
}
