//! One HTTP exchange through the guard: the client's request judged and forwarded, the
//! server's answer (a JSON body, or an SSE stream event by event) judged and forwarded.

use std::convert::Infallible;
use std::pin::Pin;
use std::sync::Arc;
use std::task::{Context, Poll};

use bytes::Bytes;
use http_body_util::combinators::BoxBody;
use http_body_util::{BodyExt, Full, LengthLimitError, Limited};
use hyper::body::{Body, Frame, Incoming};
use hyper::{HeaderMap, Method, Request, Response};
use mcppin_core::engine::Forward;
use mcppin_core::http::MediaType;
use mcppin_core::http::{
    self, BodyVerdict, Cause, End, Ending, EventStream, Exchange, HeadVerdict, HttpNote, Owed,
    Post, Reject, RequestVerdict, Route, SseVerdict, Unread,
};
use tokio::sync::mpsc;

use super::session::{Guarded, State, eprintln_guard, say};
use super::upstream::Failure;

/// The body of an answer to the client.
pub(crate) type Out = BoxBody<Bytes, Infallible>;

/// Handles one request from the client.
pub(crate) async fn handle(state: Arc<State>, request: Request<Incoming>) -> Response<Out> {
    let route = http::route(&request, state.upstream.endpoint_path(), state.max_message);
    match route {
        Ok(Route::Post) => post(state, request).await,
        Ok(Route::Get | Route::Delete) => other(state, request).await,
        Ok(Route::Beside) => well_known(&state, request).await,
        Ok(_) => state.reject(Reject::MethodNotAllowed),
        Err(reject) => state.reject(reject),
    }
}

/// The session a request belongs to.
enum Belongs {
    /// An open session, by its `Mcp-Session-Id` (the server's id, which the session is kept
    /// under).
    Open(Arc<Guarded>, String),
    /// No `Mcp-Session-Id`: a session of its own, kept if the server assigns one.
    Fresh(Arc<Guarded>),
}

impl Belongs {
    fn guarded(&self) -> &Arc<Guarded> {
        match self {
            Self::Open(g, _) | Self::Fresh(g) => g,
        }
    }

    fn key(&self) -> Option<&str> {
        match self {
            Self::Open(_, key) => Some(key),
            Self::Fresh(_) => None,
        }
    }
}

/// Finds the session of a request ([`http::belongs`]); a fresh one is made here. `opens`: the
/// request could open a session (a POST).
fn belongs(state: &State, headers: &HeaderMap, opens: bool) -> Result<Belongs, Reject> {
    let found = http::belongs(&state.table(), headers, state, opens);
    match found {
        Ok(http::Belongs::Open { key, session }) => Ok(Belongs::Open(session, key)),
        Ok(_) => Ok(Belongs::Fresh(state.fresh())),
        Err(Reject::Full) => {
            eprintln_guard(&HttpNote::Full.to_string());
            Err(Reject::Full)
        }
        Err(reject) => Err(reject),
    }
}

