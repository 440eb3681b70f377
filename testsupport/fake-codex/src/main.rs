//! A fake `codex app-server` for the server's tests (`ensemble-fake-agent`).
//!
//! It speaks just enough of codex's newline-delimited JSON-RPC on stdio for Ensemble's codex
//! adapter to start a session (`initialize`, `account/read`, `modelProvider/list`, `model/list`,
//! `thread/start`, `thread/resume`) and run turns (`turn/start`, `turn/interrupt`, `turn/steer`).
//! `--version` answers like codex 0.169.0, so the adapter's probe accepts it.
//!
//! The text of a turn's input chooses how the turn behaves:
//! - anything else: a normal turn that streams `ok: <input>` as an agent message;
//! - `flood N [SIZE [PER]]`: N agent-message deltas (of about SIZE bytes, PER to a message) as
//!   fast as the pipe takes them (and stderr noise), then a normal end;
//! - `garbage`: non-JSON lines, invalid UTF-8, JSON that is not JSON-RPC, answers to ids nobody
//!   asked, unknown methods, messages of other threads and turns (and stderr noise), then a normal
//!   turn;
//! - `longline N`: one line of N bytes on stdout (and one on stderr), then a normal turn;
//! - `nonewline N`: N bytes on stdout with no newline, then hangs like `hang`;
//! - `hang`: starts the turn, streams `hanging pid <pid>` and then ignores everything: requests,
//!   `turn/interrupt`, even the end of its stdin (only a signal ends it);
//! - `exit`: starts the turn, streams a delta and exits with status 42;
//! - `spawn PIDFILE`: starts two `sleep 300` grandchildren (one in the agent's process group, one
//!   in a new session through `setsid`), writes `<pid> <pid>` to PIDFILE, then a normal turn;
//! - `limits`: streams `umask <octal> nofile <soft>` (its file creation mask and soft open-file
//!   limit, from `/proc/self`), then a normal end.
//!
//! Deliberately plain: std threads, blocking stdio, serde_json. What it reads and writes is built
//! from the adapter's own wire types (`ensemble_adapters::codex::wire`), so it speaks exactly the
//! protocol the adapter does; only the deliberately malformed messages of `garbage` are JSON by hand.

use std::io::{self, BufRead, Write};
use std::process::{Command, Stdio};
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::{Arc, Mutex, MutexGuard};
use std::time::{Duration, SystemTime, UNIX_EPOCH};

use ensemble_adapters::codex::wire::{
    ClientRequest, DeltaNotification, EmptyResponse, GatewayAuth, GetAccountResponse, InitializeResponse,
    ItemNotification, Model, ModelListResponse, ModelProviderListResponse, ModelProviderSummary, ProviderSettings,
    ServerNotification, Thread, ThreadGoalClearResponse, ThreadItem, ThreadResponse, ThreadStartedNotification,
    ThreadTokenUsage, ThreadTokenUsageUpdatedNotification, ThreadUnsubscribeResponse, TokenUsageBreakdown, Turn,
    TurnError, TurnNotification, TurnStartParams, TurnStartResponse, TurnStatus, TurnSteerResponse, UserInput, method,
};
use serde::Serialize;
use serde_json::{Value, json};

/// What `--version` prints (the adapter needs at least 0.169.0).
const VERSION: &str = "codex-cli 0.169.0";
const MODEL: &str = "fake-model";
/// Deltas written between flushes in a flood (the lock on stdout is released in between).
const FLOOD_BATCH: u64 = 512;

/// `umask <octal> nofile <soft>` of this process, read from `/proc/self` (no unsafe code).
fn own_limits() -> String {
    let status = std::fs::read_to_string("/proc/self/status").unwrap_or_default();
    let umask = status.lines().find_map(|l| l.strip_prefix("Umask:")).unwrap_or("?").trim().to_owned();
    let limits = std::fs::read_to_string("/proc/self/limits").unwrap_or_default();
    let nofile = limits
        .lines()
        .find_map(|l| l.strip_prefix("Max open files"))
        .and_then(|rest| rest.split_whitespace().next())
        .unwrap_or("?")
        .to_owned();
    format!("umask {umask} nofile {nofile}")
}

fn main() {
    let args: Vec<String> = std::env::args().skip(1).collect();
    if args.iter().any(|a| a == "--version") {
        println!("{VERSION}");
        return;
    }
    if args.first().map(String::as_str) != Some("app-server") {
        eprintln!("usage: ensemble-fake-agent app-server [-c KEY=VALUE]... | --version");
        std::process::exit(2);
    }
    let agent = Arc::new(Agent::default());
    let status = match agent.serve() {
        Ok(()) => 0,
        Err(e) => {
            eprintln!("fake agent: {e}");
            1
        }
    };
    std::process::exit(status);
}

