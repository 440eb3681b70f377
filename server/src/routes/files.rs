//! A session's files, for the console and clients: a directory listing, a file's content and a
//! fuzzy search by name, all beneath the session's workspace (its work tree's top, else its cwd)
//! through `ensemble-files`: no `..`, no link followed, nothing under `.git`, the server's own
//! files refused.

use std::path::{Component, Path, PathBuf};

use axum::extract::State;
use ensemble_core::limits::check_text;
use ensemble_core::model::Session;
use ensemble_files::{EntryKind, FileError, Root};

use crate::api::files::{FileContent, FileEntry, FileKind, FileListing, FileMatch, FileSearch, PathQuery, SearchQuery};
use crate::api::params::SessionPath;
use crate::error::{ApiError, ErrorResponse, Json, Query};
use crate::state::AppState;

/// Most entries one listing answers with (the rest are counted, not listed).
pub const MAX_LISTED: usize = 5_000;
/// Most directory entries one search looks at.
pub const MAX_SEARCHED: usize = 100_000;
/// The longest search query, in characters.
pub const MAX_QUERY_CHARS: usize = 256;
/// Most results of one search.
pub const MAX_RESULTS: u32 = 200;

/// Lists a directory of the session's workspace.
#[utoipa::path(get, path = "/v1/rooms/{roomId}/sessions/{sessionId}/files", tag = "workspaces",
    extensions(("x-ensemble-access" = json!({"role": "viewer"}))),
    params(SessionPath, PathQuery),
    responses((status = 200, description = "The directory's entries", body = FileListing),
        (status = 400, description = "A path with `..`, through a link, or into `.git` (`invalid_path`)", body = ErrorResponse),
        (status = 404, description = "No such directory (`file_not_found`)", body = ErrorResponse),
        (status = "4XX", body = ErrorResponse), (status = "5XX", body = ErrorResponse)))]
pub async fn list_files(
    State(state): State<AppState>,
    session: SessionPath,
    Query(q): Query<PathQuery>,
) -> Result<Json<FileListing>, ApiError> {
    let (root, rel) = open(&state, &session, q.path.as_deref())?;
    let shown = rel.to_string_lossy().into_owned();
    let listing = blocking(move || {
        let mut entries: Vec<FileEntry> = root
            .list(&root_path(&root, &rel))?
            .into_iter()
            .filter(|e| e.name != ".git")
            .map(|e| FileEntry { name: e.name.to_string_lossy().into_owned(), kind: kind(e.kind), size: e.size })
            .collect();
        entries.sort_by(|a, b| {
            (!matches!(a.kind, FileKind::Dir), &a.name).cmp(&(!matches!(b.kind, FileKind::Dir), &b.name))
        });
        let truncated = entries.len() > MAX_LISTED;
        entries.truncate(MAX_LISTED);
        Ok(FileListing { path: shown, entries, truncated })
    })
    .await?;
    Ok(Json(listing))
}

/// A file of the session's workspace: its text (up to the server's limit), or that it is binary.
#[utoipa::path(get, path = "/v1/rooms/{roomId}/sessions/{sessionId}/files/content", tag = "workspaces",
    extensions(("x-ensemble-access" = json!({"role": "viewer"}))),
    params(SessionPath, PathQuery),
    responses((status = 200, description = "The file", body = FileContent),
        (status = 400, description = "A path with `..`, through a link, or into `.git` (`invalid_path`), or not a regular file (`not_a_file`)", body = ErrorResponse),
        (status = 404, description = "No such file (`file_not_found`)", body = ErrorResponse),
        (status = "4XX", body = ErrorResponse), (status = "5XX", body = ErrorResponse)))]
pub async fn file_content(
    State(state): State<AppState>,
    session: SessionPath,
    Query(q): Query<PathQuery>,
) -> Result<Json<FileContent>, ApiError> {
    let max = state.max_file_view_bytes;
    let (root, rel) = open(&state, &session, q.path.as_deref())?;
    if rel.as_os_str().is_empty() {
        return Err(ApiError::bad_request("not_a_file", "give the path of a file"));
    }
    let shown = rel.to_string_lossy().into_owned();
    let content = blocking(move || {
        let (bytes, size) = root.read_prefix(&root_path(&root, &rel), max)?;
        let truncated = size > bytes.len() as u64;
        // A cut may split a character: judge the text by what is whole.
        let text = match std::str::from_utf8(&bytes) {
            Ok(t) => Some(t.to_owned()),
            Err(e) if truncated && e.error_len().is_none() => {
                Some(String::from_utf8_lossy(&bytes[..e.valid_up_to()]).into_owned())
            }
            Err(_) => None,
        }
        .filter(|t| !t.contains('\0'));
        Ok(FileContent { path: shown, size, binary: text.is_none(), truncated, content: text })
    })
    .await?;
    Ok(Json(content))
}