async fn post(state: Arc<State>, request: Request<Incoming>) -> Response<Out> {
    let (parts, body) = request.into_parts();
    // The head was checked by `http::route`.
    let bytes = match read_body(&state, body).await {
        Ok(bytes) => bytes,
        Err(response) => return response,
    };
    let post = match Post::read(&parts.headers, &bytes) {
        Ok(post) => post,
        Err(reject) => return state.reject(reject),
    };
    let belongs = match belongs(&state, &parts.headers, true) {
        Ok(belongs) => belongs,
        Err(reject) => return state.reject(reject),
    };
    let guarded = Arc::clone(belongs.guarded());
    guarded.touch(&state);
    let judged = {
        let now = state.now();
        post.judge(&mut guarded.session(), now)
    };
    state.notes(&guarded, &judged.notes);
    state.write(&guarded, judged.events);
    let forwarded = match judged.verdict {
        RequestVerdict::Forward(forwarded) => forwarded,
        RequestVerdict::Answer(answer) => return boxed(answer),
        RequestVerdict::Refuse(reject) => return state.reject(reject),
        _ => return state.reject(Reject::NotJsonRpc),
    };
    let body = match &forwarded.body {
        Forward::Replace(replaced) => Bytes::from(replaced.clone()),
        // The client's bytes, not copied.
        _ => bytes.clone(),
    };
    let mut upstream = Request::new(Full::new(body));
    *upstream.method_mut() = Method::POST;
    *upstream.uri_mut() = state.upstream.uri().clone();
    *upstream.headers_mut() = forwarded.headers(&parts.headers, &*state);
    let end = Ending::of(&parts.headers);
    let response = match state.upstream.send(upstream).await {
        Ok(response) => response,
        Err(failure) => {
            let exchange = Exchange::new(Method::POST, belongs.key()).owing(forwarded.owed);
            return unreachable_upstream(&state, &exchange, &guarded, &failure);
        }
    };
    relay(
        state,
        belongs,
        Method::POST,
        response,
        forwarded.answers,
        end,
        forwarded.owed,
    )
    .await
}

/// A GET (the stream of server messages, 2025-03-26 to 2025-11-25) or a DELETE (the end of a
/// session): no body to judge; the answer is judged like any other.
async fn other(state: Arc<State>, request: Request<Incoming>) -> Response<Out> {
    let (parts, _) = request.into_parts();
    let belongs = match belongs(&state, &parts.headers, false) {
        Ok(belongs) => belongs,
        Err(reject) => return state.reject(reject),
    };
    let guarded = Arc::clone(belongs.guarded());
    guarded.touch(&state);
    let mut upstream = Request::new(Full::new(Bytes::new()));
    *upstream.method_mut() = parts.method.clone();
    *upstream.uri_mut() = state.upstream.uri().clone();
    *upstream.headers_mut() = http::toward_server(&parts.headers, &*state);
    let end = Ending::of(&parts.headers);
    let response = match state.upstream.send(upstream).await {
        Ok(response) => response,
        Err(failure) => {
            let exchange = Exchange::new(parts.method.clone(), belongs.key());
            return unreachable_upstream(&state, &exchange, &guarded, &failure);
        }
    };
    relay(
        state,
        belongs,
        parts.method,
        response,
        Vec::new(),
        end,
        Owed::default(),
    )
    .await
}

/// Metadata beside the endpoint (OAuth discovery), passed through unjudged and bounded.
async fn well_known(state: &State, request: Request<Incoming>) -> Response<Out> {
    let (parts, _) = request.into_parts();
    let target = parts.uri.path_and_query().map_or("/", |p| p.as_str());
    let Some(uri) = state.upstream.beside(target) else {
        return state.reject(Reject::DotSegment);
    };
    let mut upstream = Request::new(Full::new(Bytes::new()));
    *upstream.uri_mut() = uri;
    *upstream.headers_mut() = http::toward_beside(&parts.headers);
    let response = match state.upstream.send(upstream).await {
        Ok(response) => response,
        Err(_) => {
            return state.reject(Reject::Unreachable);
        }
    };
    let (head, body) = response.into_parts();
    let media = match http::beside_answer(&head) {
        Ok(media) => media,
        Err(reject) => return state.reject(reject),
    };
    match collect(state, body).await {
        Ok(bytes) => http::relayed_beside(&head, media.as_ref(), Full::new(bytes).boxed()),
        Err(_) => state.reject(Reject::BesideUnread),
    }
}

