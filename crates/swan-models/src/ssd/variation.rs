//! SSD-to-SSD variation: SSDs of one model that are not equally fast ([`Variation`]).
//!
//! Two kinds, both off by default and both drawn per SSD from the run's seed:
//! - a *speed spread*: SSD `i`'s NAND times (read, program, erase) and page transfer times
//!   (channel, host link) are multiplied by a factor `f_i = exp(σ·z_i)`, `z_i` standard
//!   normal (clamped to ±3), so its median is 1 and `σ` sets how far drives stray;
//! - *slow periods*: each SSD alternates between normal and slow periods (exponential
//!   lengths, independent per SSD), spending `slow_fraction` of its time slow, during which
//!   every operation it starts takes `slow_factor` times as long ([`SlowPeriods`]).
//!
//! The measurement behind both is Hao et al., "The Tail at Store: A Revelation from
//! Millions of Hours of Disk and SSD Deployments", FAST '16: over 7 million SSD-hours, an
//! SSD is more than 2× slower than its RAID peers 0.6 % of the time, and an SSD RAID group
//! has at least one such slow drive 2.2 % of the time; the slowdowns come from the drives'
//! own internals and are mostly transient. [`Variation::TAIL_AT_STORE`] carries those
//! figures; see `docs/swan.md` for what they do and do not pin down.

use serde::{Deserialize, Serialize};

use super::config::SsdConfig;
use crate::Nanos;

/// How the SSDs of one array differ from each other. `Variation::default()` is identical SSDs.
#[derive(Clone, Copy, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct Variation {
    /// σ of the log-normal per-SSD speed factor (0: every SSD runs at the preset's speed).
    pub speed_spread: f64,
    /// Fraction of time each SSD spends in slow periods (0: never slow).
    pub slow_fraction: f64,
    /// How many times longer an operation takes in a slow period (≥ 1).
    pub slow_factor: f64,
    /// Mean length of one slow period, in simulated milliseconds.
    pub slow_period_ms: f64,
}

/// Settings [`Variation::validate`] refuses, naming the option (`--ssd-…`) to change.
#[derive(Clone, Copy, Debug, PartialEq, thiserror::Error)]
pub enum VariationError {
    #[error(
        "--ssd-speed-spread {sigma} is not a σ in [0, 1] (0.276 matches Tail at Store's 0.6 % of SSD time \
         spent > 2× slower than RAID peers)"
    )]
    SpeedSpread { sigma: f64 },
    #[error("--ssd-slow-fraction {fraction} is not a fraction of time in [0, 1) (Tail at Store: 0.006)")]
    SlowFraction { fraction: f64 },
    #[error("--ssd-slow-factor {factor} must be ≥ 1: a slow period makes operations longer (e.g. 2)")]
    SlowFactor { factor: f64 },
    #[error("--ssd-slow-period {ms} ms must be > 0 (the mean length of one slow period, e.g. 1000)")]
    SlowPeriod { ms: f64 },
}

/// Z-scores beyond this are clamped: a factor of `exp(3σ)` is already a drive in the
/// 0.13 % tail, and an unbounded draw could make a member absurdly slow or fast.
const MAX_Z: f64 = 3.0;

impl Variation {
    /// Hao et al. (FAST '16): 0.6 % of SSD time more than 2× slower than RAID peers.
    /// Read as a steady spread, `P(f > 2) = 0.006` gives `σ = ln 2 / 2.51 = 0.276`; read as
    /// transient slowdowns, 0.6 % of the time at 2×. The paper measures hours; the one-second
    /// mean slow period is a time compression for runs of tens of simulated seconds, not a
    /// measurement.
    pub const TAIL_AT_STORE: Variation =
        Variation { speed_spread: 0.276, slow_fraction: 0.006, slow_factor: 2.0, slow_period_ms: 1000.0 };

    /// True when every SSD is like every other (nothing to draw).
    pub fn is_off(&self) -> bool {
        self.speed_spread == 0.0 && self.slow_fraction == 0.0
    }

    /// Why these settings cannot be modelled, naming the option (`--ssd-…`) to change.
    pub fn validate(&self) -> Result<(), VariationError> {
        if !(self.speed_spread.is_finite() && (0.0..=1.0).contains(&self.speed_spread)) {
            return Err(VariationError::SpeedSpread { sigma: self.speed_spread });
        }
        if !(self.slow_fraction.is_finite() && (0.0..1.0).contains(&self.slow_fraction)) {
            return Err(VariationError::SlowFraction { fraction: self.slow_fraction });
        }
        if self.slow_fraction > 0.0 {
            if !(self.slow_factor.is_finite() && self.slow_factor >= 1.0) {
                return Err(VariationError::SlowFactor { factor: self.slow_factor });
            }
            if !(self.slow_period_ms.is_finite() && self.slow_period_ms > 0.0) {
                return Err(VariationError::SlowPeriod { ms: self.slow_period_ms });
            }
        }
        Ok(())
    }

