//! `redact` (not available in this build yet).

use std::process::ExitCode;

use crate::cli::RedactArgs;

pub fn run(_args: RedactArgs) -> ExitCode {
    super::not_built("redact")
}
