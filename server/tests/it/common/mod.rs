//! Test support: the real `ensemble` binary on port 0 with a temporary data dir, real HTTP and
//! WebSocket clients, and waits with timeouts (never sleeps) for what tests expect.

use std::path::{Path, PathBuf};
use std::process::Stdio;
use std::time::Duration;

pub use ensemble_test_engines::tier;
use futures::{SinkExt, StreamExt};
use reqwest::StatusCode;
use serde_json::{Value, json};
use tokio::io::{AsyncBufReadExt, BufReader};
use tokio::net::TcpStream;
use tokio::process::{Child, Command};
use tokio_tungstenite::tungstenite::Message;
use tokio_tungstenite::{MaybeTlsStream, WebSocketStream};

/// How long any single wait in a test may take.
pub const WAIT: Duration = Duration::from_secs(15);

/// The bearer token every test server is given (through `--token-file`) unless a test chooses.
pub const TOKEN: &str = "test-token-0123456789abcdef0123456789abcdef";

pub struct Server {
    pub child: Child,
    pub base: String,
    pub addr: String,
    pub dir: PathBuf,
    _tmp: Option<tempfile::TempDir>,
    /// The token the harness gave the server (None when the test chose its own).
    pub token: Option<String>,
    http: reqwest::Client,
    /// Everything logged so far, for a server whose log is relayed ([`Server::start_relaying_log`]).
    log_lines: Option<tokio::sync::watch::Receiver<String>>,
}

/// Where a server's log (its stderr) goes.
#[derive(Clone, Copy, PartialEq, Eq)]
enum Log {
    /// Straight into `server.log`.
    File,
    /// Through the harness, line by line, into `server.log` and to [`Server::logged`]'s waiters.
    Relayed,
}

impl Server {
    /// A fresh server with a fresh data dir.
    pub async fn start(args: &[&str]) -> Server {
        Self::fresh(args, &[], None, Log::File).await
    }

    /// A fresh server with extra environment variables.
    pub async fn start_with_env(args: &[&str], env: &[(&str, &str)]) -> Server {
        Self::fresh(args, env, None, Log::File).await
    }

    /// A server on an existing data dir (restarts).
    pub async fn start_in(dir: &Path, args: &[&str]) -> Server {
        Self::launch_with(dir, args, &[], None, Log::File).await
    }

    /// A fresh server whose log lines tests can wait for ([`Server::logged`]): for a state the
    /// server announces only in its log.
    pub async fn start_relaying_log(args: &[&str]) -> Server {
        Self::fresh(args, &[], None, Log::Relayed).await
    }

    /// A server on an existing data dir whose log lines tests can wait for ([`Server::logged`]).
    pub async fn start_in_relaying_log(dir: &Path, args: &[&str]) -> Server {
        Self::launch_with(dir, args, &[], None, Log::Relayed).await
    }

    /// A fresh server whose open-file limit (soft and hard) is `nofile` from its start (set by
    /// `sh`'s `ulimit` before it execs the server, so the tests need no unsafe code).
    pub async fn start_with_file_limit(args: &[&str], nofile: u64) -> Server {
        // Relayed: what a server short of descriptors logs is what these tests wait for.
        Self::fresh(args, &[], Some(format!("ulimit -n {nofile}")), Log::Relayed).await
    }

    /// A server in `dir` started by `sh` after `shell` (e.g. `umask 022 && ulimit -S -n 256`).
    pub async fn start_after_shell(dir: &Path, args: &[&str], shell: &str) -> Server {
        Self::launch_with(dir, args, &[], Some(shell.to_owned()), Log::File).await
    }

    /// A server on a fresh data dir, removed when the server is dropped.
    async fn fresh(args: &[&str], env: &[(&str, &str)], shell_prefix: Option<String>, log_to: Log) -> Server {
        let tmp = tempfile::tempdir().expect("tempdir");
        let mut s = Self::launch_with(tmp.path(), args, env, shell_prefix, log_to).await;
        s._tmp = Some(tmp);
        s
    }

