//! Sessions of every era against the fixture server (in-process, over pipes) and against
//! scripted transports for the answers no honest server gives.

use std::collections::VecDeque;
use std::io::BufReader;
use std::num::NonZeroU32;
use std::thread;
use std::time::Duration;

use mcppin_client::{
    Channel, ClientInfo, DEFAULT_MAX_LINE, Error, MAX_PAGES, Protocol, Received, Revision, Session,
    SessionOptions, Transport, capture,
};
use mcppin_fixture::{Era, Mode, Script, serve};
use serde_json::{Value, json};

fn options(protocol: Protocol) -> SessionOptions {
    SessionOptions {
        protocol,
        timeout: Duration::from_secs(20),
        start_timeout: Duration::from_secs(20),
        client: ClientInfo {
            name: "mcppin-test".to_owned(),
            version: "0.0.0".to_owned(),
        },
        capabilities: mcppin_core::Object::new(),
    }
}

fn fixture(modes: &[Mode], era: Era) -> Channel {
    let script = Script {
        modes: modes.iter().copied().collect(),
        era,
        ..Script::default()
    };
    let (client_read, server_write) = std::io::pipe().unwrap();
    let (server_read, client_write) = std::io::pipe().unwrap();
    thread::spawn(move || {
        serve(
            &script,
            BufReader::new(server_read),
            server_write,
            std::io::sink(),
        )
    });
    Channel::new(client_read, client_write, DEFAULT_MAX_LINE)
}

fn names(tools: &[mcppin_core::Value]) -> Vec<&str> {
    tools
        .iter()
        .map(|t| t.get("name").and_then(mcppin_core::Value::as_str).unwrap())
        .collect()
}

const HONEST: [&str; 4] = [
    "read_text_file",
    "list_directory",
    "search_files",
    "write_note",
];

fn open(modes: &[Mode], era: Era, protocol: Protocol) -> Session<Channel> {
    Session::open(fixture(modes, era), &options(protocol)).unwrap()
}

#[test]
fn speaks_every_legacy_revision() {
    for revision in [
        Revision::V2024_11_05,
        Revision::V2025_03_26,
        Revision::V2025_06_18,
        Revision::V2025_11_25,
    ] {
        let mut session = open(&[], Era::Legacy, Protocol::Exact(revision));
        assert_eq!(session.revision(), revision);
        assert_eq!(session.reported_name(), Some("mcppin-fixture"));
        assert!(session.instructions().is_some());
        assert_eq!(names(&session.list_tools().unwrap()), HONEST);
    }
}

#[test]
fn speaks_2026_07_28_without_a_handshake() {
    let mut session = open(&[], Era::Modern, Protocol::Exact(Revision::V2026_07_28));
    assert_eq!(session.revision(), Revision::V2026_07_28);
    assert_eq!(session.reported_name(), Some("mcppin-fixture"));
    assert_eq!(names(&session.list_tools().unwrap()), HONEST);
}

#[test]
fn auto_stays_modern_with_a_dual_era_server() {
    let session = open(&[], Era::Dual, Protocol::Auto);
    assert_eq!(session.revision(), Revision::V2026_07_28);
}

#[test]
fn auto_falls_back_to_initialize_with_a_legacy_server() {
    let mut session = open(&[], Era::Legacy, Protocol::Auto);
    assert_eq!(session.revision(), Revision::V2025_11_25);
    assert_eq!(names(&session.list_tools().unwrap()), HONEST);
}

#[test]
fn a_modern_request_to_a_legacy_only_server_fails() {
    let protocol = Protocol::Exact(Revision::V2026_07_28);
    let err = Session::open(fixture(&[], Era::Legacy), &options(protocol)).unwrap_err();
    assert!(
        matches!(err, Error::ServerError { ref method, code: -32601, .. } if method == "server/discover"),
        "{err:?}"
    );
}

#[test]
fn a_legacy_request_to_a_modern_only_server_fails() {
    let err = Session::open(fixture(&[], Era::Modern), &options(Protocol::default())).unwrap_err();
    assert!(
        matches!(err, Error::ServerError { ref method, code: -32601, .. } if method == "initialize"),
        "{err:?}"
    );
}

