//! The file-level imports of a crate's source, and the circles among them (docs/design.md,
//! "Layers inside `mcppin-core`"): a crate's tests call [`assert_no_circle`], and
//! `mcppin-core`'s layers test reads the same [`Graph`].
//!
//! File A imports file B when A names an item B defines: through a `use`, a qualified path
//! (`crate::…`, `super::…`, `self::…`, a child module's name, or a module a `use` brought in)
//! or a documentation link. A name is followed through every re-export to the file that
//! defines it, so `crate::Error`, re-exported by `lib.rs`, leads to the file of `Error`. A
//! module that publishes its own descendants (`pub use child::Item` in `lib.rs` or a `mod.rs`)
//! does not import them: that is its face, not a dependency of its code. String literals are
//! not read.
//!
//! Each import says whether it is made by the crate's code, by code under `#[cfg(test)]` or
//! by a comment ([`Origin`]); a circle is one of code. A test module may use what its file's
//! users define (a value's tests build values with the parser), and a documentation link may
//! point anywhere; a layer rule (`mcppin-core`'s) may still count all three.

use std::collections::{BTreeMap, BTreeSet};
use std::fmt::Write as _;
use std::fs;
use std::path::{Path, PathBuf};

/// The files of a crate and which names each takes from which other.
#[derive(Debug, Default)]
pub struct Graph {
    /// Each file, relative to the crate's folder (`src/lib.rs`).
    files: Vec<PathBuf>,
    /// `(importer, imported, where)` to the names the importer takes.
    edges: BTreeMap<(usize, usize, Origin), BTreeSet<String>>,
}

/// Where in the importing file a name is taken.
#[derive(Clone, Copy, Debug, Eq, Ord, PartialEq, PartialOrd)]
pub enum Origin {
    /// The crate's code: only these make a circle.
    Code,
    /// Code under `#[cfg(test)]` (a `mod tests`, a test helper).
    Test,
    /// A comment (a documentation link).
    Doc,
}

/// One import of a file by another, with the names taken.
#[derive(Debug)]
pub struct Edge<'g> {
    /// The file that names the other.
    pub from: &'g Path,
    /// The file that defines what is named.
    pub to: &'g Path,
    /// Where in `from` the names are taken.
    pub origin: Origin,
    /// The names taken, sorted.
    pub names: &'g BTreeSet<String>,
}

impl Graph {
    /// The graph of the crate whose `Cargo.toml` is in `dir`: the modules reachable from
    /// `src/lib.rs`, `src/main.rs` and `src/bin/*.rs` by `mod NAME;` (a declared module
    /// without its file is left to the compiler).
    ///
    /// # Panics
    ///
    /// When the crate has no root, or a root cannot be read.
    #[must_use]
    pub fn of_crate(dir: &Path) -> Self {
        let src = dir.join("src");
        let mut roots = Vec::new();
        for root in ["lib.rs", "main.rs"] {
            if src.join(root).is_file() {
                roots.push(PathBuf::from("src").join(root));
            }
        }
        if let Ok(entries) = fs::read_dir(src.join("bin")) {
            let mut bins: Vec<_> = entries
                .filter_map(|e| e.ok().map(|e| e.path()))
                .filter(|p| p.extension().is_some_and(|e| e == "rs"))
                .collect();
            bins.sort();
            for bin in bins {
                roots.push(bin.strip_prefix(dir).unwrap_or(&bin).to_path_buf());
            }
        }
        assert!(
            !roots.is_empty(),
            "{}: no src/lib.rs or src/main.rs",
            dir.display()
        );
        // A declared module whose file is absent is skipped: the compiler says so, not this.
        Self::build(&roots, |path| fs::read_to_string(dir.join(path)).ok())
    }

    /// The graph of a made-up crate: `files` maps each path (`src/lib.rs`, `src/a.rs`) to its
    /// text; the roots are the `lib.rs` and `main.rs` among them.
    #[must_use]
    pub fn of_sources(files: &[(&str, &str)]) -> Self {
        let map: BTreeMap<PathBuf, String> = files
            .iter()
            .map(|(p, t)| (PathBuf::from(p), (*t).to_owned()))
            .collect();
        let roots: Vec<PathBuf> = ["src/lib.rs", "src/main.rs"]
            .iter()
            .map(PathBuf::from)
            .filter(|p| map.contains_key(p))
            .collect();
        Self::build(&roots, |p| map.get(p).cloned())
    }