    /// `shell_prefix`: a shell command run before the server is exec'd in its place (same pid).
    async fn launch_with(
        dir: &Path,
        args: &[&str],
        env: &[(&str, &str)],
        shell_prefix: Option<String>,
        log_to: Log,
    ) -> Server {
        let log = std::fs::OpenOptions::new().create(true).append(true).open(dir.join("server.log")).expect("log file");
        let mut cmd = match shell_prefix {
            None => Command::new(env!("CARGO_BIN_EXE_ensemble")),
            Some(prefix) => {
                let mut c = Command::new("sh");
                c.arg("-c").arg(format!("{prefix} && exec \"$0\" \"$@\"")).arg(env!("CARGO_BIN_EXE_ensemble"));
                c
            }
        };
        cmd.arg("serve").arg("--data-dir").arg(dir.join("data"));
        let has = |flag: &str| args.iter().any(|a| a.starts_with(flag));
        // Without bubblewrap (a fresh checkout) agents run unboxed here, unless scripts/test
        // demands everything; the box's own tests skip (`have_bwrap`).
        if !has("--isolation") && !tier::on_path("bwrap") && !tier::required() {
            cmd.arg("--isolation").arg("off");
        }
        if !has("--default-cwd") {
            cmd.arg("--default-cwd").arg(dir);
        }
        if !has("--listen") {
            cmd.arg("--listen").arg("127.0.0.1:0");
        }
        let token = if has("--token-file") || has("--no-test-token") {
            None
        } else {
            let f = dir.join("token");
            write_private(&f, &format!("{TOKEN}\n"));
            cmd.arg("--token-file").arg(f);
            Some(TOKEN)
        };
        if !has("--workspace-roots") {
            // The codex tests' work dirs live in /var/tmp.
            cmd.arg("--workspace-roots").arg(format!("{}:/var/tmp", dir.display()));
        }
        // A home of the test's own: the agents' boxes hide the real one (and whatever is checked
        // out under it), and nothing a test runs touches the machine's.
        let home = dir.join("home");
        let _ = std::fs::create_dir_all(&home);
        cmd.env("HOME", &home);
        cmd.args(args.iter().filter(|a| **a != "--no-test-token"))
            .env("RUST_LOG", std::env::var("ENSEMBLE_TEST_LOG").unwrap_or_else(|_| "info".into()))
            .envs(env.iter().copied())
            .stdin(Stdio::null())
            .stdout(Stdio::piped())
            .stderr(match log_to {
                Log::File => Stdio::from(log.try_clone().expect("log file")),
                Log::Relayed => Stdio::piped(),
            })
            .kill_on_drop(true);
        let mut child = cmd.spawn().expect("spawn ensemble");
        let log_lines = child.stderr.take().map(|stderr| relay_log(stderr, log));
        let stdout = child.stdout.take().expect("stdout");
        let mut lines = BufReader::new(stdout).lines();
        let addr = tokio::time::timeout(WAIT, async {
            while let Some(line) = lines.next_line().await.expect("read stdout") {
                if let Some(a) = line.strip_prefix("listening on http://") {
                    return a.to_owned();
                }
            }
            panic!(
                "ensemble exited before listening; log: {}",
                std::fs::read_to_string(dir.join("server.log")).unwrap_or_default()
            );
        })
        .await
        .expect("ensemble did not start in time");
        // Keep draining stdout so the child never blocks on a full pipe.
        tokio::spawn(async move { while let Ok(Some(_)) = lines.next_line().await {} });
        let mut headers = reqwest::header::HeaderMap::new();
        if let Some(t) = token {
            headers.insert(reqwest::header::AUTHORIZATION, format!("Bearer {t}").parse().expect("header"));
        }
        Server {
            child,
            base: format!("http://{addr}"),
            addr,
            dir: dir.to_path_buf(),
            _tmp: None,
            token: token.map(str::to_owned),
            // Pooled connections are dropped well before the server's keep-alive idle close (5 s by
            // default): reusing one just as the server closes it fails the request mid-way.
            http: reqwest::Client::builder()
                .timeout(WAIT)
                .pool_idle_timeout(Duration::from_secs(2))
                .default_headers(headers)
                .build()
                .expect("client"),
            log_lines,
        }
    }

    /// Waits until the server has logged a line containing `text` (a server started with
    /// [`Server::start_relaying_log`]).
    pub async fn logged(&self, text: &str) {
        let mut lines = self.log_lines.clone().expect("a server started with start_relaying_log");
        tokio::time::timeout(WAIT, lines.wait_for(|log| log.contains(text)))
            .await
            .unwrap_or_else(|_| panic!("timed out waiting for `{text}` in the log:\n{}", self.log()))
            .expect("the server's log ended first");
    }

