//! The README's "A first session" works pasted whole: its shell block, taken verbatim from the
//! README, runs against a server on port 0 with its own data dir and a generated token (as a new
//! user's), finding both through `ensemble url` and `ensemble token`; and those subcommands and
//! `GET …/sessions/{id}?wait=` do what the README says.

use std::path::Path;
use std::process::Stdio;
use std::time::{Duration, Instant};

use reqwest::StatusCode;
use serde_json::json;
use tokio::process::Command;

use crate::common::{Server, WAIT};

/// The first ```sh block under the README's `## A first session`.
fn readme_block() -> String {
    let readme = std::fs::read_to_string(Path::new(env!("CARGO_MANIFEST_DIR")).join("../README.md")).unwrap();
    let section = readme.split("\n## A first session\n").nth(1).expect("README has \"## A first session\"");
    let section = section.split("\n## ").next().unwrap();
    let start = section.find("```sh\n").expect("a ```sh block in \"A first session\"") + "```sh\n".len();
    let len = section[start..].find("\n```").expect("the block ends");
    section[start..start + len].to_owned()
}

/// `ensemble SUBCOMMAND` with the data dir in the environment, as a user's shell would have it.
async fn local(sub: &str, data_dir: &Path) -> std::process::Output {
    let out = Command::new(env!("CARGO_BIN_EXE_ensemble"))
        .arg(sub)
        .env("ENSEMBLE_DATA_DIR", data_dir)
        .stdin(Stdio::null())
        .kill_on_drop(true)
        .output();
    tokio::time::timeout(WAIT, out).await.expect("in time").expect("run ensemble")
}

#[tokio::test]
async fn the_readmes_first_session_runs_pasted_whole() {
    let tool =
        |t: &str| crate::common::tier::runs_with(t, crate::common::tier::on_path(t), "Debian: apt-get install curl jq");
    if !(tool("curl") && tool("jq")) {
        return;
    }
    let block = readme_block();
    // Nothing in it may assume the default address or data dir, or a tool Debian does not ship.
    for fixed in [":7878", ".local/share", "websocat"] {
        assert!(!block.contains(fixed), "the block hard-codes {fixed}:\n{block}");
    }
    let server = Server::start(&["--no-test-token"]).await;
    let bin_dir = Path::new(env!("CARGO_BIN_EXE_ensemble")).parent().unwrap().to_owned();
    let path = format!("{}:{}", bin_dir.display(), std::env::var("PATH").unwrap_or_default());
    let home = tempfile::tempdir().unwrap();
    // `set -e` and `pipefail`: any failing line (a 4xx from `curl -f`, a `jq` on nothing) fails it.
    let run = Command::new("bash")
        .arg("-euo")
        .arg("pipefail")
        .arg("-c")
        .arg(&block)
        .env("PATH", path)
        .env("HOME", home.path())
        .env("ENSEMBLE_DATA_DIR", server.dir.join("data"))
        .env_remove("XDG_DATA_HOME")
        .current_dir(home.path())
        .stdin(Stdio::null())
        .kill_on_drop(true)
        .output();
    let out = tokio::time::timeout(Duration::from_secs(60), run).await.expect("the block ended in time").unwrap();
    let stdout = String::from_utf8_lossy(&out.stdout);
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(out.status.success(), "the block failed ({}):\n{stdout}\n{stderr}", out.status);
    // What the README says it prints: the reply of the first turn, the status after each wait,
    // the command that ran once approved, and the session's end.
    let lines: Vec<&str> = stdout.lines().collect();
    assert!(lines.iter().any(|l| l.contains("hello")), "no reply in:\n{stdout}");
    assert!(lines.contains(&"waiting"), "the approval turn did not wait:\n{stdout}");
    assert!(lines.iter().filter(|l| **l == "ready").count() >= 2, "the turns did not end ready:\n{stdout}");
    assert!(stdout.contains("make test"), "the approved command is not shown:\n{stdout}");
    // It closed its session: nothing is left running in the room.
    let token = std::fs::read_to_string(server.dir.join("data/token")).unwrap();
    let res = reqwest::Client::new().get(server.url("/v1/rooms/demo/sessions")).bearer_auth(token.trim()).send().await;
    let (status, list) = crate::common::decode(res.unwrap()).await;
    assert_eq!(status, StatusCode::OK);
    assert_eq!(list["data"].as_array().map(Vec::len), Some(1), "{list}");
    assert!(list["data"].as_array().unwrap().iter().all(|s| s["status"] == "completed"), "{list}");
}

