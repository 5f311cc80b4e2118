//! `exec`: a cassette served to a test command (docs/exec.md).

use std::process::ExitCode;

use crate::cli::ExecArgs;

pub fn run(_args: ExecArgs) -> ExitCode {
    ExitCode::from(125)
}
