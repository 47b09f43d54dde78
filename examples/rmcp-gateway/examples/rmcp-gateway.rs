//! An `rmcp` client whose server is reached through mcppin's wire engine (docs/embedding.md).
//!
//! ```text
//! rmcp-gateway LOCK SERVER TOOL ARGUMENTS CALLS -- COMMAND [ARG...]
//! ```
//!
//! Starts COMMAND (an MCP server over stdio) and admits its session against the entry SERVER of
//! the lockfile LOCK. The client talks to an in-process pipe; every line on it, both ways,
//! passes through a `Session` before it reaches the other side, and the gateway writes on
//! exactly what the engine says. The client lists the tools, calls TOOL CALLS times with
//! ARGUMENTS (a JSON object), then lists the tools again. Each step prints one line on stdout;
//! the engine's notes go to stderr. Exit code 0 when every step ran, 1 when one failed, 2 for
//! bad arguments.

use std::process::{ExitCode, Stdio};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use mcppin_core::engine::{Config, Session, Stop};
use mcppin_sign::Approval;
use rmcp::ServiceExt;
use rmcp::model::CallToolRequestParams;
use rmcp::service::ServiceError;
use tokio::io::{AsyncBufReadExt, AsyncRead, AsyncWrite, AsyncWriteExt, BufReader};
use tokio::process::{Child, Command};
use tokio::sync::mpsc;

/// What the gateway writes to the client: a line, or the end of the session.
enum ToClient {
    Line(Vec<u8>),
    Close,
}

struct Args {
    lock: String,
    server: String,
    tool: String,
    arguments: serde_json::Map<String, serde_json::Value>,
    calls: usize,
    command: Vec<String>,
}

fn args() -> Result<Args, String> {
    let all: Vec<String> = std::env::args().skip(1).collect();
    let usage = "usage: rmcp-gateway LOCK SERVER TOOL ARGUMENTS CALLS -- COMMAND [ARG...]";
    let [lock, server, tool, arguments, calls, dashes, command @ ..] = all.as_slice() else {
        return Err(usage.to_owned());
    };
    if dashes != "--" || command.is_empty() {
        return Err(usage.to_owned());
    }
    let arguments = match serde_json::from_str(arguments) {
        Ok(serde_json::Value::Object(map)) => map,
        _ => return Err("ARGUMENTS must be a JSON object".to_owned()),
    };
    Ok(Args {
        lock: lock.clone(),
        server: server.clone(),
        tool: tool.clone(),
        arguments,
        calls: calls.parse().map_err(|_| "CALLS must be a number")?,
        command: command.to_vec(),
    })
}

#[tokio::main(flavor = "current_thread")]
async fn main() -> ExitCode {
    let args = match args() {
        Ok(args) => args,
        Err(message) => {
            eprintln!("rmcp-gateway: {message}");
            return ExitCode::from(2);
        }
    };
    match run(args).await {
        Ok(true) => ExitCode::SUCCESS,
        Ok(false) => ExitCode::from(1),
        Err(message) => {
            eprintln!("rmcp-gateway: {message}");
            ExitCode::from(2)
        }
    }
}

/// Runs the session; whether every step succeeded.
async fn run(args: Args) -> Result<bool, String> {
    let bytes = std::fs::read(&args.lock).map_err(|e| format!("{}: {e}", args.lock))?;
    // The approval: the lockfile read strictly, then (for a gateway that signs its lockfiles)
    // the signature beside it against the trusted keys, a serial floor and an age bound. This
    // example trusts no key, so no signature is required.
    let approval = Approval {
        lockfile: &bytes,
        signature: None,
        keys: &[],
        min_serial: None,
        freshness: None,
    };
    let approved = approval
        .check()
        .map_err(|refused| format!("{}: {refused}", args.lock))?
        .server(&args.server)
        .ok_or(format!("{}: no server {}", args.lock, args.server))?;
    // Refuse mode, no events; the refusals the client reads name this gateway.
    let mut config = Config::default();
    config.refuser = "rmcp-gateway";
    let session = Arc::new(Mutex::new(Session::new(approved, config)));

    let mut child = Command::new(&args.command[0])
        .args(&args.command[1..])
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .kill_on_drop(true)
        .spawn()
        .map_err(|e| format!("{}: {e}", args.command[0]))?;
    let (server_in, server_out) = match (child.stdin.take(), child.stdout.take()) {
        (Some(stdin), Some(stdout)) => (stdin, stdout),
        _ => return Err("the server's stdio was not piped".to_owned()),
    };

    // The client's end of the pipe, and the gateway's.
    let (client_io, gateway_io) = tokio::io::duplex(1 << 16);
    let (from_client, client_writer) = tokio::io::split(gateway_io);
    let (to_client, queue) = mpsc::unbounded_channel();
    let start = Instant::now();
    tokio::spawn(write_client(client_writer, queue));
    tokio::spawn(client_to_server(
        from_client,
        server_in,
        to_client.clone(),
        Arc::clone(&session),
        start,
    ));
    tokio::spawn(server_to_client(
        server_out,
        child,
        to_client,
        Arc::clone(&session),
        start,
    ));

    let client = ().serve(client_io).await.map_err(|e| format!("initialize: {e}"))?;
    let mut ok = true;
    match client.list_all_tools().await {
        Ok(tools) => {
            let names: Vec<&str> = tools.iter().map(|t| t.name.as_ref()).collect();
            println!("tools: {}", names.join(", "));
        }
        Err(error) => {
            println!("tools: {}", describe(&error));
            ok = false;
        }
    }
    for _ in 0..args.calls {
        let params =
            CallToolRequestParams::new(args.tool.clone()).with_arguments(args.arguments.clone());
        match client.call_tool(params).await {
            Ok(result) => println!(
                "call {}: {}",
                args.tool,
                if result.is_error == Some(true) {
                    "tool error"
                } else {
                    "ok"
                }
            ),
            Err(error) => {
                println!("call {}: {}", args.tool, describe(&error));
                ok = false;
            }
        }
    }
    match client.list_all_tools().await {
        Ok(tools) => println!("tools again: {} tools", tools.len()),
        Err(error) => {
            println!("tools again: {}", describe(&error));
            ok = false;
        }
    }
    let stopped = session.lock().map_err(|_| "the engine lock")?.is_stopped();
    println!("engine: {}", if stopped { "stopped" } else { "running" });
    if stopped {
        // Nothing passes any more: the client's pipe is closed.
        let params = CallToolRequestParams::new(args.tool.clone());
        match client.call_tool(params).await {
            Ok(_) => println!("after stop: answered"),
            Err(error) => println!("after stop: {}", describe(&error)),
        }
    }
    drop(client);
    Ok(ok)
}