#[derive(Default)]
struct Agent {
    thread: Mutex<Option<String>>,
    next: AtomicU64,
    /// Set by `hang`/`nonewline`: from then on nothing is answered.
    hung: AtomicBool,
    active: Mutex<Option<Arc<TurnRun>>>,
}

/// A turn the fake agent runs.
struct TurnRun {
    id: String,
    thread: String,
    interrupted: AtomicBool,
}

fn now_ms() -> u64 {
    SystemTime::now().duration_since(UNIX_EPOCH).map(|d| d.as_millis() as u64).unwrap_or(0)
}

fn lock<T>(m: &Mutex<T>) -> MutexGuard<'_, T> {
    m.lock().unwrap_or_else(|e| e.into_inner())
}

impl Agent {
    fn id(&self, prefix: &str) -> String {
        format!("{prefix}-{}-{}", std::process::id(), self.next.fetch_add(1, Ordering::SeqCst))
    }

    /// Writes raw bytes to stdout, in one piece (the lock keeps other threads' lines out).
    fn raw(&self, bytes: &[u8]) -> io::Result<()> {
        let mut stdout = io::stdout().lock();
        stdout.write_all(bytes)?;
        stdout.flush()
    }

    fn send(&self, msg: &Value) -> io::Result<()> {
        let mut line = serde_json::to_vec(msg).map_err(io::Error::other)?;
        line.push(b'\n');
        self.raw(&line)
    }

    fn notify(&self, n: &ServerNotification) -> io::Result<()> {
        self.send(&notification(n)?)
    }

    fn respond<T: Serialize>(&self, id: &Value, result: &T) -> io::Result<()> {
        self.send(&json!({"id": id, "result": result}))
    }

    fn respond_error(&self, id: &Value, code: i64, message: &str) -> io::Result<()> {
        self.send(&json!({"id": id, "error": {"code": code, "message": message}}))
    }

    /// Reads requests until stdin ends.
    fn serve(self: &Arc<Self>) -> io::Result<()> {
        let stdin = io::stdin();
        let mut input = stdin.lock();
        let mut line = Vec::new();
        loop {
            line.clear();
            let n = input.read_until(b'\n', &mut line)?;
            if self.hung.load(Ordering::SeqCst) {
                if n == 0 {
                    // Deaf to the end of stdin too: only a signal ends a hung agent.
                    loop {
                        std::thread::sleep(Duration::from_secs(3600));
                    }
                }
                continue;
            }
            if n == 0 {
                return Ok(());
            }
            let Ok(msg) = serde_json::from_slice::<Value>(&line) else {
                eprintln!("fake agent: unreadable input line");
                continue;
            };
            let Some(method) = msg.get("method").and_then(Value::as_str) else {
                // Answers to our own requests (the garbage mode sends one): nothing to do.
                continue;
            };
            let params = msg.get("params").cloned().unwrap_or(Value::Null);
            // Notifications (`initialized`) need nothing.
            let Some(id) = msg.get("id").filter(|i| !i.is_null()) else { continue };
            match ClientRequest::parse(method, params) {
                Ok(Some(request)) => self.request(id, request)?,
                Ok(None) => self.respond_error(id, -32601, &format!("fake agent: method `{method}` not found"))?,
                Err(e) => self.respond_error(id, -32602, &format!("fake agent: bad `{method}` params: {e}"))?,
            }
        }
    }

    fn thread_response(&self, id: &str) -> ThreadResponse {
        ThreadResponse { thread: Some(Thread { id: id.to_owned(), forked_from_id: None }), model: Some(MODEL.into()) }
    }

