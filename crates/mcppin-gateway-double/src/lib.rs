//! A test-only double of an MCP gateway built on the `rmcp` SDK (agentgateway): what such a
//! gateway makes of a server's answers before a policy processor, and the client, see them.
//!
//! Its tests read served items into `rmcp` 3.1.2's typed model (the version agentgateway's
//! main branch pins), write them out again as the gateway does, and check the result against
//! `mcppin_core::projection`: the projection `rmcp-3.1` must keep exactly what that model
//! keeps. Its `gateway` tests play the gateway's side of the `ExtMcp` guardrail hook against
//! the real `mcppin-guard --extmcp-listen` over gRPC, with the real server-everything as the
//! gateway's target (docs/gateway.md, "How it is tested"). Nothing here is shipped.
