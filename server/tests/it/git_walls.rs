//! The red team's ways through the server's own git (issue 53, items 1–4): a repository an agent
//! armed runs nothing of the server's, the data dir is no way between rooms, a work tree or a
//! `.git` reaching out of the workspace roots gets no checkpoints, and `base`/`branch` stay in
//! the caller's room.

use std::os::unix::fs::PermissionsExt;
use std::path::{Path, PathBuf};

use reqwest::StatusCode;
use serde_json::{Value, json};

use crate::common::*;
use crate::roles::{As, make_token};

/// A program that leaves a mark named after itself in `marks` when anything runs it.
fn marker(dir: &Path, marks: &Path, name: &str) -> PathBuf {
    std::fs::create_dir_all(dir).unwrap();
    let path = dir.join(name);
    std::fs::write(&path, format!("#!/bin/sh\ntouch '{}/{name}'\ncat\n", marks.display())).unwrap();
    std::fs::set_permissions(&path, std::fs::Permissions::from_mode(0o755)).unwrap();
    path
}

/// Arms a git dir the way an agent with a shell could: every setting that names a program, hooks
/// in the git dir and in a hooks path, and attributes that apply a filter and a text conversion.
fn arm(git_dir: &Path, tools: &Path, marks: &Path) {
    let m = |name: &str| marker(tools, marks, name).display().to_string();
    let config = format!(
        "[core]\n\tfsmonitor = {}\n\tpager = {}\n\thooksPath = {}\n\tsshCommand = {}\n[diff]\n\texternal = {}\n\
         [diff \"x\"]\n\ttextconv = {}\n[filter \"x\"]\n\tclean = {}\n\tsmudge = {}\n\trequired = true\n\
         [gpg]\n\tprogram = {}\n[commit]\n\tgpgSign = true\n[gc]\n\tauto = 1\n",
        m("fsmonitor"),
        m("pager"),
        tools.join("hooks").display(),
        m("ssh"),
        m("external-diff"),
        m("textconv"),
        m("clean"),
        m("smudge"),
        m("gpg"),
    );
    let path = git_dir.join("config");
    let mut text = std::fs::read_to_string(&path).unwrap_or_default();
    text.push_str(&config);
    std::fs::write(&path, text).unwrap();
    for dir in [tools.join("hooks"), git_dir.join("hooks")] {
        for hook in
            ["pre-commit", "post-commit", "post-checkout", "reference-transaction", "pre-auto-gc", "post-index-change"]
        {
            marker(&dir, marks, hook);
        }
    }
    std::fs::create_dir_all(git_dir.join("info")).unwrap();
    std::fs::write(git_dir.join("info/attributes"), "* filter=x diff=x\n").unwrap();
}

fn marks_left(marks: &Path) -> Vec<String> {
    let mut v: Vec<String> =
        std::fs::read_dir(marks).unwrap().map(|e| e.unwrap().file_name().to_string_lossy().into_owned()).collect();
    v.sort();
    v
}

/// Runs a turn as `who` and waits for its `turn.changes` (or its end when `changes` is false).
async fn turn(who: &As<'_>, ws: &mut Ws, room: &str, id: &str, text: &str, last: &str) -> Vec<Value> {
    let (status, body) = who
        .post(&format!("/v1/rooms/{room}/sessions/{id}/turns"), json!({"input": [{"type": "text", "text": text}]}))
        .await;
    assert_eq!(status, StatusCode::ACCEPTED, "{body}");
    let t = body["turnId"].as_str().unwrap().to_owned();
    let last = last.to_owned();
    ws.until(move |e| e["type"] == last.as_str() && e["turnId"] == t.as_str()).await
}