/// Passes the server's answer on, judged: a JSON body whole, an SSE stream event by event.
/// `answers` are the guard's own answers to parts of a batch, sent along.
async fn relay(
    state: Arc<State>,
    belongs: Belongs,
    method: Method,
    response: Response<Incoming>,
    answers: Vec<Vec<u8>>,
    end: Ending,
    asked: Owed,
) -> Response<Out> {
    let (head, body) = response.into_parts();
    let guarded = Arc::clone(belongs.guarded());
    let exchange = Exchange::new(method, belongs.key()).owing(asked);
    let verdict = exchange.head(&head, |key| state.keep(key, &guarded));
    let (media, passing) = match verdict {
        HeadVerdict::Refuse {
            reject,
            end: then,
            note,
        } => {
            if let Some(note) = note {
                state.say(&guarded, &note);
            }
            settle(&state, &guarded, exchange.owed());
            apply(&state, &guarded, &end, &then);
            return state.reject(reject);
        }
        HeadVerdict::Empty { end: then } => {
            settle(&state, &guarded, exchange.owed());
            apply(&state, &guarded, &end, &then);
            return http::relayed(&head, None, &*state, Full::new(Bytes::new()).boxed());
        }
        HeadVerdict::Stream { media, passing } => {
            let passing = passing.then(|| Passing::new(&state, &guarded));
            let owed = exchange.owed().clone();
            return stream(
                state, guarded, head, media, body, answers, end, passing, owed,
            );
        }
        HeadVerdict::Body { media, passing } => (media, passing),
        _ => return state.reject(Reject::AnswerRefused),
    };
    // A session no server id keeps (a stateless request) ends with its exchange: its calls
    // without an answer are logged then.
    let _passing = passing.then(|| Passing::new(&state, &guarded));
    let (bytes, mut verdict) = match collect(&state, body).await {
        Ok(bytes) => {
            let verdict = exchange.body(head.status, media.as_ref(), &bytes, &answers);
            (bytes, verdict)
        }
        Err(why) => (Bytes::new(), exchange.unread(why)),
    };
    // The engine's action holds the strict readings of the answer: freed once the answer is
    // built, outside the session's lock.
    let mut _action = None;
    if let BodyVerdict::Judge = verdict {
        let action = {
            let now = state.now();
            guarded.session().server_line(&bytes, now)
        };
        state.share(&guarded);
        state.notes(&guarded, &action.notes);
        state.write(&guarded, action.events.clone());
        verdict = exchange.judged(head.status, &action, &bytes, media.as_ref(), &answers);
        _action = Some(action);
    }
    // The answer was read whole: what it did not answer, nothing will.
    settle(&state, &guarded, exchange.owed());
    match verdict {
        BodyVerdict::Pass {
            body,
            media,
            end: then,
            note,
        } => {
            if let Some(note) = note {
                state.say(&guarded, &note);
            }
            apply(&state, &guarded, &end, &then);
            // The server's bytes (not copied), or what replaces them.
            let body = body.into_body(bytes, state.refuser());
            http::relayed(&head, media.as_ref(), &*state, Full::new(body).boxed())
        }
        BodyVerdict::Answer(answer) => boxed(answer),
        BodyVerdict::Refuse {
            reject,
            end: then,
            note,
        } => {
            if let Some(note) = note {
                state.say(&guarded, &note);
            }
            apply(&state, &guarded, &end, &then);
            state.reject(reject)
        }
        _ => state.reject(Reject::AnswerRefused),
    }
}

/// The exchange is over without a stream: the session forgets the requests it owed that are
/// still outstanding ([`Owed::forget`]).
fn settle(state: &State, guarded: &Guarded, owed: &Owed) {
    if owed.is_empty() {
        return;
    }
    let events = owed.forget(&mut guarded.session(), state.now());
    state.write(guarded, events);
}