    /// `/readyz` answers 200 now (after a dependency returned: the caller knows it is back).
    pub async fn assert_ready(&self) {
        let (status, body) = self.get("/readyz").await;
        assert_eq!(status, StatusCode::OK, "{body}");
    }

    pub fn url(&self, path: &str) -> String {
        format!("{}{}", self.base, path)
    }

    pub fn http(&self) -> &reqwest::Client {
        &self.http
    }

    pub async fn get(&self, path: &str) -> (StatusCode, Value) {
        let res = self.http.get(self.url(path)).send().await.expect("GET");
        decode(res).await
    }

    pub async fn post(&self, path: &str, body: Value) -> (StatusCode, Value) {
        let res = self.http.post(self.url(path)).json(&body).send().await.expect("POST");
        decode(res).await
    }

    /// A POST allowed `within` instead of [`WAIT`] (a real agent's start, seconds under load).
    pub async fn post_within(&self, path: &str, body: Value, within: Duration) -> (StatusCode, Value) {
        let res = self.http.post(self.url(path)).json(&body).timeout(within).send().await.expect("POST");
        decode(res).await
    }

    pub async fn post_empty(&self, path: &str) -> (StatusCode, Value) {
        let res = self.http.post(self.url(path)).send().await.expect("POST");
        decode(res).await
    }

    pub async fn delete(&self, path: &str) -> (StatusCode, Value) {
        let res = self.http.delete(self.url(path)).send().await.expect("DELETE");
        decode(res).await
    }

    pub async fn put(&self, path: &str, body: Value) -> (StatusCode, Value) {
        let res = self.http.put(self.url(path)).json(&body).send().await.expect("PUT");
        decode(res).await
    }

    pub async fn patch(&self, path: &str, body: Value) -> (StatusCode, Value) {
        let res = self.http.patch(self.url(path)).json(&body).send().await.expect("PATCH");
        decode(res).await
    }

    /// Starts a scripted session and returns it.
    pub async fn session(&self, room: &str, id: &str) -> Value {
        let (status, body) = self.post(&format!("/v1/rooms/{room}/sessions"), json!({"sessionId": id})).await;
        assert_eq!(status, StatusCode::CREATED, "{body}");
        body
    }

    /// Submits text and returns the turn id.
    pub async fn turn(&self, room: &str, id: &str, text: &str) -> String {
        let (status, body) = self
            .post(&format!("/v1/rooms/{room}/sessions/{id}/turns"), json!({"input": [{"type": "text", "text": text}]}))
            .await;
        assert_eq!(status, StatusCode::ACCEPTED, "{body}");
        body["turnId"].as_str().expect("turnId").to_owned()
    }

    pub async fn ws(&self, room: &str, after: Option<u64>) -> Ws {
        use tokio_tungstenite::tungstenite::client::IntoClientRequest;
        let q = after.map(|a| format!("?after={a}")).unwrap_or_default();
        let url = format!("ws://{}/v1/rooms/{room}/ws{q}", self.addr);
        let mut req = url.into_client_request().expect("request");
        if let Some(t) = &self.token {
            req.headers_mut().insert("authorization", format!("Bearer {t}").parse().expect("header"));
        }
        let (stream, _) = tokio::time::timeout(WAIT, tokio_tungstenite::connect_async(req))
            .await
            .expect("ws connect timed out")
            .expect("ws connect");
        Ws { stream }
    }

    /// All durable events of a room (through REST).
    pub async fn events(&self, room: &str) -> Vec<Value> {
        let mut out = Vec::new();
        let mut after = 0;
        loop {
            let (status, page) = self.get(&format!("/v1/rooms/{room}/events?after={after}&limit=1000")).await;
            assert_eq!(status, StatusCode::OK, "{page}");
            let data = page["data"].as_array().expect("data").clone();
            if data.is_empty() {
                return out;
            }
            after = data.last().and_then(|e| e["seq"].as_u64()).expect("seq");
            out.extend(data);
        }
    }

    pub fn pid(&self) -> i32 {
        self.child.id().expect("pid") as i32
    }

