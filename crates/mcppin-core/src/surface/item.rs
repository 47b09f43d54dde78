//! What the manifest and the lockfile have in common: a collection of items keyed by name,
//! how deep an item may nest, and the strict reading helpers of this project's own formats.

use std::collections::{BTreeMap, BTreeSet};
use std::fmt;
use std::str::FromStr;

use crate::document::{Error, ItemKind};
use crate::parse::MAX_DEPTH;
use crate::value::{Kind, Object, Value, escape_pointer_token};

/// The most levels of arrays and objects a served item may nest, itself counted.
///
/// A lockfile holds an item five levels down (the document, `servers`, a server entry, the
/// item list, the item's entry), and the strict reader refuses a document nesting more than
/// [`MAX_DEPTH`] levels: a deeper item could be written but never read back. Manifests and
/// lockfiles refuse such an item when it is added, so whatever they hold can be written in a
/// form their readers accept (docs/formats.md, "Depth of served items").
pub const MAX_ITEM_DEPTH: usize = MAX_DEPTH - 5;

/// The served items of one kind for one server, keyed by name and kept verbatim.
///
/// Iteration is in code point order of the names, the order the writers use. Holding an
/// `Items` means every item is an object whose key member is a string and no key repeats.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct Items {
    by_key: BTreeMap<String, Value>,
}

impl Items {
    /// No items.
    #[must_use]
    pub fn new() -> Self {
        Self::default()
    }

    /// Adds a served item of `kind` from server `server`, kept exactly as served.
    ///
    /// # Errors
    ///
    /// [`Error::Invalid`] when the item is not an object or its key member is not a string,
    /// [`Error::MissingMember`] when it has no key member, [`Error::ItemTooDeep`] when it nests
    /// more than [`MAX_ITEM_DEPTH`] levels, [`Error::DuplicateItem`] when an item with the
    /// same key is already present. `pointer` locates the item in its document for the
    /// message.
    pub fn insert(
        &mut self,
        server: &str,
        kind: ItemKind,
        item: Value,
        pointer: &str,
    ) -> Result<(), Error> {
        let key = item_key(kind, &item, pointer)?.to_owned();
        let depth = nesting(&item);
        if depth > MAX_ITEM_DEPTH {
            return Err(Error::ItemTooDeep {
                server: server.to_owned(),
                pointer: pointer.to_owned(),
                kind,
                name: key,
                depth,
                limit: MAX_ITEM_DEPTH,
            });
        }
        if self.by_key.contains_key(&key) {
            return Err(Error::DuplicateItem {
                pointer: pointer.to_owned(),
                kind,
                name: key,
            });
        }
        self.by_key.insert(key, item);
        Ok(())
    }

    /// The item with key `name`.
    #[must_use]
    pub fn get(&self, name: &str) -> Option<&Value> {
        self.by_key.get(name)
    }

    /// Keys and items, in code point order of the keys.
    pub fn iter(&self) -> impl Iterator<Item = (&str, &Value)> {
        self.by_key.iter().map(|(k, v)| (k.as_str(), v))
    }

    /// The keys, in code point order.
    pub fn names(&self) -> impl Iterator<Item = &str> {
        self.by_key.keys().map(String::as_str)
    }

    /// The number of items.
    #[must_use]
    pub fn len(&self) -> usize {
        self.by_key.len()
    }

    /// Whether there are no items.
    #[must_use]
    pub fn is_empty(&self) -> bool {
        self.by_key.is_empty()
    }

    /// Whether an item with key `name` is present.
    #[must_use]
    pub fn contains(&self, name: &str) -> bool {
        self.by_key.contains_key(name)
    }
}

/// How many levels of arrays and objects `value` nests: 0 for a scalar, 1 for `{}` or
/// `[1]`, 2 for `{"a": []}`. Walks without recursion, so a value built by hand to any depth
/// cannot exhaust the stack.
#[must_use]
pub fn nesting(value: &Value) -> usize {
    let mut deepest = 0;
    let mut stack = vec![(value, 1)];
    while let Some((v, level)) = stack.pop() {
        match v.kind() {
            Kind::Array(items) => {
                deepest = deepest.max(level);
                stack.extend(items.iter().map(|i| (i, level + 1)));
            }
            Kind::Object(object) => {
                deepest = deepest.max(level);
                stack.extend(object.values().map(|i| (i, level + 1)));
            }
            _ => {}
        }
    }
    deepest
}

