//! When NAND work happens: busy-until times of every die, every channel and the host
//! link, and the rules by which a page read, page program, GC copy or erase claims them.
//! Nothing here knows about mapping; the FTLs say *what* to do, this says *when*.
//!
//! # Units
//! A "die" below is the unit that works independently of the others. When a device has
//! several planes per die, each plane is such a unit: multi-plane commands let planes
//! read and program concurrently, and scheduling them as independent units gives the
//! right sequential bandwidth. (It slightly overstates random-access parallelism, since
//! real multi-plane commands need matching addresses.) Unit `u` sits on channel
//! `u % channels`, so consecutive units alternate channels.
//!
//! # Resources
//! - **Dies** are strict FIFO servers: an operation starts at `max(ready, busy_until)`.
//!   A program occupies its die while its data crosses the channel into the die's
//!   register and then for `t_prog`; a read occupies it for `t_read` and while its data
//!   crosses the channel out.
//! - **Channels and the host link** are *fluid pipes*: each transfer adds its duration to
//!   a backlog that drains from the submission time, and finishes no earlier than its own
//!   data is ready plus its duration. A strict busy-until would be wrong here: a program
//!   queued behind a 30 ms GC stall on one die would reserve the shared channel 30 ms in
//!   the future and block every other die on that channel until then, although the
//!   channel is idle now. The pipe still enforces the bandwidth cap under load.
//!
//! # Priority classes
//! `User` work, the SSD's own GC and `Gc`-class (array-level background) work are served
//! FIFO. A `UserPreempt` operation (SWAN's reads, which preempt array-level GC) waits only
//! for *foreground* work: every resource also keeps `fg_busy_until`, advanced by all work
//! except `Gc`-class work. The preempting operation starts at `max(ready, fg_busy_until)`
//! and then pushes the background backlog back by its own duration.
//!
//! The *internal* lane holds the device's own work that host reads overtake: its GC when
//! it is preemptible, and the write-back of buffered host writes. Queued internal work is
//! always overtaken; what a read does about the internal operation already *in flight* on
//! its die is [`Suspension`]'s choice (the `in_flight` log). A read of a page still in the
//! write buffer is timed as a read from flash: slightly pessimistic for just-written data.
//!
//! Approximation: completions already returned for queued background operations are not
//! revised when a preempting operation overtakes them (the caller already holds them), so
//! background work in flight when a preempting read arrives finishes as first reported;
//! only background work submitted afterwards sees the delay.

use super::config::{SsdConfig, Suspension, PAGE_BYTES};
use super::in_flight::{DieLog, Met, ReadStart, Work};
use super::write_buffer::WriteBuffer;
use crate::{IoClass, Nanos};
use swan_core::divisor::Divisor;

/// How an operation queues on a resource.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Prio {
    /// FIFO with all host work, and with the device's own GC unless it reads past a
    /// preemptible one; counts as foreground work (`User`, and the SSD's own GC when it is
    /// not preemptible).
    Foreground,
    /// As `Foreground`, but invisible to preempting operations (`Gc`: array-level GC).
    Background,
    /// Overtakes background work (`UserPreempt`).
    Preempt,
    /// The SSD's own GC when it is preemptible: every host read overtakes it; host writes
    /// still wait for it, since they need the space it frees.
    Internal,
}

impl Prio {
    pub(crate) fn of(class: IoClass) -> Self {
        match class {
            IoClass::User => Prio::Foreground,
            IoClass::Gc => Prio::Background,
            IoClass::UserPreempt => Prio::Preempt,
        }
    }
}

/// Whether work on a die reads a page out (which may overtake the device's preemptible GC)
/// or programs one (which may not).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum DieOp {
    Read,
    Program,
}

/// Where `mark` stands once work that ran from `start` to `end` has been put in its lane: a
/// backlog it overtook (`mark > start`) is pushed back by the work's length.
fn bump(mark: &mut Nanos, start: Nanos, end: Nanos) {
    *mark = if *mark > start { *mark + (end - start) } else { end };
}

