//! Names of policies as the commands take them.

use swan_core::victim::VictimPolicy;

/// `--victim`: greedy or cost-benefit.
pub fn parse_victim(s: &str) -> Result<VictimPolicy, String> {
    match s {
        "greedy" => Ok(VictimPolicy::Greedy),
        "cost-benefit" | "costbenefit" | "cb" => Ok(VictimPolicy::CostBenefit),
        _ => Err(format!("unknown victim policy '{s}': expected greedy or cost-benefit")),
    }
}
