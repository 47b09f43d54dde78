//! The messages on the wire: the bytes the protocol's field numbers give, read back as they
//! were written, the fields a processor leaves out skipped, and the framing of a unary call.

use mcppin_extmcp::{
    AuthorizationError, Code, FrameError, McpRequest, McpRequestResult, McpResponse,
    McpResponseResult, Pass, Verdict, frame, metadata_str, string_struct, unframe,
};
use prost::Message;

fn session(value: &str) -> mcppin_extmcp::Struct {
    string_struct([("session", value.to_owned())])
}

#[test]
fn a_request_is_the_bytes_its_field_numbers_give() {
    let request = McpRequest {
        service_names: vec!["a".into()],
        method: "m".into(),
        metadata_context: Some(session("x")),
        mcp_request: Some(b"{}".to_vec()),
    };
    // metadata (3): a Struct whose fields (1) hold one map entry, key (1) and Value (2), the
    // Value's string_value being field 3.
    let value = [0x1a, 0x01, b'x']; // Value.string_value (3)
    let mut entry = vec![0x0a, 0x07];
    entry.extend_from_slice(b"session");
    entry.extend_from_slice(&[0x12, u8::try_from(value.len()).unwrap()]);
    entry.extend_from_slice(&value);
    let mut metadata = vec![0x0a, u8::try_from(entry.len()).unwrap()];
    metadata.extend_from_slice(&entry);
    let mut expected = vec![0x0a, 0x01, b'a', 0x12, 0x01, b'm', 0x1a];
    expected.push(u8::try_from(metadata.len()).unwrap());
    expected.extend_from_slice(&metadata);
    expected.extend_from_slice(&[0x22, 0x02, b'{', b'}']);
    assert_eq!(request.encode_to_vec(), expected);
    assert_eq!(McpRequest::decode(&expected[..]).unwrap(), request);
}

#[test]
fn a_request_without_params_has_no_field_4_and_reads_back_as_none() {
    let request = McpRequest {
        service_names: vec!["a".into(), "b".into()],
        method: "tools/list".into(),
        metadata_context: None,
        mcp_request: None,
    };
    let bytes = request.encode_to_vec();
    assert!(!bytes.contains(&0x22));
    assert_eq!(McpRequest::decode(&bytes[..]).unwrap(), request);
    // Present but empty is not absent.
    let empty = McpRequest {
        mcp_request: Some(Vec::new()),
        ..request
    };
    assert_eq!(
        McpRequest::decode(&empty.encode_to_vec()[..])
            .unwrap()
            .mcp_request,
        Some(Vec::new())
    );
}

