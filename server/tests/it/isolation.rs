//! Every agent in a box (issue 54). The hostile probes (`testsupport/probe`, a real process of
//! the project's own) run inside the box of each kind of process Ensemble starts — the scripted
//! provider's `/run`, an ACP agent itself, a command it runs through `terminal/*`, a codex
//! app-server — and reach only what they may: no token, data dir, keys, file outside the
//! workspace, server, unlisted endpoint, server process; the listed endpoint yes; memory and
//! processes past the limits no. The server is unharmed and nothing is left behind.

use std::path::{Path, PathBuf};
use std::time::Duration;

use reqwest::StatusCode;
use serde_json::{Value, json};

use crate::acp::{AcpSetup, test_agent};
use crate::common::*;
use crate::misbehaving_agents::fake_agent;

/// This process's effective user (`/proc/self` belongs to it).
fn euid() -> u32 {
    use std::os::unix::fs::MetadataExt;
    std::fs::metadata("/proc/self").unwrap().uid()
}

fn probe_bin() -> PathBuf {
    static BIN: std::sync::OnceLock<PathBuf> = std::sync::OnceLock::new();
    BIN.get_or_init(|| workspace_bin("ensemble-probe", "ensemble-probe")).clone()
}

/// Answers each connection with `hello`.
async fn listener() -> u16 {
    let l = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let port = l.local_addr().unwrap().port();
    tokio::spawn(async move {
        while let Ok((mut s, _)) = l.accept().await {
            use tokio::io::AsyncWriteExt;
            let _ = s.write_all(b"hello").await;
        }
    });
    port
}

/// What the probes need to know, and what each should find.
struct World {
    s: Server,
    acp: AcpSetup,
    listed: u16,
    unlisted: u16,
    work: tempfile::TempDir,
    outside: tempfile::TempDir,
    /// Whether this server's sessions get control groups (root here; a normal user only with a
    /// delegated cgroup v2 subtree): the memory and process probes run only then.
    limits_enforced: bool,
    _dir: Option<tempfile::TempDir>,
}

const MEMORY_MB: u64 = 96;
const MAX_PROCESSES: u64 = 64;

async fn world() -> World {
    world_as(None).await
}

/// The world with the server run as the user `uid` (a normal user, from a test run as root).
async fn world_as(uid: Option<u32>) -> World {
    let listed = listener().await;
    let unlisted = listener().await;
    let acp = AcpSetup::new(&[], "");
    let listed_arg = format!("127.0.0.1:{listed}");
    let (memory, processes) = (MEMORY_MB.to_string(), MAX_PROCESSES.to_string());
    let args = [
        "--providers",
        &acp.providers(),
        "--codex-bin",
        fake_agent(),
        "--isolation-network",
        &listed_arg,
        "--isolation-memory-mb",
        &memory,
        "--isolation-max-processes",
        &processes,
    ];
    if let Some(uid) = uid {
        let providers = PathBuf::from(acp.providers());
        for p in [providers.parent().unwrap(), &providers] {
            std::os::unix::fs::chown(p, Some(uid), Some(uid)).unwrap();
        }
    }
    let (s, dir) = match uid {
        None => (Server::start(&args).await, None),
        Some(uid) => {
            let dir = tempfile::tempdir().unwrap();
            // The whole dir (token, home) becomes the user's just before the server runs as it.
            let switch = format!(
                "chown -R {uid}:{uid} {d} && exec setpriv --reuid={uid} --regid={uid} --clear-groups \"$0\" \"$@\"",
                d = dir.path().display()
            );
            (Server::start_after_shell(dir.path(), &args, &switch).await, Some(dir))
        }
    };
    // The user's keys in the server's home, a secret next to the workspace.
    let home = s.dir.join("home");
    std::fs::create_dir_all(home.join(".ssh")).unwrap();
    std::fs::write(home.join(".ssh/id_rsa"), "PRIVATE KEY\n").unwrap();
    let work = tempfile::Builder::new().prefix("ensemble-iso-work-").tempdir_in("/var/tmp").unwrap();
    let outside = tempfile::Builder::new().prefix("ensemble-iso-outside-").tempdir_in("/var/tmp").unwrap();
    std::fs::write(outside.path().join("secret.txt"), "not yours\n").unwrap();
    if let Some(uid) = uid {
        // Everything the user could read without the box, so only the box keeps it out.
        for p in [home.join(".ssh"), home.join(".ssh/id_rsa"), work.path().to_owned(), outside.path().to_owned()]
            .into_iter()
            .chain([outside.path().join("secret.txt")])
        {
            std::os::unix::fs::chown(&p, Some(uid), Some(uid)).unwrap();
        }
    }
    let (_, providers) = s.get("/v1/providers").await;
    let scripted = providers["data"].as_array().unwrap().iter().find(|p| p["id"] == "scripted").unwrap().clone();
    let limits_enforced = scripted["isolation"]["limits"] != "unenforced";
    World { s, acp, listed, unlisted, work, outside, limits_enforced, _dir: dir }
}

