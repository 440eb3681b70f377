//! An agent that attacks the server through its file requests (issue 41: dangling links, FIFOs,
//! hard links to the token, the server's own files), its terminals (issue 53: a flood of output)
//! and providers files that point a command at the repository being worked on.

use std::ffi::OsStr;
use std::time::{Duration, Instant};

use reqwest::StatusCode;
use serde_json::json;

use crate::acp::{AcpSetup, message_text, turn};
use crate::common::*;

/// Starts a session of the test agent in `cwd`.
async fn start_in(s: &Server, id: &str, cwd: &std::path::Path) {
    let (status, body) = s
        .post("/v1/rooms/r/sessions", json!({"sessionId": id, "provider": "test-acp", "cwd": cwd.to_str().unwrap()}))
        .await;
    assert_eq!(status, StatusCode::CREATED, "{body}");
}

#[tokio::test]
async fn no_write_goes_through_a_dangling_link() {
    let a = AcpSetup::new(&[], "");
    let outside = tempfile::tempdir().unwrap();
    let target = outside.path().join("authorized_keys");
    std::os::unix::fs::symlink(&target, a.work.path().join("dangling")).unwrap();
    std::fs::create_dir(a.work.path().join("d")).unwrap();
    std::os::unix::fs::symlink(outside.path(), a.work.path().join("d/up")).unwrap();
    let s = a.server().await;
    let mut ws = s.ws("r", None).await;
    ws.hello().await;
    start_in(&s, "h1", a.work.path()).await;
    let cwd = a.cwd();
    for path in [format!("{cwd}/dangling"), format!("{cwd}/d/up/authorized_keys")] {
        let text = message_text(&turn(&s, &mut ws, "h1", &format!("write {path} ssh-ed25519 AAAA attacker")).await);
        assert!(text.starts_with("write error: -32602") && text.contains("symbolic link"), "{path}: {text}");
        let text = message_text(&turn(&s, &mut ws, "h1", &format!("read {path}")).await);
        assert!(text.starts_with("read error: -32602"), "{path}: {text}");
    }
    assert!(!target.exists(), "nothing was created through the link");
    // A hard link to a file elsewhere (on the same file system) is refused too.
    let elsewhere = tempfile::tempdir_in("/var/tmp").unwrap();
    std::fs::write(elsewhere.path().join("id_ed25519"), "PRIVATE").unwrap();
    std::fs::hard_link(elsewhere.path().join("id_ed25519"), a.work.path().join("key")).unwrap();
    let text = message_text(&turn(&s, &mut ws, "h1", &format!("read {cwd}/key")).await);
    assert!(text.contains("2 hard links") && !text.contains("PRIVATE"), "{text}");
}

#[tokio::test]
async fn the_token_and_the_data_dir_are_out_of_reach() {
    let a = AcpSetup::new(&[], "");
    let s = a.server().await;
    let mut ws = s.ws("r", None).await;
    ws.hello().await;
    // The harness's default cwd holds the token file and the data dir: the worst case.
    start_in(&s, "h2", &s.dir).await;
    let dir = s.dir.display().to_string();
    let text = message_text(&turn(&s, &mut ws, "h2", &format!("read {dir}/token")).await);
    assert!(text.contains("the server's own files"), "{text}");
    std::fs::hard_link(s.dir.join("token"), s.dir.join("tok")).unwrap();
    let text = message_text(&turn(&s, &mut ws, "h2", &format!("read {dir}/tok")).await);
    assert!(text.starts_with("read error: -32602") && !text.contains(TOKEN), "{text}");
    let text = message_text(&turn(&s, &mut ws, "h2", &format!("write {dir}/tok cut")).await);
    assert!(text.starts_with("write error"), "{text}");
    assert!(std::fs::read_to_string(s.dir.join("token")).unwrap().contains(TOKEN), "the token is intact");
    let data = s.dir.join("data");
    let entries: Vec<_> =
        std::fs::read_dir(&data).unwrap().map(|e| e.unwrap().path()).filter(|p| p.is_file()).collect();
    assert!(!entries.is_empty());
    for file in entries {
        let text = message_text(&turn(&s, &mut ws, "h2", &format!("read {}", file.display())).await);
        assert!(text.contains("the server's own files"), "{}: {text}", file.display());
    }
    let text = message_text(&turn(&s, &mut ws, "h2", &format!("write {}/providers.toml x", data.display())).await);
    assert!(text.contains("the server's own files"), "{text}");
    assert!(!data.join("providers.toml").exists());
}

#[tokio::test]
async fn a_fifo_flood_stalls_no_room() {
    let a = AcpSetup::new(&[], "max_file_requests = 4");
    let fifo = a.work.path().join("fifo");
    assert!(std::process::Command::new("mkfifo").arg(&fifo).status().unwrap().success());
    let s = a.server().await;
    let mut ws = s.ws("r", None).await;
    ws.hello().await;
    start_in(&s, "h3", a.work.path()).await;
    let text = message_text(&turn(&s, &mut ws, "h3", &format!("write-many 600 {}", fifo.display())).await);
    assert!(text.starts_with("write-many: ok=0 "), "{text}");
    assert!(text.contains("FIFO"), "refused as not a regular file: {text}");
    // Every room still reads its log and greets new sockets at once.
    let (status, s2) = s.post("/v1/rooms/other/sessions", json!({"sessionId": "o1"})).await;
    assert_eq!(status, StatusCode::CREATED, "{s2}");
    let begun = Instant::now();
    let (status, body) = s.get("/v1/rooms/other/events").await;
    assert_eq!(status, StatusCode::OK, "{body}");
    let mut other = s.ws("other", None).await;
    other.hello().await;
    assert!(begun.elapsed() < Duration::from_secs(5), "took {:?}", begun.elapsed());
    // And the flooding session itself goes on.
    let text = message_text(&turn(&s, &mut ws, "h3", "after the flood").await);
    assert!(text.starts_with("echo: after the flood"), "{text}");
}

