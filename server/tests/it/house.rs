//! The house stays as ARCHITECTURE.md draws it: no product source file over [`MAX_LINES`] lines,
//! and no import circle between product files (a file that imports, directly or through others,
//! a file that imports it), in the Rust crates and in the console's TypeScript.
//!
//! Imports are read from the text: a Rust file's `use` trees and `crate::`/`super::`/`self::`
//! paths (its `#[cfg(test)]` module left out), each resolved to the deepest module that is a file
//! of the same crate; a TypeScript file's relative `import … from "./x.js"`. A parent module that
//! only declares its children (`mod x;`) does not import them, and what a module takes from its
//! ancestors (`super::`, the crate root) is its context, not an import between files: that is how
//! Rust lays a module over files (a parent that uses its children, children that use its types).

use std::collections::{BTreeMap, BTreeSet};
use std::path::{Path, PathBuf};

/// The most lines a product source file may have: past it, split it by responsibility.
const MAX_LINES: usize = 800;

/// The product crates (tests, benches and test support are not product).
const CRATES: [&str; 7] = ["core", "runtime", "adapters", "files", "workspace", "isolation", "server"];

/// The test support crates: no line limit (they are not product), but no circle either.
const SUPPORT: [&str; 6] = [
    "testsupport/mock-model",
    "testsupport/acp-agent",
    "testsupport/fake-codex",
    "testsupport/engines",
    "testsupport/models",
    "testsupport/probe",
];

fn root() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("..")
}

/// Every file under `dir` with one of `exts`, sorted.
fn files(dir: &Path, exts: &[&str]) -> Vec<PathBuf> {
    let mut out = Vec::new();
    let mut dirs = vec![dir.to_path_buf()];
    while let Some(d) = dirs.pop() {
        let Ok(entries) = std::fs::read_dir(&d) else { continue };
        for e in entries.flatten() {
            let p = e.path();
            if p.is_dir() {
                dirs.push(p);
            } else if p.extension().and_then(|x| x.to_str()).is_some_and(|x| exts.contains(&x)) {
                out.push(p);
            }
        }
    }
    out.sort();
    out
}

/// A test file by its name (`tests.rs`, `x_tests.rs`, `tests_hostile.rs`, `x.test.ts`).
fn is_test(p: &Path) -> bool {
    let name = p.file_name().and_then(|n| n.to_str()).unwrap_or_default();
    name.starts_with("tests") || name.contains("_tests.") || name.contains(".test.")
}

/// The product sources: each crate's `src/`, and the console's `src/`.
fn product_files() -> Vec<PathBuf> {
    let root = root();
    let mut all: Vec<PathBuf> = CRATES.iter().flat_map(|c| files(&root.join(c).join("src"), &["rs"])).collect();
    all.extend(files(&root.join("console/src"), &["ts", "tsx"]));
    all.retain(|p| !is_test(p) && !p.starts_with(root.join("server/src/console")));
    all
}

fn rel(p: &Path) -> String {
    p.strip_prefix(root()).unwrap_or(p).display().to_string().trim_start_matches("../").to_owned()
}

#[test]
fn no_product_file_is_over_the_line_limit() {
    let long: Vec<String> = product_files()
        .iter()
        .filter_map(|p| {
            let n = std::fs::read_to_string(p).unwrap().lines().count();
            (n > MAX_LINES).then(|| format!("{} ({n} lines)", rel(p)))
        })
        .collect();
    assert!(long.is_empty(), "over {MAX_LINES} lines, split by responsibility: {long:#?}");
}

// ---- Rust --------------------------------------------------------------------------------------

/// A crate's files by their module path (`["controller", "fold"]` for `src/controller/fold.rs`).
fn rust_modules(src: &Path) -> BTreeMap<Vec<String>, PathBuf> {
    files(src, &["rs"])
        .into_iter()
        .filter_map(|p| {
            let rel = p.strip_prefix(src).ok()?.with_extension("");
            let mut parts: Vec<String> = rel.iter().map(|c| c.to_string_lossy().into_owned()).collect();
            if matches!(parts.last().map(String::as_str), Some("mod" | "lib" | "main")) {
                parts.pop();
            }
            Some((parts, p))
        })
        .collect()
}