    fn request(self: &Arc<Self>, id: &Value, request: ClientRequest) -> io::Result<()> {
        match request {
            ClientRequest::Initialize(_) => self.respond(
                id,
                &InitializeResponse {
                    user_agent: format!("ensemble/0.169.0 (fake agent; pid {})", std::process::id()),
                    codex_home: std::env::var("CODEX_HOME").unwrap_or_default(),
                    platform_family: "unix".into(),
                    platform_os: "linux".into(),
                },
            ),
            ClientRequest::AccountRead(_) => {
                self.respond(id, &GetAccountResponse { account: None, requires_openai_auth: Some(false) })
            }
            ClientRequest::ModelProviderList(_) => {
                let fake = ModelProviderSummary {
                    id: "fake".into(),
                    settings: Some(ProviderSettings::CustomGateway { auth: GatewayAuth::NoKey }),
                };
                self.respond(id, &ModelProviderListResponse { data: vec![fake], default_provider_id: "fake".into() })
            }
            ClientRequest::ModelList(_) => {
                let model =
                    Model { id: MODEL.into(), model: MODEL.into(), display_name: "Fake".into(), ..Model::default() };
                self.respond(id, &ModelListResponse { data: vec![model], next_cursor: None })
            }
            ClientRequest::ThreadStart(_) => {
                let thread = self.id("thread");
                *lock(&self.thread) = Some(thread.clone());
                let response = self.thread_response(&thread);
                self.respond(id, &response)?;
                let thread = response.thread.unwrap_or_default();
                self.notify(&ServerNotification::ThreadStarted(ThreadStartedNotification { thread }))
            }
            ClientRequest::ThreadResume(p) => {
                *lock(&self.thread) = Some(p.thread_id.clone());
                self.respond(id, &self.thread_response(&p.thread_id))
            }
            ClientRequest::ThreadUnsubscribe(_) => {
                self.respond(id, &ThreadUnsubscribeResponse { status: "unsubscribed".into() })
            }
            ClientRequest::ThreadGoalClear(_) => self.respond(id, &ThreadGoalClearResponse { cleared: true }),
            ClientRequest::TurnStart(p) => self.turn_start(id, p),
            ClientRequest::TurnInterrupt(p) => {
                let active = lock(&self.active).clone();
                match active {
                    Some(t) if t.id == p.turn_id => {
                        t.interrupted.store(true, Ordering::SeqCst);
                        self.respond(id, &EmptyResponse {})
                    }
                    _ => self.respond_error(id, -32600, "no active turn to interrupt"),
                }
            }
            ClientRequest::TurnSteer(_) => {
                let active = lock(&self.active).clone();
                match active {
                    Some(t) => self.respond(id, &TurnSteerResponse { turn_id: t.id.clone() }),
                    None => self.respond_error(id, -32600, "no active turn to steer"),
                }
            }
            ClientRequest::ThreadFork(_) | ClientRequest::ThreadInjectItems(_) | ClientRequest::ThreadGoalSet(_) => {
                self.respond_error(id, -32601, "fake agent: method not found")
            }
        }
    }

    fn turn_start(self: &Arc<Self>, id: &Value, params: TurnStartParams) -> io::Result<()> {
        let thread = params.thread_id;
        if lock(&self.thread).as_deref() != Some(thread.as_str()) {
            return self.respond_error(id, -32600, &format!("thread not found: {thread}"));
        }
        let text: Vec<String> = params
            .input
            .into_iter()
            .filter_map(|i| match i {
                UserInput::Text { text, .. } => Some(text),
                UserInput::LocalImage { .. } | UserInput::Image { .. } | UserInput::Unknown => None,
            })
            .collect();
        let text = text.join("\n");
        let turn = Arc::new(TurnRun { id: self.id("turn"), thread, interrupted: AtomicBool::new(false) });
        {
            let mut active = lock(&self.active);
            if active.is_some() {
                return self.respond_error(id, -32600, "a turn is already running");
            }
            *active = Some(turn.clone());
        }
        self.respond(id, &TurnStartResponse { turn: Some(turn_object(&turn.id, TurnStatus::InProgress)) })?;
        let me = self.clone();
        std::thread::spawn(move || {
            if let Err(e) = me.run_turn(&turn, &text) {
                eprintln!("fake agent: turn {} failed: {e}", turn.id);
            }
        });
        Ok(())
    }

