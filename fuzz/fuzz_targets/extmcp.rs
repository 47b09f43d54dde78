//! The ExtMcp messages of `mcppin_extmcp` and the framing of a unary gRPC call on arbitrary
//! bytes: no panic; a body that unframes is the framing of the message it yields; each
//! message that reads is written in a form that reads back to the same bytes again.
#![no_main]

use libfuzzer_sys::fuzz_target;
use mcppin_extmcp::{McpRequest, McpRequestResult, McpResponse, McpResponseResult, frame, unframe};
use prost::Message;

/// Reading what was written, then writing it again, gives the same bytes (compared as bytes:
/// a metadata number may be NaN, which no value equals).
fn stable<M: Message + Default>(data: &[u8]) {
    if let Ok(read) = M::decode(data) {
        let written = read.encode_to_vec();
        let again = M::decode(&written[..]).expect("what was written reads back");
        assert_eq!(again.encode_to_vec(), written);
    }
}

fuzz_target!(|data: &[u8]| {
    if let Ok(message) = unframe(data, 1 << 16) {
        assert_eq!(frame(message).expect("a short message frames"), data);
    }
    stable::<McpRequest>(data);
    stable::<McpResponse>(data);
    stable::<McpRequestResult>(data);
    stable::<McpResponseResult>(data);
});
