//! Tools compared with their approved forms while they are read (docs/performance.md, "Tools
//! compared while read"): a served tool equal to its approved form is not built, ordered and
//! then compared; it is checked against that form byte run by byte run as the reader goes.
//!
//! Everything here only says yes or no. A yes is given only for bytes [`Parser::value`]
//! reads, under every rule of docs/json.md, as a value equal to the approved form (numbers
//! equal as `Number`'s equality has them); at any difference, and at anything the reader would
//! refuse, the answer is no, and the reader reads the same bytes again as it always does, so
//! that its reading and its errors are unchanged.

use unicode_normalization::{IsNormalized, is_nfc_quick};

use super::{MAX_DEPTH, Parser, Str, Taken};
use crate::value::{Kind, Member, Object, Span, Text, Value};

impl<'a> Parser<'a> {
    /// Reads the element at `pos` of `/result/tools` into `slot` when it is a tool served
    /// exactly as its approved form, its index `index` taken; `false`, with nothing read,
    /// otherwise.
    pub(super) fn take_approved(&mut self, depth: usize, slot: &mut Value, index: usize) -> bool {
        let Some(approved) = self.approved else {
            return false;
        };
        let start = self.pos;
        let Some((name, name_at)) = self.tool_name(depth) else {
            self.pos = start;
            return false;
        };
        let (Some((rank, form)), Ok(index)) =
            (approved.approved_form(name.as_str()), u32::try_from(index))
        else {
            self.pos = start;
            return false;
        };
        self.pos = start;
        let mut opened = 0;
        if self.equal(depth, form, &mut opened).is_none() {
            self.pos = start;
            return false;
        }
        // Counts taken since a tool was read in full include those of this one's arrays and
        // objects, which the reader does not take.
        if self.counted {
            let left = self.counts.len().saturating_sub(opened);
            self.counts.truncate(left);
        }
        let mut value = Value::new(Kind::String(Text::from(name.as_str())));
        value.set_span(name_at.start, name_at.end);
        let member = Member::new("name", value);
        slot.set_kind(Kind::Object(Object::from_sorted(Box::new([member]))));
        slot.set_span(start, self.pos);
        self.taken.push(Taken { index, rank });
        true
    }

    /// The `name` member of the object at `pos` (read at `depth`) and its span, when the
    /// object has one that is a string.
    fn tool_name(&mut self, depth: usize) -> Option<(Str<'a>, Span)> {
        if depth >= MAX_DEPTH {
            return None;
        }
        self.find_member("name")?;
        if self.peek()? != b'"' {
            return None;
        }
        let start = self.pos;
        let name = self.string().ok()?;
        let span = Span {
            start,
            end: self.pos,
        };
        Some((name, span))
    }

    /// Moves to the value of the first member `name` of the object at `pos`, skipping the
    /// members before it without checking them (the reading that follows checks everything);
    /// `None` when there is no object there, or no such member before its end.
    pub(super) fn find_member(&mut self, name: &str) -> Option<()> {
        if self.peek()? != b'{' {
            return None;
        }
        self.pos += 1;
        loop {
            self.skip_whitespace();
            if self.peek()? != b'"' {
                return None;
            }
            let member = self.string().ok()?;
            self.skip_whitespace();
            if self.peek()? != b':' {
                return None;
            }
            self.pos += 1;
            self.skip_whitespace();
            if member.as_str() == name {
                return Some(());
            }
            self.skip_value()?;
            self.skip_whitespace();
            if self.peek()? != b',' {
                return None;
            }
            self.pos += 1;
        }
    }

    /// Moves past one value, without checking it (the comparison that follows reads it under
    /// every rule): a string to its closing quote, an array or object to its closing bracket,
    /// anything else to the next byte that ends a number or word.
    fn skip_value(&mut self) -> Option<()> {
        match self.peek()? {
            b'"' => self.skip_string(),
            b'{' | b'[' => {
                let mut open = 0usize;
                loop {
                    match self.peek()? {
                        b'"' => {
                            self.skip_string()?;
                            continue;
                        }
                        b'{' | b'[' => open += 1,
                        b'}' | b']' => {
                            open = open.saturating_sub(1);
                            if open == 0 {
                                self.pos += 1;
                                return Some(());
                            }
                        }
                        _ => {}
                    }
                    self.pos += 1;
                }
            }
            _ => {
                while let Some(b) = self.peek() {
                    if matches!(b, b',' | b'}' | b']' | b' ' | b'\t' | b'\n' | b'\r') {
                        break;
                    }
                    self.pos += 1;
                }
                Some(())
            }
        }
    }