    /// SSD `ssd`'s speed factor under `seed`: its NAND and transfer times are multiplied
    /// by it (1.0 with no speed spread). Each SSD draws from its own stream, so adding an
    /// SSD to an array leaves the others' factors as they were.
    pub fn speed_factor(&self, seed: u64, ssd: u32) -> f64 {
        if self.speed_spread == 0.0 {
            return 1.0;
        }
        let mut s = Stream::new(seed, ssd, 0x5EED_F00D);
        (self.speed_spread * s.normal().clamp(-MAX_Z, MAX_Z)).exp()
    }

    /// SSD `ssd`'s slow periods under `seed`, or `None` when there are none.
    pub fn slow_periods(&self, seed: u64, ssd: u32) -> Option<SlowPeriods> {
        (self.slow_fraction > 0.0).then(|| SlowPeriods::new(self, Stream::new(seed, ssd, 0x510_7105)))
    }
}

impl SsdConfig {
    /// The same device `factor` times slower (or faster, below 1): NAND read, program and
    /// erase times multiplied by it, channel and host-link rates divided by it.
    pub fn with_speed_factor(&self, factor: f64) -> Self {
        let time = |ns: Nanos| ((ns as f64 * factor).round() as Nanos).max(1);
        let rate = |mbps: u64| ((mbps as f64 / factor).round() as u64).max(1);
        Self {
            t_read_ns: time(self.t_read_ns),
            t_prog_ns: time(self.t_prog_ns),
            t_erase_ns: time(self.t_erase_ns),
            channel_mbps: rate(self.channel_mbps),
            host_mbps: rate(self.host_mbps),
            ..self.clone()
        }
    }
}

/// A small deterministic random stream (SplitMix64) per SSD and purpose, so the model needs
/// no random-number crate and a seed always gives the same drives.
#[derive(Clone, Debug)]
struct Stream(u64);

impl Stream {
    fn new(seed: u64, ssd: u32, purpose: u64) -> Self {
        let mut s = Stream(seed ^ purpose.wrapping_mul(0x9E37_79B9_7F4A_7C15));
        s.0 ^= u64::from(ssd).wrapping_add(1).wrapping_mul(0xD1B5_4A32_D192_ED03);
        s.next_u64();
        s
    }