/// A strict FIFO server with nested lanes: one die. `fg_busy_until` ≤ `host_busy_until` ≤
/// `busy_until`: foreground host work, all host work, and all work (the device's own
/// preemptible GC too). `writeback_until` is when the die's last buffered host page is
/// programmed, pushed back like the rest by reads that overtake it: what a FLUSH waits for.
#[derive(Clone, Copy, Debug, Default)]
struct Die {
    busy_until: Nanos,
    host_busy_until: Nanos,
    fg_busy_until: Nanos,
    writeback_until: Nanos,
}

impl Die {
    fn start_at(&self, ready: Nanos, prio: Prio, op: DieOp) -> Nanos {
        match (prio, op) {
            (Prio::Preempt, _) => ready.max(self.fg_busy_until),
            (Prio::Foreground | Prio::Background, DieOp::Read) => ready.max(self.host_busy_until),
            _ => ready.max(self.busy_until),
        }
    }

    /// Records that the die worked from `start` (as given by [`Die::start_at`]) to `end`.
    fn occupy(&mut self, start: Nanos, end: Nanos, prio: Prio) {
        if self.writeback_until > start {
            self.writeback_until += end - start;
        }
        bump(&mut self.busy_until, start, end);
        if prio != Prio::Internal {
            bump(&mut self.host_busy_until, start, end);
        }
        if matches!(prio, Prio::Foreground | Prio::Preempt) {
            bump(&mut self.fg_busy_until, start, end);
        }
    }
}

/// A bandwidth-capped pipe with nested lanes as a die's: one channel, or the host link.
#[derive(Clone, Copy, Debug, Default)]
struct Pipe {
    busy_until: Nanos,
    host_busy_until: Nanos,
    fg_busy_until: Nanos,
}

impl Pipe {
    /// A transfer of `dur` submitted at `now` whose data is ready at `ready`; returns when
    /// it has crossed. Pushing a backlog back by `dur` is exactly adding the transfer to
    /// that fluid backlog, so every lane at or below the transfer's own grows by `dur`.
    fn transfer(&mut self, now: Nanos, ready: Nanos, dur: Nanos, prio: Prio) -> Nanos {
        let add = |mark: &mut Nanos| {
            *mark = (*mark).max(now) + dur;
            *mark
        };
        add(&mut self.busy_until);
        let queued = match prio {
            Prio::Internal => self.busy_until,
            Prio::Background => add(&mut self.host_busy_until),
            Prio::Foreground => {
                let q = add(&mut self.host_busy_until);
                self.fg_busy_until = q;
                q
            }
            Prio::Preempt => {
                add(&mut self.host_busy_until);
                add(&mut self.fg_busy_until)
            }
        };
        (ready + dur).max(queued)
    }
}

/// The busy-until state of one SSD's dies, channels and host link.
#[derive(Clone, Debug)]
pub(crate) struct Timing {
    dies: Vec<Die>,
    channels: Vec<Pipe>,
    /// The channel count, to divide by with a multiply: every page sensed or programmed asks
    /// its die's channel.
    channel_count: Divisor,
    host: Pipe,
    t_read: Nanos,
    t_prog: Nanos,
    t_erase: Nanos,
    /// One page over a channel.
    channel_xfer: Nanos,
    /// One page over the host link.
    host_xfer: Nanos,
    /// The latest time any resource is busy until.
    horizon: Nanos,
    /// The device's own times, before any slow period's multiplier ([`Timing::set_multiplier`]).
    base: [Nanos; 5],
    /// Die-nanoseconds of work charged since the last [`Timing::reset_busy`], summed over
    /// dies: how busy the flash was, whatever the host saw.
    die_busy_ns: u64,
    /// The lane the device's own GC runs in: foreground, or the internal lane every host
    /// read overtakes ([`super::SsdConfig::gc_preemptible`]).
    gc: Prio,
    /// What a host read does about internal-lane work in flight, and each die's log of that
    /// work (empty under [`Suspension::Instant`], which needs none).
    suspension: Suspension,
    logs: Vec<DieLog>,
    /// Host reads that met internal work in flight: waited for it, or suspended it.
    pub(crate) overtakes: Overtakes,
    /// The DRAM write buffer, if the device has one.
    buffer: Option<WriteBuffer>,
    /// The lane buffered write-back runs in: internal (reads overtake it) or the host's.
    write_back: Option<Prio>,
}

