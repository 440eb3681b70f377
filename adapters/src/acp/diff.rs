//! A unified diff of one file from its old and new text (what ACP's diff content carries), for
//! `changes[].diff`: the lines both share at the start and the end are context, what lies between
//! is one hunk.

/// Lines of context around the changed lines.
const CONTEXT: usize = 3;

/// `old`: None for a new file.
pub fn unified(path: &str, old: Option<&str>, new: &str) -> String {
    let old_lines: Vec<&str> = old.map(|o| o.lines().collect()).unwrap_or_default();
    let new_lines: Vec<&str> = new.lines().collect();
    let prefix = old_lines.iter().zip(&new_lines).take_while(|(a, b)| a == b).count();
    let max_suffix = old_lines.len().min(new_lines.len()) - prefix;
    let suffix =
        old_lines.iter().rev().zip(new_lines.iter().rev()).take(max_suffix).take_while(|(a, b)| a == b).count();
    let from = if old.is_some() { format!("a/{path}") } else { "/dev/null".to_owned() };
    let mut out = format!("--- {from}\n+++ b/{path}\n");
    if prefix == old_lines.len() && prefix == new_lines.len() && old.is_some() {
        return out;
    }
    let start = prefix.saturating_sub(CONTEXT);
    let old_end = (old_lines.len() - suffix + CONTEXT).min(old_lines.len());
    let new_end = (new_lines.len() - suffix + CONTEXT).min(new_lines.len());
    let range = |start: usize, end: usize| {
        let len = end - start;
        let first = if len == 0 { start } else { start + 1 };
        format!("{first},{len}")
    };
    out.push_str(&format!("@@ -{} +{} @@\n", range(start, old_end), range(start, new_end)));
    for l in &old_lines[start..prefix] {
        out.push_str(&format!(" {l}\n"));
    }
    for l in &old_lines[prefix..old_lines.len() - suffix] {
        out.push_str(&format!("-{l}\n"));
    }
    for l in &new_lines[prefix..new_lines.len() - suffix] {
        out.push_str(&format!("+{l}\n"));
    }
    for l in &new_lines[new_lines.len() - suffix..new_end] {
        out.push_str(&format!(" {l}\n"));
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn one_hunk_with_context() {
        let old = "a\nb\nc\nd\ne\nf\ng\nh\n";
        let new = "a\nb\nc\nd\nE\nf\ng\nh\n";
        assert_eq!(
            unified("x.txt", Some(old), new),
            "--- a/x.txt\n+++ b/x.txt\n@@ -2,7 +2,7 @@\n b\n c\n d\n-e\n+E\n f\n g\n h\n"
        );
    }

    #[test]
    fn new_and_emptied_files() {
        assert_eq!(unified("n", None, "1\n2\n"), "--- /dev/null\n+++ b/n\n@@ -0,0 +1,2 @@\n+1\n+2\n");
        assert_eq!(unified("d", Some("1\n"), ""), "--- a/d\n+++ b/d\n@@ -1,1 +0,0 @@\n-1\n");
        assert_eq!(unified("s", Some("same\n"), "same\n"), "--- a/s\n+++ b/s\n");
    }
}
