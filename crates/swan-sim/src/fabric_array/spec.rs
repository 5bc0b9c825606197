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