/// How often host reads met the device's own work in flight on their die
/// ([`super::SsdConfig::suspension`]).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Overtakes {
    pub waited: u64,
    pub suspended: u64,
}

/// Time for one page at `mbps` MB/s (10^6 bytes per second).
fn page_xfer_ns(mbps: u64) -> Nanos {
    PAGE_BYTES * 1_000 / mbps
}

/// What the timing model needs of a device: its units and channels, NAND and link times,
/// and how host reads meet the device's own work. A conventional SSD's config gives it
/// ([`NandTiming::from`]), and so does a zoned SSD's ([`crate::zns`]): both time NAND alike.
#[derive(Clone, Copy, Debug)]
pub(crate) struct NandTiming {
    pub units: u32,
    pub channels: u32,
    pub t_read_ns: Nanos,
    pub t_prog_ns: Nanos,
    pub t_erase_ns: Nanos,
    pub channel_mbps: u64,
    pub host_mbps: u64,
    pub gc_preemptible: bool,
    pub suspension: Suspension,
    /// A write buffer shared by the whole device (0: none; a zoned SSD keeps one per zone
    /// and hands it to [`Timing::write_page_via`]).
    pub write_buffer_pages: u32,
    pub reads_before_write_back: bool,
}

impl From<&SsdConfig> for NandTiming {
    fn from(c: &SsdConfig) -> Self {
        Self {
            units: c.units(),
            channels: c.channels,
            t_read_ns: c.t_read_ns,
            t_prog_ns: c.t_prog_ns,
            t_erase_ns: c.t_erase_ns,
            channel_mbps: c.channel_mbps,
            host_mbps: c.host_mbps,
            gc_preemptible: c.gc_preemptible,
            suspension: c.suspension,
            write_buffer_pages: c.write_buffer_pages,
            reads_before_write_back: c.reads_before_write_back,
        }
    }
}

impl Timing {
    pub(crate) fn new(config: &SsdConfig) -> Self {
        Self::of(&NandTiming::from(config))
    }

    pub(crate) fn of(config: &NandTiming) -> Self {
        let base = [
            config.t_read_ns,
            config.t_prog_ns,
            config.t_erase_ns,
            page_xfer_ns(config.channel_mbps),
            page_xfer_ns(config.host_mbps),
        ];
        Self {
            dies: vec![Die::default(); config.units as usize],
            channels: vec![Pipe::default(); config.channels as usize],
            channel_count: Divisor::new(u64::from(config.channels)),
            host: Pipe::default(),
            t_read: base[0],
            t_prog: base[1],
            t_erase: base[2],
            channel_xfer: base[3],
            host_xfer: base[4],
            horizon: 0,
            base,
            die_busy_ns: 0,
            gc: if config.gc_preemptible { Prio::Internal } else { Prio::Foreground },
            suspension: config.suspension,
            logs: match config.suspension {
                Suspension::Instant => Vec::new(),
                _ => vec![DieLog::default(); config.units as usize],
            },
            overtakes: Overtakes::default(),
            buffer: (config.write_buffer_pages > 0).then(|| WriteBuffer::new(config.write_buffer_pages)),
            write_back: config.reads_before_write_back.then_some(Prio::Internal),
        }
    }

    /// Every NAND and transfer time of work started from now on is the device's own times
    /// `multiplier` (a slow period; 1.0 restores them).
    pub(crate) fn set_multiplier(&mut self, multiplier: f64) {
        let [r, p, e, ch, host] = self.base.map(|ns| ((ns as f64 * multiplier).round() as Nanos).max(1));
        (self.t_read, self.t_prog, self.t_erase, self.channel_xfer, self.host_xfer) = (r, p, e, ch, host);
    }