    pub fn signal(&self, sig: i32) {
        // Through kill(1), so the tests need no unsafe code.
        let status = std::process::Command::new("kill")
            .arg(format!("-{sig}"))
            .arg(self.pid().to_string())
            .status()
            .expect("kill");
        assert!(status.success());
    }

    /// SIGTERM and wait for the exit status.
    pub async fn stop(mut self) -> std::process::ExitStatus {
        self.signal(15);
        tokio::time::timeout(WAIT, self.child.wait()).await.expect("no exit after SIGTERM").expect("wait")
    }

    /// Waits for an exit that a signal already asked for.
    pub async fn stop_waiting(mut self) -> std::process::ExitStatus {
        tokio::time::timeout(WAIT, self.child.wait()).await.expect("no exit").expect("wait")
    }

    /// SIGKILL (no chance to clean up).
    pub async fn kill9(mut self) {
        self.signal(9);
        let _ = tokio::time::timeout(WAIT, self.child.wait()).await.expect("no exit after SIGKILL");
    }

    pub fn log(&self) -> String {
        std::fs::read_to_string(self.dir.join("server.log")).unwrap_or_default()
    }
}

/// Copies a server's stderr line by line into `file` and into the returned log, which waiters watch.
fn relay_log(stderr: tokio::process::ChildStderr, mut file: std::fs::File) -> tokio::sync::watch::Receiver<String> {
    use std::io::Write;
    let (tx, rx) = tokio::sync::watch::channel(String::new());
    tokio::spawn(async move {
        let mut lines = BufReader::new(stderr).lines();
        while let Ok(Some(line)) = lines.next_line().await {
            let _ = writeln!(file, "{line}");
            tx.send_modify(|log| {
                log.push_str(&line);
                log.push('\n');
            });
        }
    });
    rx
}

/// Writes a file only its owner may read (mode 0600), as token files must be.
pub fn write_private(path: &Path, content: &str) {
    use std::io::Write;
    use std::os::unix::fs::OpenOptionsExt;
    let _ = std::fs::remove_file(path);
    let mut f = std::fs::OpenOptions::new().write(true).create_new(true).mode(0o600).open(path).expect("token file");
    f.write_all(content.as_bytes()).expect("write token file");
}

/// Runs the binary to its exit (a start-up that must fail), with `args` after `serve`.
pub async fn run_to_exit<A: AsRef<std::ffi::OsStr>>(args: &[A]) -> std::process::Output {
    let out = Command::new(env!("CARGO_BIN_EXE_ensemble"))
        .arg("serve")
        .args(args)
        .env("RUST_LOG", "info")
        .stdin(Stdio::null())
        .kill_on_drop(true)
        .output();
    tokio::time::timeout(WAIT, out).await.expect("the server did not exit in time").expect("run ensemble")
}

pub async fn decode(res: reqwest::Response) -> (StatusCode, Value) {
    let status = res.status();
    let bytes = res.bytes().await.expect("body");
    let v = if bytes.is_empty() {
        Value::Null
    } else {
        serde_json::from_slice(&bytes).unwrap_or_else(|_| Value::String(String::from_utf8_lossy(&bytes).into_owned()))
    };
    (status, v)
}

/// Asserts the one error shape and returns its code.
pub fn error_code(status: StatusCode, body: &Value, expected_status: StatusCode) -> String {
    assert_eq!(status, expected_status, "{body}");
    let err = &body["error"];
    assert!(err.is_object(), "error shape: {body}");
    assert!(err["message"].as_str().is_some_and(|m| !m.is_empty()), "message: {body}");
    let code = err["code"].as_str().expect("code").to_owned();
    assert!(code.chars().all(|c| c.is_ascii_lowercase() || c == '_'), "snake_case code: {code}");
    code
}

pub struct Ws {
    pub stream: WebSocketStream<MaybeTlsStream<TcpStream>>,
}

impl Ws {
    /// The next text frame as JSON (pings are answered by tungstenite).
    pub async fn frame(&mut self) -> Value {
        loop {
            let msg = tokio::time::timeout(WAIT, self.stream.next()).await.expect("no frame in time");
            match msg.expect("stream ended").expect("ws error") {
                Message::Text(t) => return serde_json::from_str(t.as_str()).expect("json frame"),
                Message::Close(c) => {
                    return json!({"type": "__close", "code": c.map(|c| u16::from(c.code))});
                }
                _ => continue,
            }
        }
    }

