//! A request waiting for its answer keeps what the answer is judged by, never its params
//! (docs/guard.md): a client that leaves requests with long params unanswered (a
//! gateway never shows the guard an answer that is an error) costs a record each, not a copy
//! of every params.
//!
//! The global allocator of this test binary counts every heap allocation, so this file holds a
//! single test: a second one running beside it would be counted too.

use std::time::Duration;

use mcppin_core::engine::{ApprovedServer, Config, Forward, Session};
use mcppin_core::lockfile::LockedServer;

#[global_allocator]
static ALLOC: dhat::Alloc = dhat::Alloc;

/// The requests left unanswered.
const REQUESTS: usize = 64;

/// The length of each request's params.
const PARAMS: usize = 256 * 1024;

/// What one outstanding request may cost, its share of the table's growth included.
const PER_REQUEST: usize = 1024;

#[test]
fn requests_outstanding_keep_a_record_each_not_their_params() {
    let _profiler = dhat::Profiler::builder().testing().build();
    let mut session = Session::new(
        ApprovedServer::unsigned(LockedServer::default()),
        Config::default(),
    );
    let filler = "x".repeat(PARAMS);
    let requests: Vec<Vec<u8>> = (0..REQUESTS)
        .map(|id| {
            let method = ["prompts/get", "prompts/list", "tools/list"][id % 3];
            format!(
                r#"{{"jsonrpc":"2.0","id":{id},"method":"{method}","params":{{"name":"review","cursor":"{filler}","arguments":{{"a":"{filler}"}}}}}}"#
            )
            .into_bytes()
        })
        .collect();
    let before = dhat::HeapStats::get().curr_bytes;
    for request in &requests {
        let action = session.client_line(request, Duration::ZERO);
        assert_eq!(action.to_server, Forward::Original);
    }
    let kept = dhat::HeapStats::get().curr_bytes - before;
    assert_eq!(session.outstanding(), REQUESTS);
    assert!(
        kept <= REQUESTS * PER_REQUEST,
        "{REQUESTS} requests with {PARAMS}-byte params keep {kept} bytes"
    );
}
