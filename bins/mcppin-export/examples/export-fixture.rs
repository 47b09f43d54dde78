//! The fixture MCP server, built as an example so this package's tests can run it as a real
//! process (see crates/mcppin-fixture/README.md).

fn main() -> std::process::ExitCode {
    mcppin_fixture::main()
}
