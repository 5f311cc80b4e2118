//! Recordings no request used (docs/replay.md, "Unused recordings").

use crate::replay::usage;

/// A recorded answer no request of this replay used.
#[derive(Debug, Clone, PartialEq, Eq)]
#[non_exhaustive]
pub struct Unused {
    /// The cassette line of the recorded request.
    pub line: u32,
    pub method: String,
    /// The tool a `tools/call` named.
    pub tool: Option<String>,
}

impl Unused {
    pub(crate) fn from_engine(unused: &usage::Unused) -> Unused {
        Unused {
            line: unused.line,
            method: unused.method.clone(),
            tool: unused.tool.clone(),
        }
    }

    /// `tools/call "echo" (line 7)`, as the replay's summary names it.
    pub fn describe(&self) -> String {
        usage::Unused {
            line: self.line,
            method: self.method.clone(),
            tool: self.tool.clone(),
        }
        .describe()
    }
}