    /// Every import, in file order, of code, tests and comments alike.
    pub fn edges(&self) -> impl Iterator<Item = Edge<'_>> {
        self.edges.iter().map(|(&(from, to, origin), names)| Edge {
            from: &self.files[from],
            to: &self.files[to],
            origin,
            names,
        })
    }

    /// Every file read, relative to the crate's folder.
    #[must_use]
    pub fn files(&self) -> &[PathBuf] {
        &self.files
    }

    /// The circles: each set of two or more files whose code imports one another in a loop
    /// (a strongly connected component), its files sorted. Tests and comments do not count:
    /// a test module may use what its file's users define, a documentation link may point
    /// anywhere.
    #[must_use]
    pub fn circles(&self) -> Vec<Vec<&Path>> {
        let code = self
            .edges
            .keys()
            .filter(|(_, _, origin)| *origin == Origin::Code)
            .map(|&(from, to, _)| (from, to));
        let mut out: Vec<Vec<&Path>> = components(self.files.len(), code)
            .into_iter()
            .filter(|c| c.len() > 1)
            .map(|c| {
                let mut files: Vec<&Path> = c.iter().map(|&i| self.files[i].as_path()).collect();
                files.sort();
                files
            })
            .collect();
        out.sort();
        out
    }

    /// The circles as text: each circle's files and, for each import inside it, the names
    /// taken. Empty when there is none.
    #[must_use]
    pub fn circles_text(&self) -> String {
        let mut text = String::new();
        for circle in self.circles() {
            let _ = writeln!(
                text,
                "circle: {}",
                circle
                    .iter()
                    .map(|p| p.display().to_string())
                    .collect::<Vec<_>>()
                    .join(", ")
            );
            for edge in self.edges() {
                if edge.origin == Origin::Code
                    && circle.contains(&edge.from)
                    && circle.contains(&edge.to)
                {
                    let names: Vec<&str> = edge.names.iter().map(String::as_str).collect();
                    let _ = writeln!(
                        text,
                        "  {} -> {}: {}",
                        edge.from.display(),
                        edge.to.display(),
                        names.join(", ")
                    );
                }
            }
        }
        text
    }

    fn build(roots: &[PathBuf], read: impl Fn(&Path) -> Option<String>) -> Self {
        let mut tree = Tree::default();
        for root in roots {
            let Some(text) = read(root) else {
                panic!("cannot read {}", root.display());
            };
            let place = Place {
                parent: None,
                name: String::new(),
                test: false,
                dir: root.parent().unwrap_or(Path::new("")).to_path_buf(),
            };
            tree.load(root.clone(), &text, place, &read);
        }
        tree.resolve()
    }
}

/// Fails the test when the crate in `dir` (pass `env!("CARGO_MANIFEST_DIR")`) has a file-level
/// import circle, naming each circle's files and the names that tie them.
///
/// # Panics
///
/// On a circle, or when the crate's source cannot be read.
#[track_caller]
pub fn assert_no_circle(dir: &str) {
    let graph = Graph::of_crate(Path::new(dir));
    let text = graph.circles_text();
    assert!(
        text.is_empty(),
        "{dir}: files that import each other in a loop (move what both need into a file \
         both import):\n{text}"
    );
}

/// Where a file's module sits: its parent, its name there, whether `#[cfg(test)]` declares it,
/// and the folder of its children's files.
#[derive(Debug)]
struct Place {
    parent: Option<usize>,
    name: String,
    test: bool,
    dir: PathBuf,
}

/// A module: a file, or an inline `mod NAME { … }` in one.
#[derive(Debug, Default)]
struct Module {
    file: usize,
    parent: Option<usize>,
    /// The root of its crate (itself for a root).
    root: usize,
    children: BTreeMap<String, usize>,
    /// Names its `use` declarations bring in, to the declaration.
    uses: BTreeMap<String, Use>,
    /// The modules its glob imports (`use path::*`) read, as paths.
    globs: Vec<Use>,
    /// Names it defines (`fn`, `struct`, `enum`, `const`, …).
    items: BTreeSet<String>,
    /// Whether it is compiled for tests only.
    test: bool,
}

#[derive(Clone, Debug)]
struct Use {
    path: Vec<String>,
}

/// A path named in a module, by a `use`, in code or in a comment.
#[derive(Debug)]
struct Reference {
    module: usize,
    path: Vec<String>,
    kind: RefKind,
    origin: Origin,
}

#[derive(Clone, Copy, Debug, Eq, PartialEq)]
enum RefKind {
    /// A private `use`: names an item or brings a module in.
    Use,
    /// A `pub use`: a re-export, an import unless it publishes a descendant.
    Reexport,
    /// A glob `use path::*`: imports what the module's file defines.
    Glob,
    /// A path in code or a comment.
    Path,
}

#[derive(Debug, Default)]
struct Tree {
    files: Vec<PathBuf>,
    modules: Vec<Module>,
    references: Vec<Reference>,
}

/// What a path names: a module, or an item of a module (with the name the path gives it).
#[derive(Clone, Debug, Eq, PartialEq)]
enum Target {
    Module(usize),
    Item(usize, String),
}

