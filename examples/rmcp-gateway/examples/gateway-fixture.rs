//! The fixture MCP server, built beside this package's tests (see
//! `mcppin_fixture::locate`).

fn main() -> std::process::ExitCode {
    mcppin_fixture::main()
}