    pub async fn hello(&mut self) -> Value {
        let f = self.frame().await;
        assert_eq!(f["type"], "hello", "{f}");
        f
    }

    /// The next `event` frame's event.
    pub async fn event(&mut self) -> Value {
        let f = self.frame().await;
        assert_eq!(f["type"], "event", "{f}");
        f["event"].clone()
    }

    /// Frames up to and including the first one matching `pred`.
    pub async fn frames_until(&mut self, mut pred: impl FnMut(&Value) -> bool) -> Vec<Value> {
        let mut out = Vec::new();
        loop {
            let f = self.frame().await;
            let done = pred(&f);
            out.push(f);
            if done {
                return out;
            }
        }
    }

    /// Events up to and including the first one matching `pred`.
    pub async fn until(&mut self, mut pred: impl FnMut(&Value) -> bool) -> Vec<Value> {
        let mut out = Vec::new();
        loop {
            let e = self.event().await;
            let done = pred(&e);
            out.push(e);
            if done {
                return out;
            }
        }
    }

    /// Events up to and including the first of type `ty`.
    pub async fn until_type(&mut self, ty: &str) -> Vec<Value> {
        self.until(|e| e["type"] == ty).await
    }

    pub async fn send_text(&mut self, text: &str) {
        self.stream.send(Message::Text(text.into())).await.expect("send");
    }
}

/// The event types of a list, in order.
pub fn types(events: &[Value]) -> Vec<String> {
    events.iter().map(|e| e["type"].as_str().unwrap_or("?").to_owned()).collect()
}

/// Asserts `seq`s are consecutive.
pub fn assert_gap_free(events: &[Value]) {
    for w in events.windows(2) {
        assert_eq!(w[1]["seq"].as_u64(), w[0]["seq"].as_u64().map(|s| s + 1), "gap between {} and {}", w[0], w[1]);
    }
}

/// Where the real codex binary is: `$ENSEMBLE_CODEX_BIN`, or the npm install `scripts/test` makes.
pub fn codex_bin() -> PathBuf {
    let p = codex_path();
    assert!(p.exists(), "the codex binary is missing: {CODEX_HOW}");
    p
}

/// How to get the pinned codex (the version `scripts/test` installs).
const CODEX_HOW: &str = "scripts/test installs @openai/codex@0.171.0 into .tools/codex; or set ENSEMBLE_CODEX_BIN";

fn codex_path() -> PathBuf {
    if let Some(p) = std::env::var_os("ENSEMBLE_CODEX_BIN") {
        return PathBuf::from(p);
    }
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("../.tools/codex/node_modules/@openai/codex-linux-x64/vendor/x86_64-unknown-linux-musl/bin/codex")
}

/// Whether the tests that drive the real codex run here (see `ensemble_test_engines::tier`).
pub fn have_codex() -> bool {
    tier::runs_with("codex", codex_path().exists(), CODEX_HOW)
}

/// Whether the tests of the box itself run here.
pub fn have_bwrap() -> bool {
    tier::runs_with("bubblewrap (bwrap)", tier::on_path("bwrap"), "Debian: apt-get install bubblewrap")
}

/// A scripted model API on 127.0.0.1 and the flags that point Ensemble's codex at it.
pub struct Codex {
    pub mock: ensemble_mock_model::MockModel,
    pub home: tempfile::TempDir,
    pub work: tempfile::TempDir,
    pub args: Vec<String>,
}

pub const MOCK_KEY: &str = "test-key-123";

/// A server whose codex is logged in to the mock model, and a reader of room `r` past its `hello`.
pub async fn codex_server() -> (Codex, Server, Ws) {
    let c = Codex::new(ensemble_mock_model::CodexProvider::default(), Some(MOCK_KEY)).await;
    let s = Server::start(&c.args()).await;
    let mut ws = s.ws("r", None).await;
    ws.hello().await;
    (c, s, ws)
}

