//! The codex process gets an explicit environment: the server's own variables (secrets included)
//! do not leak into it unless configured with --codex-env.

use ensemble_mock_model::CodexProvider;
use reqwest::StatusCode;
use serde_json::json;

use crate::common::*;

#[tokio::test]
async fn codex_sees_only_its_configured_environment() {
    if !have_codex() {
        return;
    }
    let c = Codex::new(CodexProvider::default(), Some(MOCK_KEY)).await;
    // Set for the server process only (through its Command), as a secret in its environment.
    let s = Server::start_with_env(&c.args(), &[("SERVER_SECRET_TOKEN", "do-not-leak-7f3a")]).await;
    let (status, body) =
        s.post("/v1/rooms/r/sessions", json!({"sessionId": "c", "provider": "codex", "cwd": c.cwd()})).await;
    assert_eq!(status, StatusCode::CREATED, "{body}");
    // codex starts helpers of its own; the app-server is the one whose parent is the server.
    let ppid = |pid: i32| -> i32 {
        let stat = std::fs::read_to_string(format!("/proc/{pid}/stat")).unwrap_or_default();
        stat.rsplit(')').next().and_then(|r| r.split_whitespace().nth(1)).and_then(|p| p.parse().ok()).unwrap_or(0)
    };
    let leaders: Vec<i32> = codex_processes(c.home.path()).into_iter().filter(|&p| ppid(p) == s.pid()).collect();
    assert_eq!(leaders.len(), 1, "one codex app-server for one session: {leaders:?}");
    let leader = leaders[0];
    let environ = std::fs::read(format!("/proc/{leader}/environ")).unwrap();
    let vars: Vec<String> = environ.split(|b| *b == 0).map(|v| String::from_utf8_lossy(v).into_owned()).collect();
    assert!(vars.iter().any(|v| v == &format!("MOCK_API_KEY={MOCK_KEY}")), "configured variable passed: {vars:?}");
    assert!(vars.iter().any(|v| v.starts_with("CODEX_HOME=")), "{vars:?}");
    assert!(!vars.iter().any(|v| v.contains("do-not-leak")), "server secret leaked: {vars:?}");
    // Only the run tag (which lets a later run reap what a crash left behind) and the process's
    // own tag (by which its stop finds what it started), no configuration.
    let run = std::fs::read_dir(s.dir.join("data").join("runs")).unwrap().next().unwrap().unwrap().file_name();
    let mut ours: Vec<&str> =
        vars.iter().filter(|v| v.starts_with("ENSEMBLE_")).map(|v| v.split('=').next().unwrap_or_default()).collect();
    ours.sort_unstable();
    assert_eq!(ours, ["ENSEMBLE_PROCESS_TAG", "ENSEMBLE_RUN_ID"], "server config leaked: {vars:?}");
    assert!(vars.contains(&format!("ENSEMBLE_RUN_ID={}", run.to_string_lossy())), "{vars:?}");
    // Its own process group: the leader's pgid is its pid.
    let stat = std::fs::read_to_string(format!("/proc/{leader}/stat")).unwrap();
    let after = stat.rsplit(')').next().unwrap();
    let pgrp: i32 = after.split_whitespace().nth(2).unwrap().parse().unwrap();
    assert_eq!(pgrp, leader, "codex leads its own process group");
    s.delete("/v1/rooms/r/sessions/c").await;
    no_codex_left(c.home.path()).await;
}