    pub(crate) fn die_busy_ns(&self) -> u64 {
        self.die_busy_ns
    }

    pub(crate) fn reset_busy(&mut self) {
        self.die_busy_ns = 0;
        self.overtakes = Overtakes::default();
    }

    /// Forgets every backlog and takes `like`'s current NAND and transfer times: the device
    /// `like` times, idle, to time one operation on its own ([`super::Ssd::submit_split`]).
    pub(crate) fn idle_like(&mut self, like: &Timing) {
        self.dies.fill(Die::default());
        self.channels.fill(Pipe::default());
        self.host = Pipe::default();
        self.horizon = 0;
        self.logs.iter_mut().for_each(DieLog::clear);
        if let Some(b) = &mut self.buffer {
            b.clear();
        }
        (self.t_read, self.t_prog, self.t_erase, self.channel_xfer, self.host_xfer) =
            (like.t_read, like.t_prog, like.t_erase, like.channel_xfer, like.host_xfer);
    }

    pub(crate) fn units(&self) -> usize {
        self.dies.len()
    }

    pub(crate) fn horizon(&self) -> Nanos {
        self.horizon
    }

    fn channel_of(&self, die: u32) -> usize {
        self.channel_count.remainder(u64::from(die)) as usize
    }

    /// Senses a page on `die` and moves it over the die's channel; returns when the data
    /// is in the controller.
    fn sense(&mut self, now: Nanos, die: u32, prio: Prio) -> Nanos {
        let ch = self.channel_of(die);
        let d = &mut self.dies[die as usize];
        let lanes = d.start_at(now, prio, DieOp::Read);
        let tracked = !self.logs.is_empty();
        let host = prio != Prio::Internal;
        let read = if tracked && host {
            self.logs[die as usize].read_start(lanes, &self.suspension)
        } else {
            ReadStart { from: lanes, sense: lanes, met: Met::Nothing }
        };
        let start = read.from;
        let out = self.channels[ch].transfer(now, read.sense + self.t_read, self.channel_xfer, prio);
        d.occupy(start, out, prio);
        self.horizon = self.horizon.max(d.busy_until);
        self.die_busy_ns += out - start;
        if tracked {
            let log = &mut self.logs[die as usize];
            if host {
                log.overtaken(out - start);
                match read.met {
                    Met::Nothing => {}
                    Met::Waited => self.overtakes.waited += 1,
                    Met::Suspended => self.overtakes.suspended += 1,
                }
            } else {
                log.record(now, start, out, Work::Sense);
            }
        }
        out
    }

    /// Moves a page whose data is in the controller at `ready` into `die` and programs it;
    /// returns when the program ends.
    fn program(&mut self, now: Nanos, ready: Nanos, die: u32, prio: Prio) -> Nanos {
        let ch = self.channel_of(die);
        let d = &mut self.dies[die as usize];
        let start = d.start_at(ready, prio, DieOp::Program);
        let end = self.channels[ch].transfer(now, start, self.channel_xfer, prio) + self.t_prog;
        d.occupy(start, end, prio);
        self.horizon = self.horizon.max(d.busy_until);
        self.die_busy_ns += end - start;
        self.log_internal(die, now, (start, end), prio, Work::Program);
        end
    }

    /// Records internal-lane work on `die` in its log, if logs are kept.
    fn log_internal(&mut self, die: u32, now: Nanos, (start, end): (Nanos, Nanos), prio: Prio, work: Work) {
        if prio == Prio::Internal && !self.logs.is_empty() {
            self.logs[die as usize].record(now, start, end, work);
        }
    }

    /// A host read of one page on `die`: returns when its data has crossed the host link.
    pub(crate) fn read_page(&mut self, now: Nanos, die: u32, prio: Prio) -> Nanos {
        let in_controller = self.sense(now, die, prio);
        let done = self.host.transfer(now, in_controller, self.host_xfer, prio);
        self.horizon = self.horizon.max(done).max(self.host.busy_until);
        done
    }