impl Tree {
    /// Reads one file as the module at `place`, then the files of the modules it declares.
    fn load(
        &mut self,
        path: PathBuf,
        text: &str,
        place: Place,
        read: &impl Fn(&Path) -> Option<String>,
    ) {
        let file = self.files.len();
        self.files.push(path);
        let id = self.modules.len();
        let root = place.parent.map_or(id, |p| self.modules[p].root);
        self.modules.push(Module {
            file,
            parent: place.parent,
            root,
            test: place.test,
            ..Module::default()
        });
        if let Some(p) = place.parent {
            self.modules[p].children.insert(place.name, id);
        }
        let (tokens, comments) = lex(text);
        // Paths in comments (documentation links) count from the file's module.
        for comment in &comments {
            for path in comment_paths(comment) {
                self.references.push(Reference {
                    module: id,
                    path,
                    kind: RefKind::Path,
                    origin: Origin::Doc,
                });
            }
        }
        let mut files_to_load = Vec::new();
        self.walk(&tokens, id, &place.dir, &mut files_to_load);
        for (module, name, test, dir) in files_to_load {
            let candidates = [
                dir.join(format!("{name}.rs")),
                dir.join(&name).join("mod.rs"),
            ];
            let found = candidates
                .iter()
                .find_map(|p| read(p).map(|t| (p.clone(), t)));
            if let Some((child_path, child_text)) = found {
                let place = Place {
                    parent: Some(module),
                    // Both `NAME.rs` and `NAME/mod.rs` keep their children in `NAME/`.
                    dir: dir.join(&name),
                    name,
                    test,
                };
                self.load(child_path, &child_text, place, read);
            }
        }
    }

    /// Walks a file's tokens: inline modules, `mod NAME;`, `use`, items and paths, and what
    /// `#[cfg(test)]` covers.
    fn walk(
        &mut self,
        tokens: &[Token],
        file_module: usize,
        dir: &Path,
        to_load: &mut Vec<(usize, String, bool, PathBuf)>,
    ) {
        // (module, brace depth at which it closes, folder of its children)
        let mut scopes: Vec<(usize, usize, PathBuf)> = vec![(file_module, 0, dir.to_path_buf())];
        let mut depth = 0usize;
        // `#[cfg(test)]` seen, its item not yet begun; the depth its block closes at.
        let mut pending_test = false;
        let mut test_until: Option<usize> = None;
        let mut i = 0;
        while i < tokens.len() {
            let (module, _, scope_dir) = scopes.last().cloned().unwrap_or_default();
            let in_test = self.modules[module].test || test_until.is_some() || pending_test;
            let origin = if in_test { Origin::Test } else { Origin::Code };
            if is_cfg_test(tokens, i) {
                pending_test = true;
                i += 7;
                continue;
            }
            match &tokens[i] {
                Token::Punct('{') => {
                    if pending_test && test_until.is_none() {
                        test_until = Some(depth);
                    }
                    pending_test = false;
                    depth += 1;
                }
                Token::Punct('}') => {
                    depth = depth.saturating_sub(1);
                    if test_until == Some(depth) {
                        test_until = None;
                    }
                    if scopes.len() > 1 && scopes.last().is_some_and(|s| s.1 == depth) {
                        scopes.pop();
                    }
                }
                Token::Punct(';') => pending_test = false,
                Token::Ident(word) if word == "mod" => {
                    if let Some(Token::Ident(name)) = tokens.get(i + 1) {
                        match tokens.get(i + 2) {
                            Some(Token::Punct(';')) => {
                                to_load.push((module, name.clone(), in_test, scope_dir.clone()));
                                pending_test = false;
                                i += 3;
                                continue;
                            }
                            Some(Token::Punct('{')) => {
                                let id = self.modules.len();
                                let file = self.modules[module].file;
                                let root = self.modules[module].root;
                                self.modules.push(Module {
                                    file,
                                    parent: Some(module),
                                    root,
                                    test: in_test,
                                    ..Module::default()
                                });
                                self.modules[module].children.insert(name.clone(), id);
                                scopes.push((id, depth, scope_dir.join(name)));
                                pending_test = false;
                                depth += 1;
                                i += 3;
                                continue;
                            }
                            _ => {}
                        }
                    }
                }
                Token::Ident(word) if word == "use" => {
                    let kind = if is_public(tokens, i) {
                        RefKind::Reexport
                    } else {
                        RefKind::Use
                    };
                    let (trees, end) = use_tree(tokens, i + 1);
                    for (path, leaf) in trees {
                        let kind = match leaf {
                            Leaf::Glob => {
                                let glob = Use { path: path.clone() };
                                self.modules[module].globs.push(glob);
                                RefKind::Glob
                            }
                            Leaf::Name(alias) => {
                                if alias != "_" {
                                    let used = Use { path: path.clone() };
                                    self.modules[module].uses.insert(alias, used);
                                }
                                kind
                            }
                        };
                        self.references.push(Reference {
                            module,
                            path,
                            kind,
                            origin,
                        });
                    }
                    pending_test = false;
                    i = end;
                    continue;
                }
                Token::Ident(word) if ITEM_KEYWORDS.contains(&word.as_str()) => {
                    if let Some(Token::Ident(name)) = tokens.get(i + 1)
                        && !QUALIFIERS.contains(&name.as_str())
                    {
                        self.modules[module].items.insert(name.clone());
                    }
                }
                Token::Ident(word) if word == "macro_rules" => {
                    if let (Some(Token::Punct('!')), Some(Token::Ident(name))) =
                        (tokens.get(i + 1), tokens.get(i + 2))
                    {
                        self.modules[module].items.insert(name.clone());
                    }
                }
                Token::Ident(first) => {
                    let after_path =
                        i > 0 && matches!(tokens[i - 1], Token::PathSep | Token::Punct('$' | '.'));
                    if !after_path && matches!(tokens.get(i + 1), Some(Token::PathSep)) {
                        let mut path = vec![first.clone()];
                        let mut j = i + 1;
                        while let (Some(Token::PathSep), Some(Token::Ident(next))) =
                            (tokens.get(j), tokens.get(j + 1))
                        {
                            path.push(next.clone());
                            j += 2;
                        }
                        self.references.push(Reference {
                            module,
                            path,
                            kind: RefKind::Path,
                            origin,
                        });
                        i = j;
                        continue;
                    }
                }
                _ => {}
            }
            i += 1;
        }
    }

