//! Descriptors the server inherited without close-on-exec never reach an agent.

use reqwest::StatusCode;
use serde_json::json;

use crate::acp::AcpSetup;
use crate::common::*;

#[tokio::test]
async fn descriptors_the_server_inherited_are_not_passed_to_agents() {
    let a = AcpSetup::new(&[], "");
    let dir = tempfile::tempdir().unwrap();
    let secret = dir.path().join("inherited-secret");
    std::fs::write(&secret, "not for agents").unwrap();
    // The shell opens fd 9 without close-on-exec and execs the server in its place.
    let providers = a.providers();
    let shell = format!("exec 9<{}", secret.display());
    let s = Server::start_after_shell(dir.path(), &["--providers", &providers], &shell).await;
    let server_fds = open_files(s.pid());
    assert!(server_fds.iter().any(|p| p == &secret), "the server holds the inherited descriptor: {server_fds:?}");

    let (status, body) =
        s.post("/v1/rooms/r/sessions", json!({"sessionId": "f1", "provider": "test-acp", "cwd": a.cwd()})).await;
    assert_eq!(status, StatusCode::CREATED, "{body}");
    let agents = a.processes();
    assert!(!agents.is_empty(), "the agent runs");
    for pid in agents {
        let fds = open_files(pid);
        assert!(!fds.iter().any(|p| p == &secret), "agent {pid} got the server's inherited descriptor: {fds:?}");
    }
}

/// What a process's descriptors point at.
fn open_files(pid: i32) -> Vec<std::path::PathBuf> {
    std::fs::read_dir(format!("/proc/{pid}/fd"))
        .map(|d| d.filter_map(|e| e.ok().and_then(|e| std::fs::read_link(e.path()).ok())).collect())
        .unwrap_or_default()
}