#[tokio::test]
async fn a_repository_an_agent_armed_runs_nothing_of_the_servers() {
    let outside = tempfile::tempdir().unwrap();
    let marks = outside.path().join("marks");
    std::fs::create_dir(&marks).unwrap();
    // The server's user's own configuration is armed too, and its environment names a setting.
    let home = outside.path().join("home");
    std::fs::create_dir_all(home.join(".config/git")).unwrap();
    let global = format!("[core]\n\tfsmonitor = {}\n", marker(&outside.path().join("g"), &marks, "global").display());
    std::fs::write(home.join(".gitconfig"), &global).unwrap();
    std::fs::write(home.join(".config/git/config"), &global).unwrap();
    let env_mark = marker(&outside.path().join("e"), &marks, "env").display().to_string();
    let home_str = home.display().to_string();
    let s = Server::start_with_env(
        &[],
        &[
            ("HOME", home_str.as_str()),
            ("XDG_CONFIG_HOME", &format!("{home_str}/.config")),
            ("GIT_CONFIG_COUNT", "1"),
            ("GIT_CONFIG_KEY_0", "core.fsmonitor"),
            ("GIT_CONFIG_VALUE_0", env_mark.as_str()),
            ("GIT_EXTERNAL_DIFF", env_mark.as_str()),
        ],
    )
    .await;
    let dir = git_repo(&s.dir.join("proj"), &[("README.md", b"# demo\n")]);
    let (_, operator) = make_token(&s, "op", "operator", &["r"]).await;
    let (_, viewer) = make_token(&s, "view", "viewer", &["r"]).await;
    let op = As { s: &s, token: operator };
    let view = As { s: &s, token: viewer };
    let (status, body) = op.post("/v1/rooms/r/sessions", json!({"sessionId": "d", "cwd": dir.to_str().unwrap()})).await;
    assert_eq!(status, StatusCode::CREATED, "{body}");
    let mut ws = s.ws("r", None).await;
    ws.hello().await;

    // The agent's own file writes cannot reach `.git` at all.
    let config_before = std::fs::read_to_string(dir.join(".git/config")).unwrap();
    let events = turn(
        &op,
        &mut ws,
        "r",
        "d",
        "/edit .git/config [core]\n/write .git/hooks/pre-commit x\n/write sub/.GIT/x y\n/delete .git/HEAD",
        "turn.changes",
    )
    .await;
    let failed: Vec<&Value> =
        events.iter().filter(|e| e["type"] == "call.completed" && e["payload"]["status"] == "failed").collect();
    assert!(failed.len() >= 4, "every write into .git is refused: {events:?}");
    assert_eq!(std::fs::read_to_string(dir.join(".git/config")).unwrap(), config_before);
    assert!(dir.join(".git/HEAD").exists() && !dir.join("sub/.GIT").exists());

    // What an agent with a shell could still write there: the server's git runs none of it, for
    // an operator's turns, a viewer's reads, a restore, a worktree, a commit, a fork, a purge.
    arm(&dir.join(".git"), &outside.path().join("tools"), &marks);
    std::fs::write(dir.join(".gitattributes"), "* filter=x diff=x\n").unwrap();
    let changes = turn(&op, &mut ws, "r", "d", "/write a.txt one", "turn.changes").await;
    let changed = changes.last().unwrap();
    assert!(changed["payload"]["files"].as_array().unwrap().iter().any(|f| f["path"] == "a.txt"), "{changed}");
    let turn_id = changed["turnId"].as_str().unwrap();
    let (status, diff) = view.get(&format!("/v1/rooms/r/sessions/d/changes?turn={turn_id}")).await;
    assert_eq!(status, StatusCode::OK, "{diff}");
    assert!(diff["diff"].as_str().unwrap().contains("+one"), "{diff}");
    let (status, body) = view.get("/v1/rooms/r/sessions/d/changes").await;
    assert_eq!(status, StatusCode::OK, "{body}");
    let before = changed["payload"]["before"].as_str().unwrap();
    let (status, body) = op.post("/v1/rooms/r/sessions/d/restore", json!({"checkpoint": before})).await;
    assert_eq!(status, StatusCode::OK, "{body}");
    assert!(!dir.join("a.txt").exists());

    let (status, body) = op
        .post(
            "/v1/rooms/r/sessions",
            json!({"sessionId": "w", "workspace": {"kind": "worktree", "repo": dir.to_str().unwrap()}}),
        )
        .await;
    assert_eq!(status, StatusCode::CREATED, "{body}");
    let wt = turn(&op, &mut ws, "r", "w", "/write b.txt two", "turn.changes").await;
    let wt_turn = wt.last().unwrap()["turnId"].as_str().unwrap().to_owned();
    let (status, body) = op.post("/v1/rooms/r/sessions/w/workspace/commit", json!({"message": "work"})).await;
    assert_eq!(status, StatusCode::OK, "{body}");
    let (status, body) = op.post("/v1/rooms/r/sessions/w/fork", json!({"atTurn": wt_turn, "sessionId": "f"})).await;
    assert_eq!(status, StatusCode::CREATED, "{body}");
    for id in ["f", "w"] {
        let (status, body) = op.delete(&format!("/v1/rooms/r/sessions/{id}?purge=true&force=true")).await;
        assert_eq!(status, StatusCode::NO_CONTENT, "{body}");
    }
    assert_eq!(marks_left(&marks), Vec::<String>::new(), "the server's git ran what the repository named");
    // The marks work: the user's own git runs them.
    git(&dir, &["status"]);
    assert!(marks_left(&marks).contains(&"fsmonitor".to_owned()));
}

