//! The leaf of the surface layer: the words every other file of the layer speaks, and its
//! errors. Which of this project's formats a document is ([`Document`]), the kinds of item a
//! surface holds ([`ItemKind`]) and the label that names one ([`label`]), how an item is
//! pinned ([`Pin`]) and selected for approval ([`Selection`]), and what the readers and the
//! approval refuse ([`Error`]). It names nothing else of its layer, so that the readers of
//! each format, which all fail with [`Error`], can import it without importing each other.

use std::fmt;
use std::str::FromStr;

use crate::digest::{Digest, digest};
use crate::error::{Category, Excerpt, JsonError, Literals, Position};
use crate::escape::Escaped;
use crate::value::{Value, escape_pointer_token};

/// One of this project's own document formats, for messages.
#[derive(Clone, Copy, Debug, Eq, Hash, PartialEq)]
#[non_exhaustive]
pub enum Document {
    /// A manifest (docs/formats.md).
    Manifest,
    /// A lockfile (docs/formats.md).
    Lockfile,
    /// A signature envelope (`LOCK.sig`, docs/signing.md).
    Signature,
}

impl fmt::Display for Document {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(match self {
            Self::Manifest => "manifest",
            Self::Lockfile => "lockfile",
            Self::Signature => "signature",
        })
    }
}

/// Top-level members only a manifest has (docs/formats.md).
const MANIFEST_ONLY: [&str; 5] = [
    "complete",
    "captured_at",
    "captured_by",
    "scope",
    "protocol_version",
];

impl Document {
    /// Which of this project's formats `value` is, told by the top-level members that only
    /// one of them has: `complete`, `captured_at`, `captured_by`, `scope` or
    /// `protocol_version` for a manifest, `approval_serial` for a lockfile, `schema` naming
    /// `mcppin-lock-signature` for a signature. `None` when the members say nothing or
    /// contradict each other: the reader's own errors then say what is wrong.
    ///
    /// Readers call it before anything else, so that a file given in the place of another
    /// is named as such instead of failing on its first unknown member.
    ///
    /// # Examples
    ///
    /// ```
    /// use mcppin_core::{Document, parse};
    /// let lock = parse(br#"{"schema_version": 2, "approval_serial": 1, "servers": []}"#).unwrap();
    /// assert_eq!(Document::of(&lock), Some(Document::Lockfile));
    /// let manifest = parse(br#"{"schema_version": 2, "complete": true, "servers": []}"#).unwrap();
    /// assert_eq!(Document::of(&manifest), Some(Document::Manifest));
    /// assert_eq!(Document::of(&parse(b"{}").unwrap()), None);
    /// ```
    #[must_use]
    pub fn of(value: &Value) -> Option<Self> {
        let object = value.as_object()?;
        if object.get("schema").and_then(Value::as_str) == Some("mcppin-lock-signature") {
            return Some(Self::Signature);
        }
        let manifest = MANIFEST_ONLY.iter().any(|name| object.contains(name));
        let lockfile = object.contains("approval_serial");
        match (manifest, lockfile) {
            (true, false) => Some(Self::Manifest),
            (false, true) => Some(Self::Lockfile),
            _ => None,
        }
    }

    /// Refuses `value` when it is recognisably another of this project's formats than
    /// `expected` (see [`Document::of`]).
    pub(crate) fn expect(value: &Value, expected: Self) -> Result<(), Error> {
        match Self::of(value) {
            Some(found) if found != expected => Err(Error::WrongDocument { expected, found }),
            _ => Ok(()),
        }
    }
}
/// A kind of item in a server's surface.
#[derive(Clone, Copy, Debug, Eq, Hash, Ord, PartialEq, PartialOrd)]
#[non_exhaustive]
pub enum ItemKind {
    /// A tool from `tools/list`, keyed by its `name`.
    Tool,
    /// A prompt from `prompts/list`, keyed by its `name`.
    Prompt,
    /// A resource template from `resources/templates/list`, keyed by its `uriTemplate`.
    ResourceTemplate,
}

impl ItemKind {
    /// Every kind, in the order reports list them.
    pub const ALL: [Self; 3] = [Self::Tool, Self::Prompt, Self::ResourceTemplate];

