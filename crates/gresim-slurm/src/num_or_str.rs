//! A value given as a number or as a string: sbatch keeps option values as
//! written (`-N 1-2`, `--gpus a100:8`), and the scenario's JSON accepts
//! either form (`"nodes": 2` or `"nodes": "1-2"`).

use serde::Deserialize;

/// A number or a string (`"nodes": 2` or `"nodes": "1-2"`).
#[derive(Debug, Clone, Deserialize, PartialEq)]
#[serde(untagged)]
pub enum NumOrStr {
    Num(u64),
    Str(String),
}

impl NumOrStr {
    pub fn as_string(&self) -> String {
        match self {
            NumOrStr::Num(n) => n.to_string(),
            NumOrStr::Str(s) => s.clone(),
        }
    }
}
