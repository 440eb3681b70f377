//! What Ensemble adds to a codex turn, as a user feels it: submit → first `message.delta` and
//! submit → `turn.completed`, through Ensemble (REST `POST …/turns`, the room WebSocket) against a
//! client speaking JSON-RPC to `codex app-server` directly (`turn/start`, `item/agentMessage/delta`,
//! `turn/completed`). Both drive the same real codex binary against the same scripted model API on
//! 127.0.0.1, which streams the same reply (20 deltas, no pacing) for every turn. Ensemble runs
//! twice: with codex in its box (the default: bubblewrap, the mock model its one endpoint, reached
//! through the box's forward) and with `--isolation off`, so what the box costs is seen apart.
//!
//! `cargo bench -p ensemble-server --bench codex_overhead [-- --turns N --warmup W]`
//!
//! The sides run in one process, round by round (a direct turn, then a boxed and an unboxed
//! Ensemble turn, the order rotating) so the machine's drift hits all alike; each side has its own
//! codex process and thread, started before the first round. Reported: medians and p90 of both
//! latencies per side, boxed Ensemble's ratio to the direct client (target ≤ 1.05×) and to
//! unboxed Ensemble (what isolation adds). Needs the codex binary (`ENSEMBLE_CODEX_BIN`, or the one
//! `scripts/test` installs in `.tools/codex`).
#![allow(clippy::unwrap_used, clippy::expect_used, reason = "a benchmark fails loudly")]

use std::path::{Path, PathBuf};
use std::process::Stdio;
use std::time::{Duration, Instant};

use ensemble_mock_model::{CodexProvider, MockConfig, MockModel, Reply};
use futures::{SinkExt, StreamExt};
use serde_json::{Value, json};
use tokio::io::{AsyncBufReadExt, AsyncWriteExt, BufReader};
use tokio::process::{Child, ChildStdin, Command};
use tokio_tungstenite::tungstenite::Message;

const KEY: &str = "bench-key";
const DELTAS: usize = 20;
const WAIT: Duration = Duration::from_secs(60);

fn codex_bin() -> PathBuf {
    if let Some(p) = std::env::var_os("ENSEMBLE_CODEX_BIN") {
        return PathBuf::from(p);
    }
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("../.tools/codex/node_modules/@openai/codex-linux-x64/vendor/x86_64-unknown-linux-musl/bin/codex")
}

fn arg(name: &str, default: usize) -> usize {
    let args: Vec<String> = std::env::args().collect();
    args.iter().position(|a| a == name).and_then(|i| args.get(i + 1)).and_then(|v| v.parse().ok()).unwrap_or(default)
}

/// One turn's two latencies.
#[derive(Clone, Copy, Debug)]
struct Sample {
    first_delta: Duration,
    completed: Duration,
}

// ---- the direct client ------------------------------------------------------------------------

/// `codex app-server` spoken to directly: newline-delimited JSON-RPC on its stdio.
struct Direct {
    _child: Child,
    stdin: ChildStdin,
    lines: tokio::io::Lines<BufReader<tokio::process::ChildStdout>>,
    thread: String,
    next_id: u64,
}

impl Direct {
    async fn start(overrides: &[String], home: &Path, work: &Path) -> Direct {
        let mut cmd = Command::new(codex_bin());
        cmd.arg("app-server");
        for o in overrides {
            cmd.arg("-c").arg(o);
        }
        let mut child = cmd
            .env("CODEX_HOME", home)
            .env("HOME", home)
            .env("MOCK_API_KEY", KEY)
            .env("RUST_LOG", "warn")
            .current_dir(work)
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(Stdio::null())
            .kill_on_drop(true)
            .spawn()
            .expect("spawn codex");
        let stdin = child.stdin.take().unwrap();
        let lines = BufReader::new(child.stdout.take().unwrap()).lines();
        let mut d = Direct { _child: child, stdin, lines, thread: String::new(), next_id: 0 };
        d.call(
            "initialize",
            json!({"clientInfo": {"name": "bench", "version": "0"}, "capabilities": {"experimentalApi": true}}),
        )
        .await;
        d.send(json!({"jsonrpc": "2.0", "method": "initialized"})).await;
        let started =
            d.call("thread/start", json!({"cwd": work, "approvalPolicy": "never", "sandbox": "read-only"})).await;
        d.thread = started["thread"]["id"].as_str().expect("thread id").to_owned();
        d
    }

