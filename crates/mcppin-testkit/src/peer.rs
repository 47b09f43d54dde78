//! A small HTTP/1.1 server for the tests of remote capture: one request per connection
//! (`Connection: close`), each handled by a closure that writes the whole response itself, so
//! a test can split an event stream, hang, redirect or echo headers. Every request is logged.

use std::io::{BufRead, BufReader, Read, Write};
use std::net::{SocketAddr, TcpListener, TcpStream};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex};
use std::thread;
use std::time::Duration;

/// One request as received.
#[derive(Clone, Debug)]
pub struct Request {
    /// The request line's method.
    pub method: String,
    /// The request line's target (path and query).
    pub target: String,
    /// The headers, in order, as received.
    pub headers: Vec<(String, String)>,
    /// The body (by `Content-Length`).
    pub body: Vec<u8>,
}

impl Request {
    /// A header's value (names compared without case).
    pub fn header(&self, name: &str) -> Option<&str> {
        self.headers
            .iter()
            .find(|(n, _)| n.eq_ignore_ascii_case(name))
            .map(|(_, v)| v.as_str())
    }

    /// The body as JSON (`Null` when it is not).
    pub fn json(&self) -> serde_json::Value {
        serde_json::from_slice(&self.body).unwrap_or(serde_json::Value::Null)
    }

    /// The JSON-RPC method of the body.
    pub fn rpc_method(&self) -> String {
        self.json()["method"]
            .as_str()
            .unwrap_or_default()
            .to_owned()
    }

    /// Every header and the body as text, for "no secret was sent there" checks.
    pub fn text(&self) -> String {
        let mut out = format!("{} {}\n", self.method, self.target);
        for (n, v) in &self.headers {
            out.push_str(&format!("{n}: {v}\n"));
        }
        out.push_str(&String::from_utf8_lossy(&self.body));
        out
    }
}

type Handler = dyn Fn(&Request, &mut TcpStream) + Send + Sync;

/// A running test server; it stops accepting when dropped.
pub struct Peer {
    /// Where it listens (127.0.0.1, a free port).
    pub addr: SocketAddr,
    log: Arc<Mutex<Vec<Request>>>,
    stop: Arc<AtomicBool>,
}

impl Peer {
    /// Listens on a free port of 127.0.0.1 and answers each request, on a thread of its own,
    /// with `handler`, which writes the whole response.
    pub fn start(handler: impl Fn(&Request, &mut TcpStream) + Send + Sync + 'static) -> Self {
        let listener = TcpListener::bind("127.0.0.1:0").expect("bind");
        let addr = listener.local_addr().expect("addr");
        let log = Arc::new(Mutex::new(Vec::new()));
        let stop = Arc::new(AtomicBool::new(false));
        let handler: Arc<Handler> = Arc::new(handler);
        let (l, s) = (Arc::clone(&log), Arc::clone(&stop));
        thread::spawn(move || {
            for stream in listener.incoming() {
                if s.load(Ordering::SeqCst) {
                    break;
                }
                let Ok(mut stream) = stream else { continue };
                let (l, h) = (Arc::clone(&l), Arc::clone(&handler));
                thread::spawn(move || {
                    let _ = stream.set_read_timeout(Some(Duration::from_secs(30)));
                    let Some(request) = read_request(&mut stream) else {
                        return;
                    };
                    l.lock().unwrap().push(request.clone());
                    h(&request, &mut stream);
                    let _ = stream.flush();
                });
            }
        });
        Self { addr, log, stop }
    }

    /// `http://ADDR` followed by `path`.
    pub fn url(&self, path: &str) -> String {
        format!("http://{}{path}", self.addr)
    }

    /// The requests so far.
    pub fn requests(&self) -> Vec<Request> {
        self.log.lock().unwrap().clone()
    }
}

impl Drop for Peer {
    fn drop(&mut self) {
        self.stop.store(true, Ordering::SeqCst);
        // Wake the accept loop.
        let _ = TcpStream::connect(self.addr);
    }
}

fn read_request(stream: &mut TcpStream) -> Option<Request> {
    let mut reader = BufReader::new(stream.try_clone().ok()?);
    let mut line = String::new();
    reader.read_line(&mut line).ok()?;
    let mut parts = line.split_whitespace();
    let method = parts.next()?.to_owned();
    let target = parts.next()?.to_owned();
    let mut headers = Vec::new();
    loop {
        let mut line = String::new();
        reader.read_line(&mut line).ok()?;
        let line = line.trim_end();
        if line.is_empty() {
            break;
        }
        let (name, value) = line.split_once(':')?;
        headers.push((name.trim().to_owned(), value.trim().to_owned()));
    }
    let length = headers
        .iter()
        .find(|(n, _)| n.eq_ignore_ascii_case("content-length"))
        .and_then(|(_, v)| v.parse::<usize>().ok())
        .unwrap_or(0);
    let mut body = vec![0; length];
    reader.read_exact(&mut body).ok()?;
    Some(Request {
        method,
        target,
        headers,
        body,
    })
}