    fn resolve(self) -> Graph {
        let mut edges: BTreeMap<(usize, usize, Origin), BTreeSet<String>> = BTreeMap::new();
        for reference in &self.references {
            let Some(target) = self.resolve_from(reference.module, &reference.path, 0) else {
                continue;
            };
            let from = self.modules[reference.module].file;
            let (to, name) = match (target, reference.kind) {
                (Target::Item(m, _), RefKind::Reexport) if self.descends(m, reference.module) => {
                    continue;
                }
                (Target::Module(m), RefKind::Glob) => (self.modules[m].file, "*".to_owned()),
                (Target::Item(m, name), _) => (self.modules[m].file, name),
                (Target::Module(_), _) => continue,
            };
            if from != to {
                let key = (from, to, reference.origin);
                edges.entry(key).or_default().insert(name);
            }
        }
        Graph {
            files: self.files,
            edges,
        }
    }

    /// Whether module `m` is `ancestor` or inside it.
    fn descends(&self, m: usize, ancestor: usize) -> bool {
        let mut at = Some(m);
        while let Some(id) = at {
            if id == ancestor {
                return true;
            }
            at = self.modules[id].parent;
        }
        false
    }

    /// What `path`, named in module `scope`, refers to; `None` for another crate's item or a
    /// name `scope` defines itself.
    fn resolve_from(&self, scope: usize, path: &[String], hops: usize) -> Option<Target> {
        let (first, rest) = path.split_first()?;
        let mut module = match first.as_str() {
            "crate" => self.modules[scope].root,
            "super" => self.modules[scope].parent?,
            "self" => scope,
            _ => {
                if self.modules[scope].items.contains(first) {
                    return None;
                }
                return self.resolve_in(scope, path, hops, false);
            }
        };
        // `super::super::…`
        let mut rest = rest;
        while let Some((next, tail)) = rest.split_first() {
            if next != "super" {
                break;
            }
            module = self.modules[module].parent?;
            rest = tail;
        }
        self.resolve_in(module, rest, hops, true)
    }

    /// What `path` refers to inside module `module`. A name this reading cannot find (an item
    /// a macro makes, a variant) is taken for the module's own when `fallback`, else `None`.
    fn resolve_in(
        &self,
        module: usize,
        path: &[String],
        hops: usize,
        fallback: bool,
    ) -> Option<Target> {
        let Some((first, rest)) = path.split_first() else {
            return Some(Target::Module(module));
        };
        if hops > 16 {
            return None;
        }
        let m = &self.modules[module];
        if first == "self" {
            return self.resolve_in(module, rest, hops, fallback);
        }
        let also_a_value = m.items.contains(first) || m.uses.contains_key(first);
        if let Some(&child) = m.children.get(first)
            && (!rest.is_empty() || !also_a_value)
        {
            return self.resolve_in(child, rest, hops, true);
        }
        if m.items.contains(first) {
            return Some(Target::Item(module, first.clone()));
        }
        if let Some(used) = m.uses.get(first) {
            return match self.resolve_from(module, &used.path, hops + 1)? {
                Target::Module(target) => self.resolve_in(target, rest, hops + 1, true),
                Target::Item(at, _) => Some(Target::Item(at, first.clone())),
            };
        }
        for glob in &m.globs {
            if let Some(Target::Module(target)) = self.resolve_from(module, &glob.path, hops + 1) {
                let t = &self.modules[target];
                if t.items.contains(first)
                    || t.children.contains_key(first)
                    || t.uses.contains_key(first)
                {
                    return self.resolve_in(target, path, hops + 1, true);
                }
            }
        }
        fallback.then(|| Target::Item(module, first.clone()))
    }
}