    async fn send(&mut self, msg: Value) {
        let mut line = serde_json::to_vec(&msg).unwrap();
        line.push(b'\n');
        self.stdin.write_all(&line).await.unwrap();
        self.stdin.flush().await.unwrap();
    }

    async fn next(&mut self) -> Value {
        let line = tokio::time::timeout(WAIT, self.lines.next_line())
            .await
            .expect("codex answers")
            .unwrap()
            .expect("codex runs");
        serde_json::from_str(&line).unwrap_or(Value::Null)
    }

    async fn call(&mut self, method: &str, params: Value) -> Value {
        self.next_id += 1;
        let id = self.next_id;
        self.send(json!({"jsonrpc": "2.0", "id": id, "method": method, "params": params})).await;
        loop {
            let m = self.next().await;
            if m["id"] == id && m.get("method").is_none() {
                assert!(m.get("error").is_none(), "{method}: {m}");
                return m["result"].clone();
            }
        }
    }

    async fn turn(&mut self, text: &str) -> Sample {
        self.next_id += 1;
        let id = self.next_id;
        let params = json!({"threadId": self.thread, "input": [{"type": "text", "text": text}]});
        let t0 = Instant::now();
        self.send(json!({"jsonrpc": "2.0", "id": id, "method": "turn/start", "params": params})).await;
        let mut first = None;
        loop {
            let m = self.next().await;
            match m["method"].as_str() {
                Some("item/agentMessage/delta") if first.is_none() => first = Some(t0.elapsed()),
                Some("turn/completed") => {
                    let completed = t0.elapsed();
                    return Sample { first_delta: first.expect("a delta before the end"), completed };
                }
                _ => {}
            }
        }
    }
}

// ---- through Ensemble -------------------------------------------------------------------------

struct ThroughEnsemble {
    _server: Child,
    http: reqwest::Client,
    base: String,
    ws: tokio_tungstenite::WebSocketStream<tokio_tungstenite::MaybeTlsStream<tokio::net::TcpStream>>,
}