    fn run_turn(&self, turn: &TurnRun, text: &str) -> io::Result<()> {
        let mut words = text.split_whitespace();
        let mode = words.next().unwrap_or_default();
        let arg = words.next();
        let n = |default: u64| arg.and_then(|a| a.parse::<u64>().ok()).unwrap_or(default);
        let started =
            TurnNotification { thread_id: turn.thread.clone(), turn: turn_object(&turn.id, TurnStatus::InProgress) };
        self.notify(&ServerNotification::TurnStarted(started))?;
        let user = ThreadItem::UserMessage { id: self.id("user"), content: vec![UserInput::text(text)] };
        self.item(Phase::Started, turn, user.clone())?;
        self.item(Phase::Completed, turn, user)?;
        match mode {
            "flood" => {
                let size = words.next().and_then(|a| a.parse::<usize>().ok()).unwrap_or(0);
                let per = words.next().and_then(|a| a.parse::<u64>().ok()).unwrap_or(u64::MAX);
                self.flood(turn, n(200_000), size, per)?
            }
            "garbage" => self.garbage(turn)?,
            "longline" => self.longline(turn, n(1024 * 1024))?,
            "nonewline" => return self.nonewline(turn, n(64 * 1024 * 1024)),
            "hang" => {
                let msg = self.message_start(turn)?;
                // Deaf before the delta goes out, so whatever the client does after seeing it is ignored.
                self.hung.store(true, Ordering::SeqCst);
                self.delta(turn, &msg, &format!("hanging pid {}", std::process::id()))?;
                return Ok(());
            }
            "exit" => {
                let msg = self.message_start(turn)?;
                self.delta(turn, &msg, "partial")?;
                eprintln!("fake agent: exiting in the middle of turn {} with status 42", turn.id);
                std::process::exit(42);
            }
            "limits" => return self.reply(turn, &own_limits()),
            // `exec SCRIPT`: the agent itself runs `sh -c SCRIPT` and says what it printed (what a
            // hostile agent could do in its box).
            "exec" => {
                let script = text.trim_start().strip_prefix("exec").unwrap_or_default().trim_start();
                let out = std::process::Command::new("/bin/sh").args(["-c", script]).output()?;
                let said = format!("{}{}", String::from_utf8_lossy(&out.stdout), String::from_utf8_lossy(&out.stderr));
                return self.reply(turn, &said);
            }
            "spawn" => {
                let pidfile = arg.unwrap_or("fake-agent-children.pids");
                let pids = spawn_grandchildren(pidfile)?;
                return self.reply(turn, &format!("spawned {pids}"));
            }
            _ => {}
        }
        self.reply(turn, &format!("ok: {text}"))
    }

    fn item(&self, phase: Phase, turn: &TurnRun, item: ThreadItem) -> io::Result<()> {
        let n = ItemNotification { thread_id: turn.thread.clone(), turn_id: turn.id.clone(), item };
        self.notify(&match phase {
            Phase::Started => ServerNotification::ItemStarted(n),
            Phase::Completed => ServerNotification::ItemCompleted(n),
        })
    }

    fn message(&self, phase: Phase, turn: &TurnRun, msg: &str, text: &str) -> io::Result<()> {
        self.item(phase, turn, ThreadItem::AgentMessage { id: msg.to_owned(), text: text.to_owned() })
    }

    fn message_start(&self, turn: &TurnRun) -> io::Result<String> {
        let msg = self.id("msg");
        self.message(Phase::Started, turn, &msg, "")?;
        Ok(msg)
    }

    fn delta(&self, turn: &TurnRun, msg: &str, delta: &str) -> io::Result<()> {
        self.notify(&ServerNotification::AgentMessageDelta(delta_of(turn, msg, delta)))
    }

    /// Streams `text` as one agent message in small deltas, then ends the turn.
    fn reply(&self, turn: &TurnRun, text: &str) -> io::Result<()> {
        let msg = self.message_start(turn)?;
        let chars: Vec<char> = text.chars().collect();
        for chunk in chars.chunks(4) {
            if turn.interrupted.load(Ordering::SeqCst) {
                return self.end(turn, TurnStatus::Interrupted);
            }
            self.delta(turn, &msg, &chunk.iter().collect::<String>())?;
        }
        self.message(Phase::Completed, turn, &msg, text)?;
        self.end(turn, TurnStatus::Completed)
    }

    fn end(&self, turn: &TurnRun, status: TurnStatus) -> io::Result<()> {
        let used = TokenUsageBreakdown {
            total_tokens: Some(15),
            input_tokens: Some(10),
            cached_input_tokens: Some(0),
            output_tokens: Some(5),
            reasoning_output_tokens: Some(0),
        };
        let token_usage =
            ThreadTokenUsage { total: used.clone(), last: Some(used), model_context_window: Some(258400) };
        self.notify(&ServerNotification::ThreadTokenUsageUpdated(ThreadTokenUsageUpdatedNotification {
            thread_id: turn.thread.clone(),
            turn_id: turn.id.clone(),
            token_usage,
        }))?;
        // The turn is over before codex says so: a new turn/start may follow at once.
        lock(&self.active).take();
        let completed = TurnNotification { thread_id: turn.thread.clone(), turn: turn_object(&turn.id, status) };
        self.notify(&ServerNotification::TurnCompleted(completed))
    }

