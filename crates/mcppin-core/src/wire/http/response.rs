//! The verdict on the head of the server's answer, the answers a proxy writes to the client
//! in the server's place, and the guard's answers joined with the server's batch.

use std::borrow::Cow;

use ::http::header::{self, HeaderValue};
use ::http::{HeaderMap, Method, Response, StatusCode, response};

use super::{
    Cause, EVENT_STREAM, End, HttpNote, JSON, MAX_HEADERS, MediaType, NotKept, Owed, Plain, Reject,
    SESSION_ID, SessionIds, Unread, check_headers, header_text, response_head_size, toward_client,
};
use crate::engine::{Forward, ServerAction, Stop, join_parts};
use crate::{Excerpt, escape_non_ascii};

/// The guard's own answers (to elements of a batch) and the server's answer as one batch: the
/// guard's first, then the server's elements (one message, or the elements of its array; an
/// empty array or no body adds none). The bytes of each are kept as they are.
pub fn splice(answers: &[Vec<u8>], forwarded: &[u8]) -> Vec<u8> {
    let trimmed = forwarded.trim_ascii();
    let inner = match trimmed
        .strip_prefix(b"[")
        .and_then(|t| t.strip_suffix(b"]"))
    {
        Some(inner) => inner.trim_ascii(),
        None => trimmed,
    };
    let mut parts: Vec<Cow<'_, [u8]>> = answers
        .iter()
        .map(|answer| Cow::Borrowed(answer.as_slice()))
        .collect();
    if !inner.is_empty() {
        parts.push(Cow::Borrowed(inner));
    }
    join_parts(&parts)
}

/// The answer to a request the guard answered whole, in the server's place: `202 Accepted`
/// without a body when there is nothing to answer (notifications), one message when a single
/// message was asked, and an array when a batch was (JSON-RPC 2.0 section 6: even of one).
pub fn answered(answers: Vec<Vec<u8>>, batch: bool) -> Response<Vec<u8>> {
    let body = match answers.len() {
        0 => {
            let mut response = Response::new(Vec::new());
            *response.status_mut() = StatusCode::ACCEPTED;
            return response;
        }
        1 if !batch => answers.into_iter().next().unwrap_or_default(),
        _ => splice(&answers, b""),
    };
    let mut response = Response::new(body);
    response
        .headers_mut()
        .insert(header::CONTENT_TYPE, HeaderValue::from_static(JSON));
    response
}

/// One exchange whose request reached the server: what its answer is judged against.
#[derive(Clone, Debug)]
pub struct Exchange {
    /// The id the session is kept under; `None` for a fresh session.
    key: Option<String>,
    method: Method,
    /// The requests the forwarded body carried: the answer owes each its answer.
    owed: Owed,
}

impl Exchange {
    /// An exchange by `method` in the session kept under `key` (the server's id), or in a
    /// fresh session (`None`), whose request owes nothing (see [`Exchange::owing`]).
    pub fn new(method: Method, key: Option<&str>) -> Self {
        Self {
            key: key.map(str::to_owned),
            method,
            owed: Owed::default(),
        }
    }

    /// The same exchange, its request carrying the requests `owed` ([`Owed::of`] the
    /// forwarded body).
    #[must_use]
    pub fn owing(mut self, owed: Owed) -> Self {
        self.owed = owed;
        self
    }

    /// The requests the answer owes an answer to.
    pub fn owed(&self) -> &Owed {
        &self.owed
    }

