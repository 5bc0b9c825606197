//! CPP, the cache partitioning policy (Algorithm 1): the adjustor that re-sizes every
//! application's read cache and write cache at the end of each period.
//!
//! Algorithm 1: "The monitor collects Data_R and Data_W which denotes the data volumes of read
//! requests and write requests respectively each time period. CPP divides the cache space C_0
//! into read cache C_R and write cache C_W based on the data volumes of its read requests and
//! write requests: C_R = C_0·Data_R/(Data_R + Data_W); C_W = C_0·Data_W/(Data_R + Data_W)."
//! §III-A adds that the read cache and the write cache are "further" divided into
//! application-specific read and write caches "according to the applications'
//! characteristics", without saying how. Two readings, both here ([`AppShare`]):
//!
//! - [`AppShare::Volume`] (default): the same rule one level down: application *i*'s read
//!   cache is C_R·Data_R,i / Σ Data_R and its write cache C_W·Data_W,i / Σ Data_W. With C_R
//!   and C_W from the totals this is C_0·Data_R,i / Σ(Data_R + Data_W): every partition is
//!   proportional to its volume. It is also what Algorithm 1 gives if each application's
//!   C_0 is its share of the total volume — both readings of "its" agree.
//! - [`AppShare::Equal`]: each application's C_0 is an equal share of the cache, split by
//!   Algorithm 1 on its own volumes; the cache between applications does not move.
//!
//! What the paper leaves open, as parameters of [`CppConfig`]: a minimum per partition (a
//! reserve, split evenly, so that an application idle for one period keeps a foothold and a
//! write can always be absorbed), the partition before the first period (equal: nothing is
//! known yet), what a period without requests does (keeps the partition: no information),
//! and rounding to whole cache blocks (largest remainder: the sizes always sum to the cache).

use super::monitor::PeriodStats;
use super::ApasError;
use serde::{Deserialize, Serialize};

/// How the whole cache is shared between applications (the paper does not say).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub enum AppShare {
    /// Every read and write partition in proportion to its data volume in the period.
    Volume,
    /// An equal share per application, split into read and write by Algorithm 1.
    Equal,
}

/// The choices the paper leaves open.
#[derive(Clone, Copy, Debug, PartialEq, Serialize, Deserialize)]
pub struct CppConfig {
    pub share: AppShare,
    /// Fraction of the cache reserved as minimum partitions, split evenly over the 2 × apps
    /// partitions; each partition also gets at least one block. 5 %: small enough that
    /// Algorithm 1's split decides 95 % of the cache, large enough that an application
    /// without writes in one period still has a write cache to absorb its next burst instead
    /// of writing through to the shingled disk (the slow path Apas exists to avoid).
    pub reserve_fraction: f64,
}

impl Default for CppConfig {
    fn default() -> Self {
        CppConfig { share: AppShare::Volume, reserve_fraction: 0.05 }
    }
}

/// One application's cache space, in cache blocks.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct AppPartition {
    pub read_blocks: u64,
    pub write_blocks: u64,
}

/// Every application's cache space, indexed by application id.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct Partition {
    pub apps: Vec<AppPartition>,
}

impl Partition {
    /// All partitions together (the cache size, by construction).
    pub fn total(&self) -> u64 {
        self.apps.iter().map(|a| a.read_blocks + a.write_blocks).sum()
    }

    /// C_R: the read caches together.
    pub fn read_total(&self) -> u64 {
        self.apps.iter().map(|a| a.read_blocks).sum()
    }

    /// C_W: the write caches together.
    pub fn write_total(&self) -> u64 {
        self.apps.iter().map(|a| a.write_blocks).sum()
    }
}

/// The adjustor: holds the current partition and re-computes it from each period's numbers.
#[derive(Clone, Debug)]
pub struct Cpp {
    cfg: CppConfig,
    cache_blocks: u64,
    min_blocks: u64,
    partition: Partition,
}

