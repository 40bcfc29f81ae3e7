//! # Component identity
//!
//! A component is identified by the blake3 hash of its exact bytes, written
//! `blake3:<64 lowercase hex digits>`. The hash is the component's name in the
//! registry, in pins, grants, the compilation cache and logs: two components
//! with the same hash are the same component.
//!
//! ```
//! use toolhost_core::ComponentHash;
//!
//! let hash = ComponentHash::of(b"\0asm");
//! let text = hash.to_string();
//! assert!(text.starts_with("blake3:"));
//! assert_eq!(text.parse::<ComponentHash>().unwrap(), hash);
//! ```

use std::fmt;
use std::str::FromStr;

use serde::{Deserialize, Deserializer, Serialize, Serializer};

use crate::error::{Error, ErrorCode};

/// The blake3 hash of a component's bytes: its identity.
#[derive(Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct ComponentHash([u8; 32]);

impl ComponentHash {
    /// The prefix of the textual form.
    pub const PREFIX: &'static str = "blake3:";

    /// Hashes `bytes`.
    pub fn of(bytes: &[u8]) -> Self {
        ComponentHash(*blake3::hash(bytes).as_bytes())
    }

    /// The raw 32 bytes of the hash.
    pub fn as_bytes(&self) -> &[u8; 32] {
        &self.0
    }

    /// The 64 hex digits, without the `blake3:` prefix (used in file names).
    pub fn hex(&self) -> String {
        blake3::Hash::from_bytes(self.0).to_hex().to_string()
    }

    /// The first 12 hex digits, for compact display in logs and toolset names.
    pub fn short(&self) -> String {
        self.hex()[..12].to_string()
    }
}

impl fmt::Display for ComponentHash {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        // Hex digits made on the stack: a hash shown per call (spans, the
        // console) costs the one string it is written into.
        f.write_str(Self::PREFIX)?;
        f.write_str(&blake3::Hash::from_bytes(self.0).to_hex())
    }
}

impl fmt::Debug for ComponentHash {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        fmt::Display::fmt(self, f)
    }
}

impl FromStr for ComponentHash {
    type Err = Error;

    /// Parses `blake3:<64 hex digits>`; upper-case hex digits are accepted.
    fn from_str(s: &str) -> Result<Self, Error> {
        let bad = || {
            Error::new(
                ErrorCode::Config,
                format!("`{s}` is not a component hash: expected `blake3:` followed by 64 hex digits"),
            )
        };
        let hex = s.strip_prefix(Self::PREFIX).ok_or_else(bad)?;
        if hex.len() != 64 {
            return Err(bad());
        }
        let hash = blake3::Hash::from_hex(hex).map_err(|_| bad())?;
        Ok(ComponentHash(*hash.as_bytes()))
    }
}

impl Serialize for ComponentHash {
    fn serialize<S: Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        serializer.collect_str(self)
    }
}

impl<'de> Deserialize<'de> for ComponentHash {
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        let text = String::deserialize(deserializer)?;
        text.parse().map_err(serde::de::Error::custom)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn round_trips_and_rejects_malformed_text() {
        let hash = ComponentHash::of(b"hello");
        assert_eq!(hash.to_string().len(), 7 + 64);
        assert_eq!(hash.to_string().parse::<ComponentHash>().unwrap(), hash);
        for bad in [
            "",
            "blake3:",
            "sha256:00",
            "blake3:zz",
            &format!("blake3:{}0", hash.hex()),
        ] {
            assert_eq!(
                bad.parse::<ComponentHash>().unwrap_err().code(),
                ErrorCode::Config
            );
        }
    }
}