#[test]
fn refuses_a_revision_this_build_does_not_know() {
    let err = "2099-01-01".parse::<Protocol>().unwrap_err();
    assert!(matches!(err, Error::UnknownRevision { ref revision } if revision == "2099-01-01"));
    assert_eq!("auto".parse::<Protocol>().unwrap(), Protocol::Auto);
    assert_eq!(
        "2025-06-18".parse::<Protocol>().unwrap(),
        Protocol::Exact(Revision::V2025_06_18)
    );
}

#[test]
fn follows_cursors_including_the_empty_one() {
    let mut session = open(&[Mode::Paginated], Era::Dual, Protocol::default());
    assert_eq!(names(&session.list_tools().unwrap()), HONEST);
}

#[test]
fn refuses_a_tool_name_served_twice_across_pages() {
    let mut session = open(&[Mode::Duplicate], Era::Dual, Protocol::default());
    let err = session.list_tools().unwrap_err();
    assert!(matches!(err, Error::DuplicateTool { ref name } if name == "read_text_file"));
}

#[test]
fn refuses_a_malformed_answer() {
    let mut session = open(&[Mode::Malformed], Era::Dual, Protocol::default());
    let err = session.list_tools().unwrap_err();
    assert!(
        matches!(err, Error::Malformed { ref method, .. } if method == "tools/list"),
        "{err:?}"
    );
}

#[test]
fn times_out_on_a_silent_server() {
    let mut opts = options(Protocol::default());
    opts.timeout = Duration::from_secs(1);
    let mut session = Session::open(fixture(&[Mode::Silent], Era::Dual), &opts).unwrap();
    let err = session.list_tools().unwrap_err();
    assert!(
        matches!(err, Error::Timeout { ref method, .. } if method == "tools/list"),
        "{err:?}"
    );
}

#[test]
fn a_crash_mid_list_is_an_error() {
    let mut session = open(&[Mode::Crash], Era::Dual, Protocol::default());
    let err = session.list_tools().unwrap_err();
    assert!(matches!(err, Error::Closed { .. }), "{err:?}");
}

#[test]
fn readings_that_disagree_are_not_complete() {
    let two = NonZeroU32::new(2).unwrap();
    let mut session = open(&[Mode::Shifting], Era::Dual, Protocol::default());
    let captured = capture(&mut session, two).unwrap();
    assert!(!captured.agreed);
    assert_eq!(captured.passes, 2);

    let mut session = open(&[Mode::Paginated], Era::Dual, Protocol::default());
    let captured = capture(&mut session, two).unwrap();
    assert!(captured.agreed);
    assert_eq!(names(&captured.tools), HONEST);
}

#[test]
fn a_single_reading_cannot_see_the_shift() {
    let one = NonZeroU32::new(1).unwrap();
    let mut session = open(&[Mode::Shifting], Era::Dual, Protocol::default());
    let captured = capture(&mut session, one).unwrap();
    assert!(captured.agreed);
    assert_eq!(captured.tools.len(), 3);
}

#[test]
fn an_optional_list_the_server_does_not_implement_is_captured_as_not_served() {
    use mcppin_core::surface::ItemKind;
    let two = NonZeroU32::new(2).unwrap();
    for era in [Era::Legacy, Era::Modern] {
        let mut session = open(&[Mode::NoOptionalLists], era, Protocol::Auto);
        let captured = capture(&mut session, two).unwrap();
        assert!(captured.agreed, "{era:?}");
        assert_eq!(names(&captured.tools), HONEST, "{era:?}");
        assert!(captured.prompts.is_empty() && captured.resource_templates.is_empty());
        assert_eq!(
            captured.not_served.iter().copied().collect::<Vec<_>>(),
            [ItemKind::Prompt, ItemKind::ResourceTemplate],
            "{era:?}"
        );
    }
    // A list the server does serve is captured, and is not named.
    let mut session = open(
        &[Mode::NoOptionalLists, Mode::Templates],
        Era::Dual,
        Protocol::default(),
    );
    let captured = capture(&mut session, two).unwrap();
    assert_eq!(captured.resource_templates.len(), 1);
    assert_eq!(
        captured.not_served.iter().copied().collect::<Vec<_>>(),
        [ItemKind::Prompt]
    );
}

