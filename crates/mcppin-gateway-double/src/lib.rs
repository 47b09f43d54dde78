//! A test-only double of an MCP gateway built on the `rmcp` SDK (agentgateway): what such a
//! gateway makes of a server's answers before a policy processor, and the client, see them.
//!
//! Its tests read served items into `rmcp` 3.1.2's typed model (the version agentgateway's
//! main branch pins), write them out again as the gateway does, and check the result against
//! `mcppin_core::projection`: the projection `rmcp-3.1` must keep exactly what that model
//! keeps. Nothing here is shipped.
