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
//!   in a new session through `setsid`), writes `<pid> <pid>` to PIDFILE, then a normal turn.
//!
//! Deliberately plain: std threads, blocking stdio, serde_json.

use std::io::{self, BufRead, Write};
use std::process::{Command, Stdio};
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::{Arc, Mutex, MutexGuard};
use std::time::{Duration, SystemTime, UNIX_EPOCH};

use serde_json::{Value, json};

/// What `--version` prints (the adapter needs at least 0.169.0).
const VERSION: &str = "codex-cli 0.169.0";
const MODEL: &str = "fake-model";
/// Deltas written between flushes in a flood (the lock on stdout is released in between).
const FLOOD_BATCH: u64 = 512;

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
    active: Mutex<Option<Arc<Turn>>>,
}

struct Turn {
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

    fn notify(&self, method: &str, params: Value) -> io::Result<()> {
        self.send(&json!({"method": method, "params": params, "emittedAtMs": now_ms()}))
    }

    fn respond(&self, id: &Value, result: Value) -> io::Result<()> {
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
            if let Some(id) = msg.get("id").filter(|i| !i.is_null()) {
                self.request(id, method, &params)?;
            }
        }
    }

    fn thread_object(&self, id: &str, cwd: &str) -> Value {
        let t = now_ms() / 1000;
        json!({
            "id": id, "sessionId": id, "forkedFromId": null, "preview": "", "ephemeral": false,
            "modelProvider": "fake", "model": MODEL, "createdAt": t, "updatedAt": t,
            "status": {"type": "idle"}, "path": null, "cwd": cwd, "cliVersion": "0.169.0",
            "source": "vscode", "name": null, "turns": [],
        })
    }

    fn thread_response(&self, id: &str, params: &Value) -> Value {
        let cwd = params.get("cwd").and_then(Value::as_str).unwrap_or("/");
        json!({
            "thread": self.thread_object(id, cwd),
            "model": MODEL, "modelProvider": "fake", "serviceTier": null, "cwd": cwd,
            "approvalPolicy": "on-request", "approvalsReviewer": "user",
            "sandbox": {"type": "readOnly", "networkAccess": false}, "reasoningEffort": null,
            "instructionSources": [],
        })
    }

    fn request(self: &Arc<Self>, id: &Value, method: &str, params: &Value) -> io::Result<()> {
        match method {
            "initialize" => self.respond(
                id,
                json!({
                    "userAgent": format!("ensemble/0.169.0 (fake agent; pid {})", std::process::id()),
                    "codexHome": std::env::var("CODEX_HOME").unwrap_or_default(),
                    "platformFamily": "unix", "platformOs": "linux",
                }),
            ),
            "account/read" => self.respond(
                id,
                json!({"account": null, "userId": null, "requiresOpenaiAuth": false, "workspaceRouting": null}),
            ),
            "modelProvider/list" => self.respond(
                id,
                json!({"data": [{"id": "fake", "name": "Fake", "settings": {"auth": {"mode": "none"}}}],
                       "defaultProviderId": "fake", "canChangeDefault": false}),
            ),
            "model/list" => self.respond(
                id,
                json!({"data": [{"id": MODEL, "model": MODEL, "displayName": "Fake", "hidden": false,
                                 "isDefault": true, "supportedReasoningEfforts": []}],
                       "nextCursor": null}),
            ),
            "thread/start" => {
                let thread = self.id("thread");
                *lock(&self.thread) = Some(thread.clone());
                let response = self.thread_response(&thread, params);
                self.respond(id, response.clone())?;
                self.notify("thread/started", json!({"thread": response["thread"]}))
            }
            "thread/resume" => {
                let Some(thread) = params.get("threadId").and_then(Value::as_str) else {
                    return self.respond_error(id, -32602, "threadId is required");
                };
                *lock(&self.thread) = Some(thread.to_owned());
                self.respond(id, self.thread_response(thread, params))
            }
            "thread/unsubscribe" => self.respond(id, json!({"status": "unsubscribed"})),
            "thread/goal/get" => self.respond(id, json!({"goal": null})),
            "thread/goal/clear" => self.respond(id, json!({"cleared": true})),
            "turn/start" => self.turn_start(id, params),
            "turn/interrupt" => {
                let wanted = params.get("turnId").and_then(Value::as_str);
                let active = lock(&self.active).clone();
                match active {
                    Some(t) if Some(t.id.as_str()) == wanted => {
                        t.interrupted.store(true, Ordering::SeqCst);
                        self.respond(id, json!({}))
                    }
                    _ => self.respond_error(id, -32600, "no active turn to interrupt"),
                }
            }
            "turn/steer" => {
                let active = lock(&self.active).clone();
                match active {
                    Some(t) => self.respond(id, json!({"turnId": t.id})),
                    None => self.respond_error(id, -32600, "no active turn to steer"),
                }
            }
            other => self.respond_error(id, -32601, &format!("fake agent: method `{other}` not found")),
        }
    }

    fn turn_start(self: &Arc<Self>, id: &Value, params: &Value) -> io::Result<()> {
        let Some(thread) = params.get("threadId").and_then(Value::as_str).map(str::to_owned) else {
            return self.respond_error(id, -32602, "threadId is required");
        };
        if lock(&self.thread).as_deref() != Some(thread.as_str()) {
            return self.respond_error(id, -32600, &format!("thread not found: {thread}"));
        }
        let text: Vec<&str> = params
            .get("input")
            .and_then(Value::as_array)
            .map(|items| items.iter().filter_map(|i| i.get("text").and_then(Value::as_str)).collect())
            .unwrap_or_default();
        let text = text.join("\n");
        let turn = Arc::new(Turn { id: self.id("turn"), thread, interrupted: AtomicBool::new(false) });
        {
            let mut active = lock(&self.active);
            if active.is_some() {
                return self.respond_error(id, -32600, "a turn is already running");
            }
            *active = Some(turn.clone());
        }
        self.respond(id, json!({"turn": turn_object(&turn.id, "inProgress", None)}))?;
        let me = self.clone();
        std::thread::spawn(move || {
            if let Err(e) = me.run_turn(&turn, &text) {
                eprintln!("fake agent: turn {} failed: {e}", turn.id);
            }
        });
        Ok(())
    }

    fn run_turn(&self, turn: &Turn, text: &str) -> io::Result<()> {
        let mut words = text.split_whitespace();
        let mode = words.next().unwrap_or_default();
        let arg = words.next();
        let n = |default: u64| arg.and_then(|a| a.parse::<u64>().ok()).unwrap_or(default);
        self.notify(
            "turn/started",
            json!({"threadId": turn.thread, "turn": turn_object(&turn.id, "inProgress", None)}),
        )?;
        let user = json!({"type": "userMessage", "id": self.id("user"), "content": [{"type": "text", "text": text, "text_elements": []}]});
        self.item("item/started", turn, &user)?;
        self.item("item/completed", turn, &user)?;
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
            "spawn" => {
                let pidfile = arg.unwrap_or("fake-agent-children.pids");
                let pids = spawn_grandchildren(pidfile)?;
                return self.reply(turn, &format!("spawned {pids}"));
            }
            _ => {}
        }
        self.reply(turn, &format!("ok: {text}"))
    }

    fn item(&self, method: &str, turn: &Turn, item: &Value) -> io::Result<()> {
        self.notify(method, json!({"threadId": turn.thread, "turnId": turn.id, "item": item}))
    }

    fn message_start(&self, turn: &Turn) -> io::Result<String> {
        let msg = self.id("msg");
        self.item("item/started", turn, &json!({"type": "agentMessage", "id": msg, "text": "", "phase": null}))?;
        Ok(msg)
    }

    fn delta(&self, turn: &Turn, msg: &str, delta: &str) -> io::Result<()> {
        self.notify(
            "item/agentMessage/delta",
            json!({"threadId": turn.thread, "turnId": turn.id, "itemId": msg, "delta": delta}),
        )
    }

    /// Streams `text` as one agent message in small deltas, then ends the turn.
    fn reply(&self, turn: &Turn, text: &str) -> io::Result<()> {
        let msg = self.message_start(turn)?;
        let chars: Vec<char> = text.chars().collect();
        for chunk in chars.chunks(4) {
            if turn.interrupted.load(Ordering::SeqCst) {
                return self.end(turn, "interrupted");
            }
            self.delta(turn, &msg, &chunk.iter().collect::<String>())?;
        }
        self.item("item/completed", turn, &json!({"type": "agentMessage", "id": msg, "text": text, "phase": null}))?;
        self.end(turn, "completed")
    }

    fn end(&self, turn: &Turn, status: &str) -> io::Result<()> {
        self.notify(
            "thread/tokenUsage/updated",
            json!({"threadId": turn.thread, "turnId": turn.id, "tokenUsage": {
                "total": {"totalTokens": 15, "inputTokens": 10, "cachedInputTokens": 0, "outputTokens": 5, "reasoningOutputTokens": 0},
                "last": {"totalTokens": 15, "inputTokens": 10, "cachedInputTokens": 0, "outputTokens": 5, "reasoningOutputTokens": 0},
                "modelContextWindow": 258400}}),
        )?;
        // The turn is over before codex says so: a new turn/start may follow at once.
        lock(&self.active).take();
        self.notify(
            "turn/completed",
            json!({"threadId": turn.thread, "turn": turn_object(&turn.id, status, Some(now_ms()))}),
        )
    }

    /// `count` deltas, each its number and a space, padded with dots to `size` bytes; a new agent
    /// message every `per` deltas.
    fn flood(&self, turn: &Turn, count: u64, size: usize, per: u64) -> io::Result<()> {
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
                return self.end(turn, "interrupted");
            }
            let upto = (i + FLOOD_BATCH).min(count).min(first + per);
            let mut batch = Vec::new();
            for k in i..upto {
                let line = json!({"method": "item/agentMessage/delta", "params": {
                    "threadId": turn.thread, "turnId": turn.id, "itemId": msg, "delta": delta(k)}});
                serde_json::to_writer(&mut batch, &line).map_err(io::Error::other)?;
                batch.push(b'\n');
            }
            self.raw(&batch)?;
            writeln!(stderr, "fake agent: flooded {upto} of {count} deltas")?;
            i = upto;
            if i == first + per || i == count {
                // Codex's item/completed repeats the whole text (over the line limit when long).
                let text: String = (first..i).map(delta).collect();
                self.item(
                    "item/completed",
                    turn,
                    &json!({"type": "agentMessage", "id": msg, "text": text, "phase": null}),
                )?;
                first = i;
                if i < count {
                    msg = self.message_start(turn)?;
                }
            }
        }
        drop(stderr);
        self.end(turn, "completed")
    }

    fn garbage(&self, turn: &Turn) -> io::Result<()> {
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
        let odd = [
            json!({"method": "totally/unknown", "params": {"threadId": t, "turnId": u}}),
            json!({"method": "totally/unknown/request", "id": "srv-1", "params": {"threadId": t}}),
            json!({"method": "item/agentMessage/delta", "params": {"threadId": t, "turnId": "not-this-turn", "itemId": "ghost", "delta": "GHOST"}}),
            json!({"method": "item/agentMessage/delta", "params": {"threadId": "another-thread", "turnId": u, "itemId": "ghost", "delta": "GHOST"}}),
            json!({"method": "turn/completed", "params": {"threadId": t, "turn": {"id": "not-this-turn", "status": "failed", "error": {"message": "GHOST"}}}}),
            json!({"method": "turn/started", "params": {"threadId": "another-thread", "turn": {"id": "ghost-turn"}}}),
            json!({"method": "item/completed", "params": {"threadId": t, "turnId": u, "item": "not an object"}}),
            json!({"method": "item/started", "params": {"threadId": t, "turnId": u, "item": {"type": "noSuchItem", "id": "x"}}}),
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

    fn longline(&self, turn: &Turn, len: u64) -> io::Result<()> {
        let msg = self.message_start(turn)?;
        // A well-formed delta, so a reader that did not skip it would show it.
        let long = "L".repeat(len as usize);
        self.delta(turn, &msg, &long)?;
        let mut stderr = io::stderr().lock();
        stderr.write_all(long.as_bytes())?;
        stderr.write_all(b"\n")?;
        drop(stderr);
        drop(long);
        self.item("item/completed", turn, &json!({"type": "agentMessage", "id": msg, "text": "", "phase": null}))?;
        self.reply(turn, "ok: longline survived")
    }

    fn nonewline(&self, turn: &Turn, len: u64) -> io::Result<()> {
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

fn turn_object(id: &str, status: &str, completed: Option<u64>) -> Value {
    json!({
        "id": id, "rootTurnId": id, "items": [], "itemsView": "notLoaded", "status": status,
        "error": null, "startedAt": now_ms() / 1000, "completedAt": completed.map(|c| c / 1000), "durationMs": null,
    })
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