/// A server declaring tools, prompts and resources, answering `prompts/list` as `prompts`
/// says (given the cursor) and `resources/templates/list` with an empty list.
fn optional_lists(
    tools: Value,
    prompts: impl Fn(Option<&str>) -> Value,
) -> impl FnMut(&Value) -> Vec<Value> {
    move |req: &Value| {
        let id = req["id"].clone();
        let cursor = req.pointer("/params/cursor").and_then(Value::as_str);
        let answer = match req["method"].as_str().unwrap() {
            "initialize" => json!({"result": {
                "protocolVersion": "2025-11-25",
                "capabilities": {"tools": {}, "prompts": {}, "resources": {}},
                "serverInfo": {"name": "s", "version": "1"}}}),
            "tools/list" => tools.clone(),
            "prompts/list" => prompts(cursor),
            "resources/templates/list" => json!({"result": {"resourceTemplates": []}}),
            _ => return vec![],
        };
        let mut answer = answer;
        answer["jsonrpc"] = json!("2.0");
        answer["id"] = id;
        vec![answer]
    }
}

#[test]
fn only_method_not_found_on_the_first_page_of_an_optional_list_is_not_served() {
    let one = NonZeroU32::new(1).unwrap();
    let tools = json!({"result": {"tools": [{"name": "t", "inputSchema": {}}]}});
    let not_found = json!({"error": {"code": -32601, "message": "Method not found"}});
    // Not implemented: captured as not served.
    let server = optional_lists(tools.clone(), |_| not_found.clone());
    let mut session = Session::open(Scripted::new(server), &options(Protocol::default())).unwrap();
    let captured = capture(&mut session, one).unwrap();
    assert_eq!(captured.not_served.len(), 1);
    assert_eq!(names(&captured.tools), ["t"]);
    // Any other error of an optional list fails the capture.
    let server = optional_lists(
        tools.clone(),
        |_| json!({"error": {"code": -32603, "message": "Internal error"}}),
    );
    let mut session = Session::open(Scripted::new(server), &options(Protocol::default())).unwrap();
    let err = capture(&mut session, one).unwrap_err();
    assert!(
        matches!(err, Error::ServerError { code: -32603, ref method, .. } if method == "prompts/list"),
        "{err:?}"
    );
    // Method not found on a later page: the list was served, then broke.
    let server = optional_lists(tools.clone(), |cursor| match cursor {
        None => json!({"result": {"prompts": [{"name": "p"}], "nextCursor": "2"}}),
        Some(_) => json!({"error": {"code": -32601, "message": "Method not found"}}),
    });
    let mut session = Session::open(Scripted::new(server), &options(Protocol::default())).unwrap();
    let err = capture(&mut session, one).unwrap_err();
    assert!(
        matches!(err, Error::ServerError { code: -32601, .. }),
        "{err:?}"
    );
    // The list the surface depends on: tools/list failing fails the capture, -32601 included.
    let server = optional_lists(not_found.clone(), |_| json!({"result": {"prompts": []}}));
    let mut session = Session::open(Scripted::new(server), &options(Protocol::default())).unwrap();
    let err = capture(&mut session, one).unwrap_err();
    assert!(
        matches!(err, Error::ServerError { code: -32601, ref method, .. } if method == "tools/list"),
        "{err:?}"
    );
}

/// A transport that answers each request with what a closure returns, recording requests.
struct Scripted<F> {
    respond: F,
    pending: VecDeque<Vec<u8>>,
    requests: Vec<Value>,
    /// The wait of each `receive` in whole seconds (rounded: it is what is left of a
    /// deadline), with the method last sent.
    waits: Vec<(String, u64)>,
}

impl<F> std::fmt::Debug for Scripted<F> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("Scripted")
    }
}

impl<F: FnMut(&Value) -> Vec<Value>> Scripted<F> {
    fn new(respond: F) -> Self {
        Self {
            respond,
            pending: VecDeque::new(),
            requests: Vec::new(),
            waits: Vec::new(),
        }
    }
}

impl<F: FnMut(&Value) -> Vec<Value>> Transport for Scripted<F> {
    fn send(&mut self, message: &[u8]) -> Result<(), Error> {
        let request: Value = serde_json::from_slice(message).unwrap();
        for answer in (self.respond)(&request) {
            self.pending.push_back(answer.to_string().into_bytes());
        }
        self.requests.push(request);
        Ok(())
    }

    fn receive(&mut self, timeout: Duration) -> Result<Received, Error> {
        let method = self.requests.last().and_then(|r| r["method"].as_str());
        self.waits.push((
            method.unwrap_or_default().to_owned(),
            (timeout + Duration::from_millis(500)).as_secs(),
        ));
        Ok(self
            .pending
            .pop_front()
            .map_or(Received::TimedOut, Received::Line))
    }
}