    /// How long a host read of one page on `die`, submitted at `now`, would wait before its
    /// die starts it or its data can leave over the host link, whichever is later: what a
    /// driver deciding where to read from asks. Changes nothing.
    pub(crate) fn read_wait(&self, now: Nanos, die: u32, prio: Prio) -> Nanos {
        let die_start = self.dies[die as usize].start_at(now, prio, DieOp::Read);
        let host = match prio {
            Prio::Preempt => self.host.fg_busy_until,
            Prio::Foreground | Prio::Background => self.host.host_busy_until,
            Prio::Internal => self.host.busy_until,
        };
        die_start.max(host).saturating_sub(now)
    }

    /// A host write of one page to `die`: the data crosses the host link, then the channel,
    /// then is programmed. Returns when the program ends.
    pub(crate) fn write_page(&mut self, now: Nanos, die: u32, prio: Prio) -> Nanos {
        let arrived = self.host.transfer(now, now, self.host_xfer, prio);
        self.horizon = self.horizon.max(self.host.busy_until);
        self.program(now, arrived, die, prio)
    }

    /// A host write of one page into the DRAM write buffer: the data crosses the host link
    /// and waits for a slot; its program then runs as write-back, in the internal lane which
    /// host reads overtake unless the device serves them in order. Returns when the page was admitted (the write may complete) and
    /// when its program ends.
    ///
    /// # Panics
    /// If the device has no write buffer.
    pub(crate) fn write_page_buffered(&mut self, now: Nanos, die: u32, prio: Prio) -> (Nanos, Nanos) {
        let mut buffer = self.buffer.take().expect("write_page_buffered on a device without a buffer");
        let times = self.write_page_via(&mut buffer, now, die, prio);
        self.buffer = Some(buffer);
        times
    }

    /// As [`Timing::write_page_buffered`], through `buffer` rather than the device's own:
    /// a zoned SSD buffers each open zone apart.
    pub(crate) fn write_page_via(
        &mut self,
        buffer: &mut WriteBuffer,
        now: Nanos,
        die: u32,
        prio: Prio,
    ) -> (Nanos, Nanos) {
        let arrived = self.host.transfer(now, now, self.host_xfer, prio);
        self.horizon = self.horizon.max(self.host.busy_until);
        let admitted = buffer.admit(arrived);
        let end = self.program(now, admitted, die, self.write_back.unwrap_or(prio));
        buffer.hold(end);
        let d = &mut self.dies[die as usize];
        d.writeback_until = d.writeback_until.max(end);
        (admitted, end)
    }

    /// Whether host writes go through a DRAM write buffer.
    pub(crate) fn buffered(&self) -> bool {
        self.buffer.is_some()
    }

    /// When every page written so far is on flash: what a FLUSH waits for (0 if no write was
    /// buffered: unbuffered writes complete only once programmed). O(units).
    pub(crate) fn drained_at(&self) -> Nanos {
        self.dies.iter().map(|d| d.writeback_until).max().unwrap_or(0)
    }

    /// The SSD's own copy of a valid page (GC or merge): read on `from`, program on `to`;
    /// returns when both are done. Charged in the GC lane: foreground work, which the host
    /// cannot preempt, unless the device's GC is preemptible.
    ///
    /// Within one die the program follows the read. Across dies the program does not wait
    /// for its own read: GC pages are staged in controller DRAM and a die programs
    /// whichever staged page is ready, which a strict FIFO cannot express. Making it wait
    /// would leave the target die idle between copies, with no later work allowed into the
    /// gap, and serialise a GC run behind one victim's reads. The run as a whole still
    /// completes only when every read and program has.
    pub(crate) fn copy_page(&mut self, now: Nanos, from: u32, to: u32) -> Nanos {
        let in_controller = self.sense(now, from, self.gc);
        let ready = if from == to { in_controller } else { now };
        self.program(now, ready, to, self.gc).max(in_controller)
    }

