//! Dropping refs: a purged session's checkpoints.

use std::path::Path;

use crate::{Git, GitError};

impl Git {
    /// Deletes every ref under `prefix` (which must be under `refs/`); returns how many. The
    /// commits they kept alive become garbage for git's own collection.
    pub async fn delete_refs(&self, top: &Path, prefix: &str) -> Result<usize, GitError> {
        let refs = self.list_refs(top, prefix).await?;
        for r in &refs {
            self.call(top).args(["update-ref", "-d"]).arg(&r.refname).ok().await?;
        }
        Ok(refs.len())
    }
}