impl World {
    /// Each probe and whether it should reach what it tries.
    fn probes(&self) -> Vec<(String, bool)> {
        let data = self.s.dir.join("data");
        let port = self.s.addr.rsplit(':').next().unwrap().to_owned();
        let p = |s: &Path| s.display().to_string();
        vec![
            (format!("read:{}", p(&data.join("token"))), false),
            (format!("read:{}", p(&self.s.dir.join("token"))), false),
            (format!("list:{}", p(&data)), false),
            (format!("read:{}", p(&data.join("ensemble.sqlite3"))), false),
            (format!("read:{}", p(&self.s.dir.join("home/.ssh/id_rsa"))), false),
            (format!("read:{}", p(&self.outside.path().join("secret.txt"))), false),
            (format!("write:{}", p(&self.outside.path().join("written.txt"))), false),
            (format!("write:{}", p(&self.work.path().join("inside.txt"))), true),
            (format!("tcp:127.0.0.1:{port}"), false),
            (format!("proxy:127.0.0.1:{port}"), false),
            (format!("tcp:127.0.0.1:{}", self.unlisted), false),
            (format!("proxy:127.0.0.1:{}", self.unlisted), false),
            ("proxy:blocked.example:443".to_owned(), false),
            (format!("tcp:127.0.0.1:{}", self.listed), true),
            (format!("proc:{}", self.s.pid()), false),
            ("alloc:8".to_owned(), true),
            ("fork:4".to_owned(), true),
        ]
        .into_iter()
        .chain(
            [(format!("alloc:{}", MEMORY_MB * 3), false), (format!("fork:{}", MAX_PROCESSES * 2), false)]
                .into_iter()
                .filter(|_| self.limits_enforced),
        )
        .collect()
    }

    fn command(&self) -> String {
        let args: Vec<String> = self.probes().into_iter().map(|(p, _)| p).collect();
        format!("{} {}", probe_bin().display(), args.join(" "))
    }

    /// Checks the probes' answers in `text` (one JSON object per probe, wherever in the text).
    fn check(&self, kind: &str, text: &str) {
        let answers = parse(text);
        for (probe, expected) in self.probes() {
            let got = answers
                .iter()
                .find(|a| a["probe"] == probe.as_str())
                .unwrap_or_else(|| panic!("{kind}: no answer to {probe} in {text}"));
            assert_eq!(got["reached"], expected, "{kind}: {probe}: {got}");
        }
        assert!(!self.outside.path().join("written.txt").exists(), "{kind}: a file outside was written");
        assert!(self.work.path().join("inside.txt").exists(), "{kind}: the workspace is writable");
        let _ = std::fs::remove_file(self.work.path().join("inside.txt"));
    }

    async fn start(&self, id: &str, provider: &str) -> Value {
        let (status, body) = self
            .s
            .post("/v1/rooms/r/sessions", json!({"sessionId": id, "provider": provider, "cwd": self.work.path()}))
            .await;
        assert_eq!(status, StatusCode::CREATED, "{body}");
        let iso = &body["isolation"];
        assert_eq!(iso["mode"], "on", "{body}");
        assert_eq!(iso["memoryMb"], MEMORY_MB, "{body}");
        assert_eq!(iso["maxProcesses"], MAX_PROCESSES, "{body}");
        assert!(iso["network"].as_array().unwrap().contains(&json!(format!("127.0.0.1:{}", self.listed))), "{body}");
        body
    }
}

/// The JSON objects of a text: each line (or ` | `-joined part) from its first `{`.
fn parse(text: &str) -> Vec<Value> {
    text.replace(" | ", "\n")
        .lines()
        .filter_map(|l| l.find('{').and_then(|i| serde_json::from_str::<Value>(l[i..].trim()).ok()))
        .collect()
}