    /// The SSD's own copy of a page inside `die` by copy-back: the die reads and programs,
    /// the channel is not used. In the GC lane, as [`Timing::copy_page`].
    pub(crate) fn copy_back_page(&mut self, now: Nanos, die: u32) -> Nanos {
        let d = &mut self.dies[die as usize];
        let start = d.start_at(now, self.gc, DieOp::Program);
        let end = start + self.t_read + self.t_prog;
        d.occupy(start, end, self.gc);
        self.horizon = self.horizon.max(end);
        self.die_busy_ns += end - start;
        self.log_internal(die, now, (start, end), self.gc, Work::Program);
        end
    }

    /// An erase of one block on `die`, in the GC lane; returns when it ends.
    pub(crate) fn erase_block(&mut self, now: Nanos, die: u32) -> Nanos {
        let d = &mut self.dies[die as usize];
        let start = d.start_at(now, self.gc, DieOp::Program);
        let end = start + self.t_erase;
        d.occupy(start, end, self.gc);
        self.horizon = self.horizon.max(end);
        self.die_busy_ns += end - start;
        self.log_internal(die, now, (start, end), self.gc, Work::Erase);
        end
    }
}

#[cfg(test)]
mod tests {
    use super::super::presets;
    use super::*;

    #[test]
    fn a_preempting_read_overtakes_background_work() {
        let mut t = Timing::new(&presets::sata850pro());
        // 1000 background reads on die 0: ~60 ms of backlog on that die.
        let mut bg_done = 0;
        for _ in 0..1000 {
            bg_done = t.read_page(0, 0, Prio::Background);
        }
        let gc_read = t.read_page(0, 0, Prio::Background);
        let preempt = t.read_page(0, 0, Prio::Preempt);
        assert!(preempt < 200_000, "preempting read waited for the backlog: {preempt} ns");
        assert!(gc_read > bg_done, "a Gc read queues behind the backlog");
        // Later background work is pushed back by the preempting read's die time.
        let after = t.read_page(0, 0, Prio::Background);
        assert!(after >= gc_read + 50_000, "{after} vs {gc_read}");
    }

    #[test]
    fn a_stalled_die_does_not_block_its_channel_mates() {
        let c = presets::sata850pro();
        let mut t = Timing::new(&c);
        // Long erase backlog on die 0; die 8 shares channel 0.
        for _ in 0..10 {
            t.erase_block(0, 0);
        }
        t.write_page(0, 0, Prio::Foreground);
        let other = t.read_page(0, c.channels, Prio::Foreground);
        assert!(other < 100_000, "die 8 read waited for die 0's stall: {other} ns");
    }

    #[test]
    fn fifo_classes_wait_for_everything() {
        let mut t = Timing::new(&presets::sata850pro());
        let first = t.read_page(0, 3, Prio::Background);
        let second = t.read_page(0, 3, Prio::Foreground);
        assert!(second >= first + 50_000);
        assert_eq!(t.horizon(), second.max(first));
    }

    /// An SSD whose own GC is preemptible, with ten erases (15 ms) queued on die 0.
    fn erasing(preemptible: bool) -> Timing {
        let instant = Suspension::Instant;
        let mut t =
            Timing::new(&SsdConfig { gc_preemptible: preemptible, suspension: instant, ..presets::sata850pro() });
        for _ in 0..10 {
            t.erase_block(0, 0);
        }
        t
    }

    #[test]
    fn host_reads_overtake_preemptible_gc_and_push_it_back() {
        let mut t = erasing(true);
        for prio in [Prio::Foreground, Prio::Background, Prio::Preempt] {
            let read = t.read_page(0, 0, prio);
            assert!(read < 200_000, "{prio:?} read waited for the device's GC: {read} ns");
        }
        // The three reads ran first, so the erases end later by their die time.
        assert!(t.dies[0].busy_until >= 15_000_000 + 3 * 50_000, "{}", t.dies[0].busy_until);
        // A program needs the space the erases free: it waits for all of them.
        let write = t.write_page(0, 0, Prio::Foreground);
        assert!(write > 15_000_000, "a write overtook the device's GC: {write} ns");
    }