/// The keywords that introduce a named item.
const ITEM_KEYWORDS: [&str; 8] = [
    "fn", "struct", "enum", "trait", "type", "const", "static", "union",
];

/// Words that may follow an item keyword without being the item's name (`const fn`).
const QUALIFIERS: [&str; 5] = ["fn", "unsafe", "async", "extern", "mut"];

/// Whether the tokens at `at` are the attribute `#[cfg(test)]`.
fn is_cfg_test(tokens: &[Token], at: usize) -> bool {
    let want = [
        Token::Punct('#'),
        Token::Punct('['),
        Token::Ident("cfg".to_owned()),
        Token::Punct('('),
        Token::Ident("test".to_owned()),
        Token::Punct(')'),
        Token::Punct(']'),
    ];
    tokens.get(at..at + want.len()) == Some(&want[..])
}

/// Whether the `use` at `at` is preceded by `pub` or `pub(…)`.
fn is_public(tokens: &[Token], at: usize) -> bool {
    let mut i = at;
    if i > 0 && tokens[i - 1] == Token::Punct(')') {
        // pub(crate), pub(super), pub(in path)
        while i > 0 && tokens[i - 1] != Token::Punct('(') {
            i -= 1;
        }
        i = i.saturating_sub(1);
    }
    i > 0 && tokens[i - 1] == Token::Ident("pub".to_owned())
}

enum Leaf {
    Name(String),
    Glob,
}

/// Reads the use tree from `at` to its `;`: each (path, leaf), and the index after the `;`.
fn use_tree(tokens: &[Token], at: usize) -> (Vec<(Vec<String>, Leaf)>, usize) {
    let mut out = Vec::new();
    let mut i = at;
    if tokens.get(i) == Some(&Token::PathSep) {
        // `use ::extern_crate::…`: another crate's.
        while i < tokens.len() && tokens[i] != Token::Punct(';') {
            i += 1;
        }
        return (out, i + 1);
    }
    tree(tokens, &mut i, &[], &mut out);
    while i < tokens.len() && tokens[i] != Token::Punct(';') {
        i += 1;
    }
    (out, i + 1)
}

fn tree(tokens: &[Token], i: &mut usize, prefix: &[String], out: &mut Vec<(Vec<String>, Leaf)>) {
    let mut path = prefix.to_vec();
    loop {
        match tokens.get(*i) {
            Some(Token::Ident(word)) => {
                path.push(word.clone());
                *i += 1;
                if tokens.get(*i) == Some(&Token::PathSep) {
                    *i += 1;
                    continue;
                }
                let mut alias = word.clone();
                if tokens.get(*i) == Some(&Token::Ident("as".to_owned())) {
                    if let Some(Token::Ident(name)) = tokens.get(*i + 1) {
                        alias = name.clone();
                    }
                    *i += 2;
                }
                if word == "self" {
                    // `use a::b::{self}`: brings `b` in.
                    path.pop();
                    if alias == "self" {
                        alias = path.last().cloned().unwrap_or_default();
                    }
                }
                out.push((path, Leaf::Name(alias)));
                return;
            }
            Some(Token::Punct('*')) => {
                *i += 1;
                out.push((path, Leaf::Glob));
                return;
            }
            Some(Token::Punct('{')) => {
                *i += 1;
                loop {
                    match tokens.get(*i) {
                        Some(Token::Punct('}')) => {
                            *i += 1;
                            return;
                        }
                        Some(Token::Punct(',')) => *i += 1,
                        None | Some(Token::Punct(';')) => return,
                        Some(_) => {
                            let before = *i;
                            tree(tokens, i, &path, out);
                            if *i == before {
                                *i += 1;
                            }
                        }
                    }
                }
            }
            _ => return,
        }
    }
}

#[derive(Clone, Debug, Eq, PartialEq)]
enum Token {
    Ident(String),
    PathSep,
    Punct(char),
}

