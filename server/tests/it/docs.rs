//! The documents stay true: every repository path `ARCHITECTURE.md`, `README.md`, `SECURITY.md`
//! and the guide under `docs/` name in backticks exists, and so does every file a relative
//! Markdown link of theirs points at.

use std::path::Path;

/// Where a path the documents name must start to be checked (other backticked words are code).
const ROOTS: [&str; 16] = [
    "core/",
    "files/",
    "workspace/",
    "isolation/",
    "console/",
    "docs/",
    "runtime/",
    "adapters/",
    "server/",
    "testsupport/",
    "openapi/",
    "web-tests/",
    "docker/",
    "scripts/",
    "fuzz/",
    ".ci/",
];

/// The backticked repository paths of a document (globs and placeholders like `<name>` skipped).
fn named_paths(text: &str) -> Vec<String> {
    text.split('`')
        .skip(1)
        .step_by(2)
        .map(|t| t.split([' ', '\n', ':', '(']).next().unwrap_or_default())
        .filter(|t| ROOTS.iter().any(|r| t.starts_with(r)))
        .filter(|t| !t.contains(['<', '*', '{', '…']))
        .map(str::to_owned)
        .collect()
}

/// The documents: the three at the root and every Markdown file under `docs/`.
fn documents(root: &Path) -> Vec<std::path::PathBuf> {
    let mut docs: Vec<_> = ["ARCHITECTURE.md", "README.md", "SECURITY.md"].iter().map(|d| root.join(d)).collect();
    let mut dirs = vec![root.join("docs")];
    while let Some(dir) = dirs.pop() {
        for entry in std::fs::read_dir(&dir).unwrap() {
            let path = entry.unwrap().path();
            if path.is_dir() {
                dirs.push(path);
            } else if path.extension().is_some_and(|e| e == "md") {
                docs.push(path);
            }
        }
    }
    docs
}

/// The targets of a document's relative Markdown links (`[text](target)`), without `#fragment`.
fn link_targets(text: &str) -> Vec<String> {
    let mut out = Vec::new();
    for (i, _) in text.match_indices("](") {
        let rest = &text[i + 2..];
        let Some(end) = rest.find(')') else { continue };
        let target = rest[..end].split('#').next().unwrap_or_default();
        if !target.is_empty() && !target.contains(':') && !target.contains(char::is_whitespace) {
            out.push(target.to_owned());
        }
    }
    out
}

#[test]
fn every_relative_link_of_the_documents_leads_somewhere() {
    let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("..");
    let mut missing = Vec::new();
    let mut checked = 0;
    for doc in documents(&root) {
        let text = std::fs::read_to_string(&doc).unwrap();
        let dir = doc.parent().unwrap();
        for target in link_targets(&text) {
            checked += 1;
            if !dir.join(&target).exists() {
                missing.push(format!("{}: {target}", doc.display()));
            }
        }
    }
    assert!(checked > 20, "the documents have {checked} relative links; the parser lost them");
    assert!(missing.is_empty(), "links to files that do not exist:\n{}", missing.join("\n"));
}

#[test]
fn every_path_the_documents_name_exists() {
    let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("..");
    // What the tests create and git ignores (e.g. screenshots) may be absent on a clean clone.
    let ignored = std::fs::read_to_string(root.join(".gitignore")).unwrap_or_default();
    let made_by_tests = |p: &str| ignored.lines().any(|l| l.trim().trim_matches('/') == p.trim_matches('/'));
    let mut missing = Vec::new();
    let mut checked = 0;
    for doc in documents(&root) {
        let text = std::fs::read_to_string(&doc).unwrap();
        for p in named_paths(&text) {
            checked += 1;
            if !root.join(&p).exists() && !made_by_tests(&p) {
                missing.push(format!("{}: {p}", doc.display()));
            }
        }
    }
    assert!(checked > 30, "the documents name {checked} paths; the parser lost them");
    assert!(missing.is_empty(), "paths named in the documents that do not exist:\n{}", missing.join("\n"));
}

#[test]
fn the_parser_finds_paths_and_skips_code() {
    let found = named_paths(
        "see `runtime/src/adapter.rs` and `server/src/routes/` but not `Adapter` or `adapters/src/<name>/`",
    );
    assert_eq!(found, ["runtime/src/adapter.rs", "server/src/routes/"]);
    let links = link_targets("[a](docs/x.md#y), [b](https://e.org), [c](#here), [d](../SECURITY.md)");
    assert_eq!(links, ["docs/x.md", "../SECURITY.md"]);
}