/// Passes an SSE stream on, each event judged before it is written ([`EventStream`]); the
/// guard's own answers (parts of a batch) go first.
#[expect(
    clippy::too_many_arguments,
    reason = "one exchange's parts, handed over once to the task that streams it"
)]
fn stream(
    state: Arc<State>,
    guarded: Arc<Guarded>,
    head: hyper::http::response::Parts,
    media: MediaType,
    mut body: Incoming,
    answers: Vec<Vec<u8>>,
    end: Ending,
    passing: Option<Passing>,
    asked: Owed,
) -> Response<Out> {
    // One event waits for the client beside the one being written: a client that reads
    // slowly holds the server's stream back, never a queue of events of up to
    // `--max-message` each in the guard's memory.
    let (tx, rx) = mpsc::channel::<Bytes>(1);
    let response = http::relayed(&head, Some(&media), &*state, Stream(rx).boxed());
    let mut stopping = state.stopping.clone();
    let open = guarded.stream();
    tokio::spawn(async move {
        let _open = open;
        let _passing = passing;
        for event in EventStream::prelude(&answers) {
            if tx.send(Bytes::from(event)).await.is_err() {
                return;
            }
        }
        let mut events = EventStream::new(state.max_message, asked, state.refuser());
        loop {
            let frame = tokio::select! {
                frame = body.frame() => frame,
                _ = stopping.changed() => return,
                () = tx.closed() => return,
                // Ended by another exchange (drift refused on a POST while this GET stream
                // waits): this stream ends too.
                () = guarded.ended() => {
                    let tail = events.ended_elsewhere();
                    if !tail.is_empty() {
                        let _ = tx.send(Bytes::from(tail)).await;
                    }
                    return;
                }
            };
            let chunk = match frame {
                None | Some(Err(_)) => {
                    // The server ended the stream, or it broke off: what it left unanswered
                    // is answered here.
                    let broken = frame.is_some();
                    let verdict = events.server_ended(&guarded.session(), broken);
                    match verdict {
                        Some(verdict) => {
                            write_event(&state, &guarded, &end, &tx, verdict).await;
                        }
                        None if broken => state.say(&guarded, &HttpNote::StreamBroke),
                        None => {}
                    }
                    return;
                }
                Some(Ok(frame)) => match frame.into_data() {
                    Ok(chunk) => chunk,
                    Err(_) => continue,
                },
            };
            if let Err(verdict) = events.feed(&chunk) {
                write_event(&state, &guarded, &end, &tx, verdict).await;
                return;
            }
            guarded.touch(&state);
            loop {
                let judged = {
                    let now = state.now();
                    events.next(&mut guarded.session(), now)
                };
                let Some(judged) = judged else {
                    break;
                };
                state.share(&guarded);
                state.notes(&guarded, &judged.notes);
                state.write(&guarded, judged.events);
                if !write_event(&state, &guarded, &end, &tx, judged.verdict).await {
                    return;
                }
            }
        }
    });
    response
}

/// Does what the verdict on an event says: writes it and, at the end of the stream, ends the
/// session as the verdict says. Whether the stream goes on.
async fn write_event(
    state: &Arc<State>,
    guarded: &Guarded,
    ending: &Ending,
    tx: &mpsc::Sender<Bytes>,
    verdict: SseVerdict,
) -> bool {
    match verdict {
        SseVerdict::Write(bytes) => tx.send(Bytes::from(bytes)).await.is_ok(),
        SseVerdict::End { bytes, end, note } => {
            if let Some(note) = note {
                state.say(guarded, &note);
            }
            apply(state, guarded, ending, &end);
            if !bytes.is_empty() {
                let _ = tx.send(Bytes::from(bytes)).await;
            }
            false
        }
        _ => false,
    }
}

/// A session that ends with its exchange (no session id keeps it): ended when dropped.
struct Passing {
    state: Arc<State>,
    guarded: Arc<Guarded>,
}

impl Passing {
    fn new(state: &Arc<State>, guarded: &Arc<Guarded>) -> Self {
        Self {
            state: Arc::clone(state),
            guarded: Arc::clone(guarded),
        }
    }
}

impl Drop for Passing {
    fn drop(&mut self) {
        if !self.guarded.session().is_stopped() {
            self.state.end(&self.guarded);
        }
    }
}

/// Does what a verdict says becomes of the session.
fn apply(state: &Arc<State>, guarded: &Guarded, ending: &Ending, end: &End) {
    match end {
        End::Here => {
            state.end(guarded);
        }
        End::AtServer(cause) => end_session(state, guarded, ending, *cause),
        End::AtServerOnly(key) => delete_at_server(state, key, ending, guarded.number),
        _ => {}
    }
}