/// The key of a served item (its `name`, for a tool).
pub(crate) fn item_key<'v>(
    kind: ItemKind,
    item: &'v Value,
    pointer: &str,
) -> Result<&'v str, Error> {
    let object = object(item, pointer)?;
    let member = kind.key_member();
    let key = object.get(member).ok_or_else(|| Error::MissingMember {
        pointer: pointer.to_owned(),
        name: member,
    })?;
    key.as_str().ok_or_else(|| Error::Invalid {
        pointer: child(pointer, member),
        expected: "a string",
    })
}

/// The pointer of member `name` below `pointer`.
pub(crate) fn child(pointer: &str, name: &str) -> String {
    // Built for every member the readers look at, found or not: one allocation, and the
    // escaping only for a name that needs it.
    let mut out = String::with_capacity(pointer.len() + 1 + name.len());
    out.push_str(pointer);
    out.push('/');
    if name.contains(['~', '/']) {
        out.push_str(&escape_pointer_token(name));
    } else {
        out.push_str(name);
    }
    out
}

/// The pointer of element `index` below `pointer`.
pub(crate) fn element(pointer: &str, index: usize) -> String {
    format!("{pointer}/{index}")
}

/// Moves the elements of array member `name` out of an object, leaving an empty array; none
/// when the member is absent or no array (the reader then refuses it where it looks).
pub(crate) fn take_list(value: &mut Value, name: &str) -> Vec<Value> {
    value
        .as_object_mut()
        .and_then(|o| o.get_mut(name))
        .and_then(Value::as_array_mut)
        .map(|items| std::mem::take(items).into_vec())
        .unwrap_or_default()
}

/// Moves member `name` out of an object, leaving `null` in its place.
pub(crate) fn take_member(value: &mut Value, name: &str) -> Option<Value> {
    value
        .as_object_mut()
        .and_then(|o| o.get_mut(name))
        .map(|v| std::mem::replace(v, Value::null()))
}

/// The value as an object.
pub(crate) fn object<'v>(value: &'v Value, pointer: &str) -> Result<&'v Object, Error> {
    value.as_object().ok_or_else(|| Error::Invalid {
        pointer: pointer.to_owned(),
        expected: "an object",
    })
}

/// The value as an array.
pub(crate) fn array<'v>(value: &'v Value, pointer: &str) -> Result<&'v [Value], Error> {
    value.as_array().ok_or_else(|| Error::Invalid {
        pointer: pointer.to_owned(),
        expected: "an array",
    })
}

/// The value as a string.
pub(crate) fn string<'v>(value: &'v Value, pointer: &str) -> Result<&'v str, Error> {
    value.as_str().ok_or_else(|| Error::Invalid {
        pointer: pointer.to_owned(),
        expected: "a string",
    })
}

/// The value as a non-negative integer written in plain digits, at most 2^53.
pub(crate) fn count(value: &Value, pointer: &str) -> Result<u64, Error> {
    let invalid = || Error::Invalid {
        pointer: pointer.to_owned(),
        expected: "a non-negative integer in plain digits, at most 2^53",
    };
    let number = value.as_number().ok_or_else(invalid)?;
    let literal = number.literal();
    if !literal.bytes().all(|b| b.is_ascii_digit())
        || (literal.len() > 1 && literal.starts_with('0'))
    {
        return Err(invalid());
    }
    literal
        .parse::<u64>()
        .ok()
        .filter(|&n| n <= 1 << 53)
        .ok_or_else(invalid)
}

/// A strict view of one object of our own formats: refuses members it does not define.
pub(crate) struct Fields<'v> {
    pub(crate) object: &'v Object,
    pub(crate) pointer: String,
}