    /// The verdict on the head of the server's answer, checked in this order: its size (a
    /// head over [`MAX_HEADERS`] is no answer: 502, as if the server could not be reached),
    /// a status that is no final answer (1xx, past 599), a redirect, an answer naming another
    /// session, the id the server assigns to a fresh session (given to `keep`, which keeps it
    /// under that id), a status that carries no answer (202, 204, 205) to requests the
    /// exchange owes, a 404 in an open session
    /// (the server no longer knows it), the decoding instructions, a DELETE answered with
    /// success (the client ended the session), then the media type.
    pub fn head(
        &self,
        head: &response::Parts,
        keep: impl FnOnce(&str) -> Result<(), NotKept>,
    ) -> HeadVerdict {
        let fresh = self.key.is_none();
        // A session no id keeps (a stateless request) ends with an exchange that failed.
        let unkept = if fresh { End::Here } else { End::Goes };
        // A DELETE the server accepted ended the session there: refused or not, its answer
        // ends it here, and the server is not asked again.
        let deleted = self.method == Method::DELETE && head.status.is_success();
        let broken = if deleted {
            End::Here
        } else {
            End::AtServer(Cause::Broken)
        };
        if response_head_size(head.status, &head.headers) > MAX_HEADERS {
            return HeadVerdict::refuse(Reject::Unreachable, unkept, HttpNote::AnswerHeadTooLarge);
        }
        if head.status.is_informational() || head.status.as_u16() > 599 {
            // No final answer HTTP defines (a switch of protocols, a status past 599): no MCP
            // answer either. Like a redirect it holds no message, so the session goes on.
            return HeadVerdict::refuse(
                Reject::NotFinal,
                unkept,
                HttpNote::NotFinal(head.status.as_u16()),
            );
        }
        if head.status.is_redirection() {
            // A redirect is no MCP answer: passed on, a client following it within the origin
            // (the proxy's) would read what was never judged. Like an HTTP error it holds no
            // message, so the session goes on (the TypeScript SDK opens its GET stream beside
            // its first requests: ending the session would end the client's listing too).
            return HeadVerdict::refuse(Reject::Redirect, unkept, HttpNote::Redirect);
        }
        if self.names_another_session(&head.headers) {
            // A client reads a repeated header as its values joined by ", ", and the TypeScript
            // SDK client adopts the id of any answer: passed on, it would move the client into
            // a session other than the one this exchange is judged in (another client's,
            // perhaps), merging what the proxy keeps apart.
            return HeadVerdict::refuse(Reject::AnswerRefused, broken, HttpNote::AnotherSession);
        }
        let mut passing = fresh;
        if fresh && let Some(key) = header_text(&head.headers, SESSION_ID) {
            if let Err(not_kept) = keep(key) {
                let end = if not_kept.ends_at_server() {
                    // Opened at the server (by a request that raced others past the check of
                    // `belongs`, or under an id too long to keep): ended there.
                    End::AtServerOnly(key.to_owned())
                } else {
                    End::Goes
                };
                return HeadVerdict::refuse(
                    Reject::NotOpened(not_kept),
                    end,
                    HttpNote::NotKept(not_kept),
                );
            }
            passing = false;
        }
        if !self.owed.is_empty()
            && matches!(
                head.status,
                StatusCode::ACCEPTED | StatusCode::NO_CONTENT | StatusCode::RESET_CONTENT
            )
        {
            // Statuses that carry no answer (clients read no body of a 202): the requests the
            // POST carried would never be answered, whatever the body.
            return HeadVerdict::refuse(Reject::AnswerRefused, broken, HttpNote::Unanswered);
        }
        if !fresh && head.status == StatusCode::NOT_FOUND {
            // The server no longer knows the session: neither does the proxy. The client gets
            // 404, which tells it to open a new session (docs/guard.md), with the proxy's own
            // error: the server's body is about a session that is gone, and is not judged.
            return HeadVerdict::Refuse {
                reject: Reject::NoSuchSession,
                end: End::Here,
                note: None,
            };
        }
        // The body is judged as UTF-8 bytes: a head telling the client to read it otherwise
        // (a charset, a compression, a range) is refused whole.
        let media = match check_headers(&head.headers) {
            Ok(media) => media,
            Err(refusal) => {
                return HeadVerdict::refuse(
                    Reject::AnswerRefused,
                    broken,
                    HttpNote::Decoding(refusal),
                );
            }
        };
        if deleted {
            // The client ended the session (its calls without an answer are logged then). A
            // body would be about a session that has ended: not judged, so not passed on.
            return HeadVerdict::Empty { end: End::Here };
        }
        match media {
            // An HTTP error is no stream of messages, whatever it claims: a client quotes its
            // body whole (the TypeScript SDK, in the error it throws), the fields an event
            // passes with (`id`, `event`) too. Read whole, it is an error page
            // ([`Exchange::body`]).
            Some(media) if media.is(EVENT_STREAM) && head.status.is_success() => {
                HeadVerdict::Stream { media, passing }
            }
            media => HeadVerdict::Body { media, passing },
        }
    }