/// Options whose two timeouts differ, to tell which one a wait used.
fn start_and_request_timeouts(protocol: Protocol) -> SessionOptions {
    SessionOptions {
        timeout: Duration::from_secs(3),
        start_timeout: Duration::from_secs(300),
        ..options(protocol)
    }
}

#[test]
fn the_opening_answer_waits_the_start_timeout_and_later_ones_the_timeout() {
    // A first start that is still installing its package gets the longer wait.
    let server = legacy_server(|_| json!({"tools": []}));
    let opts = start_and_request_timeouts(Protocol::default());
    let mut session = Session::open(Scripted::new(server), &opts).unwrap();
    session.list_tools().unwrap();
    let waits = &session.transport_mut().waits;
    assert_eq!(
        waits,
        &[("initialize".to_owned(), 300), ("tools/list".to_owned(), 3),]
    );
}

#[test]
fn the_auto_probe_waits_the_timeout_and_the_fallback_the_start_timeout() {
    // A legacy server that never answers the probe costs --timeout, not --start-timeout.
    let server = legacy_server(|_| json!({"tools": []}));
    let opts = start_and_request_timeouts(Protocol::Auto);
    let mut session = Session::open(Scripted::new(server), &opts).unwrap();
    assert_eq!(
        session.transport_mut().waits,
        [
            ("server/discover".to_owned(), 3),
            ("initialize".to_owned(), 300),
        ]
    );
}

#[test]
fn a_silent_start_times_out_after_the_start_timeout() {
    let silent = |_: &Value| Vec::new();
    let opts = start_and_request_timeouts(Protocol::default());
    let err = Session::open(Scripted::new(silent), &opts).unwrap_err();
    assert!(
        matches!(err, Error::Timeout { ref method, after }
            if method == "initialize" && after == Duration::from_secs(300)),
        "{err:?}"
    );
}

fn legacy_server(list: impl Fn(Option<&str>) -> Value) -> impl FnMut(&Value) -> Vec<Value> {
    move |req: &Value| {
        let id = req["id"].clone();
        match req["method"].as_str().unwrap() {
            "initialize" => vec![json!({"jsonrpc": "2.0", "id": id, "result": {
                "protocolVersion": "2025-11-25", "capabilities": {"tools": {}},
                "serverInfo": {"name": "s", "version": "1"}}})],
            "tools/list" => {
                let cursor = req.pointer("/params/cursor").and_then(Value::as_str);
                vec![json!({"jsonrpc": "2.0", "id": id, "result": list(cursor)})]
            }
            _ => vec![],
        }
    }
}

#[test]
fn refuses_a_repeated_cursor() {
    let server = legacy_server(|cursor| {
        json!({"tools": [{"name": format!("t{}", cursor.unwrap_or("0")), "inputSchema": {}}],
               "nextCursor": "again"})
    });
    let mut session = Session::open(Scripted::new(server), &options(Protocol::default())).unwrap();
    let err = session.list_tools().unwrap_err();
    assert!(
        matches!(err, Error::RepeatedCursor { ref cursor, .. } if cursor == "again"),
        "{err:?}"
    );
}

#[test]
fn refuses_a_list_longer_than_the_page_limit() {
    let server = legacy_server(|cursor| {
        let n: usize = cursor.map_or(0, |c| c.parse().unwrap());
        json!({"tools": [], "nextCursor": (n + 1).to_string()})
    });
    let mut session = Session::open(Scripted::new(server), &options(Protocol::default())).unwrap();
    let err = session.list_tools().unwrap_err();
    assert!(
        matches!(
            err,
            Error::TooManyPages {
                limit: MAX_PAGES,
                ..
            }
        ),
        "{err:?}"
    );
}

#[test]
fn accepts_a_list_of_exactly_the_page_limit() {
    let server = legacy_server(|cursor| {
        let n: usize = cursor.map_or(1, |c| c.parse().unwrap());
        let mut page = json!({"tools": []});
        if n < MAX_PAGES {
            page["nextCursor"] = json!((n + 1).to_string());
        }
        page
    });
    let mut session = Session::open(Scripted::new(server), &options(Protocol::default())).unwrap();
    assert!(session.list_tools().unwrap().is_empty());
}

