//! Names handed to git: branch-name components, and the checks that keep a caller's string from
//! being read as an option.

use crate::{Git, GitError};

/// The longest component [`Git::ref_component`] makes (loose refs are files, whose names the
/// file system limits).
pub const MAX_COMPONENT: usize = 100;

impl Git {
    /// A sanitised branch-name component made from any string: every char outside
    /// `[A-Za-z0-9._-]` becomes `-`, `..` collapses to `.`, leading `.` and `-` are trimmed, a
    /// trailing `.` is trimmed and a trailing `.lock` becomes `-lock`, and it is cut to
    /// [`MAX_COMPONENT`] bytes. Never empty (`_` when nothing is left).
    pub fn ref_component(s: &str) -> String {
        let mut out: String = s
            .chars()
            .map(|c| if c.is_ascii_alphanumeric() || matches!(c, '.' | '_' | '-') { c } else { '-' })
            .collect();
        while out.contains("..") {
            out = out.replace("..", ".");
        }
        let mut out = out.trim_start_matches(['.', '-']).to_owned();
        // ASCII only by now, so any byte index is a char boundary.
        out.truncate(MAX_COMPONENT);
        let trimmed = out.trim_end_matches('.').len();
        out.truncate(trimmed);
        if out.ends_with(".lock") {
            let dot = out.len() - ".lock".len();
            out.replace_range(dot..=dot, "-");
        }
        if out.is_empty() { "_".to_owned() } else { out }
    }
}

/// A revision git may be given as an argument: `None` for one that could be read as an option
/// (no revision starts with `-`).
pub(crate) fn rev_arg(rev: &str) -> Option<&str> {
    (!rev.is_empty() && !rev.starts_with('-') && !rev.contains('\0')).then_some(rev)
}

/// A revision for a comparison or a restore, or `UnknownRev`.
pub(crate) fn known_rev(rev: &str) -> Result<&str, GitError> {
    rev_arg(rev).ok_or_else(|| GitError::UnknownRev(rev.to_owned()))
}

/// A ref name or prefix under `refs/` (git checks the rest), or `InvalidRef`.
pub(crate) fn ref_arg(name: &str) -> Result<&str, GitError> {
    if name.starts_with("refs/") && !name.contains('\0') {
        Ok(name)
    } else {
        Err(GitError::InvalidRef(name.to_owned()))
    }
}

/// A `:(literal)` pathspec from the top of the work tree: the path exactly, no glob, no magic.
pub(crate) fn literal(path: &str) -> String {
    format!(":(top,literal){path}")
}
