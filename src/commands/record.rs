//! `record` (not available in this build yet).

use std::process::ExitCode;

use crate::cli::RecordArgs;

pub fn run(_args: RecordArgs) -> ExitCode {
    super::not_built("record")
}