    /// Moves past the string at `pos`, to after its closing quote.
    fn skip_string(&mut self) -> Option<()> {
        let mut at = self.pos + 1;
        loop {
            let rest = self.input.get(at..)?;
            let found = memchr::memchr2(b'"', b'\\', rest)?;
            if rest[found] == b'\\' {
                at += found + 2;
            } else {
                self.pos = at + found + 1;
                return Some(());
            }
        }
    }

    /// Reads the value at `pos` (at `depth`) when it is equal to `expected`, counting the
    /// arrays and objects it opens in `opened`; `None` at any difference or refusal.
    fn equal(&mut self, depth: usize, expected: &Value, opened: &mut usize) -> Option<()> {
        match (self.peek()?, expected.kind()) {
            (b'{', Kind::Object(object)) if depth < MAX_DEPTH => {
                *opened += 1;
                self.equal_members(depth + 1, object, opened)
            }
            (b'[', Kind::Array(items)) if depth < MAX_DEPTH => {
                *opened += 1;
                self.equal_elements(depth + 1, items, opened)
            }
            (b'"', Kind::String(text)) => {
                let read = self.string().ok()?;
                (read.as_str().as_bytes() == text.as_bytes()).then_some(())
            }
            (b'-' | b'0'..=b'9', Kind::Number(number)) => {
                (self.number().ok()? == *number).then_some(())
            }
            (b't', Kind::Bool(true)) => self.word(b"true", Kind::Null).ok().map(drop),
            (b'f', Kind::Bool(false)) => self.word(b"false", Kind::Null).ok().map(drop),
            (b'n', Kind::Null) => self.word(b"null", Kind::Null).ok().map(drop),
            _ => None,
        }
    }

    /// [`Parser::equal`] of an object: every member found once among `expected`'s, with an
    /// equal value, and none missing.
    fn equal_members(&mut self, depth: usize, expected: &Object, opened: &mut usize) -> Option<()> {
        self.pos += 1; // '{'
        self.skip_whitespace();
        let members = expected.members();
        if self.peek()? == b'}' {
            self.pos += 1;
            return members.is_empty().then_some(());
        }
        let mut found = Found::new(members.len());
        loop {
            self.skip_whitespace();
            if self.peek()? != b'"' {
                return None;
            }
            let at = match self.plain_name(members) {
                Some(at) => at,
                None => {
                    let name = self.string().ok()?;
                    let name = name.as_str();
                    // Two names equal after NFC normalisation (which the reader refuses) are
                    // not both in NFC: a name not quickly known to be in NFC is left to the
                    // reader.
                    if !name.is_ascii() && is_nfc_quick(name.chars()) != IsNormalized::Yes {
                        return None;
                    }
                    find(expected, name)?
                }
            };
            // A name repeated exactly is found twice, and refused.
            if !found.insert(at) {
                return None;
            }
            self.skip_whitespace();
            if self.peek()? != b':' {
                return None;
            }
            self.pos += 1;
            self.skip_whitespace();
            self.equal(depth, &members[at].value, opened)?;
            self.skip_whitespace();
            match self.peek()? {
                b',' => self.pos += 1,
                b'}' => {
                    self.pos += 1;
                    return (found.count == members.len()).then_some(());
                }
                _ => return None,
            }
        }
    }

    /// The index of the member of `members` (a few) whose name the string at `pos` spells
    /// byte for byte, closed right after, when that name is printable ASCII without a quote
    /// or backslash (a string the reader reads as its bytes); the position is then past the
    /// string. `None`, the position unmoved, otherwise.
    fn plain_name(&mut self, members: &[Member]) -> Option<usize> {
        if members.len() > 16 {
            return None;
        }
        let rest = self.input.get(self.pos + 1..)?;
        let at = members.iter().position(|member| {
            let name = member.name.as_bytes();
            rest.get(name.len()) == Some(&b'"')
                && rest.starts_with(name)
                && name
                    .iter()
                    .all(|&b| (b' '..=b'~').contains(&b) && b != b'"' && b != b'\\')
        })?;
        self.pos += members[at].name.as_bytes().len() + 2;
        Some(at)
    }

