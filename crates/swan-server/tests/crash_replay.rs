//! Crashes at any point (issue 5, item 3) and faults at the worst moments (item 4), over the
//! real engine and on-disk format: see `swan_server::crashsim`.

use std::time::Instant;
use swan_server::crashsim::{Config, Rng, Run};

fn env_u64(name: &str, default: u64) -> u64 {
    std::env::var(name).ok().and_then(|v| v.parse().ok()).unwrap_or(default)
}

#[test]
fn explore() {
    let t = Instant::now();
    let ops = env_u64("OPS", 4000);
    let scheme = std::env::var("SCHEME").unwrap_or("swan0".into());
    let run = Run::new(Config::small(scheme.parse().unwrap(), ops, env_u64("SEED", 1)), &[]).unwrap();
    println!("run: {:?} in {:.1}s volume {}", run.stats, t.elapsed().as_secs_f64(), run.volume_blocks());
    println!("live errors: {:?}", run.live_errors);
    let fl = run.flush_points();
    println!("flush points {}", fl.len());
    let t = Instant::now();
    let mut rng = Rng(3);
    let mut pts: Vec<usize> = fl.iter().step_by(fl.len() / 20 + 1).copied().collect();
    for w in fl.windows(2).step_by(fl.len() / 40 + 1) {
        pts.push(w[0] + 1 + rng.below((w[1] - w[0]) as u64) as usize);
    }
    let r = run.replay(&pts, 7).unwrap();
    println!("replay {:?} in {:.1}s", r, t.elapsed().as_secs_f64());
}
