//! The outline reader against the relaxed reader on arbitrary bytes: the same inputs accepted,
//! the same error for every refusal, and the recorded top level (members or elements in
//! document order) with the spans and names of the value tree. An outline made from the strict
//! reading is the outline of the bytes, whenever the strict reader accepts them.
#![no_main]

use libfuzzer_sys::fuzz_target;
use mcppin_core::outline::Outline;
use mcppin_core::{Kind, Strictness, parse, parse_with};

fuzz_target!(|data: &[u8]| {
    let relaxed = parse_with(data, Strictness::Relaxed);
    match (&relaxed, Outline::parse(data, 1)) {
        (Err(expected), Err(found)) => assert_eq!(&found, expected),
        (Ok(value), Ok(outline)) => {
            let root = outline.root();
            assert_eq!(root.span(), value.span());
            let children: Vec<_> = root.children().collect();
            match value.kind() {
                Kind::Object(object) => {
                    let mut members: Vec<_> = object.members().iter().collect();
                    members.sort_by_key(|m| m.name_span().start);
                    assert_eq!(children.len(), members.len());
                    for (child, member) in children.iter().zip(members) {
                        assert_eq!(child.span(), member.value.span());
                        assert_eq!(child.name().as_deref(), Some(&*member.name));
                    }
                }
                Kind::Array(items) => {
                    assert_eq!(children.len(), items.len());
                    for (child, item) in children.iter().zip(items) {
                        assert_eq!(child.span(), item.span());
                    }
                }
                _ => assert!(children.is_empty()),
            }
        }
        (r, o) => panic!("readers disagree: relaxed {r:?}, outline {:?}", o.err()),
    }
    let strict = parse(data);
    for levels in 0..4 {
        match (Outline::read_strictly(data, levels), &strict) {
            (Ok((outline, value)), Ok(expected)) => {
                assert_eq!(&value, expected);
                assert_eq!(value.span(), expected.span());
                assert_eq!(Outline::parse(data, levels).ok(), Some(outline));
            }
            (Err(found), Err(expected)) => assert_eq!(&found, expected),
            (o, s) => panic!("strict readers disagree: {:?} against {s:?}", o.err()),
        }
    }
});
