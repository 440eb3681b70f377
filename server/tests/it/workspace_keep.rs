//! A workspace's result kept and let go: a worktree session's changes committed on its branch,
//! its disk use, purging it after close (never an unmerged branch unless forced), the worktrees
//! of gone sessions pruned at start-up; and its files browsed, read and searched, confined to it.

use std::path::{Path, PathBuf};

use reqwest::StatusCode;
use serde_json::{Value, json};

use crate::common::*;

fn repo(at: &Path) -> PathBuf {
    git_repo(
        at,
        &[
            ("README.md", b"# demo\n"),
            ("src/main.rs", b"fn main() {}\n"),
            ("logo.png", &[0x89, b'P', b'N', b'G', 0, 1, 2]),
        ],
    )
}

async fn worktree_session(s: &Server, id: &str, repo: &Path) -> Value {
    let (status, started) = s
        .post(
            "/v1/rooms/r/sessions",
            json!({"sessionId": id, "workspace": {"kind": "worktree", "repo": repo.to_str().unwrap()}}),
        )
        .await;
    assert_eq!(status, StatusCode::CREATED, "{started}");
    started
}

#[tokio::test]
async fn a_worktree_is_committed_on_its_branch_then_purged() {
    let s = Server::start(&[]).await;
    let dir = repo(&s.dir.join("proj"));
    let started = worktree_session(&s, "w", &dir).await;
    let path = PathBuf::from(started["workspace"]["path"].as_str().unwrap());
    let mut ws = s.ws("r", None).await;
    ws.hello().await;
    s.turn("r", "w", "/write notes.txt kept").await;
    ws.until_type("turn.changes").await;

    let (status, info) = s.get("/v1/rooms/r/sessions/w/workspace").await;
    assert_eq!(status, StatusCode::OK, "{info}");
    assert!(info["diskBytes"].as_u64().unwrap() > 0, "{info}");

    let (status, body) = s
        .post(
            "/v1/rooms/r/sessions/w/workspace/commit",
            json!({"message": "notes from the agent", "author": {"name": "Ada", "email": "ada@example.com"}}),
        )
        .await;
    assert_eq!(status, StatusCode::OK, "{body}");
    assert_eq!(body["branch"], "ensemble/r/w");
    let commit = body["commit"].as_str().unwrap();
    assert_eq!(
        git(&dir, &["log", "-1", "--format=%an <%ae> %s", "ensemble/r/w"]).trim(),
        "Ada <ada@example.com> notes from the agent"
    );
    assert_eq!(git(&dir, &["rev-parse", "ensemble/r/w"]).trim(), commit);
    ws.until_type("workspace.committed").await;
    // Nothing left to commit.
    let (status, body) = s.post("/v1/rooms/r/sessions/w/workspace/commit", json!({"message": "again"})).await;
    assert_eq!(error_code(status, &body, StatusCode::CONFLICT), "nothing_to_commit");

    // Closed and purged: the worktree goes, but the unmerged branch stays…
    let (status, body) = s.delete("/v1/rooms/r/sessions/w?purge=true").await;
    assert_eq!(error_code(status, &body, StatusCode::CONFLICT), "branch_not_merged");
    assert!(!path.exists(), "the worktree is removed even when the branch is kept");
    assert!(git(&dir, &["branch", "--list", "ensemble/r/w"]).contains("ensemble/r/w"));
    assert!(git(&dir, &["for-each-ref", "refs/ensemble/"]).is_empty(), "no checkpoint ref in the repository");
    assert_eq!(checkpoint_repos(&s), Vec::<std::path::PathBuf>::new(), "the checkpoints went with the last session");
    // …unless forced.
    let (status, _) = s.delete("/v1/rooms/r/sessions/w?purge=true&force=true").await;
    assert_eq!(status, StatusCode::NO_CONTENT);
    assert!(git(&dir, &["branch", "--list", "ensemble/r/w"]).is_empty());
}

/// The worktrees a room's closed sessions left on disk are listed, with what they take, until
/// they are purged; open sessions' worktrees are in use, not left behind.
#[tokio::test]
async fn the_worktrees_left_behind_are_listed_until_purged() {
    let s = Server::start(&[]).await;
    let dir = repo(&s.dir.join("proj"));
    let kept = worktree_session(&s, "kept", &dir).await;
    worktree_session(&s, "open", &dir).await;
    let (status, list) = s.get("/v1/rooms/r/worktrees").await;
    assert_eq!((status, list["data"].as_array().map(Vec::len)), (StatusCode::OK, Some(0)), "{list}");
    assert_eq!(s.delete("/v1/rooms/r/sessions/kept").await.0, StatusCode::NO_CONTENT);
    let (status, list) = s.get("/v1/rooms/r/worktrees").await;
    assert_eq!(status, StatusCode::OK);
    let left = list["data"].as_array().unwrap();
    assert_eq!(left.len(), 1, "{list}");
    assert_eq!(left[0]["sessionId"], "kept");
    assert_eq!(left[0]["workspace"]["path"], kept["workspace"]["path"]);
    assert!(left[0]["diskBytes"].as_u64().unwrap() > 0 && left[0]["closedAtMs"].as_i64().unwrap() > 0, "{list}");
    // Another room's are not this room's.
    assert_eq!(s.get("/v1/rooms/other/worktrees").await.1["data"], json!([]));
    let (status, _) = s.delete("/v1/rooms/r/sessions/kept?purge=true").await;
    assert_eq!(status, StatusCode::NO_CONTENT);
    assert_eq!(s.get("/v1/rooms/r/worktrees").await.1["data"], json!([]));
    let (status, body) = s.get("/v1/rooms/bad%20room/worktrees").await;
    assert_eq!(status, StatusCode::BAD_REQUEST, "{body}");
}