impl<'v> Fields<'v> {
    /// Reads `value` as an object whose members are all in `known`.
    pub(crate) fn new(value: &'v Value, pointer: &str, known: &[&str]) -> Result<Self, Error> {
        let object = object(value, pointer)?;
        if let Some(name) = object.keys().find(|k| !known.contains(k)) {
            return Err(Error::UnknownMember {
                pointer: child(pointer, name),
                name: name.to_owned(),
            });
        }
        Ok(Self {
            object,
            pointer: pointer.to_owned(),
        })
    }

    /// The pointer of member `name`.
    pub(crate) fn at(&self, name: &str) -> String {
        child(&self.pointer, name)
    }

    /// Member `name`, which must be present.
    pub(crate) fn required(&self, name: &'static str) -> Result<&'v Value, Error> {
        self.object.get(name).ok_or_else(|| Error::MissingMember {
            pointer: self.pointer.clone(),
            name,
        })
    }

    /// Member `name`, if present (`null` is not absence: it is refused by the typed readers).
    pub(crate) fn optional(&self, name: &str) -> Option<&'v Value> {
        self.object.get(name)
    }

    /// Optional string member `name`.
    pub(crate) fn optional_string(&self, name: &str) -> Result<Option<String>, Error> {
        self.optional(name)
            .map(|v| string(v, &self.at(name)).map(str::to_owned))
            .transpose()
    }
}

/// Builds an object member by member, for the writers.
pub(crate) fn put(object: &mut Object, name: &str, value: impl Into<Value>) {
    object.insert(name, value);
}

/// A string or nothing, as a value for the writers.
pub(crate) fn put_opt(object: &mut Object, name: &str, value: Option<&str>) {
    if let Some(v) = value {
        object.insert(name, v);
    }
}

/// The value as an array of strings.
pub(crate) fn strings(value: &Value, pointer: &str) -> Result<Vec<String>, Error> {
    array(value, pointer)?
        .iter()
        .enumerate()
        .map(|(i, v)| string(v, &element(pointer, i)).map(str::to_owned))
        .collect()
}

/// The name `not_served` has in the server entries of manifests and lockfiles: the optional
/// lists a server declared the capability of but answered with `-32601 Method not found`
/// (docs/formats.md). Version 4.
pub(crate) const NOT_SERVED: &str = "not_served";

/// Reads a `not_served` member: the list members (`prompts`, `resource_templates`) of kinds
/// the server did not serve, each once.
pub(crate) fn read_not_served(value: &Value, pointer: &str) -> Result<BTreeSet<ItemKind>, Error> {
    let mut kinds = BTreeSet::new();
    for (i, v) in array(value, pointer)?.iter().enumerate() {
        let at = element(pointer, i);
        let name = string(v, &at)?;
        let kind = ItemKind::ALL
            .into_iter()
            .find(|k| !k.always_listed() && k.list_member() == name)
            .ok_or_else(|| Error::Invalid {
                pointer: at.clone(),
                expected: "\"prompts\" or \"resource_templates\"",
            })?;
        if !kinds.insert(kind) {
            return Err(Error::Invalid {
                pointer: at,
                expected: "each list named once",
            });
        }
    }
    Ok(kinds)
}

/// Checks a server entry's `not_served` against its lists: it belongs to an entry of the
/// widened surface, and a list the server did not serve holds no item.
pub(crate) fn check_not_served(
    fields: &Fields<'_>,
    not_served: &BTreeSet<ItemKind>,
    widened: bool,
    len: impl Fn(ItemKind) -> usize,
) -> Result<(), Error> {
    if !not_served.is_empty() && !widened {
        return Err(Error::Invalid {
            pointer: fields.at(NOT_SERVED),
            expected: "not_served only beside the prompts and resource_templates lists",
        });
    }
    if let Some(kind) = not_served.iter().find(|k| len(**k) > 0) {
        return Err(Error::Invalid {
            pointer: element(&fields.at(kind.list_member()), 0),
            expected: "no item in a list the server did not serve (it is named in not_served)",
        });
    }
    Ok(())
}

