//! A full disk under the data dir (a small tmpfs, mounted by the test: the tests run as root):
//! what could not be written is said, not lost without a word, and nothing stays open for ever.

use std::path::{Path, PathBuf};

use reqwest::StatusCode;
use serde_json::{Value, json};

use crate::common::*;

/// A tmpfs of `size` mounted at `dir/data` (the data dir the harness gives the server), unmounted
/// when dropped; `fill` takes its free space.
struct SmallDisk {
    data: PathBuf,
}

impl SmallDisk {
    fn mount(dir: &Path, size: &str) -> SmallDisk {
        let data = dir.join("data");
        std::fs::create_dir_all(&data).unwrap();
        let out = std::process::Command::new("mount")
            .args(["-t", "tmpfs", "-o", &format!("size={size},mode=0700"), "tmpfs"])
            .arg(&data)
            .output()
            .expect("run mount");
        assert!(
            out.status.success(),
            "mounting a tmpfs failed (these tests run as root): {}",
            String::from_utf8_lossy(&out.stderr)
        );
        SmallDisk { data }
    }

    /// Writes a file until the disk is full.
    fn fill(&self) {
        use std::io::Write;
        let mut f = std::fs::File::create(self.filler()).unwrap();
        let block = vec![b'x'; 64 * 1024];
        loop {
            match f.write(&block) {
                Ok(0) => break,
                Ok(_) => {}
                Err(e) if e.raw_os_error() == Some(28) => break,
                Err(e) => panic!("filling the disk: {e}"),
            }
        }
        let _ = f.flush();
    }

    fn free(&self) {
        std::fs::remove_file(self.filler()).unwrap();
    }

    fn filler(&self) -> PathBuf {
        self.data.join("filler")
    }
}

impl Drop for SmallDisk {
    fn drop(&mut self) {
        // Lazily: the server may still hold files in it.
        let _ = std::process::Command::new("umount").arg("-l").arg(&self.data).status();
    }
}

/// A turn that streams many large deltas (the scripted agent echoes every word, one delta each).
fn long_turn() -> String {
    format!("/slow 0\n{}", "word ".repeat(40_000))
}

/// Every `turn.failed` in `events` comes after its `turn.started`.
fn assert_no_failure_without_start(events: &[Value]) {
    for (i, e) in events.iter().enumerate() {
        if e["type"] == "turn.failed" {
            let turn = &e["turnId"];
            assert!(
                events[..i].iter().any(|s| s["type"] == "turn.started" && s["turnId"] == *turn),
                "turn.failed without its turn.started: {e}"
            );
        }
    }
}

#[tokio::test]
async fn a_full_disk_is_said_and_every_open_turn_ends_once_space_returns() {
    let dir = tempfile::tempdir().unwrap();
    let disk = SmallDisk::mount(dir.path(), "8m");
    let s = Server::start_in_relaying_log(dir.path(), &["--store-retry-ms", "50", "--store-min-free-bytes", "1048576"])
        .await;
    s.session("r", "s1").await;
    let mut ws = s.ws("r", None).await;
    ws.hello().await;

    disk.fill();
    let (status, body) =
        s.post("/v1/rooms/r/sessions/s1/turns", json!({"input": [{"type": "text", "text": long_turn()}]})).await;
    // Accepted (its start fitted in the WAL's room) or refused at once; either way it is said.
    assert!(matches!(status, StatusCode::ACCEPTED | StatusCode::INSUFFICIENT_STORAGE), "{status} {body}");
    let turn = body["turnId"].as_str().map(str::to_owned);
    if turn.is_some() {
        s.logged("the session lost events to a failed commit").await;
    }

    // While the store cannot write: not ready, and new work is refused with 507 and Retry-After.
    let res = s.http().get(s.url("/readyz")).send().await.unwrap();
    assert_eq!(res.status(), StatusCode::SERVICE_UNAVAILABLE);
    let (_, ready) = decode(res).await;
    assert_eq!(ready["status"], "storage_full", "{ready}");
    let res = s.http().post(s.url("/v1/rooms/r/sessions")).json(&json!({"sessionId": "s2"})).send().await.unwrap();
    assert_eq!(res.status(), StatusCode::INSUFFICIENT_STORAGE);
    assert!(res.headers().contains_key("retry-after"));
    let (_, refused) = decode(res).await;
    assert_eq!(refused["error"]["code"], "insufficient_storage", "{refused}");

    disk.free();
    if let Some(turn) = &turn {
        // The turn ends once space returns: after what it left open, with a notice that counts.
        let seen = ws.until(|e| e["type"] == "turn.failed" && e["turnId"] == turn.as_str()).await;
        let failed = seen.last().unwrap();
        assert_eq!(failed["payload"]["error"]["code"], "store_unavailable", "{failed}");
        let notice = seen.iter().find(|e| e["type"] == "notice").expect("a notice");
        let message = notice["payload"]["message"].as_str().unwrap();
        assert!(message.contains("events of this session were lost"), "{message}");
        let lost: u64 = message.split(' ').next().unwrap().parse().unwrap();
        assert!(lost > 0, "{message}");
        let after = ws.until_type("session.updated").await;
        assert_eq!(after.last().unwrap()["payload"]["session"]["status"], "disconnected");
    }
    s.logged("the store writes again").await;
    s.assert_ready().await;

    let events = s.events("r").await;
    assert_gap_free(&events);
    assert_no_failure_without_start(&events);
    for e in &events {
        if let Some(t) = &turn
            && e["turnId"] == t.as_str()
            && e["type"] == "turn.failed"
        {
            assert_eq!(e["payload"]["error"]["code"], "store_unavailable");
        }
    }
    let failures = events.iter().filter(|e| e["type"] == "turn.failed").count();
    assert_eq!(failures, usize::from(turn.is_some()), "one end per turn");

    // And the session works again (resumed by its next turn).
    let next = s.turn("r", "s1", "hello again").await;
    let done = ws.until(|e| e["turnId"] == next.as_str() && e["type"] == "turn.completed").await;
    assert!(done.iter().any(|e| e["type"] == "message.completed"));
    let (status, _) = s.post("/v1/rooms/r/sessions", json!({"sessionId": "s2"})).await;
    assert_eq!(status, StatusCode::CREATED);
}

#[tokio::test]
async fn a_turn_open_when_the_server_died_on_a_full_disk_ends_at_the_next_start() {
    let dir = tempfile::tempdir().unwrap();
    let disk = SmallDisk::mount(dir.path(), "8m");
    let s = Server::start_in_relaying_log(dir.path(), &["--store-retry-ms", "50", "--store-min-free-bytes", "1048576"])
        .await;
    s.session("r", "s1").await;
    let turn = s.turn("r", "s1", "/hang").await;
    disk.fill();
    // A write that cannot land: the cancel's events.
    let (status, body) = s.post_empty("/v1/rooms/r/sessions/s1/cancel").await;
    assert!(status == StatusCode::INSUFFICIENT_STORAGE || status.is_success(), "{status} {body}");
    s.kill9().await;

    disk.free();
    let s = Server::start_in(dir.path(), &[]).await;
    let events = s.events("r").await;
    assert_no_failure_without_start(&events);
    let ends: Vec<&Value> = events
        .iter()
        .filter(|e| e["turnId"] == turn.as_str() && matches!(e["type"].as_str(), Some("turn.failed" | "turn.canceled")))
        .collect();
    assert_eq!(ends.len(), 1, "the turn ends exactly once: {ends:?}");
    assert_eq!(s.get("/v1/rooms/r/sessions/s1").await.1["status"], "disconnected");
}
