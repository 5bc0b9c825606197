//! What fabric an array runs over (`swan sim --fabric`), and why a run over it is refused.

use serde::{Deserialize, Serialize};
use swan_models::fabric::{preset, FabricConfig, PRESET_NAMES};

/// Why an array cannot run over a fabric; the message names the option at fault.
#[derive(Debug, thiserror::Error)]
#[error("{0}")]
pub struct FabricRunError(pub String);

/// The fabric an array runs over (`swan sim --fabric`).
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct FabricSpec {
    /// A preset of [`swan_models::fabric::preset`]: "4x8", "4x12", "4x16", "4x20".
    pub preset: String,
    /// FIMMs collect garbage (their flash translation aged before the run); otherwise pages
    /// are programmed in place.
    #[serde(default)]
    pub gc: bool,
    /// Scale the FIMMs down: flash blocks per plane, pages per block (the preset's if unset).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub blocks_per_plane: Option<u32>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub pages_per_block: Option<u32>,
    /// Which clusters the members are.
    #[serde(default, skip_serializing_if = "Placement::is_switch_major")]
    pub placement: Placement,
}

/// Which cluster of the fabric each member is.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum Placement {
    /// Member `i` is cluster `i`, switch after switch: a small array sits under one switch
    /// and shares its up-link and queue.
    #[default]
    SwitchMajor,
    /// Members dealt round-robin over the switches: member `i` is cluster `i / switches` of
    /// switch `i % switches`, so an array of up to one member per switch shares no switch.
    Spread,
}

impl Placement {
    pub const NAMES: [&'static str; 2] = ["switch-major", "spread"];

    fn is_switch_major(&self) -> bool {
        *self == Placement::SwitchMajor
    }

    /// Member `member`'s (switch, cluster) in a fabric of `switches` × `per_switch`.
    pub fn cluster_of(self, member: u32, switches: u32, per_switch: u32) -> (u32, u32) {
        match self {
            Placement::SwitchMajor => (member / per_switch, member % per_switch),
            Placement::Spread => (member % switches, member / switches),
        }
    }
}

/// A placement name that is none of [`Placement::NAMES`].
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
#[error("no placement {0:?} (expected one of: switch-major, spread)")]
pub struct UnknownPlacement(pub String);

impl std::str::FromStr for Placement {
    type Err = UnknownPlacement;
    fn from_str(s: &str) -> Result<Self, Self::Err> {
        match s {
            "switch-major" => Ok(Placement::SwitchMajor),
            "spread" => Ok(Placement::Spread),
            _ => Err(UnknownPlacement(s.to_string())),
        }
    }
}

impl FabricSpec {
    /// The fabric this names, validated.
    pub fn config(&self) -> Result<FabricConfig, FabricRunError> {
        let mut f = preset(&self.preset).ok_or_else(|| {
            FabricRunError(format!("--fabric {}: no such fabric (presets: {})", self.preset, PRESET_NAMES.join(", ")))
        })?;
        if let Some(b) = self.blocks_per_plane {
            f.fimm.blocks_per_plane = b;
        }
        if let Some(p) = self.pages_per_block {
            f.fimm.pages_per_block = p;
        }
        f.validate().map_err(|e| FabricRunError(format!("--fabric {}: {e}", self.preset)))?;
        Ok(f)
    }
}
