//! The layers of this crate (docs/design.md, "Layers inside `mcppin-core`"), checked on its
//! source. Each layer is a folder of `src`: `json`, `surface`, `judge` and `wire`, lowest
//! first. A file names only what its own layer and the layers below it define: every import
//! counts, in code, in tests and in documentation links alike, and a name the crate root
//! re-exports (`crate::Error`) counts as the file that defines it. Inside a layer, no file
//! imports a file that imports it back. The crate root defines nothing: it names the layers'
//! modules and items for the crate's users.

use std::path::{Component, Path};

use mcppin_testkit::import::{Edge, Graph};

/// The layers, lowest first: the folders of `src`.
const LAYERS: [&str; 4] = ["json", "surface", "judge", "wire"];

fn graph() -> Graph {
    Graph::of_crate(Path::new(env!("CARGO_MANIFEST_DIR")))
}

/// The layer of a file (`src/json/parse.rs` is in `json`); `None` for the crate root and for
/// a file outside every layer's folder.
fn layer(file: &Path) -> Option<usize> {
    let mut parts = file
        .components()
        .skip_while(|c| *c != Component::Normal("src".as_ref()));
    parts.next()?;
    let folder = parts.next()?.as_os_str().to_str()?;
    parts.next()?; // a file in the folder, not `src/json.rs`
    LAYERS.iter().position(|l| *l == folder)
}

/// Each import of a file by a file of a lower layer, as a sentence.
fn upward(graph: &Graph) -> Vec<String> {
    graph
        .edges()
        .filter_map(|edge| {
            let (from, to) = (layer(edge.from)?, layer(edge.to)?);
            (to > from).then(|| describe(&edge, from, to))
        })
        .collect()
}

fn describe(edge: &Edge<'_>, from: usize, to: usize) -> String {
    let names: Vec<&str> = edge.names.iter().map(String::as_str).collect();
    format!(
        "{} ({}) names {} of {} ({}), in {:?}",
        edge.from.display(),
        LAYERS[from],
        names.join(", "),
        edge.to.display(),
        LAYERS[to],
        edge.origin
    )
}

#[test]
fn every_file_is_in_a_layer_and_the_root_defines_nothing() {
    let graph = graph();
    for file in graph.files() {
        assert!(
            layer(file).is_some() || file == Path::new("src/lib.rs"),
            "{} is in no layer: put it in the folder of its layer ({LAYERS:?})",
            file.display()
        );
    }
    for edge in graph.edges() {
        assert!(
            layer(edge.to).is_some(),
            "{} names {:?} of {}: the crate root only names what the layers define",
            edge.from.display(),
            edge.names,
            edge.to.display()
        );
    }
}

#[test]
fn no_file_names_what_a_higher_layer_defines() {
    let found = upward(&graph());
    assert!(found.is_empty(), "layering broken:\n{}", found.join("\n"));
}

#[test]
fn no_file_imports_a_file_of_its_layer_that_imports_it_back() {
    // Imports only run down the layers (the test above), so a circle lies inside one layer.
    let circles = graph().circles_text();
    assert!(circles.is_empty(), "circles inside a layer:\n{circles}");
}

#[test]
fn the_layer_rule_fires_on_a_file_naming_a_higher_layer() {
    // The check the tests above make, on a made-up crate: the JSON layer's digest naming the
    // surface layer's error through the crate root, in code and in a documentation link.
    let crate_with = |digest: &str| {
        Graph::of_sources(&[
            (
                "src/lib.rs",
                "pub mod json;\npub mod surface;\npub use surface::document::Error;\n",
            ),
            ("src/json/mod.rs", "pub mod digest;\npub mod value;\n"),
            ("src/json/value.rs", "pub struct Value;\n"),
            ("src/json/digest.rs", digest),
            ("src/surface/mod.rs", "pub mod document;\n"),
            (
                "src/surface/document.rs",
                "use crate::json::value::Value;\npub enum Error { Bad(Value) }\n",
            ),
        ])
    };
    let holds = crate_with("use crate::json::value::Value;\npub fn digest(_: &Value) {}\n");
    assert!(upward(&holds).is_empty(), "{:?}", upward(&holds));
    let fires = crate_with("pub fn digest() -> Result<(), crate::Error> { Ok(()) }\n");
    assert_eq!(
        upward(&fires),
        ["src/json/digest.rs (json) names Error of src/surface/document.rs (surface), in Code"]
    );
    let documented = crate_with("/// Never fails with [`crate::Error`].\npub fn digest() {}\n");
    assert_eq!(upward(&documented).len(), 1, "a documentation link counts");
}

#[test]
fn the_circle_rule_fires_on_two_files_of_a_layer_naming_each_other() {
    // The shape this crate had: the surface error carrying a pin, the pin's file failing with
    // the error.
    let tied = Graph::of_sources(&[
        ("src/lib.rs", "pub mod surface;\n"),
        (
            "src/surface/mod.rs",
            "pub mod document;\npub mod lockfile;\n",
        ),
        (
            "src/surface/document.rs",
            "use crate::surface::lockfile::Pin;\npub enum Error { Mismatch(Pin) }\n",
        ),
        (
            "src/surface/lockfile.rs",
            "use super::document::Error;\npub struct Pin;\n\
             pub fn read() -> Result<Pin, Error> { Ok(Pin) }\n",
        ),
    ]);
    assert!(upward(&tied).is_empty());
    assert_eq!(
        tied.circles(),
        [[
            Path::new("src/surface/document.rs"),
            Path::new("src/surface/lockfile.rs")
        ]]
    );
}