/// One line for an error the client got.
fn describe(error: &ServiceError) -> String {
    match error {
        ServiceError::McpError(data) => format!("error {}: {}", data.code.0, data.message),
        ServiceError::TransportClosed => "transport closed".to_owned(),
        other => format!("failed: {other}"),
    }
}

/// Reads one line (without its newline); `None` at the end of input.
async fn read_line<R: AsyncBufReadExt + Unpin>(reader: &mut R, line: &mut Vec<u8>) -> Option<()> {
    line.clear();
    match reader.read_until(b'\n', line).await {
        Ok(0) | Err(_) => None,
        Ok(_) => {
            if line.last() == Some(&b'\n') {
                line.pop();
            }
            Some(())
        }
    }
}

/// The client's lines: each one through the engine, then on to the server as the engine says.
async fn client_to_server<R: AsyncRead + Unpin, W: AsyncWrite + Unpin>(
    from_client: R,
    mut server_in: W,
    to_client: mpsc::UnboundedSender<ToClient>,
    session: Arc<Mutex<Session>>,
    start: Instant,
) {
    let mut reader = BufReader::new(from_client);
    let mut line = Vec::new();
    while read_line(&mut reader, &mut line).await.is_some() {
        let action = match session.lock() {
            Ok(mut session) => session.client_line(&line, elapsed(start)),
            Err(_) => return,
        };
        for note in &action.notes {
            eprintln!("{note}");
        }
        for answer in action.to_client {
            let _ = to_client.send(ToClient::Line(answer));
        }
        if let Some(bytes) = action.to_server.bytes(&line) {
            let written = async {
                server_in.write_all(bytes).await?;
                server_in.write_all(b"\n").await?;
                server_in.flush().await
            };
            if written.await.is_err() {
                return;
            }
        }
    }
}

/// The server's lines: each one through the engine, then on to the client as the engine says;
/// when the engine stops the session, the server is stopped and the client's pipe closed.
async fn server_to_client<R: AsyncRead + Unpin>(
    server_out: R,
    mut child: Child,
    to_client: mpsc::UnboundedSender<ToClient>,
    session: Arc<Mutex<Session>>,
    start: Instant,
) {
    let mut reader = BufReader::new(server_out);
    let mut line = Vec::new();
    while read_line(&mut reader, &mut line).await.is_some() {
        let action = match session.lock() {
            Ok(mut session) => session.server_line(&line, elapsed(start)),
            Err(_) => break,
        };
        for note in &action.notes {
            eprintln!("{note}");
        }
        if let Some(bytes) = action.to_client.bytes(&line) {
            let _ = to_client.send(ToClient::Line(bytes.to_vec()));
        }
        match action.stop {
            None => {}
            Some(Stop::Drift) => {
                eprintln!("rmcp-gateway: drift refused, session stopped");
                break;
            }
            Some(fatal) => {
                eprintln!("rmcp-gateway: {fatal}");
                break;
            }
        }
    }
    if let Ok(mut session) = session.lock() {
        session.stop();
    }
    let _ = child.kill().await;
    let _ = to_client.send(ToClient::Close);
}

/// Writes the lines for the client in order; closes its pipe at the end of the session.
async fn write_client<W: AsyncWrite + Unpin>(
    mut writer: W,
    mut queue: mpsc::UnboundedReceiver<ToClient>,
) {
    while let Some(item) = queue.recv().await {
        let ToClient::Line(line) = item else { break };
        let written = async {
            writer.write_all(&line).await?;
            writer.write_all(b"\n").await?;
            writer.flush().await
        };
        if written.await.is_err() {
            return;
        }
    }
    let _ = writer.shutdown().await;
}

fn elapsed(start: Instant) -> Duration {
    start.elapsed()
}