    /// The member of a served item that holds its key (`name`).
    #[must_use]
    pub fn key_member(self) -> &'static str {
        match self {
            Self::Tool | Self::Prompt => "name",
            Self::ResourceTemplate => "uriTemplate",
        }
    }

    /// The member of a server entry, in the manifest and the lockfile, that lists items of
    /// this kind (`tools`).
    #[must_use]
    pub fn list_member(self) -> &'static str {
        match self {
            Self::Tool => "tools",
            Self::Prompt => "prompts",
            Self::ResourceTemplate => "resource_templates",
        }
    }

    /// The word for one item of this kind in messages (`tool`, `resource template`).
    #[must_use]
    pub fn noun(self) -> &'static str {
        match self {
            Self::Tool => "tool",
            Self::Prompt => "prompt",
            Self::ResourceTemplate => "resource template",
        }
    }

    /// Whether a server entry must list items of this kind: tools always; prompts and
    /// resource templates only in a capture of the widened surface (docs/formats.md), where
    /// both lists are present together.
    #[must_use]
    pub fn always_listed(self) -> bool {
        self == Self::Tool
    }

    /// The MCP method that lists items of this kind (`tools/list`).
    #[must_use]
    pub fn list_method(self) -> &'static str {
        match self {
            Self::Tool => "tools/list",
            Self::Prompt => "prompts/list",
            Self::ResourceTemplate => "resources/templates/list",
        }
    }
}

impl fmt::Display for ItemKind {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.noun())
    }
}

/// The label of a server, or of one of its items, as reports and messages print it and
/// `mcppin lock --approve` reads it: in each part `~` is written `~0` and `/` is written `~1`
/// (as in a JSON Pointer, RFC 6901), the parts are joined by `/`, and the whole is escaped for
/// a terminal ([`crate::escape`]). Server ids come from a client configuration and tool names
/// from servers, so either may hold a `/`: server `a/b` with tool `c` is `a~1b/c`, server `a`
/// with tool `b/c` is `a/b~1c`.
///
/// ```
/// use mcppin_core::surface::label;
/// assert_eq!(label("docs", Some("search")), "docs/search");
/// assert_eq!(label("a/b", Some("c")), "a~1b/c");
/// assert_eq!(label("a", Some("b/c")), "a/b~1c");
/// assert_eq!(label("x~y\u{200B}", None), "x~0y<U+200B>");
/// ```
#[must_use]
pub fn label(server: &str, item: Option<&str>) -> String {
    let mut text = escape_pointer_token(server);
    if let Some(item) = item {
        text.push('/');
        text.push_str(&escape_pointer_token(item));
    }
    crate::escape(&text).into_owned()
}

/// Reads a label written by [`label`]: the server id and, after the first `/`, the item key.
/// A `/` in the item part may also stand as it is (the first `/` is always the separator).
/// `None` for a part that is empty, a `~` not followed by `0` or `1`, or a `<U+` that does
/// not begin an escape.
pub(crate) fn parse_label(text: &str) -> Option<(String, Option<String>)> {
    let (server, item) = match text.split_once('/') {
        Some((server, item)) => (server, Some(item)),
        None => (text, None),
    };
    let server = label_part(server)?;
    let item = match item {
        Some(item) => Some(label_part(item)?),
        None => None,
    };
    Some((server, item))
}

/// One part of a label: escapes read back, then `~1` and `~0` decoded.
fn label_part(part: &str) -> Option<String> {
    if part.is_empty() {
        return None;
    }
    let text = crate::unescape(part)?;
    let mut out = String::with_capacity(text.len());
    let mut chars = text.chars();
    while let Some(c) = chars.next() {
        match c {
            '~' => match chars.next()? {
                '0' => out.push('~'),
                '1' => out.push('/'),
                _ => return None,
            },
            c => out.push(c),
        }
    }
    Some(out)
}

/// What an item is pinned by.
#[derive(Clone, Debug, Eq, Hash, PartialEq)]
pub enum Pin {
    /// The digest of the item's canonical form.
    Digest(Digest),
    /// The item holds number literals a float64 cannot pin down, so it has no digest (docs/json.md)
    ///; it is compared by its canonical form only where that is decidable, which is
    /// never: such an item is never reported as matching.
    Undecidable(Vec<String>),
}

