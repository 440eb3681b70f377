//! Dropping refs: a purged session's checkpoints.

use crate::{Git, GitError, Shadow};

impl Git {
    /// Deletes every ref of `shadow` under `prefix` (which must be under `refs/`); returns how
    /// many. The commits they kept alive become garbage for git's own collection.
    pub async fn delete_refs(&self, shadow: &Shadow, prefix: &str) -> Result<usize, GitError> {
        let refs = self.list_refs(shadow, prefix).await?;
        for r in &refs {
            self.call_git_dir(&shadow.dir).args(["update-ref", "-d"]).arg(&r.refname).ok().await?;
        }
        Ok(refs.len())
    }

    /// Whether `shadow` holds no ref at all (once its last session is purged, it can go).
    pub async fn shadow_is_empty(&self, shadow: &Shadow) -> Result<bool, GitError> {
        let out = self.call_git_dir(&shadow.dir).args(["for-each-ref", "--count=1", "--format=x"]).ok().await?;
        Ok(out.is_empty())
    }
}
