//! Where sessions may work: a session's `cwd` must resolve (symlinks followed) to a directory
//! inside one of the configured workspace roots.

use std::path::{Path, PathBuf};

use crate::error::ApiError;

#[derive(Clone, Debug)]
pub struct WorkspaceRoots {
    /// Canonical paths.
    roots: Vec<PathBuf>,
}

impl WorkspaceRoots {
    /// Canonicalises every root; a root that does not exist is a configuration error.
    pub fn new(roots: &[PathBuf]) -> Result<Self, String> {
        let mut out = Vec::new();
        for r in roots {
            if !r.is_absolute() {
                return Err(format!("workspace root {} must be an absolute path", r.display()));
            }
            let c = r.canonicalize().map_err(|e| format!("workspace root {}: {e}", r.display()))?;
            if !c.is_dir() {
                return Err(format!("workspace root {} is not a directory", r.display()));
            }
            out.push(c);
        }
        Ok(Self { roots: out })
    }

    pub fn roots(&self) -> &[PathBuf] {
        &self.roots
    }

    /// The canonical directory for a requested `cwd`, or a 400: not absolute, `.`/`..` components,
    /// not an existing directory, or (after following symlinks) outside every root.
    pub fn resolve(&self, cwd: &str) -> Result<PathBuf, ApiError> {
        self.resolve_as("cwd", cwd)
    }

    /// [`Self::resolve`] for a directory the request names in `field` (a worktree's repository);
    /// the error says that field.
    pub fn resolve_as(&self, field: &str, dir: &str) -> Result<PathBuf, ApiError> {
        let p = Path::new(dir);
        if !p.is_absolute() {
            return Err(ApiError::bad_request("invalid_cwd", format!("{field} must be an absolute path")));
        }
        // On the raw text: `Path::components` silently drops inner `.` segments.
        if dir.split('/').any(|seg| seg == ".." || seg == ".") {
            return Err(ApiError::bad_request(
                "invalid_cwd",
                format!("{field} must not contain `.` or `..` components"),
            ));
        }
        let canonical =
            p.canonicalize().ok().filter(|c| c.is_dir()).ok_or_else(|| {
                ApiError::bad_request("invalid_cwd", format!("{field} must be an existing directory"))
            })?;
        if !self.contains(&canonical) {
            return Err(ApiError::bad_request(
                "cwd_outside_workspace",
                format!("{field} must be inside a workspace root"),
            )
            .with_details(serde_json::json!({ "workspaceRoots": self.roots })));
        }
        Ok(canonical)
    }

    /// Is this canonical path one of the roots or below one? (Component-wise: `/home/a` does not
    /// contain `/home/ab`.)
    pub fn contains(&self, canonical: &Path) -> bool {
        self.roots.iter().any(|r| canonical.starts_with(r))
    }
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used, reason = "tests fail loudly")]
    use super::*;

    #[test]
    fn paths_inside_pass_and_tricks_do_not() {
        let tmp = tempfile::tempdir().unwrap();
        let root = tmp.path().join("root");
        let inside = root.join("proj");
        let outside = tmp.path().join("outside");
        let sibling = tmp.path().join("rootx");
        for d in [&inside, &outside, &sibling] {
            std::fs::create_dir_all(d).unwrap();
        }
        std::os::unix::fs::symlink(&outside, root.join("escape")).unwrap();
        std::os::unix::fs::symlink(&inside, root.join("alias")).unwrap();
        let w = WorkspaceRoots::new(std::slice::from_ref(&root)).unwrap();
        let s = |p: &Path| p.to_str().unwrap().to_owned();
        assert_eq!(w.resolve(&s(&inside)).unwrap(), inside.canonicalize().unwrap());
        assert_eq!(w.resolve(&s(&root)).unwrap(), root.canonicalize().unwrap());
        assert_eq!(w.resolve(&s(&root.join("alias"))).unwrap(), inside.canonicalize().unwrap());
        let code = |p: String| w.resolve(&p).unwrap_err().code.into_owned();
        assert_eq!(code(s(&outside)), "cwd_outside_workspace");
        assert_eq!(code(s(&sibling)), "cwd_outside_workspace");
        assert_eq!(code(s(&root.join("escape"))), "cwd_outside_workspace");
        assert_eq!(code(format!("{}/proj/../../outside", s(&root))), "invalid_cwd");
        assert_eq!(code(format!("{}/proj/..", s(&root))), "invalid_cwd");
        assert_eq!(code(format!("{}/./proj", s(&root))), "invalid_cwd");
        assert_eq!(code("relative/path".into()), "invalid_cwd");
        assert_eq!(code(s(&root.join("missing"))), "invalid_cwd");
        assert!(WorkspaceRoots::new(&[tmp.path().join("nope")]).is_err());
        assert!(WorkspaceRoots::new(&[PathBuf::from("rel")]).is_err());
    }
}