impl Pin {
    /// The pin of a served item: its digest, or its undecidable literals in the order its
    /// canonical form holds them (so that an item and its canonical form, as a lockfile
    /// records it, have one pin).
    #[must_use]
    pub fn of(item: &Value) -> Self {
        match digest(item) {
            Ok(d) => Self::Digest(d),
            Err(_) => Self::Undecidable(
                item.undecidable_literals_canonically()
                    .into_iter()
                    .map(|n| n.literal().to_owned())
                    .collect(),
            ),
        }
    }

    /// The digest, when the item has one.
    #[must_use]
    pub fn digest(&self) -> Option<Digest> {
        match self {
            Self::Digest(d) => Some(*d),
            Self::Undecidable(_) => None,
        }
    }
}

impl fmt::Display for Pin {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Self::Digest(d) => write!(f, "{d}"),
            Self::Undecidable(literals) => write!(
                f,
                "undecidable literals [{}]",
                crate::escape(&literals.join(", "))
            ),
        }
    }
}

/// What `mcppin lock --approve` takes from the manifest: a whole server, one item of it, or
/// its `instructions`.
#[derive(Clone, Debug, Eq, Hash, Ord, PartialEq, PartialOrd)]
#[non_exhaustive]
pub enum Selection {
    /// `SERVER`: the server's whole surface, its name and protocol revision; naming a server
    /// that a complete capture covering it no longer serves approves its withdrawal.
    Server(String),
    /// `SERVER/ITEM`: one item (of any kind) with that key; approving an item the manifest
    /// no longer has, from a complete capture, approves its removal.
    Item {
        /// The server id.
        server: String,
        /// The item key (a tool name).
        name: String,
    },
    /// `SERVER/~instructions`: the server's `instructions` alone, as the capture read them
    /// (none included). No item key labels this way: [`label`] writes every `~` of a key as
    /// `~0`, so `~i` never begins an item part.
    Instructions(String),
}

/// The item part of the label that selects a server's `instructions`
/// ([`Selection::Instructions`]).
pub const INSTRUCTIONS_LABEL: &str = "~instructions";

impl FromStr for Selection {
    type Err = Error;

    /// `SERVER` or `SERVER/ITEM`, each part written as [`label`] writes it (`~1` for a `/`
    /// inside a part, `~0` for a `~`, `<U+XXXX>` escapes read back): the text a report prints
    /// for an item selects that item. The first `/` separates the parts; a later one belongs
    /// to the item key.
    /// `SERVER/~instructions` selects the server's instructions.
    fn from_str(s: &str) -> Result<Self, Error> {
        if let Some(server) = s.strip_suffix(INSTRUCTIONS_LABEL)
            && let Some(server) = server.strip_suffix('/')
        {
            return match parse_label(server) {
                Some((server, None)) => Ok(Self::Instructions(server)),
                _ => Err(Error::InvalidSelection { text: s.to_owned() }),
            };
        }
        match parse_label(s) {
            Some((server, None)) => Ok(Self::Server(server)),
            Some((server, Some(name))) => Ok(Self::Item { server, name }),
            None => Err(Error::InvalidSelection { text: s.to_owned() }),
        }
    }
}

impl fmt::Display for Selection {
    /// The label ([`label`]), which reads back as the same selection.
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Self::Server(s) => f.write_str(&label(s, None)),
            Self::Item { server, name } => f.write_str(&label(server, Some(name))),
            Self::Instructions(s) => write!(f, "{}/{INSTRUCTIONS_LABEL}", label(s, None)),
        }
    }
}

