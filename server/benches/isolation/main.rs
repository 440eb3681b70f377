//! What a session's box costs at its start: an ACP session's start (`POST /v1/rooms/{room}/sessions`
//! → 201, which answers once the agent has answered `initialize` and `session/new`), through the real
//! `ensemble` binary with its agent in a box (the default: bubblewrap, the egress proxy, a control
//! group where the machine lets the server make one) against the same binary with `--isolation off`.
//!
//! `cargo bench -p ensemble-server --bench isolation [-- --starts N --real-starts M --warmup W]`
//!
//! Two agents: Claude Code through `claude-agent-acp` (as `scripts/test` installs it in `.tools/`,
//! or `ENSEMBLE_CLAUDE_ACP_BIN`; skipped when missing), the start a user meets, pointed at the
//! scripted model API on 127.0.0.1 (the box's one listed endpoint) — the target (≤ 1.3×) is
//! judged on it; and the project's ACP test agent (`testsupport/acp-agent`, a Rust binary that
//! starts in about a millisecond), the worst case, where the box's own milliseconds are nearly
//! all there is: reported, not judged. Each start is followed by a close (not timed), so every
//! start makes a fresh process and box. The two servers run side by side, start by start, the
//! order alternating, so the machine's drift hits both alike. Reported: median and p90 per side
//! and the ratio of the medians.
#![allow(clippy::unwrap_used, clippy::expect_used, reason = "a benchmark fails loudly")]

#[path = "../common/server.rs"]
mod common;

use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

use serde_json::json;

use crate::common::{Server, arg, prepare};

/// The ACP test agent beside the `ensemble` binary of this build, built when missing.
fn test_agent() -> PathBuf {
    let path = Path::new(env!("CARGO_BIN_EXE_ensemble")).with_file_name("ensemble-acp-test-agent");
    if !path.exists() {
        let release = path.components().any(|c| c.as_os_str() == "release");
        let cargo = std::env::var("CARGO").unwrap_or_else(|_| "cargo".into());
        let mut build = std::process::Command::new(cargo);
        build.args(["build", "-q", "-p", "ensemble-acp-test-agent"]).current_dir(env!("CARGO_MANIFEST_DIR"));
        if release {
            build.arg("--release");
        }
        assert!(build.status().expect("cargo build").success() && path.exists(), "cannot build the ACP test agent");
    }
    path
}

/// Claude Code's ACP adapter as `scripts/test` installs it.
fn claude_bin() -> Option<PathBuf> {
    let p = std::env::var_os("ENSEMBLE_CLAUDE_ACP_BIN").map(PathBuf::from).unwrap_or_else(|| {
        Path::new(env!("CARGO_MANIFEST_DIR")).join("../.tools/claude-acp/node_modules/.bin/claude-agent-acp")
    });
    p.exists().then_some(p)
}

const MOCK_KEY: &str = "bench-key";

/// What a side's providers file runs as `agent`, and the flags its server adds.
struct Agent {
    entry: String,
    flags: Vec<String>,
}

fn test_acp() -> Agent {
    Agent {
        entry: format!(
            "[[provider]]\nid = \"agent\"\nkind = \"acp\"\ncommand = {:?}\n",
            test_agent().display().to_string()
        ),
        flags: Vec::new(),
    }
}

