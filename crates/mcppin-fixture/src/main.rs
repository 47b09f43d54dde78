//! `mcppin-fixture`: the scriptable MCP test server (see the crate README).

use std::process::ExitCode;

fn main() -> ExitCode {
    mcppin_fixture::main()
}