/// Everything that can go wrong reading or writing this project's own documents (manifests,
/// lockfiles, reports) and approving a surface: the strict reader's [`JsonError`] beside the
/// rules of each format (docs/formats.md).
///
/// Text that came from the input (a member name) is kept raw here: escape it before showing
/// it. The messages show it as a short escaped [`Excerpt`].
#[derive(Clone, Debug, Eq, PartialEq, thiserror::Error)]
#[non_exhaustive]
pub enum Error {
    /// The document breaks a rule of the JSON layer: a strict-reading rule, a number with no
    /// canonical form, undecidable literals where a digest is needed.
    #[error(transparent)]
    Json(#[from] JsonError),
    /// A member that this project's format does not define (our formats refuse unknown names;
    /// served items are kept verbatim and never refused for theirs).
    #[error("unknown member {} at {}", Excerpt::quoted(.name), Excerpt::quoted(.pointer))]
    UnknownMember {
        /// The JSON pointer of the member.
        pointer: String,
        /// Its name.
        name: String,
    },
    /// A member the format requires is absent.
    #[error("missing member \"{name}\" in the object at {}", Excerpt::quoted(.pointer))]
    MissingMember {
        /// The JSON pointer of the object that lacks it.
        pointer: String,
        /// The member name.
        name: &'static str,
    },
    /// A member of the format has the wrong type or value.
    #[error("expected {expected} at {}", Excerpt::quoted(.pointer))]
    Invalid {
        /// The JSON pointer of the value.
        pointer: String,
        /// What the format wants there.
        expected: &'static str,
    },
    /// A `schema_version` this build does not know.
    #[error("{document} schema_version {version} is not supported by this build")]
    UnsupportedVersion {
        /// Which format.
        document: Document,
        /// The version found.
        version: u64,
    },
    /// A member that a later `schema_version` of the format added, in a document declaring an
    /// earlier one (a version 2 manifest with `launch`): the writer and the version disagree.
    #[error(
        "{document} schema_version {version} has no member {} at {}: it was added in \
         schema_version {since}",
        Excerpt::quoted(.name),
        Excerpt::quoted(.pointer)
    )]
    LaterVersionMember {
        /// Which format.
        document: Document,
        /// Where the member is (JSON Pointer).
        pointer: String,
        /// The member.
        name: String,
        /// The version the document declares.
        version: u64,
        /// The version that added the member.
        since: u64,
    },
    /// A version 1 manifest: it makes no completeness statement (docs/formats.md).
    #[error(
        "manifest schema_version 1 is refused: it does not say whether the capture is complete, \
         and completeness cannot be assumed on a capture's behalf; capture again with a current \
         exporter"
    )]
    ManifestVersion1,
    /// A manifest without the `complete` member (docs/formats.md).
    #[error(
        "manifest has no \"complete\" member: whether the capture saw every item cannot be \
         assumed on its behalf, so it cannot be compared"
    )]
    MissingCompleteness,
    /// A document of another of this project's formats than the one expected: a manifest
    /// given as the lockfile, a lockfile given as the manifest (see [`Document::of`]).
    #[error("this is a {found}, not a {expected}")]
    WrongDocument {
        /// The format the reader reads.
        expected: Document,
        /// The format the document's members show.
        found: Document,
    },
    /// One server id listed twice.
    #[error("server {} listed twice, at {}", Excerpt::quoted(.id), Excerpt::quoted(.pointer))]
    DuplicateServer {
        /// The JSON pointer of the second entry.
        pointer: String,
        /// The server id.
        id: String,
    },
    /// Two items of one kind with one key in one server (for a capture: an error of the
    /// capture, docs/formats.md).
    #[error(
        "{kind} {} listed twice in one server, at {}",
        Excerpt::quoted(.name),
        Excerpt::quoted(.pointer)
    )]
    DuplicateItem {
        /// The JSON pointer of the second item.
        pointer: String,
        /// The kind of item.
        kind: ItemKind,
        /// The key they share.
        name: String,
    },
    /// A manifest's `scope` and its servers disagree: a server outside the scope, or a scoped
    /// server with no entry.
    #[error(
        "server {} and the capture's scope disagree, at {}",
        Excerpt::quoted(.id),
        Excerpt::quoted(.pointer)
    )]
    OutOfScope {
        /// The JSON pointer of the server entry or of `scope`.
        pointer: String,
        /// The server id.
        id: String,
    },
    /// A lockfile item whose recorded pin is not what its approved object gives: the file's
    /// halves disagree, so it cannot be trusted as an approval (docs/formats.md).
    #[error(
        "lockfile item at {} records {} but its approved object gives {}",
        Excerpt::quoted(.pointer),
        PinText(.recorded),
        PinText(.computed)
    )]
    PinMismatch {
        /// The JSON pointer of the item.
        pointer: String,
        /// What the file records.
        recorded: Pin,
        /// What the approved object beside it gives.
        computed: Pin,
    },
    /// A lockfile item whose approved object carries another key.
    #[error(
        "lockfile item {} holds an approved object named {}, at {}",
        Excerpt::quoted(.name),
        Excerpt::quoted(.approved),
        Excerpt::quoted(.pointer)
    )]
    NameMismatch {
        /// The JSON pointer of the approved object.
        pointer: String,
        /// The item's key.
        name: String,
        /// The key inside the approved object.
        approved: String,
    },
    /// An approval selection that is neither `SERVER`, `SERVER/ITEM` nor
    /// `SERVER/~instructions`.
    #[error(
        "{} is not SERVER, SERVER/ITEM or SERVER/~instructions",
        Excerpt::quoted(.text)
    )]
    InvalidSelection {
        /// The text given.
        text: String,
    },
    /// An approval selection naming something the manifest (or, for a removal, the
    /// lockfile) does not have.
    #[error("nothing to approve for {}: not in the manifest", SelectionText(.selection))]
    UnknownSelection {
        /// The selection.
        selection: Selection,
    },
    /// A version 1 lockfile item (a digest without its approved object) that must be kept
    /// but that the manifest cannot supply: the new lockfile could not store it whole.
    #[error(
        "{kind} {} is approved by a version 1 lockfile without its object, and the manifest \
         serves something else: approve it as served or lock the whole surface",
        Excerpt::escaped(&crate::surface::label(.server, Some(.name)))
    )]
    Version1Item {
        /// The server id.
        server: String,
        /// The kind of item.
        kind: ItemKind,
        /// The item key.
        name: String,
    },
    /// A served item nested deeper than a lockfile can hold it: written there, it would pass
    /// the strict reader's depth limit, and the file could not be read back (docs/formats.md,
    /// "Depth of served items").
    #[error(
        "{kind} \"{}\" of server \"{}\" nests {depth} levels deep, more than the {limit} \
         a lockfile can hold, at \"{}\"",
        Escaped(.name),
        Escaped(.server),
        Escaped(.pointer)
    )]
    ItemTooDeep {
        /// The server id.
        server: String,
        /// The JSON pointer of the item in the document it was read from or added to.
        pointer: String,
        /// The kind of item.
        kind: ItemKind,
        /// The item key.
        name: String,
        /// How many levels of arrays and objects the item nests, itself included.
        depth: usize,
        /// The most a lockfile holds ([`crate::surface::MAX_ITEM_DEPTH`]).
        limit: usize,
    },
}