    /// Whether an answer names a session other than the one its request belongs to: more
    /// than one `Mcp-Session-Id`, or, in an open session, one that is not the id the request
    /// named (the session may have ended since: a DELETE answer still names it).
    fn names_another_session(&self, headers: &HeaderMap) -> bool {
        let mut named = headers.get_all(SESSION_ID).iter();
        let (Some(first), second) = (named.next(), named.next()) else {
            return false;
        };
        second.is_some()
            || self
                .key
                .as_ref()
                .is_some_and(|key| key.as_bytes() != first.as_bytes())
    }
}

impl Exchange {
    /// The verdict on a body the head admitted ([`HeadVerdict::Body`]), read whole: passed
    /// as it is, answered with the proxy's `answers` alone (to elements of a batch, for an
    /// empty body), refused, or [`BodyVerdict::Judge`]: a JSON message for the session to
    /// judge ([`Exchange::judged`]). A success without a body to requests the exchange owes
    /// leaves them unanswered, which breaks the protocol.
    pub fn body(
        &self,
        status: StatusCode,
        media: Option<&MediaType>,
        bytes: &[u8],
        answers: &[Vec<u8>],
    ) -> BodyVerdict {
        if bytes.is_empty() {
            // A POST carrying requests is answered with JSON or an event stream (MCP's
            // Streamable HTTP): a 202 or any other success without a body answers none of
            // them, and the client would wait for answers that never come.
            if status.is_success() && !self.owed.is_empty() {
                return BodyVerdict::Refuse {
                    reject: Reject::AnswerRefused,
                    end: End::AtServer(Cause::Broken),
                    note: Some(HttpNote::NeitherJsonNorSse),
                };
            }
            // 202 to a notification or a response, an error without a body.
            if answers.is_empty() {
                return BodyVerdict::Pass {
                    body: BodyOut::Same,
                    media: None,
                    end: End::Goes,
                    note: None,
                };
            }
            // The proxy's answers are all there is: they answer elements of a batch.
            return BodyVerdict::Answer(answered(answers.to_vec(), true));
        }
        if !media.is_some_and(|m| m.is(JSON)) {
            if status.is_success() {
                return BodyVerdict::Refuse {
                    reject: Reject::AnswerRefused,
                    end: End::AtServer(Cause::Broken),
                    note: Some(HttpNote::NeitherJsonNorSse),
                };
            }
            // An HTTP error the server explains in text (or HTML): no MCP message, so nothing
            // judges it, yet a client may quote it to the model. Its status and headers pass,
            // with the proxy's own body.
            // The operator reads the start of it, escaped.
            return BodyVerdict::Pass {
                body: BodyOut::Own(Reject::ErrorBody(status)),
                media: MediaType::parse(JSON.as_bytes()).ok(),
                end: End::Goes,
                note: Some(HttpNote::ErrorBody {
                    status: status.as_u16(),
                    excerpt: Excerpt::quoted(&String::from_utf8_lossy(bytes)).to_string(),
                }),
            };
        }
        BodyVerdict::Judge
    }

    /// The verdict on a JSON body the session judged (`action`, of `Session::server` on
    /// `bytes`): the server's bytes as they are when nothing of the proxy's joins them
    /// ([`BodyOut::Same`], never copied), the engine's replacement, or the proxy's `answers`
    /// spliced before the server's elements; refused when the server broke the protocol (a
    /// success that leaves a request the exchange owes without its answer included), or when the
    /// session ended while the body was judged.
    pub fn judged(
        &self,
        status: StatusCode,
        action: &ServerAction,
        bytes: &[u8],
        media: Option<&MediaType>,
        answers: &[Vec<u8>],
    ) -> BodyVerdict {
        let end = match &action.stop {
            None => End::Goes,
            Some(Stop::Drift) => End::AtServer(Cause::Drift),
            Some(fatal) => {
                return BodyVerdict::Refuse {
                    reject: Reject::AnswerRefused,
                    end: End::AtServer(Cause::Broken),
                    note: Some(HttpNote::Fatal(
                        escape_non_ascii(&fatal.to_string()).into_owned(),
                    )),
                };
            }
        };
        let Some(forwarded) = action.to_client.bytes(bytes) else {
            return BodyVerdict::Refuse {
                reject: Reject::Ended,
                end,
                note: None,
            };
        };
        if action.stop.is_none() && status.is_success() {
            // A JSON answer holds the answer to every request of its POST (MCP's Streamable
            // HTTP): one left out is never answered, and the client waits for it for good.
            let mut unanswered = self.owed.clone();
            unanswered.strike_answers(forwarded);
            if !unanswered.is_empty() {
                return BodyVerdict::Refuse {
                    reject: Reject::AnswerRefused,
                    end: End::AtServer(Cause::Broken),
                    note: Some(HttpNote::Unanswered),
                };
            }
        }
        let body = match (&action.to_client, answers.is_empty()) {
            (Forward::Original, true) => BodyOut::Same,
            (_, true) => BodyOut::Bytes(forwarded.to_vec()),
            (_, false) => BodyOut::Bytes(splice(answers, forwarded)),
        };
        BodyVerdict::Pass {
            body,
            media: media.cloned(),
            end,
            note: None,
        }
    }
}