    #[test]
    fn without_preemptible_gc_every_read_waits_for_it() {
        let mut t = erasing(false);
        for prio in [Prio::Foreground, Prio::Preempt] {
            let read = t.read_page(0, 0, prio);
            assert!(read > 15_000_000, "{prio:?} read overtook the device's GC: {read} ns");
        }
    }

    /// An 850 PRO model with a 64-page write buffer and the given suspension.
    fn buffered(suspension: Suspension) -> Timing {
        Timing::new(&SsdConfig { write_buffer_pages: 64, suspension, ..presets::sata850pro() })
    }

    const PROGRAM_SUSPEND: Suspension =
        Suspension::Nand { program_ns: Some(20_000), erase_ns: Some(20_000), min_remaining_ns: 0 };

    #[test]
    fn a_read_overtakes_a_suspended_program_and_the_program_completes_later() {
        let mut t = buffered(PROGRAM_SUSPEND);
        let (admitted, end) = t.write_page_buffered(0, 0, Prio::Foreground);
        assert!(admitted < end / 10, "the write waited for its program: admitted {admitted} ns, program ends {end} ns");
        let read = t.read_page(admitted + 20_000, 0, Prio::Foreground);
        assert!(read < end, "the read ({read} ns) waited for the program ending at {end} ns");
        assert_eq!(t.overtakes, Overtakes { waited: 0, suspended: 1 });
        // The program resumes and ends later by the suspend latency and the read's die time.
        let held = 20_000 + t.t_read + t.channel_xfer;
        assert_eq!(t.drained_at(), end + held, "a FLUSH must wait for the pushed-back program");
    }

    #[test]
    fn between_ops_a_read_waits_for_the_program_in_flight_only() {
        let mut t = buffered(Suspension::BetweenOps);
        let (_, first) = t.write_page_buffered(0, 0, Prio::Foreground);
        let (_, second) = t.write_page_buffered(0, 0, Prio::Foreground);
        let read = t.read_page(20_000, 0, Prio::Foreground);
        assert_eq!(
            read,
            first + t.t_read + t.channel_xfer + t.host_xfer,
            "the read starts when the first program ends"
        );
        assert!(read < second, "the read waited for the queued program too");
        assert_eq!(t.overtakes, Overtakes { waited: 1, suspended: 0 });
        assert_eq!(t.drained_at(), second + t.t_read + t.channel_xfer, "the queued program is pushed back");
    }

    #[test]
    fn in_order_a_read_waits_for_every_buffered_program_queued_before_it() {
        let config = SsdConfig { write_buffer_pages: 64, reads_before_write_back: false, ..presets::sata850pro() };
        let mut t = Timing::new(&config);
        let (_, first) = t.write_page_buffered(0, 0, Prio::Foreground);
        let (_, second) = t.write_page_buffered(0, 0, Prio::Foreground);
        let read = t.read_page(20_000, 0, Prio::Foreground);
        assert!(read > second, "the read ({read} ns) went before the program queued to end at {second} ns");
        assert!(first < second && t.drained_at() == second, "nothing was pushed back");
    }

    #[test]
    fn a_full_write_buffer_holds_the_write_until_a_program_ends() {
        let mut t = Timing::new(&SsdConfig { write_buffer_pages: 1, ..presets::sata850pro() });
        let (_, first) = t.write_page_buffered(0, 0, Prio::Foreground);
        let (admitted, _) = t.write_page_buffered(0, 1, Prio::Foreground);
        assert_eq!(admitted, first, "the second page must wait for the only slot");
    }

    #[test]
    fn a_preempting_read_still_waits_for_foreground_host_work() {
        let mut t = erasing(true);
        let write = t.write_page(0, 0, Prio::Foreground);
        let read = t.read_page(0, 0, Prio::Preempt);
        assert!(read >= write, "read {read} ns overtook a host write ending at {write} ns");
    }
}