#[tokio::test]
async fn a_worktree_agent_that_repoints_its_git_file_reaches_nothing() {
    let s = Server::start(&[]).await;
    let dir = git_repo(&s.dir.join("proj"), &[("README.md", b"# demo\n")]);
    let (status, body) = s
        .post(
            "/v1/rooms/r/sessions",
            json!({"sessionId": "w", "workspace": {"kind": "worktree", "repo": dir.to_str().unwrap()}}),
        )
        .await;
    assert_eq!(status, StatusCode::CREATED, "{body}");
    let path = PathBuf::from(body["workspace"]["path"].as_str().unwrap());
    assert!(body["workspace"]["gitDir"].as_str().unwrap().starts_with(dir.join(".git").to_str().unwrap()), "{body}");
    let mut ws = s.ws("r", None).await;
    ws.hello().await;
    // Through its own file writes: refused.
    let events =
        turn(&As { s: &s, token: TOKEN.into() }, &mut ws, "r", "w", "/write .git gitdir: /tmp/x", "turn.changes").await;
    assert!(events.iter().any(|e| e["type"] == "call.completed" && e["payload"]["status"] == "failed"), "{events:?}");
    // By other means: an armed git dir of its own, named by its `.git` file.
    let evil = s.dir.join("evil.git");
    git(&s.dir, &["init", "-q", "--bare", evil.to_str().unwrap()]);
    let marks = s.dir.join("marks");
    std::fs::create_dir(&marks).unwrap();
    arm(&evil, &s.dir.join("tools"), &marks);
    std::fs::write(path.join(".git"), format!("gitdir: {}\n", evil.display())).unwrap();
    let events =
        turn(&As { s: &s, token: TOKEN.into() }, &mut ws, "r", "w", "/write work.txt done", "turn.changes").await;
    let files = &events.last().unwrap()["payload"]["files"];
    assert_eq!(files[0]["path"], "work.txt", "{files}");
    let (status, body) = s.post("/v1/rooms/r/sessions/w/workspace/commit", json!({"message": "work"})).await;
    assert_eq!(status, StatusCode::OK, "{body}");
    // On the session's own branch of the user's repository, not in the git dir it points at now.
    assert_eq!(git(&dir, &["rev-parse", "ensemble/r/w"]).trim(), body["commit"].as_str().unwrap());
    assert_eq!(marks_left(&marks), Vec::<String>::new());
}