/// `text` without comments, strings and what follows its `#[cfg(test)]` module.
fn rust_code(text: &str) -> String {
    let mut code = String::new();
    let mut lines = text.lines().peekable();
    while let Some(line) = lines.next() {
        let t = line.trim_start();
        if t.starts_with("#[cfg(test)]") && lines.peek().is_some_and(|n| n.trim_start().starts_with("mod ")) {
            break;
        }
        if t.starts_with("//") {
            continue;
        }
        // Strings can hold `crate::` as text; a rough cut is enough here.
        let mut in_str = false;
        for c in line.chars() {
            if c == '"' {
                in_str = !in_str;
            } else if !in_str {
                code.push(c);
            }
        }
        code.push('\n');
    }
    code
}

/// Expands a `use` tree (`a::{b, c::{d, e}}`) into its paths.
fn expand(tree: &str) -> Vec<String> {
    let tree = tree.trim();
    let Some(open) = tree.find('{') else { return vec![tree.to_owned()] };
    let prefix = &tree[..open];
    let inner = &tree[open + 1..tree.rfind('}').unwrap_or(tree.len())];
    let mut parts = Vec::new();
    let (mut depth, mut start) = (0, 0);
    for (i, c) in inner.char_indices() {
        match c {
            '{' => depth += 1,
            '}' => depth -= 1,
            ',' if depth == 0 => {
                parts.push(&inner[start..i]);
                start = i + 1;
            }
            _ => {}
        }
    }
    parts.push(&inner[start..]);
    parts.into_iter().filter(|p| !p.trim().is_empty()).flat_map(|p| expand(&format!("{prefix}{}", p.trim()))).collect()
}

/// The paths a file's code names: its `use` trees and the `crate::`/`super::`/`self::` paths.
fn rust_paths(code: &str) -> Vec<String> {
    let mut paths = Vec::new();
    let mut rest = code;
    while let Some(i) = rest.find("use ") {
        let before = rest[..i].chars().last();
        let after = &rest[i + 4..];
        let end = after.find(';').unwrap_or(after.len());
        if before.is_none_or(|c| !c.is_alphanumeric() && c != '_') {
            paths.extend(expand(&after[..end].replace(char::is_whitespace, "")));
        }
        rest = &after[end.min(after.len())..];
    }
    for word in ["crate::", "super::", "self::"] {
        let mut at = 0;
        while let Some(i) = code[at..].find(word) {
            let start = at + i;
            let ok = code[..start].chars().last().is_none_or(|c| !c.is_alphanumeric() && c != '_' && c != ':');
            let end = code[start..]
                .find(|c: char| !(c.is_alphanumeric() || c == '_' || c == ':'))
                .map_or(code.len(), |e| start + e);
            if ok {
                paths.push(code[start..end].to_owned());
            }
            at = end.max(start + word.len());
        }
    }
    paths
}

/// The module a path leads to (the deepest prefix that is a file), from module `here`.
fn resolve(path: &str, here: &[String], modules: &BTreeMap<Vec<String>, PathBuf>) -> Option<Vec<String>> {
    let mut segs: Vec<&str> = path.split("::").filter(|s| !s.is_empty()).collect();
    let mut base: Vec<String> = match segs.first().copied() {
        Some("crate") => {
            segs.remove(0);
            Vec::new()
        }
        Some("super" | "self") => {
            let mut b = here.to_vec();
            while let Some("super" | "self") = segs.first().copied() {
                if segs.remove(0) == "super" {
                    b.pop()?;
                }
            }
            b
        }
        // A path from this module (a child module's name) or from another crate.
        Some(first) if modules.contains_key(&[here, &[first.to_owned()]].concat()) => here.to_vec(),
        _ => return None,
    };
    let mut found = modules.contains_key(&base).then(|| base.clone());
    for s in segs {
        base.push(s.to_owned());
        if modules.contains_key(&base) {
            found = Some(base.clone());
        }
    }
    found
}

