//! `replay` (not available in this build yet).

use std::process::ExitCode;

use crate::cli::ReplayArgs;

pub fn run(_args: ReplayArgs) -> ExitCode {
    super::not_built("replay")
}
