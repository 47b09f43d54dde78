//! No two files of this crate import each other, directly or around a loop (docs/design.md,
//! "Files without circles").

#[test]
fn no_file_imports_a_file_that_imports_it_back() {
    mcppin_testkit::import::assert_no_circle(env!("CARGO_MANIFEST_DIR"));
}