/// The `not_served` member as written: the list members in code point order.
pub(crate) fn not_served_value(kinds: &BTreeSet<ItemKind>) -> Value {
    string_array(kinds.iter().map(|k| k.list_member()))
}

/// An array value from strings.
pub(crate) fn string_array<'a>(items: impl IntoIterator<Item = &'a str>) -> Value {
    Value::new(Kind::Array(items.into_iter().map(Value::from).collect()))
}

/// The authorization a surface was captured under, as a label the operator chose
/// (`mcppin-export --auth-context LABEL`; docs/formats.md, "Authorization context"): a name for
/// the credential's role, never the credential. A server may serve other tools to another
/// authorization, so surfaces of different contexts are never compared. The default context
/// is the absence of a label (`Option<AuthContext>::None`), the context of every capture made
/// without one and of every lockfile written before labels existed.
///
/// A label is 1 to [`AuthContext::MAX_LEN`] characters of `A-Z a-z 0-9 . _ -`, starting with a
/// letter or a digit; `default` is not a label (it would be a second name for the absence).
///
/// ```
/// use mcppin_core::surface::AuthContext;
///
/// let label: AuthContext = "read-only".parse().unwrap();
/// assert_eq!(label.as_str(), "read-only");
/// assert!("default".parse::<AuthContext>().is_err());
/// assert!("Bearer abc/def".parse::<AuthContext>().is_err());
/// ```
#[derive(Clone, Debug, Eq, Hash, Ord, PartialEq, PartialOrd)]
pub struct AuthContext(String);

/// Why a text is not an [`AuthContext`] label.
#[derive(Clone, Copy, Debug, Eq, PartialEq, thiserror::Error)]
#[non_exhaustive]
pub enum AuthContextError {
    /// Empty, or longer than [`AuthContext::MAX_LEN`] characters.
    #[error("a label is 1 to 64 characters")]
    Length,
    /// A character outside `A-Z a-z 0-9 . _ -`, or a first character that is not a letter or a
    /// digit.
    #[error("a label is made of A-Z a-z 0-9 . _ - and starts with a letter or a digit")]
    Character,
    /// The word `default`, which names the absence of a label.
    #[error("\"default\" is the context without a label: leave the label out")]
    Reserved,
}

impl AuthContext {
    /// The most characters a label has.
    pub const MAX_LEN: usize = 64;

    /// The label.
    #[must_use]
    pub fn as_str(&self) -> &str {
        &self.0
    }

    /// How reports name a context: its label, or `default` for none.
    #[must_use]
    pub fn name(context: Option<&Self>) -> &str {
        context.map_or("default", Self::as_str)
    }
}

impl FromStr for AuthContext {
    type Err = AuthContextError;

    fn from_str(text: &str) -> Result<Self, AuthContextError> {
        if text.is_empty() || text.len() > Self::MAX_LEN {
            return Err(AuthContextError::Length);
        }
        let allowed = |c: char| c.is_ascii_alphanumeric() || matches!(c, '.' | '_' | '-');
        if !text.chars().all(allowed) || !text.starts_with(|c: char| c.is_ascii_alphanumeric()) {
            return Err(AuthContextError::Character);
        }
        if text == "default" {
            return Err(AuthContextError::Reserved);
        }
        Ok(Self(text.to_owned()))
    }
}

impl fmt::Display for AuthContext {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.0)
    }
}

/// The name `auth_context` has in the server entries of manifests and lockfiles (version 4).
pub(crate) const AUTH_CONTEXT: &str = "auth_context";