impl Exchange {
    /// The verdict when no answer came: `why` is `None` for a timeout, or what broke (shown
    /// escaped). 504 or 502; an open session goes on (the next request may reach the
    /// server), a fresh one ends with its exchange.
    pub fn unreachable(&self, why: Option<&str>) -> HeadVerdict {
        let end = if self.key.is_none() {
            End::Here
        } else {
            End::Goes
        };
        match why {
            None => HeadVerdict::refuse(Reject::UpstreamTimeout, end, HttpNote::Timeout),
            Some(why) => HeadVerdict::refuse(
                Reject::Unreachable,
                end,
                HttpNote::Unreachable(escape_non_ascii(why).into_owned()),
            ),
        }
    }

    /// The verdict on a body the bounded read could not read whole: refused, and the session
    /// ends, here and at the server.
    pub fn unread(&self, why: Unread) -> BodyVerdict {
        BodyVerdict::Refuse {
            reject: Reject::AnswerRefused,
            end: End::AtServer(Cause::Unread),
            note: Some(HttpNote::Unread(why)),
        }
    }
}

/// The answer to a client whose body the bounded read could not read whole (`max` is the
/// bound): 413, 400 or 408.
pub fn unread(why: Unread, max: usize) -> Reject {
    match why {
        Unread::TooLong => Reject::BodyTooLong { max },
        Unread::Slow => Reject::BodySlow,
        _ => Reject::BodyUnreadable,
    }
}

/// The verdict on the body of the server's answer.
#[derive(Debug)]
#[non_exhaustive]
pub enum BodyVerdict {
    /// Refused: the client gets `reject`, nothing of the body.
    Refuse {
        /// The client's answer.
        reject: Reject,
        /// What becomes of the session.
        end: End,
        /// The note for the operator, if any.
        note: Option<HttpNote>,
    },
    /// The client gets the server's head ([`relayed`] with `media`) and `body`.
    Pass {
        /// The body.
        body: BodyOut,
        /// The media type written.
        media: Option<MediaType>,
        /// What becomes of the session (a refusal of drift passes, and ends it).
        end: End,
        /// The note for the operator, if any.
        note: Option<HttpNote>,
    },
    /// The client gets the proxy's answers alone, in the server's place.
    Answer(Response<Vec<u8>>),
    /// A JSON message: judged by the session ([`Exchange::judged`]).
    Judge,
}

/// The body the client gets.
#[derive(Clone, Debug, Eq, PartialEq)]
#[non_exhaustive]
pub enum BodyOut {
    /// The server's bytes, as they are (never copied).
    Same,
    /// These bytes in their place.
    Bytes(Vec<u8>),
    /// The proxy's own error in their place ([`Reject::body`]), as `application/json`.
    Own(Reject),
}

impl BodyOut {
    /// The body the client gets: `same` (the server's bytes, not copied) or the proxy's,
    /// its errors naming it `refuser` (`engine::Config::refuser`).
    pub fn into_body<B: From<Vec<u8>>>(self, same: B, refuser: &str) -> B {
        match self {
            Self::Same => same,
            Self::Bytes(bytes) => B::from(bytes),
            Self::Own(reject) => B::from(reject.body(refuser)),
        }
    }
}

/// The verdict on the head of the server's answer.
#[derive(Clone, Debug, Eq, PartialEq)]
#[non_exhaustive]
pub enum HeadVerdict {
    /// Refused: the client gets `reject`, nothing of the answer.
    Refuse {
        /// The client's answer.
        reject: Reject,
        /// What becomes of the session.
        end: End,
        /// The note for the operator, if any.
        note: Option<HttpNote>,
    },
    /// The answer passes with its status and headers ([`relayed`]) and without its body.
    Empty {
        /// What becomes of the session.
        end: End,
    },
    /// An SSE stream: judged event by event, under the head [`relayed`] writes with `media`.
    Stream {
        /// The media type the head names ([`EVENT_STREAM`]).
        media: MediaType,
        /// Whether the session ends with the exchange (no id keeps it): when the stream ends.
        passing: bool,
    },
    /// A body, judged whole: under `media` (its essence, [`relayed`]).
    Body {
        /// The media type the head names.
        media: Option<MediaType>,
        /// Whether the session ends with the exchange (no id keeps it).
        passing: bool,
    },
}

