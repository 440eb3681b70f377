//! The real `ensemble` binary as a bench runs it: spawned on 127.0.0.1:0 with its own data dir and
//! token file (`kill_on_drop`, so it never outlives the bench), its address read from the
//! `listening on` line, a reqwest client carrying the token, SIGTERM to stop it, and its RSS from
//! `/proc/<pid>/status`. Shared by the `lifecycle` and `memory` benches (`#[path]` module).

#![allow(dead_code, reason = "each bench uses part of it")]
use std::path::{Path, PathBuf};
use std::process::Stdio;
use std::time::{Duration, Instant};

use tokio::io::{AsyncBufReadExt, BufReader};
use tokio::process::{Child, Command};

pub const TOKEN: &str = "bench-token-0123456789abcdef0123456789abcdef";
const WAIT: Duration = Duration::from_secs(120);

/// A running `ensemble serve`.
pub struct Server {
    child: Child,
    pub pid: u32,
    pub base: String,
    pub addr: String,
    pub http: reqwest::Client,
    /// From spawn to the `listening on` line (the store is opened and recovered before it).
    pub to_listening: Duration,
    spawned: Instant,
}

/// A directory for one server: `data/` (its data dir), `token`, `work/` (its workspace root).
pub fn prepare(dir: &Path) {
    use std::io::Write;
    use std::os::unix::fs::OpenOptionsExt;
    std::fs::create_dir_all(dir.join("work")).unwrap();
    let mut f = std::fs::OpenOptions::new()
        .create(true)
        .truncate(true)
        .write(true)
        .mode(0o600)
        .open(dir.join("token"))
        .unwrap();
    f.write_all(TOKEN.as_bytes()).unwrap();
}

pub fn client() -> reqwest::Client {
    let mut headers = reqwest::header::HeaderMap::new();
    headers.insert(reqwest::header::AUTHORIZATION, format!("Bearer {TOKEN}").parse().unwrap());
    // Idle connections are dropped well before the server's keep-alive idle timeout (5 s by
    // default) closes them: reusing one the server is closing at that moment fails the request
    // (`IncompleteMessage`), which a memory bench run met after its seconds of idle measuring.
    reqwest::Client::builder()
        .default_headers(headers)
        .pool_max_idle_per_host(256)
        .pool_idle_timeout(std::time::Duration::from_secs(2))
        .build()
        .unwrap()
}

impl Server {
    /// Spawns `ensemble serve` on `dir` (see [`prepare`]) with `extra` flags; returns once it listens.
    pub async fn spawn(dir: &Path, extra: &[String]) -> Server {
        let work: PathBuf = dir.join("work");
        let spawned = Instant::now();
        let mut child = Command::new(env!("CARGO_BIN_EXE_ensemble"))
            .arg("serve")
            .args(["--listen", "127.0.0.1:0", "--data-dir"])
            .arg(dir.join("data"))
            .arg("--token-file")
            .arg(dir.join("token"))
            .arg("--workspace-roots")
            .arg(&work)
            .arg("--default-cwd")
            .arg(&work)
            .args(extra)
            .env("RUST_LOG", "warn")
            .stdin(Stdio::null())
            .stdout(Stdio::piped())
            .stderr(Stdio::null())
            .kill_on_drop(true)
            .spawn()
            .expect("spawn ensemble");
        let pid = child.id().expect("pid");
        let mut lines = BufReader::new(child.stdout.take().unwrap()).lines();
        let addr = loop {
            let line = tokio::time::timeout(WAIT, lines.next_line()).await.unwrap().unwrap().expect("ensemble listens");
            if let Some(a) = line.strip_prefix("listening on http://") {
                break a.to_owned();
            }
        };
        let to_listening = spawned.elapsed();
        tokio::spawn(async move { while let Ok(Some(_)) = lines.next_line().await {} });
        Server { child, pid, base: format!("http://{addr}"), addr, http: client(), to_listening, spawned }
    }

    /// Polls `/readyz` every 2 ms until 200; returns the time since spawn.
    pub async fn ready(&self) -> Duration {
        let url = format!("{}/readyz", self.base);
        let deadline = Instant::now() + WAIT;
        loop {
            if let Ok(r) = self.http.get(&url).send().await
                && r.status() == 200
            {
                return self.spawned.elapsed();
            }
            assert!(Instant::now() < deadline, "/readyz never answered 200");
            tokio::time::sleep(Duration::from_millis(2)).await;
        }
    }

    /// The server's resident set (VmRSS), KiB.
    pub fn rss_kib(&self) -> u64 {
        let status = std::fs::read_to_string(format!("/proc/{}/status", self.pid)).expect("/proc status");
        status
            .lines()
            .find_map(|l| l.strip_prefix("VmRSS:"))
            .and_then(|v| v.trim().trim_end_matches("kB").trim().parse().ok())
            .expect("VmRSS")
    }

    /// SIGTERM, then waits for the exit (killed after 60 s); returns how long it took.
    pub async fn stop(mut self) -> Duration {
        let t0 = Instant::now();
        // kill(1), as the server's tests do (no unsafe): our own child, not yet reaped (we hold it).
        let sent = std::process::Command::new("kill").arg("-TERM").arg(self.pid.to_string()).status().expect("kill");
        assert!(sent.success(), "kill -TERM {}", self.pid);
        match tokio::time::timeout(Duration::from_secs(60), self.child.wait()).await {
            Ok(status) => assert!(status.unwrap().success(), "ensemble exited with a failure"),
            Err(_) => {
                let _ = self.child.kill().await;
                panic!("ensemble did not stop within 60 s of SIGTERM");
            }
        }
        t0.elapsed()
    }
}

/// The median of three or more samples (the middle one; the lower middle for an even count).
pub fn median(mut v: Vec<f64>) -> f64 {
    v.sort_by(f64::total_cmp);
    v[(v.len() - 1) / 2]
}

/// `--name N` from the command line, else the `env` variable, else `default`.
pub fn arg(name: &str, env: &str, default: &str) -> String {
    let args: Vec<String> = std::env::args().collect();
    args.iter()
        .position(|a| a == name)
        .and_then(|i| args.get(i + 1).cloned())
        .or_else(|| std::env::var(env).ok())
        .unwrap_or_else(|| default.to_owned())
}
