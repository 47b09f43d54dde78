//! Admission of a `tools/list` answer: never panics, and a filtered page rebuilt from the
//! original bytes reads back strictly and holds exactly the admitted tools.
#![no_main]

use libfuzzer_sys::fuzz_target;
use mcppin_core::admission::Gate;
use mcppin_core::lockfile::{LockedItem, LockedServer};
use mcppin_core::parse;

fuzz_target!(|data: &[u8]| {
    let Ok(message) = parse(data) else {
        return;
    };
    let Some(result) = message.get("result") else {
        return;
    };
    let mut server = LockedServer::default();
    let approved = parse(br#"{"name":"search","description":"Search"}"#).expect("fixed item");
    server
        .tools
        .insert("search".into(), LockedItem::approve(approved));
    let mut gate = Gate::new(server);
    let page = gate.tools_page(None, result);
    let Some(rebuilt) = page.rebuild(data) else {
        assert!(page.malformed.is_some(), "only a malformed page has no rebuild");
        return;
    };
    let again = parse(&rebuilt).expect("a rebuilt page reads back strictly");
    let tools = again
        .pointer("/result/tools")
        .and_then(|t| t.as_array())
        .expect("the rebuilt page has its tools array");
    let admitted = page.tools.iter().filter(|t| t.decision.is_allow()).count();
    assert_eq!(tools.len(), admitted, "exactly the admitted tools");
    for tool in tools {
        assert_eq!(tool.get("name").and_then(|n| n.as_str()), Some("search"));
    }
});