/// The tokens of `text` that matter here (identifiers, `::`, punctuation; literals dropped),
/// and the text of its comments.
fn lex(text: &str) -> (Vec<Token>, Vec<String>) {
    let chars: Vec<char> = text.chars().collect();
    let mut tokens = Vec::new();
    let mut comments = Vec::new();
    let mut i = 0;
    let ident_start = |c: char| c.is_alphabetic() || c == '_';
    let ident_char = |c: char| c.is_alphanumeric() || c == '_';
    while i < chars.len() {
        let c = chars[i];
        let next = chars.get(i + 1).copied();
        if c == '/' && next == Some('/') {
            let end = chars[i..]
                .iter()
                .position(|&c| c == '\n')
                .map_or(chars.len(), |p| i + p);
            comments.push(chars[i..end].iter().collect());
            i = end;
        } else if c == '/' && next == Some('*') {
            let mut depth = 0;
            let start = i;
            while i < chars.len() {
                if chars[i] == '/' && chars.get(i + 1) == Some(&'*') {
                    depth += 1;
                    i += 2;
                } else if chars[i] == '*' && chars.get(i + 1) == Some(&'/') {
                    depth -= 1;
                    i += 2;
                    if depth == 0 {
                        break;
                    }
                } else {
                    i += 1;
                }
            }
            comments.push(chars[start..i.min(chars.len())].iter().collect());
        } else if c == '"' {
            i = skip_string(&chars, i + 1);
        } else if c == '\'' {
            // A character literal, or a lifetime / label.
            if next == Some('\\') {
                i += 2;
                while i < chars.len() && chars[i] != '\'' {
                    i += 1;
                }
                i += 1;
            } else if chars.get(i + 2) == Some(&'\'') {
                i += 3;
            } else {
                i += 1;
                while i < chars.len() && ident_char(chars[i]) {
                    i += 1;
                }
            }
        } else if ident_start(c) {
            let start = i;
            while i < chars.len() && ident_char(chars[i]) {
                i += 1;
            }
            let word: String = chars[start..i].iter().collect();
            // Raw and byte strings: r"…", r#"…"#, b"…", br"…", c"…", cr#"…"#.
            let raw = matches!(word.as_str(), "r" | "br" | "cr");
            let plain = matches!(word.as_str(), "b" | "c");
            if raw && matches!(chars.get(i), Some('"' | '#')) {
                let mut hashes = 0;
                while chars.get(i) == Some(&'#') {
                    hashes += 1;
                    i += 1;
                }
                if chars.get(i) == Some(&'"') {
                    i += 1;
                    loop {
                        if i >= chars.len() {
                            break;
                        }
                        if chars[i] == '"'
                            && chars[i + 1..]
                                .iter()
                                .take(hashes)
                                .filter(|&&c| c == '#')
                                .count()
                                == hashes
                        {
                            i += 1 + hashes;
                            break;
                        }
                        i += 1;
                    }
                } else if word == "r" {
                    // `r#ident`: a raw identifier.
                    let start = i;
                    while i < chars.len() && ident_char(chars[i]) {
                        i += 1;
                    }
                    tokens.push(Token::Ident(chars[start..i].iter().collect()));
                }
            } else if plain && chars.get(i) == Some(&'"') {
                i = skip_string(&chars, i + 1);
            } else if plain && chars.get(i) == Some(&'\'') {
                i += 1;
                if chars.get(i) == Some(&'\\') {
                    i += 1;
                }
                while i < chars.len() && chars[i] != '\'' {
                    i += 1;
                }
                i += 1;
            } else {
                tokens.push(Token::Ident(word));
            }
        } else if c.is_ascii_digit() {
            while i < chars.len() && (ident_char(chars[i]) || chars[i] == '.') {
                if chars[i] == '.' && !chars.get(i + 1).is_some_and(char::is_ascii_digit) {
                    break;
                }
                i += 1;
            }
        } else if c == ':' && next == Some(':') {
            tokens.push(Token::PathSep);
            i += 2;
        } else if c.is_whitespace() {
            i += 1;
        } else {
            tokens.push(Token::Punct(c));
            i += 1;
        }
    }
    (tokens, comments)
}

/// The index after the closing quote of a string whose body starts at `i`.
fn skip_string(chars: &[char], mut i: usize) -> usize {
    while i < chars.len() {
        match chars[i] {
            '\\' => i += 2,
            '"' => return i + 1,
            _ => i += 1,
        }
    }
    i
}

/// The `crate::…`, `super::…` and `self::…` paths in a comment's text.
fn comment_paths(comment: &str) -> Vec<Vec<String>> {
    let bytes = comment.as_bytes();
    let is_ident = |b: u8| b.is_ascii_alphanumeric() || b == b'_';
    let mut out = Vec::new();
    for start_word in ["crate::", "super::", "self::"] {
        let mut from = 0;
        while let Some(at) = comment[from..].find(start_word) {
            let start = from + at;
            from = start + start_word.len();
            if start > 0 && (is_ident(bytes[start - 1]) || matches!(bytes[start - 1], b'$' | b':'))
            {
                continue;
            }
            let mut path = vec![start_word.trim_end_matches(':').to_owned()];
            let mut i = from;
            loop {
                let end = (i..bytes.len())
                    .find(|&j| !is_ident(bytes[j]))
                    .unwrap_or(bytes.len());
                if end == i {
                    break;
                }
                path.push(comment[i..end].to_owned());
                if comment[end..].starts_with("::") {
                    i = end + 2;
                } else {
                    break;
                }
            }
            if path.len() > 1 {
                out.push(path);
            }
        }
    }
    out
}