#[test]
fn refuses_an_initialize_answer_in_an_unknown_revision() {
    let server = |req: &Value| {
        vec![json!({"jsonrpc": "2.0", "id": req["id"], "result": {
            "protocolVersion": "2030-01-01", "capabilities": {},
            "serverInfo": {"name": "s", "version": "1"}}})]
    };
    let err = Session::open(Scripted::new(server), &options(Protocol::default())).unwrap_err();
    assert!(matches!(err, Error::RevisionRefused { ref offered } if offered == &["2030-01-01"]));
}

#[test]
fn accepts_another_legacy_revision_the_server_negotiates() {
    let server = |req: &Value| {
        vec![json!({"jsonrpc": "2.0", "id": req["id"], "result": {
            "protocolVersion": "2025-03-26", "capabilities": {},
            "serverInfo": {"name": "s", "version": "1"}}})]
    };
    let session = Session::open(Scripted::new(server), &options(Protocol::default())).unwrap();
    assert_eq!(session.revision(), Revision::V2025_03_26);
    assert!(!session.offers_tools());
}

#[test]
fn every_modern_request_carries_the_protocol_meta() {
    let server = |req: &Value| {
        let id = req["id"].clone();
        let meta =
            json!({"io.modelcontextprotocol/serverInfo": {"name": "modern", "version": "1"}});
        match req["method"].as_str().unwrap() {
            "server/discover" => vec![json!({"jsonrpc": "2.0", "id": id, "result": {
                "resultType": "complete", "supportedVersions": ["2026-07-28"],
                "capabilities": {"tools": {}}, "_meta": meta, "ttlMs": 0,
                "cacheScope": "private"}})],
            "tools/list" => vec![json!({"jsonrpc": "2.0", "id": id, "result": {
                "resultType": "complete", "tools": [], "_meta": meta, "ttlMs": 0,
                "cacheScope": "private"}})],
            _ => vec![],
        }
    };
    let mut session = Session::open(
        Scripted::new(server),
        &options(Protocol::Exact(Revision::V2026_07_28)),
    )
    .unwrap();
    assert_eq!(session.reported_name(), Some("modern"));
    session.list_tools().unwrap();
    let transport = session.into_transport();
    let methods: Vec<_> = transport
        .requests
        .iter()
        .map(|r| r["method"].as_str().unwrap())
        .collect();
    assert_eq!(methods, ["server/discover", "tools/list"]);
    for request in &transport.requests {
        let meta = &request["params"]["_meta"];
        assert_eq!(
            meta["io.modelcontextprotocol/protocolVersion"],
            "2026-07-28"
        );
        assert_eq!(
            meta["io.modelcontextprotocol/clientInfo"]["name"],
            "mcppin-test"
        );
        assert!(meta["io.modelcontextprotocol/clientCapabilities"].is_object());
    }
}

#[test]
fn refuses_a_modern_answer_that_is_not_complete() {
    let server = |req: &Value| {
        let id = req["id"].clone();
        match req["method"].as_str().unwrap() {
            "server/discover" => vec![json!({"jsonrpc": "2.0", "id": id, "result": {
                "resultType": "complete", "supportedVersions": ["2026-07-28"],
                "capabilities": {"tools": {}}}})],
            _ => vec![json!({"jsonrpc": "2.0", "id": id, "result": {
                "resultType": "input_required", "inputRequests": {}}})],
        }
    };
    let mut session = Session::open(
        Scripted::new(server),
        &options(Protocol::Exact(Revision::V2026_07_28)),
    )
    .unwrap();
    assert!(matches!(
        session.list_tools().unwrap_err(),
        Error::Protocol { .. }
    ));
}

#[test]
fn a_modern_server_without_2026_07_28_is_refused_in_auto() {
    let server = |req: &Value| {
        vec![json!({"jsonrpc": "2.0", "id": req["id"], "error": {
            "code": -32022, "message": "Unsupported protocol version",
            "data": {"supported": ["2027-01-01"], "requested": "2026-07-28"}}})]
    };
    let err = Session::open(Scripted::new(server), &options(Protocol::Auto)).unwrap_err();
    assert!(matches!(err, Error::RevisionRefused { ref offered } if offered == &["2027-01-01"]));
}