impl ThroughEnsemble {
    /// `isolation`: `--isolation-network` for the box (the mock model's address), or `None` for
    /// `--isolation off`.
    async fn start(
        overrides: &[String],
        home: &Path,
        work: &Path,
        data: &Path,
        isolation: Option<&str>,
    ) -> ThroughEnsemble {
        let token = "bench-token-0123456789abcdef0123456789abcdef";
        let token_file = data.join("token");
        std::fs::create_dir_all(data).unwrap();
        write_private(&token_file, token);
        let mut cmd = Command::new(env!("CARGO_BIN_EXE_ensemble"));
        cmd.arg("serve")
            .args(["--listen", "127.0.0.1:0", "--data-dir"])
            .arg(data.join("data"))
            .arg("--token-file")
            .arg(&token_file)
            .arg("--workspace-roots")
            .arg(work)
            .arg("--default-cwd")
            .arg(work)
            .arg("--codex-bin")
            .arg(codex_bin())
            .arg("--codex-home")
            .arg(home)
            .args(["--codex-env", &format!("MOCK_API_KEY={KEY}")])
            .args(["--codex-env", &format!("HOME={}", home.display())]);
        for o in overrides {
            cmd.args(["--codex-config", o]);
        }
        match isolation {
            Some(network) => cmd.args(["--isolation-network", network]),
            None => cmd.args(["--isolation", "off"]),
        };
        let mut child = cmd
            .env("RUST_LOG", "warn")
            .stdin(Stdio::null())
            .stdout(Stdio::piped())
            .stderr(Stdio::null())
            .kill_on_drop(true)
            .spawn()
            .expect("spawn ensemble");
        let mut lines = BufReader::new(child.stdout.take().unwrap()).lines();
        let addr = loop {
            let line = tokio::time::timeout(WAIT, lines.next_line()).await.unwrap().unwrap().expect("ensemble listens");
            if let Some(a) = line.strip_prefix("listening on http://") {
                break a.to_owned();
            }
        };
        tokio::spawn(async move { while let Ok(Some(_)) = lines.next_line().await {} });
        let mut headers = reqwest::header::HeaderMap::new();
        headers.insert(reqwest::header::AUTHORIZATION, format!("Bearer {token}").parse().unwrap());
        let http = reqwest::Client::builder().default_headers(headers).build().unwrap();
        let base = format!("http://{addr}");
        let r = http
            .post(format!("{base}/v1/rooms/bench/sessions"))
            .json(&json!({"sessionId": "c1", "provider": "codex", "cwd": work, "settings": {"approvalPolicy": "never", "sandbox": "read-only"}}))
            .send()
            .await
            .unwrap();
        assert_eq!(r.status(), 201, "{}", r.text().await.unwrap_or_default());
        use tokio_tungstenite::tungstenite::client::IntoClientRequest;
        let mut req = format!("ws://{addr}/v1/rooms/bench/ws").into_client_request().unwrap();
        req.headers_mut().insert("authorization", format!("Bearer {token}").parse().unwrap());
        let (mut ws, _) = tokio_tungstenite::connect_async(req).await.expect("room socket");
        // Past the hello and what the start published.
        let hello = next_frame(&mut ws).await;
        assert_eq!(hello["type"], "hello");
        ThroughEnsemble { _server: child, http, base, ws }
    }

    async fn turn(&mut self, text: &str) -> Sample {
        let url = format!("{}/v1/rooms/bench/sessions/c1/turns", self.base);
        let body = json!({"input": [{"type": "text", "text": text}]});
        let t0 = Instant::now();
        let r = self.http.post(url).json(&body).send().await.unwrap();
        assert_eq!(r.status(), 202);
        let mut first = None;
        loop {
            let f = next_frame(&mut self.ws).await;
            if f["type"] != "event" {
                continue;
            }
            match f["event"]["type"].as_str() {
                Some("message.delta") if first.is_none() => first = Some(t0.elapsed()),
                Some("turn.completed") => {
                    return Sample { first_delta: first.expect("a delta before the end"), completed: t0.elapsed() };
                }
                Some("turn.failed" | "turn.canceled") => panic!("turn did not complete: {f}"),
                _ => {}
            }
        }
    }
}

async fn next_frame(
    ws: &mut tokio_tungstenite::WebSocketStream<tokio_tungstenite::MaybeTlsStream<tokio::net::TcpStream>>,
) -> Value {
    loop {
        match tokio::time::timeout(WAIT, ws.next()).await.expect("a frame in time").expect("open").expect("ws") {
            Message::Text(t) => return serde_json::from_str(t.as_str()).unwrap(),
            Message::Ping(p) => ws.send(Message::Pong(p)).await.unwrap(),
            _ => {}
        }
    }
}

fn write_private(path: &Path, text: &str) {
    use std::io::Write;
    use std::os::unix::fs::OpenOptionsExt;
    let mut f = std::fs::OpenOptions::new().create(true).truncate(true).write(true).mode(0o600).open(path).unwrap();
    f.write_all(text.as_bytes()).unwrap();
}

// ---- the run ----------------------------------------------------------------------------------

fn quantile(samples: &[Duration], q: f64) -> Duration {
    let mut v = samples.to_vec();
    v.sort();
    v[((v.len() - 1) as f64 * q).round() as usize]
}

fn ms(d: Duration) -> String {
    format!("{:.1} ms", d.as_secs_f64() * 1e3)
}