#[tokio::test]
async fn a_closed_sessions_worktree_goes_after_its_retention() {
    let s = Server::start_relaying_log(&["--worktree-retention-secs", "1"]).await;
    let dir = repo(&s.dir.join("proj"));
    let open = worktree_session(&s, "open", &dir).await;
    let closed = worktree_session(&s, "closed", &dir).await;
    let (status, _) = s.delete("/v1/rooms/r/sessions/closed").await;
    assert_eq!(status, StatusCode::NO_CONTENT);
    let path = PathBuf::from(closed["workspace"]["path"].as_str().unwrap());
    // The sweep says when it removed one (waited for with the harness's timeout).
    s.logged("worktree removed after its retention").await;
    assert!(!path.exists(), "the closed session's worktree is still there");
    // Its branch had nothing of its own: merged, so it went too. The open session's stays.
    assert!(git(&dir, &["branch", "--list", "ensemble/r/closed"]).is_empty());
    assert!(Path::new(open["workspace"]["path"].as_str().unwrap()).exists());
}

#[tokio::test]
async fn a_dir_session_is_not_committed_for_the_user() {
    let s = Server::start(&[]).await;
    let dir = repo(&s.dir.join("proj"));
    s.post("/v1/rooms/r/sessions", json!({"sessionId": "d", "cwd": dir.to_str().unwrap()})).await;
    let (status, body) = s.post("/v1/rooms/r/sessions/d/workspace/commit", json!({"message": "x"})).await;
    assert_eq!(error_code(status, &body, StatusCode::UNPROCESSABLE_ENTITY), "no_workspace");
    let (status, body) = s.post("/v1/rooms/r/sessions/d/workspace/commit", json!({"message": ""})).await;
    assert_eq!(status, StatusCode::BAD_REQUEST, "{body}");
}

#[tokio::test]
async fn start_up_prunes_the_worktrees_of_sessions_that_are_gone() {
    let tmp = tempfile::tempdir().unwrap();
    let dir = repo(&tmp.path().join("proj"));
    let s = Server::start_in(tmp.path(), &[]).await;
    worktree_session(&s, "keep", &dir).await;
    s.stop().await;
    // A worktree nobody knows, left in the worktrees dir (a start that never finished).
    let stray = tmp.path().join("data/worktrees/stray");
    git(&dir, &["worktree", "add", "-q", "-b", "stray", stray.to_str().unwrap()]);
    let s = Server::start_in(tmp.path(), &[]).await;
    let (status, kept) = s.get("/v1/rooms/r/sessions/keep").await;
    assert_eq!(status, StatusCode::OK);
    assert!(Path::new(kept["workspace"]["path"].as_str().unwrap()).exists(), "a known session's worktree stays");
    assert!(!stray.exists(), "the stray worktree was pruned");
    assert!(!git(&dir, &["worktree", "list"]).contains("stray"));
}