#[test]
fn the_incoming_headers_are_skipped_never_kept() {
    let mut bytes = McpRequest {
        service_names: vec!["a".into()],
        method: "tools/call".into(),
        metadata_context: None,
        mcp_request: Some(br#"{"name":"echo"}"#.to_vec()),
    }
    .encode_to_vec();
    // Field 5, McpHeader {key: "mcp-session-id", value: "s3cret"}.
    let mut header = vec![0x0a, 14];
    header.extend_from_slice(b"mcp-session-id");
    header.extend_from_slice(&[0x12, 6]);
    header.extend_from_slice(b"s3cret");
    bytes.push(0x2a);
    bytes.push(u8::try_from(header.len()).unwrap());
    bytes.extend_from_slice(&header);
    let read = McpRequest::decode(&bytes[..]).unwrap();
    assert_eq!(
        read.mcp_request.as_deref(),
        Some(&br#"{"name":"echo"}"#[..])
    );
    assert!(!format!("{read:?}").contains("s3cret"));
    assert!(!read.encode_to_vec().windows(6).any(|w| w == b"s3cret"));
}

#[test]
fn every_message_reads_back_as_written() {
    let response = McpResponse {
        service_names: vec!["everything".into()],
        method: "prompts/get".into(),
        metadata_context: Some(string_struct([
            ("session", "s".to_owned()),
            ("mcppin", "sha256:00".to_owned()),
        ])),
        mcp_response: br#"{"messages":[]}"#.to_vec(),
    };
    assert_eq!(
        McpResponse::decode(&response.encode_to_vec()[..]).unwrap(),
        response
    );
    for result in [
        McpRequestResult::pass(Some(session("h"))),
        McpRequestResult::deny("refused"),
        McpRequestResult {
            result: Some(Verdict::Mutated(b"{}".to_vec())),
            metadata: None,
        },
        McpRequestResult {
            result: None,
            metadata: None,
        },
    ] {
        assert_eq!(
            McpRequestResult::decode(&result.encode_to_vec()[..]).unwrap(),
            result
        );
    }
    for result in [
        McpResponseResult::pass(),
        McpResponseResult::mutated(br#"{"tools":[]}"#.to_vec()),
        McpResponseResult::deny("refused"),
        McpResponseResult {
            result: Some(Verdict::Error(AuthorizationError {
                code: Code::Invalid as i32,
                reason: String::new(),
                mcp_error: Some(b"{}".to_vec()),
            })),
        },
    ] {
        assert_eq!(
            McpResponseResult::decode(&result.encode_to_vec()[..]).unwrap(),
            result
        );
    }
}

#[test]
fn verdicts_are_the_bytes_their_field_numbers_give() {
    // pass: field 1, an empty message.
    assert_eq!(McpResponseResult::pass().encode_to_vec(), [0x0a, 0x00]);
    // mutated: field 2, the bytes.
    assert_eq!(
        McpResponseResult::mutated(b"{}".to_vec()).encode_to_vec(),
        [0x12, 0x02, b'{', b'}']
    );
    // error: field 3 holding code 1 (field 1, varint) and the reason (field 2).
    assert_eq!(
        McpResponseResult::deny("no").encode_to_vec(),
        [0x1a, 0x06, 0x08, 0x01, 0x12, 0x02, b'n', b'o']
    );
    // The request phase's metadata is field 5.
    let bytes = McpRequestResult::pass(Some(session("x"))).encode_to_vec();
    assert_eq!(bytes[..3], [0x0a, 0x00, 0x2a]);
    assert_eq!(Pass::default().encode_to_vec(), b"");
}

#[test]
fn an_unknown_code_reads_as_unknown_and_a_bad_string_is_refused() {
    let bytes = [0x1a, 0x02, 0x08, 0x09];
    let Some(Verdict::Error(error)) = McpResponseResult::decode(&bytes[..]).unwrap().result else {
        panic!("an error")
    };
    assert_eq!(error.code(), Code::Unknown);
    // method (field 2) holding a byte that is not UTF-8.
    assert!(McpRequest::decode(&[0x12, 0x01, 0xff][..]).is_err());
    // A length beyond the input.
    assert!(McpResponse::decode(&[0x22, 0x7f, b'{'][..]).is_err());
}

#[test]
fn metadata_strings_are_found_by_key() {
    let metadata = session("abc");
    assert_eq!(metadata_str(Some(&metadata), "session"), Some("abc"));
    assert_eq!(metadata_str(Some(&metadata), "mcppin"), None);
    assert_eq!(metadata_str(None, "session"), None);
    let number = mcppin_extmcp::Struct {
        fields: [(
            "port".to_owned(),
            mcppin_extmcp::Value {
                kind: Some(mcppin_extmcp::Kind::NumberValue(1.0)),
            },
        )]
        .into(),
    };
    assert_eq!(metadata_str(Some(&number), "port"), None, "no string");
}

#[test]
fn a_unary_body_is_one_uncompressed_message_within_the_bound() {
    let body = frame(b"abc").unwrap();
    assert_eq!(body, [0, 0, 0, 0, 3, b'a', b'b', b'c']);
    assert_eq!(unframe(&body, 3), Ok(&b"abc"[..]));
    assert_eq!(unframe(&frame(b"").unwrap(), 0), Ok(&b""[..]));
    assert_eq!(
        unframe(&body, 2),
        Err(FrameError::TooLarge {
            length: 3,
            limit: 2
        })
    );
    assert_eq!(
        unframe(&body[..6], 10),
        Err(FrameError::Short { got: 6, needed: 8 })
    );
    assert_eq!(
        unframe(&body[..4], 10),
        Err(FrameError::Short { got: 4, needed: 5 })
    );
    let mut compressed = body.clone();
    compressed[0] = 1;
    assert_eq!(unframe(&compressed, 10), Err(FrameError::Compressed));
    let mut two = body.clone();
    two.extend_from_slice(&body);
    assert_eq!(unframe(&two, 10), Err(FrameError::Trailing { extra: 8 }));
    assert_eq!(
        unframe(&[0, 0xff, 0xff, 0xff, 0xff], 1 << 20)
            .unwrap_err()
            .to_string(),
        "gRPC message of 4294967295 bytes, above the 1048576-byte bound"
    );
}
