//! The `mcp-cassette` binary: parse, dispatch, exit with the command's status.

fn main() -> std::process::ExitCode {
    let cli = mcp_cassette::cli::Cli::from_env();
    mcp_cassette::commands::run(cli)
}
