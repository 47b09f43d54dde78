//! The layers of this crate (docs/design.md, "Layers"), checked on its source: a file of the
//! JSON layer names no module of the surface or judgement layers, a file of the surface layer
//! names no module of the judgement layer. Every `crate::…` path counts, in code, tests and
//! documentation links alike, and so do the crate root's re-exports (`crate::Error` is the
//! surface layer's error).

use std::collections::BTreeMap;
use std::fs;
use std::path::{Path, PathBuf};

/// The layers, lowest first: a file may name its own layer and those below it.
#[derive(Clone, Copy, Debug, Eq, Ord, PartialEq, PartialOrd)]
enum Layer {
    Json,
    Surface,
    Judgement,
}

/// The layer of each module of `src` (a file `NAME.rs` or a folder `NAME/` in its layer's
/// folder), and of the layer folders themselves.
const MODULES: [(&str, Layer); 29] = [
    ("json", Layer::Json),
    ("surface", Layer::Surface),
    ("item", Layer::Surface),
    ("judge", Layer::Judgement),
    ("wire", Layer::Judgement),
    ("error", Layer::Json),
    ("escape", Layer::Json),
    ("number", Layer::Json),
    ("value", Layer::Json),
    ("parse", Layer::Json),
    ("canon", Layer::Json),
    ("digest", Layer::Json),
    ("fold", Layer::Json),
    ("outline", Layer::Json),
    ("sse", Layer::Json),
    ("http", Layer::Json),
    ("document", Layer::Surface),
    ("surface", Layer::Surface),
    ("manifest", Layer::Surface),
    ("lockfile", Layer::Surface),
    ("launch", Layer::Surface),
    ("artifact", Layer::Surface),
    ("scan", Layer::Judgement),
    ("diff", Layer::Judgement),
    ("policy", Layer::Judgement),
    ("report", Layer::Judgement),
    ("admission", Layer::Judgement),
    ("engine", Layer::Judgement),
    ("remedy", Layer::Judgement),
];

fn src() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("src")
}

fn layer_of_module(name: &str) -> Option<Layer> {
    MODULES.iter().find(|(m, _)| *m == name).map(|(_, l)| *l)
}

/// Every `.rs` file under `dir`, with its path relative to `src`.
fn files(dir: &Path, out: &mut Vec<PathBuf>) {
    for entry in fs::read_dir(dir).unwrap() {
        let path = entry.unwrap().path();
        if path.is_dir() {
            files(&path, out);
        } else if path.extension().is_some_and(|e| e == "rs") {
            out.push(path);
        }
    }
}

/// The module a file belongs to: `lockfile` for `src/surface/lockfile/format.rs` and
/// `src/surface/lockfile/mod.rs`, `parse` for `src/json/parse.rs`, `lib` for `src/lib.rs` and
/// a layer folder's `mod.rs`.
fn module_of(path: &Path) -> String {
    let relative = path.strip_prefix(src()).unwrap();
    let mut parts = relative
        .components()
        .map(|c| c.as_os_str().to_str().unwrap());
    let first = parts.next().unwrap();
    let module = if ["json", "surface", "judge", "wire"].contains(&first) {
        parts.next().unwrap()
    } else {
        first
    };
    match module {
        "mod.rs" => "lib".to_owned(),
        name => name.trim_end_matches(".rs").to_owned(),
    }
}

fn is_ident(b: u8) -> bool {
    b.is_ascii_alphanumeric() || b == b'_'
}

/// The first segments of every `crate::` path in `text`: `parse` for `crate::parse::MAX_DEPTH`,
/// `Strictness` and `parse` for `crate::{Strictness, parse}`.
fn crate_paths(text: &str) -> Vec<String> {
    let bytes = text.as_bytes();
    let mut found = Vec::new();
    let mut from = 0;
    while let Some(at) = text[from..].find("crate::") {
        let start = from + at;
        from = start + "crate::".len();
        if start > 0 && (is_ident(bytes[start - 1]) || bytes[start - 1] == b'$') {
            continue; // `mcppin_core::`, `$crate::`
        }
        if bytes.get(from) == Some(&b'{') {
            // A group: the first segment of each member at depth 1.
            let mut depth = 0;
            let mut expect_segment = true;
            let mut i = from;
            while i < bytes.len() {
                match bytes[i] {
                    b'{' => {
                        depth += 1;
                        if depth == 1 {
                            expect_segment = true;
                        }
                    }
                    b'}' => {
                        depth -= 1;
                        if depth == 0 {
                            break;
                        }
                    }
                    b',' if depth == 1 => expect_segment = true,
                    b if depth == 1 && expect_segment && is_ident(b) => {
                        let end = (i..bytes.len())
                            .find(|&j| !is_ident(bytes[j]))
                            .unwrap_or(bytes.len());
                        found.push(text[i..end].to_owned());
                        expect_segment = false;
                        i = end;
                        continue;
                    }
                    _ => {}
                }
                i += 1;
            }
        } else {
            let end = (from..bytes.len())
                .find(|&j| !is_ident(bytes[j]))
                .unwrap_or(bytes.len());
            found.push(text[from..end].to_owned());
        }
    }
    found
}