/// Tarjan's strongly connected components of the graph on `n` nodes.
fn components(n: usize, edges: impl Iterator<Item = (usize, usize)>) -> Vec<Vec<usize>> {
    let mut next: Vec<Vec<usize>> = vec![Vec::new(); n];
    for (from, to) in edges {
        next[from].push(to);
    }
    struct State {
        index: Vec<Option<usize>>,
        low: Vec<usize>,
        on_stack: Vec<bool>,
        stack: Vec<usize>,
        counter: usize,
        out: Vec<Vec<usize>>,
    }
    fn connect(v: usize, next: &[Vec<usize>], s: &mut State) {
        s.index[v] = Some(s.counter);
        s.low[v] = s.counter;
        s.counter += 1;
        s.stack.push(v);
        s.on_stack[v] = true;
        for &w in &next[v] {
            match s.index[w] {
                None => {
                    connect(w, next, s);
                    s.low[v] = s.low[v].min(s.low[w]);
                }
                Some(iw) if s.on_stack[w] => s.low[v] = s.low[v].min(iw),
                Some(_) => {}
            }
        }
        if Some(s.low[v]) == s.index[v] {
            let mut component = Vec::new();
            while let Some(w) = s.stack.pop() {
                s.on_stack[w] = false;
                component.push(w);
                if w == v {
                    break;
                }
            }
            s.out.push(component);
        }
    }
    let mut state = State {
        index: vec![None; n],
        low: vec![0; n],
        on_stack: vec![false; n],
        stack: Vec::new(),
        counter: 0,
        out: Vec::new(),
    };
    for v in 0..n {
        if state.index[v].is_none() {
            connect(v, &next, &mut state);
        }
    }
    state.out
}

#[cfg(test)]
mod tests {
    use super::*;

    fn circles(files: &[(&str, &str)]) -> Vec<Vec<String>> {
        Graph::of_sources(files)
            .circles()
            .into_iter()
            .map(|c| c.iter().map(|p| p.display().to_string()).collect())
            .collect()
    }

    fn edges(files: &[(&str, &str)]) -> Vec<String> {
        Graph::of_sources(files)
            .edges()
            .map(|e| {
                let names: Vec<&str> = e.names.iter().map(String::as_str).collect();
                let (from, to) = (e.from.display(), e.to.display());
                format!("{from} -> {to} ({:?}): {}", e.origin, names.join(" "))
            })
            .collect()
    }

    #[test]
    fn two_files_that_use_each_other_are_a_circle() {
        let found = circles(&[
            ("src/lib.rs", "mod a;\nmod b;\n"),
            ("src/a.rs", "use crate::b::B;\npub struct A(B);\n"),
            (
                "src/b.rs",
                "pub struct B;\nfn f() -> crate::a::A { todo!() }\n",
            ),
        ]);
        assert_eq!(found, [["src/a.rs", "src/b.rs"]]);
    }

    #[test]
    fn a_loop_through_three_files_and_a_child_naming_its_parent_are_circles() {
        let found = circles(&[
            ("src/lib.rs", "mod a;\nmod b;\nmod c;\n"),
            ("src/a.rs", "use crate::b::B;\npub struct A;\n"),
            ("src/b.rs", "use crate::c::C;\npub struct B;\n"),
            ("src/c.rs", "pub struct C;\nfn f(_: crate::a::A) {}\n"),
        ]);
        assert_eq!(found, [["src/a.rs", "src/b.rs", "src/c.rs"]]);
        let found = circles(&[
            ("src/lib.rs", "mod report;\n"),
            (
                "src/report/mod.rs",
                "mod text;\nuse text::render;\npub struct Shared;\n",
            ),
            (
                "src/report/text.rs",
                "use super::Shared;\npub fn render() {}\n",
            ),
        ]);
        assert_eq!(found, [["src/report/mod.rs", "src/report/text.rs"]]);
    }

    #[test]
    fn a_face_that_publishes_its_children_imports_none_of_them() {
        let files = [
            (
                "src/lib.rs",
                "mod error;\nmod read;\npub use error::Error;\npub use read::read;\n",
            ),
            ("src/error.rs", "pub enum Error { Bad }\n"),
            (
                "src/read.rs",
                "pub fn read() -> Result<(), crate::Error> { Err(crate::Error::Bad) }\n",
            ),
        ];
        assert!(circles(&files).is_empty());
        // The root name leads to the file that defines it.
        assert_eq!(edges(&files), ["src/read.rs -> src/error.rs (Code): Error"]);
    }

    #[test]
    fn a_face_whose_code_uses_a_child_that_uses_the_face_is_a_circle() {
        // Publishing `read` and holding `MAX` for it is no loop; calling `read` is.
        let published = [
            (
                "src/lib.rs",
                "mod read;\npub use read::read;\npub const MAX: usize = 1;\n",
            ),
            ("src/read.rs", "pub fn read() -> usize { crate::MAX }\n"),
        ];
        assert!(circles(&published).is_empty());
        let called = [
            (
                "src/lib.rs",
                "mod read;\npub const MAX: usize = 1;\npub fn twice() -> usize { 2 * read::read() }\n",
            ),
            ("src/read.rs", "pub fn read() -> usize { crate::MAX }\n"),
        ];
        assert_eq!(circles(&called), [["src/lib.rs", "src/read.rs"]]);
    }

