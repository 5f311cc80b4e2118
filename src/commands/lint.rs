//! `lint` (not available in this build yet).

use std::process::ExitCode;

use crate::cli::LintArgs;

pub fn run(_args: LintArgs) -> ExitCode {
    super::not_built("lint")
}