#[tokio::test]
async fn files_are_listed_read_and_searched_inside_the_workspace_only() {
    let s = Server::start(&[]).await;
    let dir = repo(&s.dir.join("proj"));
    let started = worktree_session(&s, "f", &dir).await;
    let top = PathBuf::from(started["workspace"]["path"].as_str().unwrap());
    std::os::unix::fs::symlink("/etc", top.join("etc-link")).unwrap();
    std::fs::write(top.join("big.txt"), "x".repeat(3 << 20)).unwrap();

    let (status, listing) = s.get("/v1/rooms/r/sessions/f/files").await;
    assert_eq!(status, StatusCode::OK, "{listing}");
    let names: Vec<&str> = listing["entries"].as_array().unwrap().iter().map(|e| e["name"].as_str().unwrap()).collect();
    assert_eq!(names[0], "src", "directories first: {names:?}");
    assert!(names.contains(&"README.md") && names.contains(&"etc-link"), "{names:?}");
    assert!(!names.contains(&".git"), "{names:?}");
    let link = listing["entries"].as_array().unwrap().iter().find(|e| e["name"] == "etc-link").unwrap();
    assert_eq!(link["kind"], "symlink");

    let (status, file) = s.get("/v1/rooms/r/sessions/f/files/content?path=src/main.rs").await;
    assert_eq!(status, StatusCode::OK, "{file}");
    assert_eq!((file["content"].as_str(), file["binary"].as_bool()), (Some("fn main() {}\n"), Some(false)));
    let (_, png) = s.get("/v1/rooms/r/sessions/f/files/content?path=logo.png").await;
    assert_eq!(png["binary"], true, "{png}");
    assert!(png.get("content").is_none());
    let (_, big) = s.get("/v1/rooms/r/sessions/f/files/content?path=big.txt").await;
    assert_eq!((big["truncated"].as_bool(), big["size"].as_u64()), (Some(true), Some(3 << 20)), "{}", big["size"]);
    assert!(big["content"].as_str().unwrap().len() < 3 << 20);

    for (path, code, want) in [
        ("../proj/README.md", "invalid_path", StatusCode::BAD_REQUEST),
        (".git/config", "invalid_path", StatusCode::BAD_REQUEST),
        ("etc-link/passwd", "invalid_path", StatusCode::BAD_REQUEST),
        ("missing.txt", "file_not_found", StatusCode::NOT_FOUND),
        ("src", "not_a_file", StatusCode::BAD_REQUEST),
    ] {
        let (status, body) = s.get(&format!("/v1/rooms/r/sessions/f/files/content?path={path}")).await;
        assert_eq!(error_code(status, &body, want), code, "{path}");
    }
    let (status, body) = s.get("/v1/rooms/r/sessions/f/files?path=etc-link").await;
    assert_eq!(error_code(status, &body, StatusCode::BAD_REQUEST), "invalid_path");

    let (status, found) = s.get("/v1/rooms/r/sessions/f/files/search?q=mainrs").await;
    assert_eq!(status, StatusCode::OK, "{found}");
    assert_eq!(found["data"][0]["path"], "src/main.rs", "{found}");
    let (_, none) = s.get("/v1/rooms/r/sessions/f/files/search?q=passwd").await;
    assert!(none["data"].as_array().unwrap().is_empty(), "nothing behind the link is searched: {none}");
    let (status, _) = s.get("/v1/rooms/r/sessions/f/files/search?q=%20").await;
    assert_eq!(status, StatusCode::BAD_REQUEST);
    let (status, body) = s.get(&format!("/v1/rooms/r/sessions/f/files/search?q={}", "a".repeat(257))).await;
    assert_eq!(error_code(status, &body, StatusCode::BAD_REQUEST), "invalid_query");
    // A name longer than any file system allows is bad input, not a server error.
    for route in ["files", "files/content"] {
        let (status, body) = s.get(&format!("/v1/rooms/r/sessions/f/{route}?path={}", "0".repeat(3000))).await;
        assert_eq!(error_code(status, &body, StatusCode::BAD_REQUEST), "invalid_path", "{route}");
    }
}

#[tokio::test]
async fn a_restart_keeps_the_worktree_and_its_checkpoints() {
    let tmp = tempfile::tempdir().unwrap();
    let dir = repo(&tmp.path().join("proj"));
    let s = Server::start_in(tmp.path(), &[]).await;
    let started = worktree_session(&s, "w", &dir).await;
    let mut ws = s.ws("r", None).await;
    ws.hello().await;
    s.turn("r", "w", "/write one.txt before the restart").await;
    ws.until_type("turn.changes").await;
    s.stop().await;
    let s = Server::start_in(tmp.path(), &[]).await;
    let (_, again) = s.get("/v1/rooms/r/sessions/w").await;
    assert_eq!(again["workspace"], started["workspace"], "{again}");
    let mut ws = s.ws("r", None).await;
    ws.hello().await;
    // The next turn resumes the session in the same worktree, checkpointed as before.
    s.turn("r", "w", "/write two.txt after it").await;
    let events = ws.until_type("turn.changes").await;
    assert_eq!(events.last().unwrap()["payload"]["files"][0]["path"], "two.txt");
    let (_, list) = s.get("/v1/rooms/r/sessions/w/checkpoints").await;
    assert_eq!(list["data"].as_array().unwrap().len(), 4, "{list}");
    assert!(list.get("next").is_none(), "{list}");
    // Paged: a page of three, then the rest.
    let (_, first) = s.get("/v1/rooms/r/sessions/w/checkpoints?limit=3").await;
    assert_eq!(first["data"].as_array().unwrap().len(), 3, "{first}");
    let next = first["next"].as_str().unwrap();
    assert_eq!(next, first["data"][2]["id"]);
    let (_, second) = s.get(&format!("/v1/rooms/r/sessions/w/checkpoints?limit=3&after={next}")).await;
    assert_eq!(second["data"].as_array().unwrap().len(), 1, "{second}");
    assert_eq!(second["data"][0]["id"], list["data"][3]["id"]);
    assert!(second.get("next").is_none());
    let (status, body) = s.get("/v1/rooms/r/sessions/w/checkpoints?limit=0").await;
    assert_eq!(error_code(status, &body, StatusCode::BAD_REQUEST), "invalid_query");
}