/// File → the files of its crate it imports.
fn rust_graph() -> BTreeMap<String, BTreeSet<String>> {
    let root = root();
    let mut graph = BTreeMap::new();
    for krate in CRATES.iter().chain(SUPPORT.iter()) {
        let modules = rust_modules(&root.join(krate).join("src"));
        for (here, file) in &modules {
            if is_test(file) {
                continue;
            }
            let code = rust_code(&std::fs::read_to_string(file).unwrap());
            let to: BTreeSet<String> = rust_paths(&code)
                .iter()
                .filter_map(|p| resolve(p, here, &modules))
                .filter(|m| !here.starts_with(m))
                .filter_map(|m| modules.get(&m))
                .filter(|f| !is_test(f))
                .map(|f| rel(f))
                .collect();
            graph.insert(rel(file), to);
        }
    }
    graph
}

// ---- TypeScript --------------------------------------------------------------------------------

fn ts_graph() -> BTreeMap<String, BTreeSet<String>> {
    let src = root().join("console/src");
    let mut graph = BTreeMap::new();
    for file in files(&src, &["ts", "tsx"]).into_iter().filter(|p| !is_test(p)) {
        let text = std::fs::read_to_string(&file).unwrap();
        let mut to = BTreeSet::new();
        for part in text.split("from \"").skip(1) {
            let spec = part.split('"').next().unwrap_or_default();
            if !spec.starts_with('.') {
                continue;
            }
            let target = file.parent().unwrap().join(spec.trim_end_matches(".js"));
            for ext in ["ts", "tsx"] {
                let p = target.with_extension(ext);
                if p.starts_with(&src) && p.exists() {
                    to.insert(rel(&p));
                }
            }
        }
        graph.insert(rel(&file), to);
    }
    graph
}

/// The strongly connected components of more than one file (Tarjan).
fn circles(graph: &BTreeMap<String, BTreeSet<String>>) -> Vec<Vec<String>> {
    struct Walk<'a> {
        graph: &'a BTreeMap<String, BTreeSet<String>>,
        index: BTreeMap<&'a str, usize>,
        low: BTreeMap<&'a str, usize>,
        stack: Vec<&'a str>,
        on: BTreeSet<&'a str>,
        out: Vec<Vec<String>>,
    }
    impl<'a> Walk<'a> {
        fn visit(&mut self, v: &'a str) {
            let i = self.index.len();
            self.index.insert(v, i);
            self.low.insert(v, i);
            self.stack.push(v);
            self.on.insert(v);
            for w in self.graph.get(v).into_iter().flatten() {
                let w = w.as_str();
                if !self.index.contains_key(w) {
                    self.visit(w);
                    let l = self.low[v].min(self.low[w]);
                    self.low.insert(v, l);
                } else if self.on.contains(w) {
                    let l = self.low[v].min(self.index[w]);
                    self.low.insert(v, l);
                }
            }
            if self.low[v] == self.index[v] {
                let mut scc = Vec::new();
                while let Some(w) = self.stack.pop() {
                    self.on.remove(w);
                    scc.push(w.to_owned());
                    if w == v {
                        break;
                    }
                }
                if scc.len() > 1 {
                    scc.sort();
                    self.out.push(scc);
                }
            }
        }
    }
    let mut walk = Walk {
        graph,
        index: BTreeMap::new(),
        low: BTreeMap::new(),
        stack: Vec::new(),
        on: BTreeSet::new(),
        out: Vec::new(),
    };
    for v in graph.keys() {
        if !walk.index.contains_key(v.as_str()) {
            walk.visit(v);
        }
    }
    walk.out
}