/// Runs a turn and returns the text of what ended it: the messages it said and the output of its
/// calls.
async fn turn_text(s: &Server, ws: &mut Ws, id: &str, text: &str, approve: bool) -> String {
    let turn = s.turn("r", id, text).await;
    let t = turn.clone();
    let mut events = Vec::new();
    loop {
        let t2 = t.clone();
        let got = ws
            .until(move |e| {
                e["turnId"] == t2.as_str()
                    && (e["type"] == "interaction.requested"
                        || matches!(e["type"].as_str(), Some("turn.completed" | "turn.failed" | "turn.canceled")))
            })
            .await;
        let last = got.last().unwrap().clone();
        events.extend(got);
        if last["type"] == "interaction.requested" {
            assert!(approve, "{last}");
            let req = last["payload"]["requestId"].as_str().unwrap();
            let (status, body) =
                s.post(&format!("/v1/rooms/r/sessions/{id}/interactions/{req}"), json!({"decision": "accept"})).await;
            assert_eq!(status, StatusCode::OK, "{body}");
            continue;
        }
        break;
    }
    events
        .iter()
        .filter_map(|e| match e["type"].as_str() {
            Some("message.completed") => e["payload"]["text"].as_str().map(str::to_owned),
            Some("call.completed") => e["payload"]["output"].as_str().map(str::to_owned),
            _ => None,
        })
        .collect::<Vec<_>>()
        .join("\n")
}