impl Error {
    /// The JSON layer's error inside, when this is one.
    #[must_use]
    pub fn json(&self) -> Option<&JsonError> {
        match self {
            Self::Json(err) => Some(err),
            _ => None,
        }
    }

    /// Where in the input the error was found, for reading errors.
    #[must_use]
    pub fn position(&self) -> Option<Position> {
        self.json().and_then(JsonError::position)
    }

    /// A short stable name of the rule that refused the input (`duplicate-member`,
    /// `pin-mismatch`), for reports and machine-readable output.
    #[must_use]
    pub fn rule(&self) -> &'static str {
        match self {
            Self::Json(err) => err.rule(),
            Self::UnknownMember { .. } => "unknown-member",
            Self::MissingMember { .. } => "missing-member",
            Self::Invalid { .. } => "invalid",
            Self::UnsupportedVersion { .. } => "unsupported-version",
            Self::LaterVersionMember { .. } => "later-version-member",
            Self::ManifestVersion1 => "manifest-version-1",
            Self::MissingCompleteness => "missing-completeness",
            Self::WrongDocument { .. } => "wrong-document",
            Self::DuplicateServer { .. } => "duplicate-server",
            Self::DuplicateItem { .. } => "duplicate-item",
            Self::OutOfScope { .. } => "out-of-scope",
            Self::PinMismatch { .. } => "pin-mismatch",
            Self::NameMismatch { .. } => "name-mismatch",
            Self::InvalidSelection { .. } => "invalid-selection",
            Self::UnknownSelection { .. } => "unknown-selection",
            Self::Version1Item { .. } => "version-1-item",
            Self::ItemTooDeep { .. } => "item-too-deep",
        }
    }

    /// Which kind of failure this is: the JSON layer's category for [`Error::Json`],
    /// [`Category::Usage`] for an approval selection that is malformed or names nothing,
    /// [`Category::Unreadable`] for the rest.
    #[must_use]
    pub fn category(&self) -> Category {
        match self {
            Self::Json(err) => err.category(),
            Self::InvalidSelection { .. } | Self::UnknownSelection { .. } => Category::Usage,
            _ => Category::Unreadable,
        }
    }
}