/// Files of the session's workspace whose path matches `q` fuzzily (its letters in order), best
/// first. `.git` and what is under links are not searched.
#[utoipa::path(get, path = "/v1/rooms/{roomId}/sessions/{sessionId}/files/search", tag = "workspaces",
    extensions(("x-ensemble-access" = json!({"role": "viewer"}))),
    params(SessionPath, SearchQuery),
    responses((status = 200, description = "The best matches", body = FileSearch),
        (status = "4XX", body = ErrorResponse), (status = "5XX", body = ErrorResponse)))]
pub async fn search_files(
    State(state): State<AppState>,
    session: SessionPath,
    Query(q): Query<SearchQuery>,
) -> Result<Json<FileSearch>, ApiError> {
    check_text("q", &q.q)?;
    if q.q.trim().is_empty() || q.q.chars().count() > MAX_QUERY_CHARS {
        return Err(ApiError::bad_request(
            "invalid_query",
            format!("`q` must not be blank, and at most {MAX_QUERY_CHARS} characters"),
        ));
    }
    let limit = match q.limit.unwrap_or(50) {
        n @ 1..=MAX_RESULTS => n as usize,
        _ => return Err(ApiError::bad_request("invalid_query", format!("`limit` must be 1–{MAX_RESULTS}"))),
    };
    let (root, _) = open(&state, &session, None)?;
    let needle: Vec<char> = q.q.to_lowercase().chars().filter(|c| !c.is_whitespace()).collect();
    let found = blocking(move || {
        let mut matches = Vec::new();
        let mut seen = 0usize;
        let mut stack = vec![PathBuf::new()];
        let mut truncated = false;
        'walk: while let Some(dir) = stack.pop() {
            // A directory that vanished or is refused is skipped, not the search's end.
            let Ok(entries) = root.list(&root_path(&root, &dir)) else { continue };
            for e in entries {
                seen += 1;
                if seen > MAX_SEARCHED {
                    truncated = true;
                    break 'walk;
                }
                if e.name == ".git" {
                    continue;
                }
                let rel = dir.join(&e.name);
                match e.kind {
                    EntryKind::Dir => stack.push(rel),
                    EntryKind::File => {
                        let path = rel.to_string_lossy().into_owned();
                        if let Some(score) = fuzzy_score(&needle, &path) {
                            matches.push(FileMatch { path, score });
                        }
                    }
                    EntryKind::Symlink | EntryKind::Other => {}
                }
            }
        }
        matches.sort_by(|a, b| b.score.cmp(&a.score).then_with(|| a.path.cmp(&b.path)));
        matches.truncate(limit);
        Ok(FileSearch { data: matches, truncated })
    })
    .await?;
    Ok(Json(found))
}

/// The session's file root and the request's path, checked lexically (the root then refuses
/// anything that resolves outside or through a link).
fn open(state: &AppState, session: &SessionPath, path: Option<&str>) -> Result<(Root, PathBuf), ApiError> {
    let session = state.controller.session(&session.key()?)?;
    let rel = relative(path.unwrap_or(""))?;
    let top = files_root(&session);
    let root = Root::open(&top, state.files_guard.clone()).map_err(file_error)?;
    Ok((root, rel))
}

/// The session's workspace top, else its cwd.
fn files_root(session: &Session) -> PathBuf {
    session
        .workspace
        .as_ref()
        .and_then(|w| w.path.as_deref())
        .map_or_else(|| PathBuf::from(&session.cwd), PathBuf::from)
}

fn root_path(root: &Root, rel: &Path) -> PathBuf {
    root.path().join(rel)
}