#[tokio::test]
async fn a_relative_command_is_refused_at_start() {
    let dir = tempfile::tempdir().unwrap();
    let file = dir.path().join("providers.toml");
    std::fs::write(&file, "[[provider]]\nid = \"x\"\nkind = \"acp\"\ncommand = \"node_modules/.bin/agent\"\n").unwrap();
    let data = dir.path().join("data");
    let out = run_to_exit(&[
        OsStr::new("--listen"),
        OsStr::new("127.0.0.1:0"),
        OsStr::new("--data-dir"),
        data.as_os_str(),
        OsStr::new("--providers"),
        file.as_os_str(),
    ])
    .await;
    assert!(!out.status.success());
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(stderr.contains(&format!("{}:4:", file.display())) && stderr.contains("relative"), "{stderr}");
}

/// Issue 53: 16 ACP terminals running `yes` added 800 ms to another room's requests. A session's
/// terminals share `terminal_output_bytes_per_sec`: the room's log keeps no more than that of their
/// output, the rest is dropped and counted by a marker, and the pipes of a spent session are read
/// only a few times a second (so the server reads megabytes, not gigabytes, and `yes` waits).
#[tokio::test]
async fn sixteen_flooding_terminals_slow_no_other_room() {
    const BUDGET: u64 = 64 * 1024;
    const TERMINALS: u64 = 16;
    let a = AcpSetup::new(&[], &format!("terminal_output_bytes_per_sec = {BUDGET}"));
    let s = a.server().await;
    let mut ws = s.ws("r", None).await;
    ws.hello().await;
    start_in(&s, "flood", a.work.path()).await;
    let (status, body) = s.post("/v1/rooms/other/sessions", json!({"sessionId": "o1"})).await;
    assert_eq!(status, StatusCode::CREATED, "{body}");
    let begun = Instant::now();
    for _ in 0..TERMINALS {
        let text = message_text(&turn(&s, &mut ws, "flood", "terminal-leave exec yes").await);
        assert!(text.contains("started"), "{text}");
    }
    // While all sixteen run, another room's reads, writes and turns stay fast (a generous bound:
    // the machine may be loaded; without the budget they took most of a second each).
    let mut other = s.ws("other", None).await;
    other.hello().await;
    let mut slowest = Duration::ZERO;
    let mut turns = 0;
    while begun.elapsed() < Duration::from_secs(4) || turns < 3 {
        let t = Instant::now();
        let (status, body) = s.get("/v1/rooms/other/sessions/o1").await;
        assert_eq!(status, StatusCode::OK, "{body}");
        let (status, body) = s.get("/v1/rooms/other/events?limit=50").await;
        assert_eq!(status, StatusCode::OK, "{body}");
        let turn_id = s.turn("other", "o1", "ping").await;
        other.until(|e| e["type"] == "turn.completed" && e["turnId"] == turn_id.as_str()).await;
        slowest = slowest.max(t.elapsed());
        turns += 1;
    }
    assert!(slowest < Duration::from_millis(1500), "another room's requests and turn took {slowest:?}");

    // What was stored of the terminals' output: at most the budget for each second it ran, and
    // markers counting the rest.
    let (status, _) = s.delete("/v1/rooms/r/sessions/flood").await;
    assert_eq!(status, StatusCode::NO_CONTENT);
    a.none_left().await;
    let seconds = begun.elapsed().as_secs() + 1;
    let output: String = s
        .events("r")
        .await
        .iter()
        .filter(|e| e["type"] == "call.updated" && e["payload"]["callId"] == "call-t")
        .filter_map(|e| e["payload"]["outputDelta"].as_str().map(str::to_owned))
        .collect();
    let (kept, dropped) = kept_and_dropped(&output);
    assert!(kept > 0, "some output was kept");
    assert!(kept <= BUDGET * seconds, "{kept} bytes stored in {seconds} s");
    assert!(dropped > 0, "the rest was dropped and counted");
    // Each of the 32 pipes is read a whole pipe (64 KiB) at most about ten times a second once the
    // budget is spent: what the server read stays in megabytes a second.
    let read_bound = (BUDGET + TERMINALS * 2 * 64 * 1024 * 12) * seconds;
    assert!(kept + dropped <= read_bound, "{} bytes read in {seconds} s", kept + dropped);
}

/// The output kept, and the bytes the markers say were dropped.
fn kept_and_dropped(text: &str) -> (u64, u64) {
    const MARK: &str = "\n[Ensemble: ";
    let (mut kept, mut dropped, mut rest) = (0u64, 0u64, text);
    while let Some(at) = rest.find(MARK) {
        kept += at as u64;
        let (n, tail) = rest[at + MARK.len()..].split_once(" bytes of output dropped").expect("a marker");
        dropped += n.parse::<u64>().expect("a count");
        rest = &tail[tail.find("]\n").expect("the marker's end") + 2..];
    }
    (kept + rest.len() as u64, dropped)
}
