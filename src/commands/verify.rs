//! `verify` (not available in this build yet).

use std::process::ExitCode;

use crate::cli::VerifyArgs;

pub fn run(_args: VerifyArgs) -> ExitCode {
    super::not_built("verify")
}