#[tokio::test]
async fn every_kind_of_process_is_boxed_and_reaches_only_what_it_may() {
    if !have_bwrap() {
        return;
    }
    let w = world().await;
    assert!(w.limits_enforced || euid() != 0, "root gets no control group here");
    let mut ws = w.s.ws("r", None).await;
    ws.hello().await;
    let cmd = w.command();

    w.start("scripted", "scripted").await;
    let text = turn_text(&w.s, &mut ws, "scripted", &format!("/run {cmd}"), true).await;
    w.check("scripted /run", &text);

    w.start("acp", "test-acp").await;
    let text = turn_text(&w.s, &mut ws, "acp", &format!("exec {cmd}"), false).await;
    w.check("an ACP agent", &text);
    let text = turn_text(&w.s, &mut ws, "acp", &format!("terminal {cmd}"), false).await;
    w.check("an ACP agent's terminal", &text);

    w.start("codex", "codex").await;
    let text = turn_text(&w.s, &mut ws, "codex", &format!("exec {cmd}"), false).await;
    w.check("codex", &text);

    // What was refused is in the room, once per target and session.
    let events = w.s.events("r").await;
    let blocked: Vec<&Value> =
        events.iter().filter(|e| e["type"] == "network.blocked" && e["payload"]["host"] == "blocked.example").collect();
    assert!(!blocked.is_empty(), "no network.blocked event");
    assert!(blocked.iter().all(|e| e["payload"]["port"] == 443), "{blocked:?}");
    // The server is unharmed, and a plain turn works in every session.
    let (status, _) = w.s.get("/healthz").await;
    assert_eq!(status, StatusCode::OK);
    for (id, say) in [("acp", "hello"), ("codex", "hello"), ("scripted", "hello")] {
        assert!(turn_text(&w.s, &mut ws, id, say, false).await.contains("hello"), "{id}");
    }
    // Closed: nothing of the boxes is left (agents, their bubblewrap and init, what they ran).
    for id in ["acp", "codex", "scripted"] {
        let (status, body) = w.s.delete(&format!("/v1/rooms/r/sessions/{id}")).await;
        assert_eq!(status, StatusCode::NO_CONTENT, "{body}");
    }
    no_process_left(&format!("ACP_TEST_MARKER={}", w.acp.marker)).await;
    let run_dir = w.s.dir.join("data/run");
    let deadline = std::time::Instant::now() + Duration::from_secs(10);
    while std::fs::read_dir(&run_dir).unwrap().count() > 0 {
        assert!(
            std::time::Instant::now() < deadline,
            "sandboxes left: {:?}",
            std::fs::read_dir(&run_dir).unwrap().count()
        );
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
}

#[tokio::test]
async fn a_start_may_narrow_its_box_never_widen_it() {
    if !have_bwrap() {
        return;
    }
    let w = world().await;
    let (status, body) = w
        .s
        .post(
            "/v1/rooms/r/sessions",
            json!({"provider": "test-acp", "cwd": w.work.path(), "isolation": {"network": [], "memoryMb": 32, "maxProcesses": 16}}),
        )
        .await;
    assert_eq!(status, StatusCode::CREATED, "{body}");
    assert_eq!(
        (body["isolation"]["memoryMb"].clone(), body["isolation"]["maxProcesses"].clone()),
        (json!(32), json!(16))
    );
    assert_eq!(body["isolation"]["network"], json!([]));
    for wider in [
        json!({"network": ["evil.example:443"]}),
        json!({"memoryMb": MEMORY_MB + 1}),
        json!({"maxProcesses": MAX_PROCESSES + 1}),
        json!({"mode": "off"}),
    ] {
        let (status, body) =
            w.s.post("/v1/rooms/r/sessions", json!({"provider": "test-acp", "cwd": w.work.path(), "isolation": wider}))
                .await;
        assert_eq!(status, StatusCode::BAD_REQUEST, "{wider}: {body}");
    }
    // The providers say what their boxes are.
    let (_, providers) = w.s.get("/v1/providers").await;
    let acp = providers["data"].as_array().unwrap().iter().find(|p| p["id"] == "test-acp").unwrap();
    assert_eq!(acp["isolation"]["mode"], "on", "{acp}");
    assert!(acp["isolation"].get("warning").is_none(), "{acp}");
}

#[tokio::test]
async fn without_bubblewrap_a_boxed_start_is_a_clear_503_never_a_fallback() {
    let acp = AcpSetup::new(&[], "");
    let s = Server::start(&["--providers", &acp.providers(), "--bwrap-bin", "/nonexistent/bwrap"]).await;
    let (status, body) = s.post("/v1/rooms/r/sessions", json!({"provider": "test-acp"})).await;
    assert_eq!(error_code(status, &body, StatusCode::SERVICE_UNAVAILABLE), "isolation_unavailable");
    let message = body["error"]["message"].as_str().unwrap();
    assert!(message.contains("apt install bubblewrap") && message.contains("--isolation off"), "{message}");
    let (_, providers) = s.get("/v1/providers").await;
    let p = providers["data"].as_array().unwrap().iter().find(|p| p["id"] == "test-acp").unwrap();
    assert!(p["isolation"]["unavailable"].as_str().unwrap().contains("bubblewrap"), "{p}");
    // The scripted agent starts no process: its sessions start, its /run is refused.
    let (status, body) = s.post("/v1/rooms/r/sessions", json!({"sessionId": "s"})).await;
    assert_eq!(status, StatusCode::CREATED, "{body}");
    let mut ws = s.ws("r", None).await;
    ws.hello().await;
    let text = turn_text(&s, &mut ws, "s", "/run echo unboxed", true).await;
    assert!(!text.contains("unboxed\n"), "it ran: {text}");
    assert!(text.contains("bubblewrap"), "{text}");
    no_process_left(&format!("ACP_TEST_MARKER={}", acp.marker)).await;
    let _ = test_agent();
}

#[tokio::test]
async fn with_isolation_off_providers_say_so_and_agents_run_as_the_server() {
    let acp = AcpSetup::new(&[], "");
    let s = Server::start(&["--providers", &acp.providers(), "--isolation", "off"]).await;
    let (_, providers) = s.get("/v1/providers").await;
    for p in providers["data"].as_array().unwrap() {
        assert_eq!(p["isolation"]["mode"], "off", "{p}");
        assert!(p["isolation"]["warning"].as_str().unwrap().contains("whatever the server's user can"), "{p}");
    }
    let (status, body) = s.post("/v1/rooms/r/sessions", json!({"provider": "test-acp"})).await;
    assert_eq!(status, StatusCode::CREATED, "{body}");
    assert_eq!(body["isolation"]["mode"], "off");
}

/// The same box for a server run by a normal user (bubblewrap makes user namespaces unprivileged;
/// this test, run as root, runs the server as `nobody`). Such a user gets no control group here
/// (no delegated cgroup v2 subtree): the session says its limits are `unenforced`, and every
/// other wall holds.
#[tokio::test]
async fn a_normal_users_server_boxes_its_agents_the_same() {
    if !have_bwrap() {
        return;
    }
    let root = euid() == 0;
    let w = world_as(root.then_some(65534)).await;
    let mut ws = w.s.ws("r", None).await;
    ws.hello().await;
    let cmd = w.command();
    w.start("scripted", "scripted").await;
    let text = turn_text(&w.s, &mut ws, "scripted", &format!("/run {cmd}"), true).await;
    w.check("scripted /run, as a normal user", &text);
    w.start("acp", "test-acp").await;
    let text = turn_text(&w.s, &mut ws, "acp", &format!("terminal {cmd}"), false).await;
    w.check("an ACP agent's terminal, as a normal user", &text);
    let (status, body) = w.s.get("/v1/rooms/r/sessions/acp").await;
    assert_eq!(status, StatusCode::OK);
    let limits = body["isolation"]["limits"].as_str().unwrap().to_owned();
    assert_eq!(limits == "unenforced", !w.limits_enforced, "{body}");
    for id in ["acp", "scripted"] {
        let (status, body) = w.s.delete(&format!("/v1/rooms/r/sessions/{id}")).await;
        assert_eq!(status, StatusCode::NO_CONTENT, "{body}");
    }
    no_process_left(&format!("ACP_TEST_MARKER={}", w.acp.marker)).await;
}
