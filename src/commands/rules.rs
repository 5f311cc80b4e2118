//! `rules` (not available in this build yet).

use std::process::ExitCode;

use crate::cli::RulesArgs;

pub fn run(_args: RulesArgs) -> ExitCode {
    super::not_built("rules")
}