#[tokio::main(flavor = "multi_thread", worker_threads = 2)]
async fn main() {
    let turns = arg("--turns", 30).max(1);
    let warmup = arg("--warmup", 3);
    assert!(codex_bin().exists(), "codex is missing: set ENSEMBLE_CODEX_BIN or run scripts/test once");
    let mock = MockModel::start(MockConfig::default().api_key(KEY)).await.expect("mock model");
    let chunks: Vec<String> = (0..DELTAS).map(|i| format!("word{i} ")).collect();
    mock.set_responder(move |_| Some(Reply::text_chunks(chunks.clone(), Duration::ZERO)));
    let overrides = CodexProvider::default().env_key("MOCK_API_KEY").overrides(&mock.base_url());
    let tmp = tempfile::Builder::new().prefix("ensemble-bench-codex-").tempdir_in("/var/tmp").unwrap();
    let (home_a, home_b, home_c, work, data_b, data_c) = (
        tmp.path().join("home-direct"),
        tmp.path().join("home-boxed"),
        tmp.path().join("home-unboxed"),
        tmp.path().join("work"),
        tmp.path().join("srv-boxed"),
        tmp.path().join("srv-unboxed"),
    );
    for d in [&home_a, &home_b, &home_c, &work] {
        std::fs::create_dir_all(d).unwrap();
    }
    eprintln!("starting codex directly and behind Ensemble, boxed and not …");
    let mock_addr = mock.addr().to_string();
    let mut direct = Direct::start(&overrides, &home_a, &work).await;
    let mut boxed = ThroughEnsemble::start(&overrides, &home_b, &work, &data_b, Some(&mock_addr)).await;
    let mut unboxed = ThroughEnsemble::start(&overrides, &home_c, &work, &data_c, None).await;
    for i in 0..warmup {
        let text = format!("warm {i}");
        direct.turn(&text).await;
        boxed.turn(&text).await;
        unboxed.turn(&text).await;
    }
    let (mut d, mut b, mut u) = (Vec::new(), Vec::new(), Vec::new());
    for i in 0..turns {
        // Rotate which side goes first, so none always follows another's load.
        let text = format!("turn {i}");
        for side in 0..3 {
            match (i + side) % 3 {
                0 => d.push(direct.turn(&text).await),
                1 => b.push(boxed.turn(&text).await),
                _ => u.push(unboxed.turn(&text).await),
            }
        }
    }
    let col = |s: &[Sample], f: fn(&Sample) -> Duration| s.iter().map(f).collect::<Vec<_>>();
    println!(
        "\ncodex overhead: {turns} turns each, {DELTAS} deltas per reply, round by round (medians; p90 in brackets)\n"
    );
    println!(
        "| latency | direct JSON-RPC | Ensemble, isolation off | Ensemble, in its box | box ÷ direct (target ≤ 1.05×) | box ÷ off |"
    );
    println!("| --- | --: | --: | --: | --: | --: |");
    let mut targets = Vec::new();
    for (name, f) in [
        ("submit → first delta", (|s: &Sample| s.first_delta) as fn(&Sample) -> Duration),
        ("submit → turn completed", |s: &Sample| s.completed),
    ] {
        let (dv, bv, uv) = (col(&d, f), col(&b, f), col(&u, f));
        let ratio = quantile(&bv, 0.5).as_secs_f64() / quantile(&dv, 0.5).as_secs_f64();
        targets.push(format!(
            "target: codex {name}, in its box: Ensemble <= 1.05x direct: {} ({ratio:.2}x)",
            if ratio <= 1.05 { "MET" } else { "MISSED" }
        ));
        let (dm, bm, um) = (quantile(&dv, 0.5), quantile(&bv, 0.5), quantile(&uv, 0.5));
        println!(
            "| {name} | {} [{}] | {} [{}] | {} [{}] | {:.2}× | {:.2}× |",
            ms(dm),
            ms(quantile(&dv, 0.9)),
            ms(um),
            ms(quantile(&uv, 0.9)),
            ms(bm),
            ms(quantile(&bv, 0.9)),
            bm.as_secs_f64() / dm.as_secs_f64(),
            bm.as_secs_f64() / um.as_secs_f64()
        );
    }
    println!();
    for t in targets {
        println!("{t}");
    }
}
