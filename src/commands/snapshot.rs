//! `snapshot` (not available in this build yet).

use std::process::ExitCode;

use crate::cli::SnapshotArgs;

pub fn run(_args: SnapshotArgs) -> ExitCode {
    super::not_built("snapshot")
}
