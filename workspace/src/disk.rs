//! Disk use of a workspace.

use std::collections::HashSet;
use std::os::unix::fs::MetadataExt;
use std::path::Path;

use crate::Git;

impl Git {
    /// The bytes of disk the files and directories under `path` (itself included) occupy: their
    /// allocated blocks, a file with several hard links counted once, symbolic links not
    /// followed, nothing skipped (`.git` included). What cannot be read counts as nothing.
    /// Blocking: call it from a blocking task.
    pub fn disk_usage(path: &Path) -> u64 {
        let mut seen = HashSet::new();
        let mut total = 0u64;
        // A stack, not recursion: trees may be deep.
        let mut pending = vec![path.to_path_buf()];
        while let Some(p) = pending.pop() {
            let Ok(meta) = std::fs::symlink_metadata(&p) else { continue };
            if meta.nlink() > 1 && !meta.is_dir() && !seen.insert((meta.dev(), meta.ino())) {
                continue;
            }
            total = total.saturating_add(meta.blocks().saturating_mul(512));
            if meta.is_dir()
                && let Ok(entries) = std::fs::read_dir(&p)
            {
                pending.extend(entries.flatten().map(|e| e.path()));
            }
        }
        total
    }
}