/// The crate root's names and the layer of the module each comes from, read from lib.rs's
/// `pub use LAYER::MODULE::{...}` lines.
fn root_names() -> BTreeMap<String, Layer> {
    let lib = fs::read_to_string(src().join("lib.rs")).unwrap();
    let mut names = BTreeMap::new();
    for line in lib.lines() {
        let Some(rest) = line.strip_prefix("pub use ") else {
            continue;
        };
        let (path, items) = rest.rsplit_once("::").unwrap();
        let module = path.split("::").next().unwrap();
        let layer = layer_of_module(module)
            .unwrap_or_else(|| panic!("lib.rs re-exports from unknown module {module}"));
        let items = items
            .trim_end_matches(';')
            .trim_matches(|c| c == '{' || c == '}');
        for item in items.split(',') {
            let item = item.trim();
            if !item.is_empty() {
                names.insert(item.to_owned(), layer);
            }
        }
    }
    names
}

/// What each file names above its own layer: `(file, its layer, the name, that name's layer)`.
fn violations() -> Vec<(String, Layer, String, Layer)> {
    let roots = root_names();
    let mut all = Vec::new();
    files(&src(), &mut all);
    all.sort();
    let mut out = Vec::new();
    for path in all {
        let module = module_of(&path);
        if module == "lib" {
            continue;
        }
        let layer = layer_of_module(&module)
            .unwrap_or_else(|| panic!("src/{module} has no layer: add it to MODULES"));
        let text = fs::read_to_string(&path).unwrap();
        for name in crate_paths(&text) {
            let named = layer_of_module(&name).or_else(|| roots.get(&name).copied());
            let named = named.unwrap_or_else(|| {
                panic!(
                    "{}: crate::{name} is neither a module nor a root name",
                    path.display()
                )
            });
            if named > layer {
                let file = path.strip_prefix(src()).unwrap().display().to_string();
                out.push((file, layer, name, named));
            }
        }
    }
    out
}

#[test]
fn no_file_names_a_module_of_a_higher_layer() {
    let found = violations();
    assert!(found.is_empty(), "layering broken: {found:#?}");
}

#[test]
fn every_module_has_a_layer() {
    let mut all = Vec::new();
    files(&src(), &mut all);
    for path in all {
        let module = module_of(&path);
        assert!(
            module == "lib" || layer_of_module(&module).is_some(),
            "{module} has no layer"
        );
    }
}

#[test]
fn the_scan_sees_every_form_of_path() {
    assert_eq!(
        crate_paths("use crate::lockfile::Pin; x(crate::Error::Json); $crate::no; mcppin_core::no"),
        ["lockfile", "Error"]
    );
    assert_eq!(
        crate_paths("use crate::{Strictness, report::{a, b}, parse};"),
        ["Strictness", "report", "parse"]
    );
    assert_eq!(
        crate_paths("[`crate::policy::Report`]\nuse crate::{\n    Value,\n};"),
        ["policy", "Value"]
    );
}

#[test]
fn the_rule_fires_on_a_json_file_naming_the_surface_error() {
    // The check the test above makes, on a made-up file: the JSON layer's `digest` naming
    // `crate::Error` (the surface layer's) or `crate::lockfile` is refused.
    let roots = root_names();
    for name in crate_paths("use crate::Error; use crate::lockfile::Pin;") {
        let named = layer_of_module(&name).or_else(|| roots.get(&name).copied());
        assert_eq!(named, Some(Layer::Surface), "{name}");
        assert!(named > layer_of_module("digest"));
    }
    assert!(layer_of_module("report") > layer_of_module("manifest"));
}