/// Claude Code against the mock model, with a home of its own (`home`), as the real-agent tests
/// run it: the mock the one endpoint it may reach.
fn claude(bin: &Path, mock: &ensemble_mock_model::MockModel, home: &Path) -> Agent {
    std::fs::create_dir_all(home.join(".claude")).unwrap();
    std::fs::write(home.join(".claude/settings.json"), r#"{"permissions":{"defaultMode":"default"}}"#).unwrap();
    let env = [
        ("HOME", home.display().to_string()),
        ("ANTHROPIC_BASE_URL", mock.base_url()),
        ("ANTHROPIC_API_KEY", MOCK_KEY.to_owned()),
        ("CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC", "1".to_owned()),
        ("CLAUDE_CODE_MAX_RETRIES", "0".to_owned()),
        ("IS_SANDBOX", "1".to_owned()),
    ];
    let env: Vec<String> = env.iter().map(|(k, v)| format!("{k} = {v:?}")).collect();
    Agent {
        entry: format!(
            "[[provider]]\nid = \"agent\"\nkind = \"acp\"\ncommand = {:?}\nenv = {{ {} }}\n",
            bin.display().to_string(),
            env.join(", ")
        ),
        flags: vec!["--isolation-network".into(), mock.addr().to_string()],
    }
}

/// One side: a server whose providers file runs `agent`.
async fn side(dir: &Path, agent: &Agent, isolation: &str) -> Server {
    prepare(dir);
    let providers = dir.join("providers.toml");
    std::fs::write(&providers, &agent.entry).unwrap();
    let mut flags: Vec<String> = ["--providers", providers.to_str().unwrap(), "--isolation", isolation]
        .iter()
        .map(|s| (*s).to_owned())
        .collect();
    flags.extend(agent.flags.iter().cloned());
    Server::spawn(dir, &flags).await
}

/// One timed start (then an untimed close).
async fn start(s: &Server, dir: &Path, n: usize) -> Duration {
    let id = format!("s{n}");
    let body = json!({"sessionId": id, "provider": "agent", "cwd": dir.join("work")});
    let t0 = Instant::now();
    let r = s.http.post(format!("{}/v1/rooms/bench/sessions", s.base)).json(&body).send().await.unwrap();
    let took = t0.elapsed();
    let status = r.status();
    assert_eq!(status, 201, "{}", r.text().await.unwrap_or_default());
    let r = s.http.delete(format!("{}/v1/rooms/bench/sessions/{id}", s.base)).send().await.unwrap();
    assert!(r.status().is_success(), "close: {}", r.status());
    took
}

fn quantile(samples: &[Duration], q: f64) -> Duration {
    let mut v = samples.to_vec();
    v.sort();
    v[((v.len() - 1) as f64 * q).round() as usize]
}

fn ms(d: Duration) -> String {
    format!("{:.1} ms", d.as_secs_f64() * 1e3)
}

/// `starts` starts on each side, pair by pair after `warmup`; the medians and p90s, printed as a
/// row; the ratio of the medians.
async fn compare(name: &str, agent: &Agent, dir: &Path, starts: usize, warmup: usize) -> f64 {
    let (dir_on, dir_off) = (dir.join("on"), dir.join("off"));
    eprintln!("{name}: two servers, the agent boxed and --isolation off …");
    let boxed = side(&dir_on, agent, "on").await;
    let open = side(&dir_off, agent, "off").await;
    let (mut on, mut off) = (Vec::new(), Vec::new());
    for n in 0..warmup + starts {
        let (a, b) = if n % 2 == 0 {
            let a = start(&boxed, &dir_on, n).await;
            (a, start(&open, &dir_off, n).await)
        } else {
            let b = start(&open, &dir_off, n).await;
            (start(&boxed, &dir_on, n).await, b)
        };
        if n >= warmup {
            on.push(a);
            off.push(b);
        }
    }
    boxed.stop().await;
    open.stop().await;
    let (mon, moff) = (quantile(&on, 0.5), quantile(&off, 0.5));
    let ratio = mon.as_secs_f64() / moff.as_secs_f64();
    println!(
        "| {name} | {starts} | {} [{}] | {} [{}] | {ratio:.2}× |",
        ms(moff),
        ms(quantile(&off, 0.9)),
        ms(mon),
        ms(quantile(&on, 0.9)),
    );
    ratio
}

#[tokio::main(flavor = "multi_thread", worker_threads = 2)]
async fn main() {
    let starts: usize = arg("--starts", "ISOLATION_STARTS", "40").parse().unwrap();
    let real_starts: usize = arg("--real-starts", "ISOLATION_REAL_STARTS", "10").parse().unwrap();
    let warmup: usize = arg("--warmup", "ISOLATION_WARMUP", "2").parse().unwrap();
    let tmp = tempfile::Builder::new().prefix("ensemble-bench-isolation-").tempdir_in("/var/tmp").unwrap();
    println!(
        "\nisolation: an ACP session's start → 201, in its box and with --isolation off, start by start (medians; p90 in brackets)\n"
    );
    println!("| agent | starts | isolation off | in its box | ratio |");
    println!("| --- | --: | --: | --: | --: |");
    compare("ACP test agent (worst case)", &test_acp(), &tmp.path().join("test"), starts, warmup).await;
    let target = match claude_bin() {
        Some(bin) if real_starts > 0 => {
            let mock =
                ensemble_mock_model::MockModel::start(ensemble_mock_model::MockConfig::default().api_key(MOCK_KEY))
                    .await
                    .expect("mock model");
            let agent = claude(&bin, &mock, &tmp.path().join("claude-home"));
            Some(
                compare("Claude Code (claude-agent-acp)", &agent, &tmp.path().join("claude"), real_starts, warmup)
                    .await,
            )
        }
        _ => None,
    };
    println!();
    match target {
        Some(ratio) => println!(
            "target: Claude Code's ACP session start in its box <= 1.3x isolation off: {} ({ratio:.2}x)",
            if ratio <= 1.3 { "MET" } else { "MISSED" }
        ),
        None => println!("target: Claude Code's ACP session start in its box <= 1.3x isolation off: not measured"),
    }
}