/// A pin in a message, its literals bounded like [`Literals`].
struct PinText<'a>(&'a Pin);

impl fmt::Display for PinText<'_> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self.0 {
            Pin::Digest(d) => write!(f, "{d}"),
            Pin::Undecidable(literals) => {
                write!(f, "undecidable literals [{}]", Literals(literals))
            }
        }
    }
}

/// A selection in a message: as the selection writes itself (escaped), cut short.
struct SelectionText<'a>(&'a Selection);

impl fmt::Display for SelectionText<'_> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}", Excerpt::escaped(&self.0.to_string()))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const LONG: usize = 1 << 20;

    #[test]
    fn each_error_has_the_category_of_its_exit_code() {
        let read = crate::manifest::Manifest::parse(b"{\"a\": 1, \"a\": 2}").unwrap_err();
        assert!(matches!(
            &read,
            Error::Json(JsonError::DuplicateMember { .. })
        ));
        assert_eq!(read.category(), Category::Unreadable);
        assert_eq!(
            (read.rule(), read.position().map(|p| p.offset)),
            ("duplicate-member", Some(9))
        );
        let undecidable =
            Error::from(digest(&crate::parse(b"[9007199254740993]").unwrap()).unwrap_err());
        assert_eq!(undecidable.category(), Category::Incomparable);
        assert_eq!(undecidable.category().exit_code(), 3);
        let selection = "".parse::<Selection>().unwrap_err();
        assert!(matches!(selection, Error::InvalidSelection { .. }));
        assert_eq!(selection.category(), Category::Usage);
        assert_eq!(selection.category().exit_code(), 2);
        let wrong = Error::WrongDocument {
            expected: Document::Lockfile,
            found: Document::Manifest,
        };
        assert_eq!(
            (wrong.category(), wrong.json(), wrong.position()),
            (Category::Unreadable, None, None)
        );
    }

    #[test]
    fn quotes_short_text_whole() {
        // Exactly the excerpt's length is still whole.
        let name = "y".repeat(64);
        let err = Error::UnknownMember {
            pointer: String::new(),
            name: name.clone(),
        };
        assert_eq!(
            err.to_string(),
            format!("unknown member \"{name}\" at \"\"")
        );
    }

    #[test]
    fn bounds_every_text_from_the_input() {
        let long = "z".repeat(LONG);
        let errors = [
            Error::Json(JsonError::NfcDuplicateMember {
                first: long.clone(),
                second: long.clone(),
                at: Position::default(),
            }),
            Error::UnknownMember {
                pointer: long.clone(),
                name: long.clone(),
            },
            Error::MissingMember {
                pointer: long.clone(),
                name: "id",
            },
            Error::Invalid {
                pointer: long.clone(),
                expected: "a string",
            },
            Error::DuplicateServer {
                pointer: long.clone(),
                id: long.clone(),
            },
            Error::DuplicateItem {
                pointer: long.clone(),
                kind: ItemKind::Tool,
                name: long.clone(),
            },
            Error::OutOfScope {
                pointer: long.clone(),
                id: long.clone(),
            },
            Error::PinMismatch {
                pointer: long.clone(),
                recorded: Pin::Undecidable(vec![long.clone(); 1000]),
                computed: Pin::Digest(Digest::of_bytes(b"")),
            },
            Error::NameMismatch {
                pointer: long.clone(),
                name: long.clone(),
                approved: long.clone(),
            },
            Error::InvalidSelection { text: long.clone() },
            Error::UnknownSelection {
                selection: Selection::Item {
                    server: long.clone(),
                    name: long.clone(),
                },
            },
            Error::Version1Item {
                server: long.clone(),
                kind: ItemKind::Tool,
                name: long.clone(),
            },
        ];
        for err in errors {
            let message = err.to_string();
            assert!(
                message.len() < 1000,
                "{}: {} bytes",
                err.rule(),
                message.len()
            );
            // A selection and a label are cut as they write themselves: `SERVER/ITEM`, escaped.
            let length = match err {
                Error::UnknownSelection { .. } | Error::Version1Item { .. } => 2 * LONG + 1,
                _ => LONG,
            };
            assert!(
                message.contains(&format!("... ({length} bytes)")),
                "{message}"
            );
        }
    }

    #[test]
    fn selection_text_splits_at_the_first_slash() {
        assert_eq!("a".parse(), Ok(Selection::Server("a".into())));
        assert_eq!(
            "a/b/c".parse(),
            Ok(Selection::Item {
                server: "a".into(),
                name: "b/c".into()
            })
        );
        for bad in ["", "/x", "a/"] {
            assert!(bad.parse::<Selection>().is_err(), "{bad}");
        }
    }

    fn item(server: &str, name: &str) -> Selection {
        Selection::Item {
            server: server.into(),
            name: name.into(),
        }
    }

    #[test]
    fn every_server_id_and_item_name_can_be_selected() {
        // Server "a/b" with tool "c" and server "a" with tool "b/c" printed
        // the same label, and a server id holding "/" could not be approved at all.
        assert_eq!("a~1b/c".parse(), Ok(item("a/b", "c")));
        assert_eq!("a/b~1c".parse(), Ok(item("a", "b/c")));
        assert_eq!("a~1b".parse(), Ok(Selection::Server("a/b".into())));
        assert_eq!("a~0b/~0~1".parse(), Ok(item("a~b", "~/")));
        assert_eq!(
            "ev<U+001B>il/t<U+003C>U+200B>".parse(),
            Ok(item("ev\u{1b}il", "t<U+200B>"))
        );
        for bad in ["a~2", "a~", "a/b~", "<U+>", "a<U+1F>", "a<U+0041"] {
            assert_eq!(
                bad.parse::<Selection>(),
                Err(Error::InvalidSelection { text: bad.into() }),
                "{bad}"
            );
        }
    }

    #[test]
    fn a_selection_prints_as_the_label_that_selects_it() {
        for selection in [
            item("a/b", "c"),
            item("a", "b/c"),
            item("~0", "~1/"),
            item("ev\u{1b}il", "t<U+200B>\u{200B}"),
            Selection::Server("a/b~".into()),
        ] {
            let label = selection.to_string();
            assert!(label.bytes().all(|b| (0x20..0x7F).contains(&b)), "{label}");
            assert_eq!(label.parse(), Ok(selection), "{label}");
        }
        assert_eq!(item("a/b", "c").to_string(), "a~1b/c");
        assert_eq!(item("a", "b/c").to_string(), "a/b~1c");
    }

    #[test]
    fn instructions_have_a_label_no_item_key_prints() {
        let instructions = Selection::Instructions("a/b".into());
        assert_eq!(instructions.to_string(), "a~1b/~instructions");
        assert_eq!("a~1b/~instructions".parse(), Ok(instructions));
        // A tool named `~instructions` prints otherwise, and reads back as that tool.
        assert_eq!(item("a", "~instructions").to_string(), "a/~0instructions");
        assert_eq!("a/~0instructions".parse(), Ok(item("a", "~instructions")));
        assert_eq!(item("a", "instructions").to_string(), "a/instructions");
        for bad in ["/~instructions", "a/b/~instructions", "a~/~instructions"] {
            assert_eq!(
                bad.parse::<Selection>(),
                Err(Error::InvalidSelection { text: bad.into() }),
                "{bad}"
            );
        }
    }
}
