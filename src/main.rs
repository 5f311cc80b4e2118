//! The `mcp-cassette` binary: parse, dispatch, exit with the command's status.

use clap::Parser;

fn main() -> std::process::ExitCode {
    let cli = mcp_cassette::cli::Cli::parse();
    mcp_cassette::commands::run(cli.command)
}