impl Cpp {
    /// A cache of `cache_blocks` for applications `0..apps`, equally partitioned (half read,
    /// half write each) until the first period ends.
    pub fn new(cfg: CppConfig, cache_blocks: u64, apps: usize) -> Result<Self, ApasError> {
        let err = |m: String| Err(ApasError::Cpp(m));
        if apps == 0 {
            return err("at least one application is needed".into());
        }
        if !(0.0..1.0).contains(&cfg.reserve_fraction) {
            return err(format!("reserve_fraction {} must be in [0, 1)", cfg.reserve_fraction));
        }
        let parts = 2 * apps as u64;
        if cache_blocks < parts {
            return err(format!(
                "a cache of {cache_blocks} blocks cannot give {apps} applications a read and a write block each"
            ));
        }
        let min_blocks = ((cache_blocks as f64 * cfg.reserve_fraction / parts as f64) as u64).max(1);
        let spare = cache_blocks - min_blocks * parts;
        let apps_v = apportion(spare, &vec![1; parts as usize])
            .chunks(2)
            .map(|c| AppPartition { read_blocks: min_blocks + c[0], write_blocks: min_blocks + c[1] })
            .collect();
        Ok(Cpp { cfg, cache_blocks, min_blocks, partition: Partition { apps: apps_v } })
    }

    pub fn partition(&self) -> &Partition {
        &self.partition
    }

    /// The smallest any read or write partition gets.
    pub fn min_blocks(&self) -> u64 {
        self.min_blocks
    }

    pub fn cache_blocks(&self) -> u64 {
        self.cache_blocks
    }

    pub fn config(&self) -> CppConfig {
        self.cfg
    }

    /// Algorithm 1 at the end of a period: the new partition from the period's volumes.
    ///
    /// # Panics
    /// If `stats` does not have one entry per application.
    pub fn adjust(&mut self, stats: &PeriodStats) -> &Partition {
        let n = self.partition.apps.len();
        assert_eq!(stats.apps.len(), n, "period stats for {} applications, CPP has {n}", stats.apps.len());
        let spare = self.cache_blocks - self.min_blocks * 2 * n as u64;
        let extra: Vec<u64> = match self.cfg.share {
            AppShare::Volume => {
                let w: Vec<u128> =
                    stats.apps.iter().flat_map(|a| [a.read_bytes.into(), a.write_bytes.into()]).collect();
                if w.iter().all(|&x| x == 0) {
                    return &self.partition; // a period without requests says nothing new
                }
                apportion(spare, &w)
            }
            AppShare::Equal => {
                let per_app = apportion(spare, &vec![1; n]);
                let mut extra = Vec::with_capacity(2 * n);
                for ((a, share), old) in stats.apps.iter().zip(per_app).zip(&self.partition.apps) {
                    let mut w = [u128::from(a.read_bytes), u128::from(a.write_bytes)];
                    if w == [0, 0] {
                        // No requests: keep this application's read/write ratio.
                        w = [(old.read_blocks - self.min_blocks).into(), (old.write_blocks - self.min_blocks).into()];
                    }
                    extra.extend(apportion(share, &w));
                }
                extra
            }
        };
        let m = self.min_blocks;
        self.partition.apps =
            extra.chunks(2).map(|c| AppPartition { read_blocks: m + c[0], write_blocks: m + c[1] }).collect();
        &self.partition
    }
}

/// `total` split in proportion to `weights`, in whole units, by largest remainder (Hamilton):
/// each gets the floor of its quota, the units left go to the largest fractional parts, ties
/// to the lower index. The parts always sum to `total`. All-zero weights count as equal.
pub fn apportion(total: u64, weights: &[u128]) -> Vec<u64> {
    let sum: u128 = weights.iter().sum();
    if sum == 0 {
        return apportion(total, &vec![1; weights.len()]);
    }
    let t = u128::from(total);
    let mut parts: Vec<u64> = weights.iter().map(|&w| (t * w / sum) as u64).collect();
    let given: u64 = parts.iter().sum();
    let mut order: Vec<usize> = (0..weights.len()).collect();
    // Stable sort: among equal remainders the lower index comes first.
    order.sort_by_key(|&i| std::cmp::Reverse(t * weights[i] % sum));
    for &i in order.iter().take((total - given) as usize) {
        parts[i] += 1;
    }
    parts
}

#[cfg(test)]
#[path = "cpp_tests.rs"]
mod tests;