/// Reads a server entry's `auth_context`: `None` when absent (the default context).
pub(crate) fn read_auth_context(
    fields: &Fields<'_>,
    document: crate::document::Document,
    version: u64,
) -> Result<Option<AuthContext>, Error> {
    let Some(value) = fields.optional(AUTH_CONTEXT) else {
        return Ok(None);
    };
    let pointer = fields.at(AUTH_CONTEXT);
    if version < 4 {
        return Err(Error::LaterVersionMember {
            document,
            pointer,
            name: AUTH_CONTEXT.to_owned(),
            version,
            since: 4,
        });
    }
    string(value, &pointer)?
        .parse()
        .map(Some)
        .map_err(|_| Error::Invalid {
            pointer,
            expected: "an authorization context label: 1 to 64 of A-Z a-z 0-9 . _ -, starting \
                       with a letter or a digit, not \"default\"",
        })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn child_pointers_escape_only_names_that_need_it() {
        assert_eq!(child("", "tools"), "/tools");
        assert_eq!(child("/servers/0", "a/b~c"), "/servers/0/a~1b~0c");
        assert_eq!(child("/x", ""), "/x/");
        assert_eq!(element("/servers", 12), "/servers/12");
    }

    #[test]
    fn items_refuse_a_duplicate_key() {
        let mut items = Items::new();
        let tool = crate::parse(br#"{"name":"a"}"#).unwrap();
        items
            .insert("s", ItemKind::Tool, tool.clone(), "/t/0")
            .unwrap();
        assert_eq!(
            items.insert("s", ItemKind::Tool, tool, "/t/1"),
            Err(Error::DuplicateItem {
                pointer: "/t/1".into(),
                kind: ItemKind::Tool,
                name: "a".into()
            })
        );
    }

    #[test]
    fn items_refuse_an_item_without_a_string_name() {
        let mut items = Items::new();
        let nameless = crate::parse(br#"{"title":"a"}"#).unwrap();
        assert_eq!(
            items.insert("s", ItemKind::Tool, nameless, "/t/0"),
            Err(Error::MissingMember {
                pointer: "/t/0".into(),
                name: "name"
            })
        );
        let numbered = crate::parse(br#"{"name":1}"#).unwrap();
        assert_eq!(
            items.insert("s", ItemKind::Tool, numbered, "/t/0"),
            Err(Error::Invalid {
                pointer: "/t/0/name".into(),
                expected: "a string"
            })
        );
    }

    /// A tool nesting `levels` levels, itself counted.
    fn tool_nesting(levels: usize) -> Value {
        let inner = format!("{}{}", "[".repeat(levels - 1), "]".repeat(levels - 1));
        crate::parse(format!(r#"{{"name":"t","x":{inner}}}"#).as_bytes()).unwrap()
    }

    #[test]
    fn nesting_counts_levels_of_containers() {
        for (text, levels) in [("1", 0), ("{}", 1), ("[1]", 1), (r#"{"a":[[],{}]}"#, 3)] {
            assert_eq!(
                nesting(&crate::parse(text.as_bytes()).unwrap()),
                levels,
                "{text}"
            );
        }
        assert_eq!(nesting(&tool_nesting(MAX_ITEM_DEPTH)), MAX_ITEM_DEPTH);
    }

    #[test]
    fn items_refuse_an_item_deeper_than_a_lockfile_holds() {
        // Such an item was written into lockfiles the reader refused.
        let mut items = Items::new();
        assert_eq!(
            items.insert(
                "s",
                ItemKind::Tool,
                tool_nesting(MAX_ITEM_DEPTH + 1),
                "/t/0"
            ),
            Err(Error::ItemTooDeep {
                server: "s".into(),
                pointer: "/t/0".into(),
                kind: ItemKind::Tool,
                name: "t".into(),
                depth: MAX_ITEM_DEPTH + 1,
                limit: MAX_ITEM_DEPTH,
            })
        );
        assert!(items.is_empty());
        items
            .insert("s", ItemKind::Tool, tool_nesting(MAX_ITEM_DEPTH), "/t/0")
            .unwrap();
        assert!(items.contains("t"));
    }

    #[test]
    fn count_accepts_only_plain_small_integers() {
        for ok in ["0", "7", "9007199254740992"] {
            let v = crate::parse(ok.as_bytes()).unwrap();
            assert!(count(&v, "").is_ok(), "{ok}");
        }
        for bad in ["-1", "1.0", "1e2", "9007199254740993", "\"1\""] {
            let v = crate::parse(bad.as_bytes()).unwrap();
            assert!(count(&v, "").is_err(), "{bad}");
        }
    }
}