impl Codex {
    /// `key`: the API key Ensemble gives codex (None: none, to see `auth_required`).
    pub async fn new(provider: ensemble_mock_model::CodexProvider, key: Option<&str>) -> Codex {
        let mock = ensemble_mock_model::MockModel::start(ensemble_mock_model::MockConfig::default().api_key(MOCK_KEY))
            .await
            .expect("mock model");
        // codex warns about homes under /tmp.
        let home = tempfile::Builder::new().prefix("ensemble-codex-home-").tempdir_in("/var/tmp").expect("home");
        let work = tempfile::Builder::new().prefix("ensemble-codex-work-").tempdir_in("/var/tmp").expect("work");
        let provider = provider.env_key("MOCK_API_KEY");
        let mut args = vec![
            "--codex-bin".to_owned(),
            codex_bin().to_string_lossy().into_owned(),
            "--codex-home".to_owned(),
            home.path().to_string_lossy().into_owned(),
        ];
        for o in provider.overrides(&mock.base_url()) {
            args.push("--codex-config".into());
            args.push(o);
        }
        if let Some(k) = key {
            args.push("--codex-env".into());
            args.push(format!("MOCK_API_KEY={k}"));
        }
        // codex runs `bash -l` for its shell snapshot and commands; with the machine's HOME that reads
        // its dotfiles (here: pyenv's rehash, which waits on a lock file a killed shell can leave
        // behind). A HOME of its own keeps the tests independent of the machine.
        args.push("--codex-env".into());
        args.push(format!("HOME={}", home.path().display()));
        // codex runs in its box: the mock model is the one endpoint it may reach.
        args.push("--isolation-network".into());
        args.push(mock.addr().to_string());
        Codex { mock, home, work, args }
    }

    pub fn args(&self) -> Vec<&str> {
        self.args.iter().map(String::as_str).collect()
    }

    pub fn cwd(&self) -> &str {
        self.work.path().to_str().expect("utf-8 path")
    }
}

/// The codex app-servers this server started (its descendants: a boxed codex runs under
/// bubblewrap and the box's init).
pub fn codex_processes_of_server(c: &Codex, s: &Server) -> Vec<i32> {
    codex_app_servers(c.home.path()).into_iter().filter(|&p| descends_from(p, s.pid())).collect()
}

/// Whether `ancestor` is an ancestor of `pid`.
pub fn descends_from(pid: i32, ancestor: i32) -> bool {
    let ppid = |pid: i32| -> i32 {
        let stat = std::fs::read_to_string(format!("/proc/{pid}/stat")).unwrap_or_default();
        stat.rsplit(')').next().and_then(|r| r.split_whitespace().nth(1)).and_then(|p| p.parse().ok()).unwrap_or(0)
    };
    let mut p = pid;
    for _ in 0..64 {
        p = ppid(p);
        if p == ancestor {
            return true;
        }
        if p <= 1 {
            return false;
        }
    }
    false
}

/// Pids of running codex processes whose CODEX_HOME is `home` (from /proc).
pub fn codex_processes(home: &Path) -> Vec<i32> {
    processes_with_env(&format!("CODEX_HOME={}", home.display()))
}

/// Pids of live (not zombie) processes with `kv` (`KEY=value`) in their environment.
pub fn processes_with_env(kv: &str) -> Vec<i32> {
    let needle = kv;
    let Ok(dir) = std::fs::read_dir("/proc") else { return Vec::new() };
    dir.flatten()
        .filter_map(|e| e.file_name().to_str().and_then(|n| n.parse::<i32>().ok()))
        .filter(|pid| {
            let env = std::fs::read(format!("/proc/{pid}/environ")).unwrap_or_default();
            let stat = std::fs::read_to_string(format!("/proc/{pid}/stat")).unwrap_or_default();
            let zombie = stat.rsplit(')').next().is_some_and(|r| r.trim_start().starts_with('Z'));
            !zombie && env.split(|b| *b == 0).any(|kv| kv == needle.as_bytes())
        })
        .collect()
}

/// Waits until no codex process of `home` is left.
pub async fn no_codex_left(home: &Path) {
    no_process_left(&format!("CODEX_HOME={}", home.display())).await;
}