#[tokio::test]
async fn the_data_dir_is_no_way_between_rooms() {
    // The harness's data dir (`DIR/data`) is inside its workspace roots (`DIR`), as the default
    // layout's (`~/.local/share/ensemble` under `~`).
    let s = Server::start(&[]).await;
    let dir = git_repo(&s.dir.join("proj"), &[("README.md", b"# demo\n")]);
    let (status, body) = s
        .post(
            "/v1/rooms/victim/sessions",
            json!({"sessionId": "v", "workspace": {"kind": "worktree", "repo": dir.to_str().unwrap()}}),
        )
        .await;
    assert_eq!(status, StatusCode::CREATED, "{body}");
    let victim = PathBuf::from(body["workspace"]["path"].as_str().unwrap());
    std::fs::write(victim.join("theirs.txt"), "the victim's\n").unwrap();
    let (_, attacker) = make_token(&s, "attacker", "operator", &["attacker"]).await;
    let a = As { s: &s, token: attacker };
    let data = s.dir.join("data");
    std::fs::create_dir_all(data.join("codex-home")).unwrap();
    for cwd in [data.clone(), victim.clone(), data.join("worktrees"), data.join("checkpoints"), data.join("codex-home")]
    {
        let (status, body) = a.post("/v1/rooms/attacker/sessions", json!({"cwd": cwd.to_str().unwrap()})).await;
        assert_eq!(error_code(status, &body, StatusCode::BAD_REQUEST), "cwd_outside_workspace", "{}", cwd.display());
        let (status, body) = a
            .post(
                "/v1/rooms/attacker/sessions",
                json!({"workspace": {"kind": "worktree", "repo": cwd.to_str().unwrap()}}),
            )
            .await;
        assert_eq!(status, StatusCode::BAD_REQUEST, "{}: {body}", cwd.display());
    }
    // A session whose cwd holds the data dir reaches nothing beneath it.
    let (status, body) =
        a.post("/v1/rooms/attacker/sessions", json!({"sessionId": "a", "cwd": s.dir.to_str().unwrap()})).await;
    assert_eq!(status, StatusCode::CREATED, "{body}");
    let rel = victim.strip_prefix(&s.dir).unwrap().join("theirs.txt");
    let (status, body) = a.get(&format!("/v1/rooms/attacker/sessions/a/files/content?path={}", rel.display())).await;
    assert_eq!(error_code(status, &body, StatusCode::NOT_FOUND), "file_not_found");
    let (status, body) = a.get("/v1/rooms/attacker/sessions/a/files?path=data/worktrees").await;
    assert_eq!(error_code(status, &body, StatusCode::NOT_FOUND), "file_not_found");
    let (status, body) = a.get("/v1/rooms/attacker/sessions/a/files").await;
    assert_eq!(status, StatusCode::OK, "{body}");
    assert!(!body["entries"].as_array().unwrap().iter().any(|e| e["name"] == "data"), "{body}");
    let mut ws = s.ws("attacker", None).await;
    ws.hello().await;
    let text = format!("/write {} mine\n/delete {}", rel.display(), rel.display());
    let events = turn(&a, &mut ws, "attacker", "a", &text, "turn.completed").await;
    assert!(
        events.iter().filter(|e| e["type"] == "call.completed" && e["payload"]["status"] == "failed").count() >= 2,
        "{events:?}"
    );
    assert_eq!(std::fs::read_to_string(victim.join("theirs.txt")).unwrap(), "the victim's\n");
}

#[tokio::test]
async fn a_work_tree_or_a_git_dir_out_of_the_roots_gets_no_checkpoints() {
    let tmp = tempfile::tempdir().unwrap();
    // A dotfiles repository at "home", the roots a projects directory under it.
    let home = git_repo(&tmp.path().join("home"), &[(".ssh/id_rsa", b"PRIVATE KEY\n"), (".bashrc", b"alias x=y\n")]);
    let roots = home.join("projects");
    std::fs::create_dir_all(roots.join("foo")).unwrap();
    let refs_before = git(&home, &["for-each-ref"]);
    let s =
        Server::start(&["--workspace-roots", roots.to_str().unwrap(), "--default-cwd", roots.to_str().unwrap()]).await;
    let (status, body) =
        s.post("/v1/rooms/r/sessions", json!({"sessionId": "d", "cwd": roots.join("foo").to_str().unwrap()})).await;
    assert_eq!(status, StatusCode::CREATED, "{body}");
    assert!(body.get("workspace").is_none() || body["workspace"].is_null(), "no checkpoints: {body}");
    // The file routes are rooted at the cwd.
    for path in ["../../.ssh/id_rsa", "../.bashrc"] {
        let (status, body) = s.get(&format!("/v1/rooms/r/sessions/d/files/content?path={path}")).await;
        assert_eq!(error_code(status, &body, StatusCode::BAD_REQUEST), "invalid_path", "{path}");
    }
    let mut ws = s.ws("r", None).await;
    ws.hello().await;
    let events = turn(&As { s: &s, token: TOKEN.into() }, &mut ws, "r", "d", "/write x.txt x", "turn.completed").await;
    assert!(!events.iter().any(|e| e["type"] == "turn.changes"));
    let (status, body) = s.get("/v1/rooms/r/sessions/d/checkpoints").await;
    assert_eq!(error_code(status, &body, StatusCode::UNPROCESSABLE_ENTITY), "no_workspace");
    assert_eq!(git(&home, &["for-each-ref"]), refs_before);
    assert_eq!(checkpoint_repos(&s), Vec::<PathBuf>::new());
    // A `.git` file inside the roots naming a repository outside them.
    let elsewhere = git_repo(&tmp.path().join("elsewhere"), &[("a", b"a\n")]);
    let bar = roots.join("bar");
    std::fs::create_dir_all(&bar).unwrap();
    std::fs::write(bar.join(".git"), format!("gitdir: {}\n", elsewhere.join(".git").display())).unwrap();
    let (status, body) =
        s.post("/v1/rooms/r/sessions", json!({"workspace": {"kind": "worktree", "repo": bar.to_str().unwrap()}})).await;
    assert_eq!(error_code(status, &body, StatusCode::BAD_REQUEST), "cwd_outside_workspace", "{body}");
    let (status, body) = s.post("/v1/rooms/r/sessions", json!({"sessionId": "b", "cwd": bar.to_str().unwrap()})).await;
    assert_eq!(status, StatusCode::CREATED, "{body}");
    assert!(body.get("workspace").is_none() || body["workspace"].is_null(), "{body}");
    assert_eq!(git(&elsewhere, &["worktree", "list"]).lines().count(), 1);
}