impl HeadVerdict {
    fn refuse(reject: Reject, end: End, note: HttpNote) -> Self {
        Self::Refuse {
            reject,
            end,
            note: Some(note),
        }
    }
}

/// The server's answer as the client gets it: its status, its headers as [`toward_client`]
/// passes them, `media` written anew (its `type/subtype` alone, no parameter of the
/// server's), and `body`.
pub fn relayed<B>(
    head: &response::Parts,
    media: Option<&MediaType>,
    ids: &impl SessionIds,
    body: B,
) -> Response<B> {
    let mut response = Response::new(body);
    *response.status_mut() = head.status;
    let mut headers = toward_client(&head.headers, ids);
    if let Some(value) = media.and_then(|m| HeaderValue::from_str(m.essence()).ok()) {
        headers.insert(header::CONTENT_TYPE, value);
    }
    *response.headers_mut() = headers;
    response
}

/// The verdict on the head of an answer from beside the endpoint (metadata, passed on
/// unjudged): the media type it is passed on under.
///
/// # Errors
///
/// [`Reject::Unreachable`] for a head over [`MAX_HEADERS`], [`Reject::BesideDecoding`] for
/// a charset or a coding, [`Reject::BesideNotMetadata`] for a redirect (a client follows it
/// within the proxy's origin) or an event stream (MCP messages are no metadata, and pass
/// unjudged nowhere).
pub fn beside_answer(head: &response::Parts) -> Result<Option<MediaType>, Reject> {
    if response_head_size(head.status, &head.headers) > MAX_HEADERS {
        return Err(Reject::Unreachable);
    }
    let media = check_headers(&head.headers).map_err(|_| Reject::BesideDecoding)?;
    if head.status.is_redirection() || media.as_ref().is_some_and(|m| m.is(EVENT_STREAM)) {
        return Err(Reject::BesideNotMetadata);
    }
    Ok(media)
}

/// An answer from beside the endpoint as the client gets it: [`relayed`], without any
/// session id (metadata belongs to no session).
pub fn relayed_beside<B>(
    head: &response::Parts,
    media: Option<&MediaType>,
    body: B,
) -> Response<B> {
    let mut response = relayed(head, media, &Plain, body);
    response.headers_mut().remove(SESSION_ID);
    response
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_guards_answers_join_the_servers_batch() {
        let answers = vec![b"{\"id\":2}".to_vec()];
        assert_eq!(
            splice(&answers, b"[{\"id\":1}]"),
            b"[{\"id\":2},{\"id\":1}]"
        );
        assert_eq!(splice(&answers, b"{\"id\":1}"), b"[{\"id\":2},{\"id\":1}]");
        assert_eq!(
            splice(&answers, b" [ {\"id\":1} ] "),
            b"[{\"id\":2},{\"id\":1}]"
        );
        assert_eq!(splice(&answers, b"[]"), b"[{\"id\":2}]");
        assert_eq!(splice(&answers, b""), b"[{\"id\":2}]");
    }

    #[test]
    fn an_answer_in_the_servers_place_has_the_shape_of_the_request() {
        let none = answered(Vec::new(), true);
        assert_eq!(none.status(), StatusCode::ACCEPTED);
        assert!(none.body().is_empty() && none.headers().is_empty());
        let one = answered(vec![b"{\"id\":1}".to_vec()], false);
        assert_eq!(
            (one.status(), one.body().as_slice()),
            (StatusCode::OK, &b"{\"id\":1}"[..])
        );
        assert_eq!(one.headers()[header::CONTENT_TYPE], JSON);
        let batch_of_one = answered(vec![b"{\"id\":1}".to_vec()], true);
        assert_eq!(batch_of_one.body(), b"[{\"id\":1}]");
        let two = answered(vec![b"{\"id\":1}".to_vec(), b"{\"id\":2}".to_vec()], false);
        assert_eq!(two.body(), b"[{\"id\":1},{\"id\":2}]");
    }
}
