//! `check` (not available in this build yet).

use std::process::ExitCode;

use crate::cli::CheckArgs;

pub fn run(_args: CheckArgs) -> ExitCode {
    super::not_built("check")
}
