//! The documents stay true: every repository path `ARCHITECTURE.md`, `README.md` and `SECURITY.md`
//! name in backticks exists.

use std::path::Path;

/// Where a path the documents name must start to be checked (other backticked words are code).
const ROOTS: [&str; 10] = [
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

#[test]
fn every_path_the_documents_name_exists() {
    let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("..");
    // What the tests create and git ignores (e.g. screenshots) may be absent on a clean clone.
    let ignored = std::fs::read_to_string(root.join(".gitignore")).unwrap_or_default();
    let made_by_tests = |p: &str| ignored.lines().any(|l| l.trim().trim_matches('/') == p.trim_matches('/'));
    let mut missing = Vec::new();
    let mut checked = 0;
    for doc in ["ARCHITECTURE.md", "README.md", "SECURITY.md"] {
        let text = std::fs::read_to_string(root.join(doc)).unwrap();
        for p in named_paths(&text) {
            checked += 1;
            if !root.join(&p).exists() && !made_by_tests(&p) {
                missing.push(format!("{doc}: {p}"));
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
}