    /// [`Parser::equal`] of an array: as many elements as `expected`, each equal to its own.
    fn equal_elements(
        &mut self,
        depth: usize,
        expected: &[Value],
        opened: &mut usize,
    ) -> Option<()> {
        self.pos += 1; // '['
        self.skip_whitespace();
        if self.peek()? == b']' {
            self.pos += 1;
            return expected.is_empty().then_some(());
        }
        let mut items = expected.iter();
        loop {
            self.skip_whitespace();
            self.equal(depth, items.next()?, opened)?;
            self.skip_whitespace();
            match self.peek()? {
                b',' => self.pos += 1,
                b']' => {
                    self.pos += 1;
                    return items.next().is_none().then_some(());
                }
                _ => return None,
            }
        }
    }
}

/// The index of member `name` of `object`: by its bytes among a few members (most objects),
/// by the order of names among many.
fn find(object: &Object, name: &str) -> Option<usize> {
    let members = object.members();
    if members.len() <= 16 {
        members
            .iter()
            .position(|member| member.name.as_bytes() == name.as_bytes())
    } else {
        object.search(name).ok()
    }
}

/// The members of an approved object found so far, one bit each (the first 64 without an
/// allocation).
struct Found {
    first: u64,
    rest: Vec<u64>,
    count: usize,
}

impl Found {
    fn new(members: usize) -> Self {
        Self {
            first: 0,
            rest: vec![0; members.div_ceil(64).saturating_sub(1)],
            count: 0,
        }
    }

    /// Marks member `at` found; false when it was already.
    fn insert(&mut self, at: usize) -> bool {
        let bit = 1u64 << (at % 64);
        let word = match at / 64 {
            0 => &mut self.first,
            n => match self.rest.get_mut(n - 1) {
                Some(word) => word,
                None => return false,
            },
        };
        let fresh = *word & bit == 0;
        *word |= bit;
        self.count += usize::from(fresh);
        fresh
    }
}

#[cfg(test)]
mod tests {
    use super::super::{ApprovedTools, Taken, parse, parse_answer};
    use crate::value::{Object, Value};

    const A: &str = r#"{"name":"a","description":"d\u00e9","n":1.5,"list":[1,true,null,"x",[]],"o":{"k":{"z":{}},"é":1,"b":-0}}"#;

    /// Approved forms looked up by name, as the engine's index does.
    struct Forms(Vec<Value>);

    impl ApprovedTools for Forms {
        fn approved_form(&self, name: &str) -> Option<(u32, &Value)> {
            let rank = self
                .0
                .iter()
                .position(|form| form.get("name").and_then(Value::as_str) == Some(name))?;
            Some((u32::try_from(rank).ok()?, &self.0[rank]))
        }

        fn len(&self) -> usize {
            self.0.len()
        }
    }

    fn forms(tools: &[&str]) -> Forms {
        Forms(tools.iter().map(|t| parse(t.as_bytes()).unwrap()).collect())
    }