#[tokio::test]
async fn base_and_branch_stay_in_the_callers_room() {
    let s = Server::start(&[]).await;
    let dir = git_repo(&s.dir.join("proj"), &[("README.md", b"# demo\n")]);
    git(&dir, &["branch", "feature"]);
    let head = git(&dir, &["rev-parse", "HEAD"]).trim().to_owned();
    let repo = dir.to_str().unwrap();
    let start = |room: &str, id: &str, extra: Value| {
        let mut ws = json!({"kind": "worktree", "repo": repo});
        for (k, v) in extra.as_object().unwrap() {
            ws[k] = v.clone();
        }
        let (room, body) = (room.to_owned(), json!({"sessionId": id, "workspace": ws}));
        let s = &s;
        async move { s.post(&format!("/v1/rooms/{room}/sessions"), body).await }
    };
    let (status, body) = start("r2", "s", json!({})).await;
    assert_eq!(status, StatusCode::CREATED, "{body}");
    assert_eq!(body["workspace"]["branch"], "ensemble/r2/s");
    // Another room's branch as a base, or a name there that does not exist: the same refusal,
    // so nothing is learnt of room r2's sessions.
    for base in ["ensemble/r2/s", "ensemble/r2/nope"] {
        let (status, body) = start("r1", "x", json!({"base": base})).await;
        assert_eq!(error_code(status, &body, StatusCode::BAD_REQUEST), "unknown_base", "{base}: {body}");
        assert!(!body.to_string().contains("exists"), "{body}");
    }
    // Abbreviations probe by prefix; expressions and tags are not a commit id or a branch.
    for base in [&head[..7], &head[..12], "HEAD~0", "main^{tree}", "refs/heads/main", "@{-1}", "-x", "a..b", " ", "v1"]
    {
        let (status, body) = start("r1", "x", json!({"base": base})).await;
        assert_eq!(error_code(status, &body, StatusCode::BAD_REQUEST), "unknown_base", "{base}: {body}");
    }
    // Another room's namespace as a branch.
    let (status, body) = start("r1", "x", json!({"branch": "ensemble/r2/next"})).await;
    assert_eq!(error_code(status, &body, StatusCode::BAD_REQUEST), "invalid_branch", "{body}");
    for branch in ["a..b", "-x", "@{-1}", "x.lock", "", "with space"] {
        let (status, body) = start("r1", "x", json!({"branch": branch})).await;
        assert_eq!(error_code(status, &body, StatusCode::BAD_REQUEST), "invalid_branch", "{branch:?}: {body}");
    }
    // What a room may use: a full id, a branch, its own namespace, a name outside.
    for (id, extra, branch) in [
        ("a", json!({"base": head}), "ensemble/r1/a"),
        ("b", json!({"base": "feature"}), "ensemble/r1/b"),
        ("c", json!({"base": "main", "branch": "ensemble/r1/mine"}), "ensemble/r1/mine"),
        ("d", json!({"branch": "topic/d"}), "topic/d"),
    ] {
        let (status, body) = start("r1", id, extra).await;
        assert_eq!(status, StatusCode::CREATED, "{id}: {body}");
        assert_eq!(body["workspace"]["branch"], branch);
    }
    // A room whose id git would change gets a namespace of its own.
    let (status, body) = start("a:b", "s", json!({})).await;
    assert_eq!(status, StatusCode::CREATED, "{body}");
    assert!(body["workspace"]["branch"].as_str().unwrap().starts_with("ensemble/r."), "{body}");
}