    #[test]
    fn paths_through_a_module_brought_in_by_use_lead_to_their_file() {
        let files = [
            ("src/lib.rs", "pub mod report;\npub mod policy;\n"),
            ("src/report/mod.rs", "mod text;\npub use text::to_text;\n"),
            (
                "src/report/text.rs",
                "use crate::policy::Report;\npub fn to_text(_: &Report) {}\n",
            ),
            (
                "src/policy.rs",
                "use crate::report;\npub struct Report;\nfn f(r: &Report) { report::to_text(r) }\n",
            ),
        ];
        assert_eq!(circles(&files), [["src/policy.rs", "src/report/text.rs"]]);
    }

    #[test]
    fn strings_tests_and_other_crates_are_not_imports() {
        let files = [
            ("src/lib.rs", "mod a;\nmod b;\n"),
            (
                "src/a.rs",
                "pub struct A;\nconst S: &str = \"crate::b::B\";\nconst R: &str = r#\"use crate::b::B;\"#;\n\
                 fn f() { let _ = 'x'; let _ = std::fs::read(\"x\"); }\n\
                 #[cfg(test)]\nmod tests {\n    use super::*;\n    fn g() -> A { A }\n}\n",
            ),
            ("src/b.rs", "use crate::a::A;\npub struct B(A);\n"),
        ];
        assert!(circles(&files).is_empty());
        assert_eq!(edges(&files), ["src/b.rs -> src/a.rs (Code): A"]);
    }

    #[test]
    fn tests_and_documentation_links_are_edges_but_make_no_circle() {
        let files = [
            ("src/lib.rs", "mod a;\nmod b;\n"),
            ("src/a.rs", "use crate::b::B;\npub struct A;\n"),
            (
                "src/b.rs",
                "/// Used by [`crate::a::A`].\npub struct B;\n#[cfg(test)]\nmod tests {\n    \
                 use super::super::a::A;\n}\n#[cfg(test)]\nfn helper() -> crate::a::A { A }\n",
            ),
        ];
        assert!(circles(&files).is_empty());
        assert_eq!(
            edges(&files),
            [
                "src/a.rs -> src/b.rs (Code): B",
                "src/b.rs -> src/a.rs (Test): A",
                "src/b.rs -> src/a.rs (Doc): A",
            ]
        );
    }

    #[test]
    fn the_check_fires_on_this_workspace_shape_and_holds_on_its_cure() {
        // A binary whose two files share state both ways (the shape of a proxy and its
        // pumps), then the same with the shared part in a third file both import.
        let tied = [
            (
                "src/main.rs",
                "mod proxy;\nmod pump;\nfn main() { proxy::run() }\n",
            ),
            (
                "src/proxy.rs",
                "use crate::pump::pump;\npub struct Shared;\npub fn run() { pump(&Shared) }\n",
            ),
            (
                "src/pump.rs",
                "use crate::proxy::Shared;\npub fn pump(_: &Shared) {}\n",
            ),
        ];
        assert_eq!(circles(&tied), [["src/proxy.rs", "src/pump.rs"]]);
        let text = Graph::of_sources(&tied).circles_text();
        assert!(
            text.contains("src/pump.rs -> src/proxy.rs: Shared"),
            "{text}"
        );
        let untied = [
            (
                "src/main.rs",
                "mod proxy;\nmod pump;\nmod shared;\nfn main() { proxy::run() }\n",
            ),
            (
                "src/proxy.rs",
                "use crate::pump::pump;\nuse crate::shared::Shared;\npub fn run() { pump(&Shared) }\n",
            ),
            (
                "src/pump.rs",
                "use crate::shared::Shared;\npub fn pump(_: &Shared) {}\n",
            ),
            ("src/shared.rs", "pub struct Shared;\n"),
        ];
        assert!(circles(&untied).is_empty());
    }

    #[test]
    #[should_panic(expected = "files that import each other in a loop")]
    fn the_assertion_fails_a_test_on_a_circle() {
        let dir = crate::Scratch::new();
        dir.write("Cargo.toml", "");
        dir.write("src/lib.rs", "mod a;\nmod b;\n");
        dir.write("src/a.rs", "pub struct A(crate::b::B);\n");
        dir.write("src/b.rs", "pub struct B(Box<crate::a::A>);\n");
        assert_no_circle(dir.path().to_str().unwrap());
    }

    #[test]
    fn this_crate_has_no_circle() {
        assert_no_circle(env!("CARGO_MANIFEST_DIR"));
    }
}