/// Writes a complete response with a body.
pub fn respond(stream: &mut TcpStream, status: &str, headers: &[(&str, &str)], body: &[u8]) {
    let mut head = format!(
        "HTTP/1.1 {status}\r\nConnection: close\r\nContent-Length: {}\r\n",
        body.len()
    );
    for (n, v) in headers {
        head.push_str(&format!("{n}: {v}\r\n"));
    }
    head.push_str("\r\n");
    let _ = stream.write_all(head.as_bytes());
    let _ = stream.write_all(body);
}

/// Writes a JSON body with status 200.
pub fn respond_json(stream: &mut TcpStream, headers: &[(&str, &str)], body: &serde_json::Value) {
    let mut all = vec![("Content-Type", "application/json")];
    all.extend_from_slice(headers);
    respond(stream, "200 OK", &all, body.to_string().as_bytes());
}

/// Starts an event-stream response (no length: the stream ends when the connection closes).
pub fn start_events(stream: &mut TcpStream, headers: &[(&str, &str)]) {
    let mut head =
        "HTTP/1.1 200 OK\r\nConnection: close\r\nContent-Type: text/event-stream\r\n".to_owned();
    for (n, v) in headers {
        head.push_str(&format!("{n}: {v}\r\n"));
    }
    head.push_str("\r\n");
    let _ = stream.write_all(head.as_bytes());
    let _ = stream.flush();
}

/// Writes bytes in pieces of `size`, flushing each, so the client reads them apart.
pub fn write_split(stream: &mut TcpStream, bytes: &[u8], size: usize) {
    for piece in bytes.chunks(size.max(1)) {
        let _ = stream.write_all(piece);
        let _ = stream.flush();
        thread::sleep(Duration::from_millis(2));
    }
}

/// The answer of a small MCP server to a request body: `initialize`, `tools/list` (two
/// tools), `ping`; `None` for notifications and responses.
pub fn mcp_answer(request: &Request) -> Option<serde_json::Value> {
    let body = request.json();
    let id = body.get("id")?.clone();
    body.get("method")?;
    let result = match body["method"].as_str().unwrap_or_default() {
        "initialize" => serde_json::json!({
            "protocolVersion": body["params"]["protocolVersion"],
            "capabilities": {"tools": {}},
            "serverInfo": {"name": "peer", "version": "1"}
        }),
        "server/discover" => serde_json::json!({
            "supportedVersions": ["2026-07-28"],
            "capabilities": {"tools": {}},
            "_meta": {"io.modelcontextprotocol/serverInfo": {"name": "modern", "version": "1"}}
        }),
        "tools/list" => serde_json::json!({
            "tools": [
                {"name": "echo", "description": "Echoes.", "inputSchema": {"type": "object"}},
                {"name": "add", "description": "Adds.", "inputSchema": {"type": "object"}}
            ]
        }),
        _ => serde_json::json!({}),
    };
    Some(serde_json::json!({"jsonrpc": "2.0", "id": id, "result": result}))
}

/// A Streamable HTTP server answering in JSON: a session id on `initialize`, 202 for
/// notifications, 405 for GET, 200 for DELETE.
pub fn json_server(request: &Request, stream: &mut TcpStream) {
    match request.method.as_str() {
        "GET" => respond(stream, "405 Method Not Allowed", &[], b""),
        "DELETE" => respond(stream, "200 OK", &[], b""),
        _ => match mcp_answer(request) {
            Some(answer) => {
                let session = [("Mcp-Session-Id", "sess-1")];
                let headers: &[(&str, &str)] = if request.rpc_method() == "initialize" {
                    &session
                } else {
                    &[]
                };
                respond_json(stream, headers, &answer);
            }
            None => respond(stream, "202 Accepted", &[], b""),
        },
    }
}

/// A free port on 127.0.0.1 (bound and released; the server binds it next).
pub fn free_port() -> u16 {
    TcpListener::bind("127.0.0.1:0")
        .and_then(|l| l.local_addr())
        .map(|a| a.port())
        .expect("a free port")
}

/// Waits until something accepts on `port`, for at most 30 seconds.
pub fn wait_for_port(port: u16) {
    for _ in 0..300 {
        if TcpStream::connect(("127.0.0.1", port)).is_ok() {
            return;
        }
        thread::sleep(Duration::from_millis(100));
    }
    panic!("nothing accepts on port {port} after 30 s");
}
