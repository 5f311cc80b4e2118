//! The two lifecycles of MCP: `legacy` (≤ 2025-11-25: `initialize` handshake) and `modern`
//! (2026-07-28: no handshake, `server/discover`, per-request `_meta`).

use std::fmt;
use std::str::FromStr;

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Era {
    Legacy,
    Modern,
}

impl Era {
    pub fn as_str(self) -> &'static str {
        match self {
            Era::Legacy => "legacy",
            Era::Modern => "modern",
        }
    }

    /// The era a session is in, judged from the method of the request whose answer was the first
    /// successful one: an `initialize` handshake means legacy, anything else means the client
    /// never needed one (modern). This is the HTTP recorder's passive rule, used on stdio too.
    pub fn from_first_success(method: &str) -> Era {
        if method == "initialize" {
            Era::Legacy
        } else {
            Era::Modern
        }
    }
}

impl fmt::Display for Era {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

impl FromStr for Era {
    type Err = ();
    fn from_str(s: &str) -> Result<Self, Self::Err> {
        match s {
            "legacy" => Ok(Era::Legacy),
            "modern" => Ok(Era::Modern),
            _ => Err(()),
        }
    }
}