    fn next_u64(&mut self) -> u64 {
        self.0 = self.0.wrapping_add(0x9E37_79B9_7F4A_7C15);
        let mut x = self.0;
        x = (x ^ (x >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
        x = (x ^ (x >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
        x ^ (x >> 31)
    }

    /// Uniform in (0, 1]: never 0, so its logarithm is finite.
    fn unit(&mut self) -> f64 {
        ((self.next_u64() >> 11) + 1) as f64 / (1u64 << 53) as f64
    }

    /// Standard normal (Box–Muller).
    fn normal(&mut self) -> f64 {
        let (u, v) = (self.unit(), self.unit());
        (-2.0 * u.ln()).sqrt() * (std::f64::consts::TAU * v).cos()
    }

    /// Exponential with mean `mean`.
    fn exponential(&mut self, mean: f64) -> f64 {
        -mean * self.unit().ln()
    }
}

/// One SSD's alternation of normal and slow periods in virtual time. The device asks it,
/// at each operation's submission, which speed holds; periods are drawn lazily as time
/// passes, so the cost is one comparison per operation between changes.
#[derive(Clone, Debug)]
pub struct SlowPeriods {
    stream: Stream,
    slow: bool,
    /// The current period ends here.
    until: Nanos,
    factor: f64,
    mean_slow_ns: f64,
    mean_normal_ns: f64,
    /// Slow time in periods that have ended.
    slow_ns_done: Nanos,
    /// Start of the current period.
    since: Nanos,
}

impl SlowPeriods {
    fn new(v: &Variation, mut stream: Stream) -> Self {
        let mean_slow_ns = v.slow_period_ms * 1e6;
        let mean_normal_ns = mean_slow_ns * (1.0 - v.slow_fraction) / v.slow_fraction;
        // Start in the stationary state: slow with probability `slow_fraction`.
        let slow = stream.unit() <= v.slow_fraction;
        let first = stream.exponential(if slow { mean_slow_ns } else { mean_normal_ns });
        Self {
            stream,
            slow,
            until: first.round() as Nanos,
            factor: v.slow_factor,
            mean_slow_ns,
            mean_normal_ns,
            slow_ns_done: 0,
            since: 0,
        }
    }

    /// Moves to the period holding `now`; returns the time multiplier if it changed.
    pub(crate) fn advance(&mut self, now: Nanos) -> Option<f64> {
        if now < self.until {
            return None;
        }
        let was = self.slow;
        while now >= self.until {
            if self.slow {
                self.slow_ns_done += self.until - self.since;
            }
            self.since = self.until;
            self.slow = !self.slow;
            let mean = if self.slow { self.mean_slow_ns } else { self.mean_normal_ns };
            self.until += (self.stream.exponential(mean).round() as Nanos).max(1);
        }
        (self.slow != was).then(|| self.multiplier())
    }

    /// The time multiplier of the current period.
    pub(crate) fn multiplier(&self) -> f64 {
        if self.slow {
            self.factor
        } else {
            1.0
        }
    }

    /// Simulated nanoseconds spent slow from time 0 to `now` (periods drawn up to `now`).
    pub fn slow_ns(&mut self, now: Nanos) -> Nanos {
        self.advance(now);
        self.slow_ns_done + if self.slow { now - self.since } else { 0 }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::ssd::presets;

    #[test]
    fn speed_factors_are_drawn_per_ssd_and_reproducible() {
        let v = Variation { speed_spread: 0.276, ..Variation::default() };
        let draw = |seed| (0..9).map(|i| v.speed_factor(seed, i)).collect::<Vec<_>>();
        let (a, again, other) = (draw(1), draw(1), draw(2));
        assert_eq!(a, again, "the same seed gives the same drives");
        assert_ne!(a, other, "another seed gives other drives");
        // Per SSD: the nine factors are not all alike, and they stay within exp(±3σ).
        assert!(a.iter().any(|&f| (f - a[0]).abs() > 1e-3), "{a:?}");
        assert!(a.iter().all(|&f| (f.ln()).abs() <= 3.0 * 0.276 + 1e-12), "{a:?}");
        // Over many drives the spread is the one asked for: median ≈ 1, P(f > 2) ≈ 0.6 %.
        let many: Vec<f64> = (0..20_000).map(|i| v.speed_factor(7, i)).collect();
        let logs: Vec<f64> = many.iter().map(|f| f.ln()).collect();
        let mean = logs.iter().sum::<f64>() / logs.len() as f64;
        let sd = (logs.iter().map(|l| (l - mean).powi(2)).sum::<f64>() / logs.len() as f64).sqrt();
        assert!(mean.abs() < 0.01 && (sd - 0.276).abs() < 0.01, "mean {mean}, sd {sd}");
        let over_2x = many.iter().filter(|&&f| f > 2.0).count() as f64 / many.len() as f64;
        assert!((0.003..0.010).contains(&over_2x), "{over_2x}");
        // Off means exactly the preset.
        assert_eq!(Variation::default().speed_factor(1, 3), 1.0);
    }

    #[test]
    fn slow_periods_take_the_asked_share_of_time() {
        let v = Variation { slow_fraction: 0.05, slow_factor: 2.0, slow_period_ms: 10.0, ..Variation::default() };
        let horizon: Nanos = 200_000_000_000; // 200 s: about 1,000 slow periods
        let mut p = v.slow_periods(3, 0).expect("slow periods on");
        let mut changes = 0;
        for t in (0..horizon).step_by(100_000) {
            changes += usize::from(p.advance(t).is_some());
        }
        let share = p.slow_ns(horizon) as f64 / horizon as f64;
        assert!((0.04..0.06).contains(&share), "{share}");
        assert!(changes > 1000, "{changes}");
        // Reproducible, and different for another SSD.
        let (mut a, mut b) = (v.slow_periods(3, 0).unwrap(), v.slow_periods(3, 1).unwrap());
        assert_eq!(a.slow_ns(horizon), p.slow_ns(horizon));
        assert_ne!(a.slow_ns(horizon), b.slow_ns(horizon));
    }

    #[test]
    fn bad_settings_name_their_option() {
        let bad = [
            (Variation { speed_spread: -0.1, ..Variation::default() }, "--ssd-speed-spread"),
            (Variation { speed_spread: f64::NAN, ..Variation::default() }, "--ssd-speed-spread"),
            (
                Variation { slow_fraction: 1.0, slow_factor: 2.0, slow_period_ms: 1.0, ..Variation::default() },
                "--ssd-slow-fraction",
            ),
            (
                Variation { slow_fraction: 0.1, slow_factor: 0.5, slow_period_ms: 1.0, ..Variation::default() },
                "--ssd-slow-factor",
            ),
            (
                Variation { slow_fraction: 0.1, slow_factor: 2.0, slow_period_ms: 0.0, ..Variation::default() },
                "--ssd-slow-period",
            ),
        ];
        for (v, option) in bad {
            let e = v.validate().unwrap_err().to_string();
            assert!(e.starts_with(option), "{e}");
        }
        Variation::default().validate().unwrap();
        Variation::TAIL_AT_STORE.validate().unwrap();
    }

    #[test]
    fn a_speed_factor_scales_every_time_and_rate() {
        let c = presets::sata850pro();
        let slow = c.with_speed_factor(2.0);
        assert_eq!(slow.t_prog_ns, 2 * c.t_prog_ns);
        assert_eq!(slow.t_read_ns, 2 * c.t_read_ns);
        assert_eq!(slow.t_erase_ns, 2 * c.t_erase_ns);
        assert_eq!(slow.channel_mbps, c.channel_mbps / 2);
        assert_eq!(slow.host_mbps, c.host_mbps / 2);
        assert_eq!(c.with_speed_factor(1.0), c);
    }
}