    /// `count` deltas, each its number and a space, padded with dots to `size` bytes; a new agent
    /// message every `per` deltas.
    fn flood(&self, turn: &TurnRun, count: u64, size: usize, per: u64) -> io::Result<()> {
        let per = per.max(1);
        let delta = |k: u64| format!("{k:.<size$} ");
        let mut stderr = io::stderr().lock();
        // A burst of stderr: one line over any sane limit, then many short ones as the flood goes.
        stderr.write_all(&vec![b'e'; 1024 * 1024])?;
        stderr.write_all(b"\n")?;
        let mut msg = self.message_start(turn)?;
        let mut first = 0;
        let mut i = 0;
        while i < count {
            if turn.interrupted.load(Ordering::SeqCst) {
                return self.end(turn, TurnStatus::Interrupted);
            }
            let upto = (i + FLOOD_BATCH).min(count).min(first + per);
            let mut batch = Vec::new();
            for k in i..upto {
                let line = ServerNotification::AgentMessageDelta(delta_of(turn, &msg, &delta(k)));
                serde_json::to_writer(&mut batch, &notification(&line)?).map_err(io::Error::other)?;
                batch.push(b'\n');
            }
            self.raw(&batch)?;
            writeln!(stderr, "fake agent: flooded {upto} of {count} deltas")?;
            i = upto;
            if i == first + per || i == count {
                // Codex's item/completed repeats the whole text (over the line limit when long).
                let text: String = (first..i).map(delta).collect();
                self.message(Phase::Completed, turn, &msg, &text)?;
                first = i;
                if i < count {
                    msg = self.message_start(turn)?;
                }
            }
        }
        drop(stderr);
        self.end(turn, TurnStatus::Completed)
    }

    fn garbage(&self, turn: &TurnRun) -> io::Result<()> {
        let t = &turn.thread;
        let u = &turn.id;
        let mut lines: Vec<Vec<u8>> = vec![
            b"this is not json".to_vec(),
            b"\xff\xfe\x80 invalid utf-8 \xc3\x28 here".to_vec(),
            b"{\"unterminated\": ".to_vec(),
            b"[1,2,3]".to_vec(),
            b"42".to_vec(),
            b"null".to_vec(),
            b"\"just a string\"".to_vec(),
            b"{}".to_vec(),
            b"".to_vec(),
            b"   \t ".to_vec(),
            b"\r".to_vec(),
            b"{\"jsonrpc\":\"2.0\",\"foo\":\"bar\"}".to_vec(),
            b"{\"method\":17,\"params\":{}}".to_vec(),
            b"{\"id\":987654321,\"result\":{\"stale\":true}}".to_vec(),
            b"{\"id\":1,\"result\":{\"late\":true}}".to_vec(),
            b"{\"id\":\"not-ours\",\"result\":{}}".to_vec(),
            b"{\"id\":-5,\"error\":{\"code\":1,\"message\":\"nope\"}}".to_vec(),
            b"{\"id\":1e400,\"result\":{}}".to_vec(),
            b"{\"id\":3,\"neither\":true}".to_vec(),
            b"{\"method\":\"x\"\x00}".to_vec(),
            b"\xef\xbb\xbf{\"method\":\"warning\",\"params\":{\"message\":\"BOM\"}}".to_vec(),
            "[".repeat(5000).into_bytes(),
        ];
        // Well-formed JSON-RPC that is not for this turn, this thread, or anyone.
        let ghost = |thread: &str, turn: &str| TurnRun {
            id: turn.into(),
            thread: thread.into(),
            interrupted: AtomicBool::new(false),
        };
        let failed = Turn {
            error: Some(TurnError { message: Some("GHOST".into()), codex_error_info: None }),
            ..turn_object("not-this-turn", TurnStatus::Failed)
        };
        let odd = [
            json!({"method": "totally/unknown", "params": {"threadId": t, "turnId": u}}),
            json!({"method": "totally/unknown/request", "id": "srv-1", "params": {"threadId": t}}),
            notification(&ServerNotification::AgentMessageDelta(delta_of(
                &ghost(t, "not-this-turn"),
                "ghost",
                "GHOST",
            )))?,
            notification(&ServerNotification::AgentMessageDelta(delta_of(
                &ghost("another-thread", u),
                "ghost",
                "GHOST",
            )))?,
            notification(&ServerNotification::TurnCompleted(TurnNotification { thread_id: t.clone(), turn: failed }))?,
            notification(&ServerNotification::TurnStarted(TurnNotification {
                thread_id: "another-thread".into(),
                turn: Turn { id: "ghost-turn".into(), ..Turn::default() },
            }))?,
            // Known methods with params of the wrong shape.
            json!({"method": method::ITEM_COMPLETED, "params": {"threadId": t, "turnId": u, "item": "not an object"}}),
            json!({"method": method::ITEM_STARTED, "params": {"threadId": t, "turnId": u, "item": {"type": "noSuchItem", "id": "x"}}}),
            json!({"jsonrpc": "2.0", "method": "thread/status/changed", "params": {"threadId": t, "status": 5}}),
        ];
        for v in odd {
            lines.push(serde_json::to_vec(&v).map_err(io::Error::other)?);
        }
        let mut bytes = Vec::new();
        for l in &lines {
            bytes.extend_from_slice(l);
            bytes.push(b'\n');
        }
        self.raw(&bytes)?;
        let mut stderr = io::stderr().lock();
        stderr.write_all(b"fake agent: garbage on stderr \xff\xfe\x00 too\n\n\r\nno newline at the end")?;
        stderr.write_all(b"\n")?;
        drop(stderr);
        self.reply(turn, "ok: garbage survived")
    }