    /// Reads `tools` (the text of the `tools` array's elements) as an answer both ways and
    /// checks that they agree: the same error, or the same reading but for the tools taken,
    /// each of which [`parse`] reads as the approved form of its name and `parse_answer` as
    /// its name alone, at the same span, with the rank of that form. Returns the indices
    /// taken.
    fn taken(forms: &Forms, tools: &str) -> Vec<u32> {
        let answer = format!(r#"{{"jsonrpc":"2.0","id":1,"result":{{"tools":[{tools}],"n":2}}}}"#);
        taken_in(forms, &answer)
    }

    fn taken_in(forms: &Forms, answer: &str) -> Vec<u32> {
        let whole = parse(answer.as_bytes());
        let (value, taken) = match (whole.clone(), parse_answer(answer.as_bytes(), forms)) {
            (Err(a), Err(b)) => {
                assert_eq!(a, b, "{answer}");
                return Vec::new();
            }
            (Ok(whole), Ok(read)) => {
                check_same(forms, &whole, &read.0, &read.1, answer);
                read
            }
            (a, b) => panic!("{answer}: {a:?} against {b:?}"),
        };
        let _ = value;
        taken.iter().map(|taken| taken.index).collect()
    }

    fn check_same(forms: &Forms, whole: &Value, read: &Value, taken: &[Taken], answer: &str) {
        assert_eq!(whole.span(), read.span(), "{answer}");
        let tools = |v: &Value| {
            v.pointer("/result/tools")
                .and_then(Value::as_array)
                .map(<[Value]>::to_vec)
        };
        let (Some(all), Some(some)) = (tools(whole), tools(read)) else {
            assert!(taken.is_empty(), "{answer}");
            assert_eq!(whole, read, "{answer}");
            return;
        };
        assert_eq!(all.len(), some.len(), "{answer}");
        for (i, (w, r)) in all.iter().zip(&some).enumerate() {
            assert_eq!(w.span(), r.span(), "{answer}: tool {i}");
            if let Some(taken) = taken.iter().find(|t| t.index == u32::try_from(i).unwrap()) {
                let name = w.get("name").and_then(Value::as_str).unwrap();
                let form = &forms.0[taken.rank as usize];
                assert_eq!(form.get("name").and_then(Value::as_str), Some(name));
                assert_eq!(
                    r.get("name").and_then(Value::as_str),
                    Some(name),
                    "{answer}"
                );
                assert_eq!(
                    r.as_object().map(|o| o.members().len()),
                    Some(1),
                    "{answer}"
                );
            } else {
                assert_eq!(w, r, "{answer}: tool {i}");
            }
        }
        // Everything around the tools is read alike.
        let without = |v: &Value| {
            let mut v = v.clone();
            if let Some(result) = v
                .as_object_mut()
                .and_then(|root| root.get_mut("result"))
                .and_then(Value::as_object_mut)
            {
                result.remove("tools");
            }
            v
        };
        assert_eq!(without(whole), without(read), "{answer}");
    }

    #[test]
    fn takes_a_tool_served_as_approved_in_any_order_and_spelling() {
        let forms = forms(&[A, r#"{"name":"b"}"#]);
        let reordered = r#"{ "o" : {"b":0,"é":1.0,"k":{"z":{ }}} , "list":[1 ,true,null,"\u0078",[ ]],"n":15e-1,"description":"dé","name":"\u0061"}"#;
        for (tools, expected) in [
            (A, &[0][..]),
            (reordered, &[0]),
            (
                &format!(r#"{A},{{"name":"c"}},{A},{{"name":"b"}}"#),
                &[0, 2, 3],
            ),
            (r#"{"name":"b"},{"name":"b"}"#, &[0, 1]),
        ] {
            assert_eq!(taken(&forms, tools), expected, "{tools}");
        }
        // `tools` found by its decoded name, wherever it stands in `result`.
        let answer = format!(r#"{{"result":{{"x":[{A}],"t\u006fols":[{A}]}},"id":1}}"#);
        assert_eq!(taken_in(&forms, &answer), [0]);
    }

    #[test]
    fn compares_an_object_of_many_members_by_the_order_of_their_names() {
        // Past 16 members, a served name is found by the order of the approved names.
        let members: Vec<String> = (0..40)
            .map(|i| format!(r#""m{i}\u00e9":{i},"p{i}":"{i}""#))
            .collect();
        let tool = |members: &[String]| format!(r#"{{"name":"many",{}}}"#, members.join(","));
        let forms = forms(&[&tool(&members)]);
        let mut reversed = members.clone();
        reversed.reverse();
        assert_eq!(taken(&forms, &tool(&reversed)), [0]);
        let mut changed = members.clone();
        changed[7] = changed[7].replace(":7,", ":8,");
        let mut missing = members.clone();
        missing[39] = r#""m39\u00e9":39"#.to_owned();
        let mut more = members.clone();
        more.push(r#""m40":40"#.to_owned());
        let mut repeated = members;
        repeated.push(r#""p3":"3""#.to_owned());
        for tools in [changed, missing, more, repeated] {
            assert_eq!(taken(&forms, &tool(&tools)), [0u32; 0], "{tools:?}");
        }
    }

    #[test]
    fn reads_as_always_a_tool_not_served_as_approved() {
        let forms = forms(&[A]);
        let differs = [
            A.replace("1.5", "1.6"),
            A.replace(r#""b":-0"#, r#""b":-0,"c":1"#),
            A.replace(r#","b":-0"#, ""),
            A.replace(r#""x",[]"#, r#""x",[],1"#),
            A.replace(r#""x",[]"#, r#""x""#),
            A.replace("true", "false"),
            A.replace("null", "0"),
            A.replace(r#""x""#, r#""y""#),
            A.replace(r#"{"z":{}}"#, r#"{"z":[]}"#),
            A.replace(r#""n":1.5"#, r#""n":"1.5""#),
            A.replace(r#""name":"a""#, r#""name":"c""#),
            A.replace(r#""name":"a""#, r#""name":1"#),
            A.replace(r#""name":"a","#, ""),
        ];
        for tools in &differs {
            assert_eq!(taken(&forms, tools), [0u32; 0], "{tools}");
        }
        // Not under `/result/tools`: not compared.
        for answer in [
            format!(r#"{{"result":{{"x":{{"tools":[{A}]}}}}}}"#),
            format!(r#"{{"tools":[{A}]}}"#),
            format!(r#"{{"error":{{"tools":[{A}]}}}}"#),
            format!(r#"{{"result":[{{"tools":[{A}]}}]}}"#),
            format!(r#"[{{"result":{{"tools":[{A}]}}}}]"#),
            format!(r#"{{"result":{{"tools":{{"a":{A}}}}}}}"#),
        ] {
            assert_eq!(taken_in(&forms, &answer), [0u32; 0], "{answer}");
        }
    }

    #[test]
    fn refuses_what_the_reader_refuses_in_a_tool_otherwise_as_approved() {
        let forms = forms(&[A]);
        for tools in [
            A.replace(r#""b":-0"#, r#""b":-0,"b":-0"#),
            A.replace(r#""b":-0"#, r#""b":-0,"name":"a""#),
            A.replace("[]]", "[],]"),
            A.replace("-0}", "-0,}"),
            A.replace(r#""x""#, r#""\ud800""#),
            A.replace(r#""x""#, "\"\u{1}\""),
            A.replace("1.5", "01.5"),
            A.replace("true", "tru"),
            A.replace(r#""n":"#, r#""n" "#),
        ] {
            assert_eq!(taken(&forms, &tools), [0u32; 0], "{tools}");
        }
        // An approved form made in code may hold what the reader refuses: a noncharacter,
        // names equal after NFC normalisation, nesting past the limit, a control character in
        // a name. Served, it is refused.
        let odd = |name: &str, members: Vec<(&str, Value)>| -> Value {
            let mut object: Object = members.into_iter().collect();
            object.insert("name", name);
            Value::from(object)
        };
        let mut nested = Value::from(Vec::<Value>::new());
        for _ in 0..253 {
            nested = Value::from(vec![nested]);
        }
        let forms = Forms(vec![
            odd("nonchar", vec![("d", Value::from("\u{FFFF}"))]),
            odd(
                "nfc",
                vec![
                    ("\u{e9}", Value::from(1i64)),
                    ("e\u{301}", Value::from(2i64)),
                ],
            ),
            odd("deep", vec![("deep", nested)]),
            odd("ctl", vec![("c\u{1}d", Value::from(1i64))]),
        ]);
        for tools in [
            r#"{"name":"nonchar","d":"\uffff"}"#.to_owned(),
            "{\"name\":\"ctl\",\"c\u{1}d\":1}".to_owned(),
            "{\"name\":\"nfc\",\"\u{e9}\":1,\"e\u{301}\":2}".to_owned(),
            format!(
                r#"{{"name":"deep","deep":{}{}}}"#,
                "[".repeat(254),
                "]".repeat(254)
            ),
        ] {
            let answer = format!(r#"{{"result":{{"tools":[{tools}]}}}}"#);
            assert!(parse(answer.as_bytes()).is_err(), "{answer}");
            assert_eq!(taken_in(&forms, &answer), [0u32; 0], "{answer}");
        }
    }
}
