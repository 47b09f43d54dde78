//! An MCP client built on the `rmcp` SDK with mcppin's wire engine
//! (`mcppin_core::engine::Session`) between it and its server: see the `rmcp-gateway` example
//! and docs/embedding.md. The package ships nothing; its test runs the example against the
//! fixture server and a reference server.