/// A transport that plays fixed lines, whatever is sent.
struct Raw(VecDeque<&'static str>);

impl Transport for Raw {
    fn send(&mut self, _: &[u8]) -> Result<(), Error> {
        Ok(())
    }

    fn receive(&mut self, _: Duration) -> Result<Received, Error> {
        Ok(self
            .0
            .pop_front()
            .map_or(Received::TimedOut, |l| Received::Line(l.into())))
    }
}

#[test]
fn refuses_an_answer_with_duplicate_members() {
    // Routing reads relaxed; the answer itself is then read under every rule of docs/json.md.
    let raw = Raw(VecDeque::from([
        r#"{"jsonrpc":"2.0","id":1,"result":{"protocolVersion":"2025-11-25","capabilities":{"tools":{}}}}"#,
        r#"{"jsonrpc":"2.0","id":2,"result":{"tools":[{"name":"a","name":"b","inputSchema":{}}]}}"#,
    ]));
    let mut session = Session::open(raw, &options(Protocol::default())).unwrap();
    let err = session.list_tools().unwrap_err();
    assert!(
        matches!(err, Error::Malformed { ref source, .. } if source.rule() == "duplicate-member"),
        "{err:?}"
    );
}

#[test]
fn keeps_tool_objects_exactly_as_served() {
    let raw = Raw(VecDeque::from([
        r#"{"jsonrpc":"2.0","id":1,"result":{"protocolVersion":"2025-11-25","capabilities":{"tools":{}}}}"#,
        r#"{"jsonrpc":"2.0","id":2,"result":{"tools":[{"name":"a","x-vendor":{"n":1.50},"inputSchema":{}}]}}"#,
    ]));
    let mut session = Session::open(raw, &options(Protocol::default())).unwrap();
    let tools = session.list_tools().unwrap();
    let number = tools[0]
        .pointer("/x-vendor/n")
        .unwrap()
        .as_number()
        .unwrap();
    assert_eq!(number.literal(), "1.50");
}

#[test]
fn answers_server_pings_and_ignores_notifications_while_waiting() {
    let server = |req: &Value| {
        let id = req["id"].clone();
        match req["method"].as_str() {
            Some("initialize") => vec![
                json!({"jsonrpc": "2.0", "method": "notifications/message",
                       "params": {"level": "info", "data": "hi"}}),
                json!({"jsonrpc": "2.0", "id": "srv-1", "method": "ping"}),
                json!({"jsonrpc": "2.0", "id": id, "result": {
                    "protocolVersion": "2025-11-25", "capabilities": {}}}),
            ],
            _ => vec![],
        }
    };
    let session = Session::open(Scripted::new(server), &options(Protocol::default())).unwrap();
    let transport = session.into_transport();
    let ping_reply = transport
        .requests
        .iter()
        .find(|r| r["id"] == "srv-1")
        .expect("the ping was answered");
    assert_eq!(ping_reply["result"], json!({}));
}

#[test]
fn refuses_a_response_to_an_id_never_asked() {
    let server = |_req: &Value| vec![json!({"jsonrpc": "2.0", "id": 99, "result": {}})];
    let err = Session::open(Scripted::new(server), &options(Protocol::default())).unwrap_err();
    assert!(matches!(err, Error::UnexpectedResponse { ref id, .. } if id == "99"));
}

#[test]
fn auto_falls_back_when_the_probe_gets_no_answer_and_drops_its_late_answer() {
    let server = |req: &Value| match req["method"].as_str().unwrap() {
        // A legacy server that stays silent on a method it does not know...
        "server/discover" => vec![],
        // ...and answers the probe late, just before the initialize answer.
        "initialize" => vec![
            json!({"jsonrpc": "2.0", "id": 1, "error": {"code": -32601, "message": "late"}}),
            json!({"jsonrpc": "2.0", "id": req["id"], "result": {
                "protocolVersion": "2025-06-18", "capabilities": {"tools": {}},
                "serverInfo": {"name": "old", "version": "1"}}}),
        ],
        _ => vec![],
    };
    let session = Session::open(Scripted::new(server), &options(Protocol::Auto)).unwrap();
    assert_eq!(session.revision(), Revision::V2025_06_18);
    assert_eq!(session.reported_name(), Some("old"));
    let transport = session.into_transport();
    let methods: Vec<_> = transport
        .requests
        .iter()
        .filter_map(|r| r["method"].as_str())
        .collect();
    assert_eq!(
        methods,
        ["server/discover", "initialize", "notifications/initialized"]
    );
}