/// Ends a session (later requests with its id get 404) and, when the server assigned it an
/// id, ends it at the server too with a DELETE carrying the client's `Authorization`.
fn end_session(state: &Arc<State>, guarded: &Guarded, end: &Ending, why: Cause) {
    let Some(key) = state.end(guarded) else {
        return;
    };
    state.say(guarded, &HttpNote::Ended(why));
    delete_at_server(state, &key, end, guarded.number);
}

/// Ends the session `key` at the server: a DELETE carrying the client's `Authorization`, sent
/// without waiting for its answer.
fn delete_at_server(state: &Arc<State>, key: &str, end: &Ending, number: u64) {
    let request =
        http::end_request(state.upstream.uri(), key, end).map(|()| Full::new(Bytes::new()));
    let state = Arc::clone(state);
    tokio::spawn(async move {
        match state.upstream.send(request).await {
            Ok(response) => {
                // Read to its end, so the connection can be reused.
                let _ = collect(&state, response.into_body()).await;
            }
            Err(_) => say(number, &HttpNote::DeleteFailed),
        }
    });
}

/// The server could not be reached or did not answer in time: 502 or 504, and the session
/// goes on (the next request may reach it).
fn unreachable_upstream(
    state: &Arc<State>,
    exchange: &Exchange,
    guarded: &Guarded,
    failure: &Failure,
) -> Response<Out> {
    let verdict = match failure {
        Failure::Timeout => exchange.unreachable(None),
        Failure::Broken(why) => exchange.unreachable(Some(why)),
    };
    // No answer came: none will.
    settle(state, guarded, exchange.owed());
    let HeadVerdict::Refuse { reject, end, note } = verdict else {
        return state.reject(Reject::Unreachable);
    };
    // Ended first: a stateless request's call is logged without an answer.
    apply(state, guarded, &Ending::default(), &end);
    if let Some(note) = note {
        state.say(guarded, &note);
    }
    state.reject(reject)
}

/// Reads the client's body: at most `--max-message` bytes (413 past it, whatever
/// `Content-Length` says), within the timeout (408).
async fn read_body(state: &State, body: Incoming) -> Result<Bytes, Response<Out>> {
    collect(state, body)
        .await
        .map_err(|why| state.reject(http::unread(why, state.max_message)))
}

/// Reads a body: at most `--max-message` bytes, within the timeout.
async fn collect(state: &State, body: Incoming) -> Result<Bytes, Unread> {
    let read = tokio::time::timeout(
        state.timeout,
        Limited::new(body, state.max_message).collect(),
    )
    .await;
    match read {
        Ok(Ok(collected)) => Ok(collected.to_bytes()),
        Ok(Err(err)) if err.is::<LengthLimitError>() => Err(Unread::TooLong),
        Ok(Err(_)) => Err(Unread::Broken),
        Err(_) => Err(Unread::Slow),
    }
}

/// An answer the core wrote, with its body for hyper.
fn boxed(response: Response<Vec<u8>>) -> Response<Out> {
    response.map(|body| Full::new(Bytes::from(body)).boxed())
}

impl State {
    /// The answer that refuses an exchange ([`Reject::response`]), naming the guard.
    fn reject(&self, reject: Reject) -> Response<Out> {
        boxed(reject.response(self.refuser()))
    }
}

/// A streamed body fed by a task.
struct Stream(mpsc::Receiver<Bytes>);

impl Body for Stream {
    type Data = Bytes;
    type Error = Infallible;

    fn poll_frame(
        mut self: Pin<&mut Self>,
        cx: &mut Context<'_>,
    ) -> Poll<Option<Result<Frame<Bytes>, Infallible>>> {
        self.0
            .poll_recv(cx)
            .map(|chunk| chunk.map(|c| Ok(Frame::data(c))))
    }
}