    fn longline(&self, turn: &TurnRun, len: u64) -> io::Result<()> {
        let msg = self.message_start(turn)?;
        // A well-formed delta, so a reader that did not skip it would show it.
        let long = "L".repeat(len as usize);
        self.delta(turn, &msg, &long)?;
        let mut stderr = io::stderr().lock();
        stderr.write_all(long.as_bytes())?;
        stderr.write_all(b"\n")?;
        drop(stderr);
        drop(long);
        self.message(Phase::Completed, turn, &msg, "")?;
        self.reply(turn, "ok: longline survived")
    }

    fn nonewline(&self, turn: &TurnRun, len: u64) -> io::Result<()> {
        let msg = self.message_start(turn)?;
        self.hung.store(true, Ordering::SeqCst);
        self.delta(turn, &msg, &format!("hanging pid {}", std::process::id()))?;
        let chunk = vec![b'x'; 1024 * 1024];
        let mut left = len;
        let mut stdout = io::stdout().lock();
        while left > 0 {
            let n = left.min(chunk.len() as u64) as usize;
            stdout.write_all(&chunk[..n])?;
            left -= n as u64;
        }
        stdout.flush()?;
        loop {
            std::thread::sleep(Duration::from_secs(3600));
        }
    }
}

fn turn_object(id: &str, status: TurnStatus) -> Turn {
    Turn { id: id.to_owned(), status: Some(status), error: None }
}

/// Whether an item starts or completes.
#[derive(Clone, Copy)]
enum Phase {
    Started,
    Completed,
}

fn delta_of(turn: &TurnRun, msg: &str, delta: &str) -> DeltaNotification {
    DeltaNotification {
        thread_id: turn.thread.clone(),
        turn_id: turn.id.clone(),
        item_id: msg.to_owned(),
        delta: delta.to_owned(),
    }
}

/// A notification as codex writes it (with its emission time).
fn notification(n: &ServerNotification) -> io::Result<Value> {
    Ok(json!({"method": n.method(), "params": n.params().map_err(io::Error::other)?, "emittedAtMs": now_ms()}))
}

/// Starts `sleep 300` twice (in our process group, and in a session of its own) and writes both
/// pids to `pidfile` (atomically: a temporary file, then a rename).
fn spawn_grandchildren(pidfile: &str) -> io::Result<String> {
    let quiet = |c: &mut Command| {
        c.stdin(Stdio::null()).stdout(Stdio::null()).stderr(Stdio::null());
    };
    let mut same_group = Command::new("sleep");
    same_group.arg("300");
    quiet(&mut same_group);
    let a = same_group.spawn()?;
    // Our child is not a group leader, so setsid(1) calls setsid(2) and execs sleep in place.
    let mut own_session = Command::new("setsid");
    own_session.args(["sleep", "300"]);
    quiet(&mut own_session);
    let b = own_session.spawn()?;
    let pids = format!("{} {}", a.id(), b.id());
    let tmp = format!("{pidfile}.tmp");
    std::fs::write(&tmp, format!("{pids}\n"))?;
    std::fs::rename(&tmp, pidfile)?;
    // The children are neither waited for nor killed here (dropping a Child does neither):
    // whoever supervises us must.
    drop((a, b));
    Ok(pids)
}