fn relative(path: &str) -> Result<PathBuf, ApiError> {
    check_text("path", path)?;
    // No file name holds a NUL; the system calls would refuse it as an I/O error (a 500).
    if path.contains('\0') {
        return Err(ApiError::bad_request("invalid_path", "a path cannot contain a NUL character"));
    }
    let p = Path::new(path.trim_start_matches("./"));
    let mut out = PathBuf::new();
    for c in p.components() {
        match c {
            Component::Normal(n) if n == ".git" => {
                return Err(ApiError::bad_request("invalid_path", "nothing under `.git` is shown"));
            }
            // The kernel's own limit, said plainly rather than met as an I/O error.
            Component::Normal(n) if n.len() > 255 => {
                return Err(ApiError::bad_request("invalid_path", "a path component is longer than 255 bytes"));
            }
            Component::Normal(n) => out.push(n),
            Component::CurDir => {}
            _ => {
                return Err(ApiError::bad_request(
                    "invalid_path",
                    "the path must be relative to the workspace, without `..`",
                ));
            }
        }
    }
    Ok(out)
}

fn kind(k: EntryKind) -> FileKind {
    match k {
        EntryKind::File => FileKind::File,
        EntryKind::Dir => FileKind::Dir,
        EntryKind::Symlink => FileKind::Symlink,
        EntryKind::Other => FileKind::Other,
    }
}

/// The file work on a blocking thread (a directory walk may take a while).
async fn blocking<T: Send + 'static>(f: impl FnOnce() -> Result<T, FileError> + Send + 'static) -> Result<T, ApiError> {
    match tokio::task::spawn_blocking(f).await {
        Ok(r) => r.map_err(file_error),
        Err(e) => Err(ApiError::internal("a file task failed", e)),
    }
}

fn file_error(e: FileError) -> ApiError {
    match e {
        FileError::NotFound => ApiError::not_found("file_not_found", "no such file or directory in the workspace"),
        FileError::Outside | FileError::Symlink | FileError::NotAbsolute | FileError::NoName | FileError::GitDir => {
            ApiError::bad_request("invalid_path", e.to_string())
        }
        FileError::NotRegular(_) | FileError::HardLinked(_) | FileError::TooLarge(_) => {
            ApiError::bad_request("not_a_file", e.to_string())
        }
        FileError::Denied => ApiError::not_found("file_not_found", "no such file or directory in the workspace"),
        FileError::Root(_) => ApiError::not_found("workspace_gone", e.to_string()),
        FileError::Io(ref io) if io.raw_os_error() == Some(libc::ENAMETOOLONG) => {
            ApiError::bad_request("invalid_path", "the path is too long")
        }
        FileError::Io(_) => ApiError::internal("reading the workspace", e),
    }
}

/// A subsequence match of `needle` in `path` (lowercased), scored: consecutive letters and
/// letters at the start of a name count more, and a match in the file's own name more than in
/// its directories; shorter paths break ties.
pub fn fuzzy_score(needle: &[char], path: &str) -> Option<i64> {
    let hay: Vec<char> = path.to_lowercase().chars().collect();
    let name_start = path.rfind('/').map_or(0, |i| path[..=i].chars().count());
    let mut score: i64 = 0;
    let mut at = 0usize;
    let mut last: Option<usize> = None;
    for &c in needle {
        let i = (at..hay.len()).find(|&i| hay[i] == c)?;
        score += 1;
        if last.is_some_and(|l| l + 1 == i) {
            score += 5;
        }
        if i == 0 || matches!(hay[i - 1], '/' | '_' | '-' | '.') {
            score += 3;
        }
        if i >= name_start {
            score += 2;
        }
        last = Some(i);
        at = i + 1;
    }
    Some(score * 100 - hay.len() as i64)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn fuzzy_prefers_whole_runs_in_the_name() {
        let q: Vec<char> = "main".chars().collect();
        let best = fuzzy_score(&q, "server/src/main.rs").unwrap();
        let worse = fuzzy_score(&q, "m/a/i/n.txt").unwrap();
        assert!(best > worse, "{best} {worse}");
        assert_eq!(fuzzy_score(&q, "readme.md"), None);
        assert!(relative("../x").is_err());
        assert!(relative("a/.git/config").is_err());
        assert!(relative("/etc").is_err());
        assert_eq!(relative("./src/a.rs").unwrap(), PathBuf::from("src/a.rs"));
    }
}