#[tokio::test]
async fn url_and_token_name_the_running_server() {
    // A data dir that outlives the server (a fresh server's is removed with it).
    let dir = tempfile::tempdir().unwrap();
    let server = Server::start_in(dir.path(), &["--no-test-token"]).await;
    let data = server.dir.join("data");
    let url = local("url", &data).await;
    assert!(url.status.success(), "{}", String::from_utf8_lossy(&url.stderr));
    assert_eq!(String::from_utf8_lossy(&url.stdout).trim(), server.base);
    let token = local("token", &data).await;
    assert!(token.status.success(), "{}", String::from_utf8_lossy(&token.stderr));
    let token = String::from_utf8(token.stdout).unwrap().trim().to_owned();
    assert_eq!(token, std::fs::read_to_string(data.join("token")).unwrap().trim());
    // It is the token the server takes.
    let res = reqwest::Client::new().get(server.url("/v1/rooms")).bearer_auth(&token).send().await.unwrap();
    assert_eq!(res.status(), StatusCode::OK);

    // Stopped, there is no address to name; the token is still the data dir's.
    server.stop().await;
    let url = local("url", &data).await;
    assert!(!url.status.success());
    assert!(url.stdout.is_empty());
    let err = String::from_utf8_lossy(&url.stderr);
    assert!(err.contains("no ensemble server is running on the data dir"), "{err}");
    assert!(local("token", &data).await.status.success());
}

#[tokio::test]
async fn url_and_token_without_any_server_say_so() {
    let dir = tempfile::tempdir().unwrap();
    for sub in ["url", "token"] {
        let out = local(sub, dir.path()).await;
        assert!(!out.status.success(), "{sub} succeeded on an empty data dir");
        let err = String::from_utf8_lossy(&out.stderr);
        assert!(err.contains("no ensemble server is running") && err.contains("--data-dir"), "{sub}: {err}");
    }
}

#[tokio::test]
async fn the_token_of_a_server_with_a_token_file_is_that_files() {
    let server = Server::start(&[]).await;
    let out = local("token", &server.dir.join("data")).await;
    assert!(out.status.success());
    assert_eq!(String::from_utf8_lossy(&out.stdout).trim(), server.token.as_deref().unwrap());
}

#[tokio::test]
async fn wait_idle_answers_when_the_turn_ends() {
    let server = Server::start(&[]).await;
    let (status, _) = server.post("/v1/rooms/w/sessions", json!({"sessionId": "s"})).await;
    assert_eq!(status, StatusCode::CREATED);
    // A turn that takes a while: the wait must outlast it, and answer with its end.
    let (status, _) = server
        .post("/v1/rooms/w/sessions/s/turns", json!({"input": [{"type": "text", "text": "/slow 60\n/chunks 5"}]}))
        .await;
    assert_eq!(status, StatusCode::ACCEPTED);
    let (status, session) = server.get("/v1/rooms/w/sessions/s?wait=idle&timeoutSecs=10").await;
    assert_eq!(status, StatusCode::OK);
    assert_eq!(session["status"], "ready", "{session}");
    assert!(session.get("activeTurnId").is_none(), "{session}");
    let events = server.events("w").await;
    assert!(events.iter().any(|e| e["type"] == "turn.completed"), "the wait answered before the turn's end");
}

#[tokio::test]
async fn wait_input_answers_at_an_approval_and_idle_does_not() {
    let server = Server::start(&[]).await;
    server.post("/v1/rooms/w/sessions", json!({"sessionId": "s"})).await;
    let (status, _) = server
        .post("/v1/rooms/w/sessions/s/turns", json!({"input": [{"type": "text", "text": "/run make test"}]}))
        .await;
    assert_eq!(status, StatusCode::ACCEPTED);
    let (_, session) = server.get("/v1/rooms/w/sessions/s?wait=input&timeoutSecs=10").await;
    assert_eq!(session["status"], "waiting", "{session}");
    // `idle` keeps waiting through the approval: here until its timeout, then the session as it is.
    let started = Instant::now();
    let (status, session) = server.get("/v1/rooms/w/sessions/s?wait=idle&timeoutSecs=1").await;
    assert_eq!(status, StatusCode::OK);
    assert_eq!(session["status"], "waiting", "{session}");
    assert!(started.elapsed() >= Duration::from_millis(900), "idle answered before its timeout");
}

#[tokio::test]
async fn a_bad_wait_is_a_400_in_the_error_shape() {
    let server = Server::start(&[]).await;
    server.post("/v1/rooms/w/sessions", json!({"sessionId": "s"})).await;
    for query in ["wait=soon", "wait=idle&timeoutSecs=-1", "wait=idle&timeoutSecs=x", "timeoutSecs=86401"] {
        let (status, body) = server.get(&format!("/v1/rooms/w/sessions/s?{query}")).await;
        assert_eq!(status, StatusCode::BAD_REQUEST, "{query}: {body}");
        assert!(body["error"]["code"].is_string(), "{query}: {body}");
    }
    // An unknown session is a 404 at once, wait or not.
    let (status, _) = server.get("/v1/rooms/w/sessions/nope?wait=idle").await;
    assert_eq!(status, StatusCode::NOT_FOUND);
}
