//! What the writers of this crate produce, its readers read back: a served
//! item of any depth and shape is either refused when it is added to a manifest, or written
//! into a manifest and a lockfile that read back equal.

use mcppin_core::lockfile::Lockfile;
use mcppin_core::manifest::{Manifest, ServerSurface};
use mcppin_core::surface::{ItemKind, MAX_ITEM_DEPTH};
use mcppin_core::{Error, JsonError, MAX_DEPTH, parse};
use proptest::prelude::*;

/// A tool nesting `levels` levels (itself counted), each level below it an array or an object
/// as the bits of `shape` say.
fn tool(levels: usize, shape: u64) -> String {
    let mut inner = String::new();
    for level in (1..levels).rev() {
        inner = match (shape.rotate_left(level as u32) & 1 == 0, inner.is_empty()) {
            (true, _) => format!("[{inner}]"),
            (false, true) => "{}".to_owned(),
            (false, false) => format!(r#"{{"k":{inner}}}"#),
        };
    }
    if inner.is_empty() {
        inner.push('1');
    }
    format!(r#"{{"name":"t","x":{inner}}}"#)
}

/// Writes `manifest` and the lockfile approving it, and reads both back.
fn assert_written_forms_read_back(manifest: &Manifest) {
    let bytes = manifest.to_bytes();
    assert_eq!(Manifest::parse(&bytes).as_ref(), Ok(manifest));
    let lock = Lockfile::approve(None, manifest, &[]).unwrap();
    let written = lock.to_bytes();
    let read = Lockfile::parse(&written).unwrap();
    assert_eq!(read, lock);
    let again = Lockfile::approve(Some(&read), manifest, &[]).unwrap();
    assert_eq!(again.to_bytes(), written);
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(512))]

    /// `mcppin lock`'s path: a manifest the reader accepts locks into a lockfile that reads
    /// back; one it refuses for depth names the item and its depth.
    #[test]
    fn a_read_manifest_writes_files_that_read_back(
        levels in 1..=MAX_DEPTH + 4,
        shape in any::<u64>(),
    ) {
        let text = format!(
            r#"{{"schema_version":2,"complete":true,"servers":[{{"id":"s","tools":[{}]}}]}}"#,
            tool(levels, shape)
        );
        match Manifest::parse(text.as_bytes()) {
            Ok(manifest) => {
                prop_assert!(levels <= MAX_ITEM_DEPTH);
                assert_written_forms_read_back(&manifest);
            }
            Err(Error::ItemTooDeep { server, name, depth, .. }) => {
                prop_assert!(levels > MAX_ITEM_DEPTH);
                prop_assert_eq!((server.as_str(), name.as_str(), depth), ("s", "t", levels));
            }
            Err(Error::Json(JsonError::TooDeep { .. })) => prop_assert!(levels + 4 > MAX_DEPTH),
            Err(other) => prop_assert!(false, "unexpected refusal: {other}"),
        }
    }

    /// `mcppin-export`'s path: a tool from a `tools/list` answer the strict reader accepts
    /// (the answer holds it one level higher than a manifest, two higher than a lockfile) is
    /// refused when added, or written into files that read back.
    #[test]
    fn a_served_tool_is_refused_or_written_in_files_that_read_back(
        levels in 1..=MAX_DEPTH + 4,
        shape in any::<u64>(),
    ) {
        let answer = format!(
            r#"{{"jsonrpc":"2.0","id":1,"result":{{"tools":[{}]}}}}"#,
            tool(levels, shape)
        );
        let Ok(answer) = parse(answer.as_bytes()) else {
            prop_assert!(levels + 3 > MAX_DEPTH);
            return Ok(());
        };
        let served = answer.pointer("/result/tools/0").unwrap().clone();
        let mut surface = ServerSurface::new();
        match surface.tools.insert("s", ItemKind::Tool, served, "/tools/0") {
            Ok(()) => {
                prop_assert!(levels <= MAX_ITEM_DEPTH);
                let mut manifest = Manifest::new(true);
                manifest.servers.insert("s".to_owned(), surface);
                assert_written_forms_read_back(&manifest);
            }
            Err(Error::ItemTooDeep { depth, limit, .. }) => {
                prop_assert_eq!((depth, limit), (levels, MAX_ITEM_DEPTH));
            }
            Err(other) => prop_assert!(false, "unexpected refusal: {other}"),
        }
    }
}

#[test]
fn the_deepest_item_a_lockfile_holds_reads_back_and_one_more_is_refused() {
    for shape in [0, u64::MAX] {
        let text = |levels| {
            format!(
                r#"{{"schema_version":2,"complete":true,"servers":[{{"id":"s","tools":[{}]}}]}}"#,
                tool(levels, shape)
            )
        };
        let manifest = Manifest::parse(text(MAX_ITEM_DEPTH).as_bytes()).unwrap();
        assert_written_forms_read_back(&manifest);
        let err = Manifest::parse(text(MAX_ITEM_DEPTH + 1).as_bytes()).unwrap_err();
        assert_eq!(err.rule(), "item-too-deep");
        assert_eq!(
            err.to_string(),
            "tool \"t\" of server \"s\" nests 252 levels deep, more than the 251 a lockfile can \
             hold, at \"/servers/0/tools/0\""
        );
    }
}