/// Waits until no process with `kv` in its environment is left. A process's end has no event a
/// test can wait on, so /proc is read until the deadline.
pub async fn no_process_left(kv: &str) {
    let deadline = tokio::time::Instant::now() + WAIT;
    loop {
        let left = processes_with_env(kv);
        if left.is_empty() {
            return;
        }
        assert!(tokio::time::Instant::now() < deadline, "processes with {kv} left behind: {left:?}");
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
}

/// Pids of the `codex app-server` processes (not their children) whose CODEX_HOME is `home`.
pub fn codex_app_servers(home: &Path) -> Vec<i32> {
    codex_processes(home)
        .into_iter()
        .filter(|pid| {
            // The app-server itself, not the box around it (bubblewrap's and the box's init's
            // command lines name it too, after `--`).
            let cmdline = std::fs::read(format!("/proc/{pid}/cmdline")).unwrap_or_default();
            let args: Vec<&[u8]> = cmdline.split(|b| *b == 0).collect();
            args.get(1) == Some(&&b"app-server"[..])
        })
        .collect()
}

/// Sends `sig` to one process through kill(1) (the tests need no unsafe code).
pub fn kill_pid(pid: i32, sig: i32) {
    let status = std::process::Command::new("kill").arg(format!("-{sig}")).arg(pid.to_string()).status().expect("kill");
    assert!(status.success(), "kill -{sig} {pid}");
}

/// Starts a codex session in room `r` with the codex of `c` and these settings.
pub async fn start_codex(s: &Server, c: &Codex, id: &str, settings: Value) -> Value {
    let (status, body) = s
        .post(
            "/v1/rooms/r/sessions",
            json!({"sessionId": id, "provider": "codex", "cwd": c.cwd(), "settings": settings}),
        )
        .await;
    assert_eq!(status, StatusCode::CREATED, "{body}\n{}", s.log());
    body
}

/// A metric's value from /metrics (0 when it was never recorded).
pub async fn metric(s: &Server, name: &str) -> f64 {
    let text = s.http().get(s.url("/metrics")).send().await.unwrap().text().await.unwrap();
    text.lines()
        .find(|l| l.starts_with(name) && !l.starts_with('#'))
        .and_then(|l| l.rsplit(' ').next())
        .and_then(|v| v.parse().ok())
        .unwrap_or(0.0)
}

/// A binary of another package of the workspace (a test agent), next to the server's, built first
/// if the test run did not build it.
pub fn workspace_bin(bin: &str, package: &str) -> PathBuf {
    let path = Path::new(env!("CARGO_BIN_EXE_ensemble")).with_file_name(bin);
    if !path.exists() {
        let cargo = std::env::var("CARGO").unwrap_or_else(|_| "cargo".into());
        let status = std::process::Command::new(cargo)
            .args(["build", "-p", package])
            .current_dir(env!("CARGO_MANIFEST_DIR"))
            .status()
            .expect("cargo build");
        assert!(status.success() && path.exists(), "cannot build {bin} ({package})");
    }
    path
}

/// Real git in `dir`, with no configuration of this machine (an identity for commits, `main`).
pub fn git(dir: &Path, args: &[&str]) -> String {
    let out = std::process::Command::new("git")
        .args(["-c", "user.name=t", "-c", "user.email=t@t", "-c", "init.defaultBranch=main"])
        .args(args)
        .current_dir(dir)
        .env("GIT_CONFIG_GLOBAL", "/dev/null")
        .output()
        .expect("run git");
    assert!(out.status.success(), "git {args:?}: {}", String::from_utf8_lossy(&out.stderr));
    String::from_utf8(out.stdout).expect("git's output is UTF-8")
}

/// A repository at `at` with `files` (relative path, content) committed once; its canonical path.
pub fn git_repo(at: &Path, files: &[(&str, &[u8])]) -> PathBuf {
    std::fs::create_dir_all(at).expect("repo dir");
    git(at, &["init", "-q"]);
    for (path, content) in files {
        let file = at.join(path);
        std::fs::create_dir_all(file.parent().expect("a parent")).expect("parent dir");
        std::fs::write(file, content).expect("repo file");
    }
    git(at, &["add", "."]);
    git(at, &["commit", "-q", "--allow-empty", "-m", "first"]);
    at.canonicalize().expect("canonical repo")
}

/// The server's checkpoint repositories (one per user repository with checkpoints), as git dirs.
pub fn checkpoint_repos(s: &Server) -> Vec<PathBuf> {
    let Ok(entries) = std::fs::read_dir(s.dir.join("data/checkpoints/repos")) else { return Vec::new() };
    let mut out: Vec<PathBuf> = entries.flatten().map(|e| e.path()).collect();
    out.sort();
    out
}