/// What ties a circle: each of its files' imports within it.
fn ties(graph: &BTreeMap<String, BTreeSet<String>>, circle: &[String]) -> String {
    circle
        .iter()
        .map(|f| {
            let inside: Vec<&str> = graph[f].iter().filter(|t| circle.contains(t)).map(String::as_str).collect();
            format!("  {f} -> {}", inside.join(", "))
        })
        .collect::<Vec<_>>()
        .join("\n")
}

#[test]
fn no_product_file_imports_a_file_that_imports_it() {
    let mut found = Vec::new();
    for graph in [rust_graph(), ts_graph()] {
        for c in circles(&graph) {
            found.push(format!("a circle of {} files:\n{}", c.len(), ties(&graph, &c)));
        }
    }
    assert!(found.is_empty(), "import circles (move what both need into a file both import):\n{}", found.join("\n"));
}

/// A route is declared once, in its handler's `#[utoipa::path]` (method, path and access, which
/// the router's access table reads from the document): no other product file writes its path.
#[test]
fn every_route_path_is_written_in_one_file() {
    let doc = serde_json::to_value(ensemble_server::router::openapi()).expect("the document serialises");
    let paths: Vec<String> = doc["paths"].as_object().expect("paths").keys().cloned().collect();
    let sources: Vec<(String, String)> = product_files()
        .into_iter()
        .filter(|p| p.extension().is_some_and(|x| x == "rs"))
        .map(|p| {
            let text = std::fs::read_to_string(&p).unwrap_or_default();
            // Comments may name a route; byte strings are test data, not routes.
            let code: Vec<&str> = text.lines().filter(|l| !l.trim_start().starts_with("//")).collect();
            (rel(&p), code.join("\n"))
        })
        .collect();
    let mut twice = Vec::new();
    for path in &paths {
        let quoted = format!("\"{path}\"");
        let writers: Vec<&str> = sources
            .iter()
            .filter(|(_, code)| code.match_indices(&quoted).any(|(i, _)| !code[..i].ends_with('b')))
            .map(|(name, _)| name.as_str())
            .collect();
        if writers.len() != 1 {
            twice.push(format!("{path}: {writers:?}"));
        }
    }
    assert!(paths.len() > 40, "the document has its routes: {paths:?}");
    assert!(twice.is_empty(), "route paths written in other than one file:\n{}", twice.join("\n"));
}

#[test]
fn the_reader_finds_imports_and_circles() {
    assert_eq!(expand("crate::a::{b, c::{d, e}}"), ["crate::a::b", "crate::a::c::d", "crate::a::c::e"]);
    let code = rust_code(
        "use super::x;\n// crate::nope\nfn f() { crate::y::z(); \"crate::str\"; }\n#[cfg(test)]\nmod tests { use crate::t; }\n",
    );
    let paths: BTreeSet<String> = rust_paths(&code).into_iter().collect();
    assert_eq!(paths, BTreeSet::from(["super::x".to_owned(), "crate::y::z".to_owned()]));
    let m: BTreeMap<Vec<String>, PathBuf> = [vec![], vec!["a".to_owned()], vec!["a".to_owned(), "b".to_owned()]]
        .into_iter()
        .map(|k| (k, PathBuf::new()))
        .collect();
    let here = vec!["a".to_owned(), "b".to_owned()];
    assert_eq!(resolve("super::Item", &here, &m), Some(vec!["a".to_owned()]));
    assert_eq!(resolve("crate::a::b::Item", &[], &m), Some(here.clone()));
    assert_eq!(resolve("b::Item", &["a".to_owned()], &m), Some(here));
    assert_eq!(resolve("serde::Serialize", &[], &m), None);
    let g: BTreeMap<String, BTreeSet<String>> =
        [("x", vec!["y"]), ("y", vec!["z"]), ("z", vec!["x"]), ("w", vec!["x"])]
            .into_iter()
            .map(|(k, v)| (k.to_owned(), v.into_iter().map(str::to_owned).collect()))
            .collect();
    assert_eq!(circles(&g), vec![vec!["x".to_owned(), "y".to_owned(), "z".to_owned()]]);
}
