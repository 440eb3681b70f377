//! Webhooks against a real HTTP receiver on 127.0.0.1 (allowed by `--webhook-allow-private`)
//! that answers, fails, hangs, answers 10 MB or drips on command: deliveries are signed and carry
//! the event id; rooms and event types filter; `session.needs_attention` comes once, after the
//! delay, and never for an interaction answered sooner; a receiver down loses nothing, across a
//! `kill -9` too; hostile receivers hold back no other webhook; private URLs, the host's own
//! addresses and redirects are refused, and errors say neither what a receiver answered nor what
//! a name resolved to; on two hosts sharing PostgreSQL each event is delivered exactly once.

use std::collections::{HashMap, HashSet};
use std::net::SocketAddr;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};

use axum::body::{Body, Bytes};
use axum::extract::{Path, State};
use axum::http::{HeaderMap, StatusCode as AxumStatus};
use axum::response::{IntoResponse, Response};
use hmac::{Hmac, Mac};
use reqwest::StatusCode;
use serde_json::{Value, json};
use sha2::Sha256;
use tokio::sync::mpsc;

use crate::cluster::engines;
use crate::common::*;

/// How the receiver answers a path.
#[derive(Clone, Copy, Debug)]
enum Mode {
    Ok,
    Fail(u16),
    /// Never answers.
    Hang,
    /// 10 MB of body with this status.
    Huge(u16),
    /// A 500 whose body comes a byte a second.
    Drip,
    /// 302 to `/ok`.
    Redirect,
}

/// A request the receiver got.
#[derive(Debug)]
struct Got {
    path: String,
    headers: HeaderMap,
    body: String,
}

impl Got {
    fn json(&self) -> Value {
        serde_json::from_str(&self.body).expect("a JSON body")
    }

    fn header(&self, name: &str) -> &str {
        self.headers.get(name).and_then(|v| v.to_str().ok()).unwrap_or_default()
    }
}

#[derive(Clone)]
struct Shared {
    modes: Arc<Mutex<HashMap<String, Mode>>>,
    tx: mpsc::UnboundedSender<Got>,
    /// Requests being answered right now (a hanging one stays).
    open: Arc<AtomicUsize>,
}

struct Receiver {
    addr: SocketAddr,
    shared: Shared,
    rx: mpsc::UnboundedReceiver<Got>,
}

struct OpenGuard(Arc<AtomicUsize>);
impl Drop for OpenGuard {
    fn drop(&mut self) {
        self.0.fetch_sub(1, Ordering::SeqCst);
    }
}

async fn receive(State(sh): State<Shared>, Path(path): Path<String>, headers: HeaderMap, body: Bytes) -> Response {
    sh.open.fetch_add(1, Ordering::SeqCst);
    let guard = OpenGuard(sh.open.clone());
    let mode = sh.modes.lock().unwrap().get(&path).copied().unwrap_or(Mode::Ok);
    let _ = sh.tx.send(Got { path, headers, body: String::from_utf8_lossy(&body).into_owned() });
    let status = |s: u16| AxumStatus::from_u16(s).unwrap();
    match mode {
        Mode::Ok => (AxumStatus::OK, "thanks").into_response(),
        Mode::Fail(s) => (status(s), "not now").into_response(),
        Mode::Hang => {
            let _guard = guard;
            std::future::pending::<()>().await;
            unreachable!()
        }
        Mode::Huge(s) => (status(s), vec![b'x'; 10 << 20]).into_response(),
        Mode::Drip => {
            // The receiver's own pace (a byte a second), not a wait of the test.
            let stream = futures::stream::unfold(0u32, |n| async move {
                tokio::time::sleep(std::time::Duration::from_secs(1)).await;
                (n < 600).then(|| (Ok::<_, std::io::Error>(Bytes::from_static(b"y")), n + 1))
            });
            Response::builder().status(500).body(Body::from_stream(stream)).unwrap()
        }
        Mode::Redirect => Response::builder().status(302).header("location", "/ok").body(Body::empty()).unwrap(),
    }
}

impl Receiver {
    async fn start() -> Receiver {
        Self::start_on("127.0.0.1".parse().unwrap()).await
    }

    async fn start_on(ip: std::net::IpAddr) -> Receiver {
        let (tx, rx) = mpsc::unbounded_channel();
        let shared = Shared { modes: Arc::default(), tx, open: Arc::default() };
        let app = axum::Router::new().route("/{path}", axum::routing::post(receive)).with_state(shared.clone());
        let listener = tokio::net::TcpListener::bind((ip, 0)).await.unwrap();
        let addr = listener.local_addr().unwrap();
        tokio::spawn(async move { axum::serve(listener, app).await.unwrap() });
        Receiver { addr, shared, rx }
    }

    fn url(&self, path: &str) -> String {
        format!("http://{}/{path}", self.addr)
    }

    fn set(&self, path: &str, mode: Mode) {
        self.shared.modes.lock().unwrap().insert(path.to_owned(), mode);
    }

    /// The next request, whatever its path.
    async fn next(&mut self) -> Got {
        tokio::time::timeout(WAIT, self.rx.recv()).await.expect("a delivery in time").expect("receiver running")
    }

    /// The next request to `path` (others are dropped).
    async fn next_at(&mut self, path: &str) -> Got {
        loop {
            let got = self.next().await;
            if got.path == path {
                return got;
            }
        }
    }
}

/// Makes a webhook; returns (id, secret).
async fn webhook(s: &Server, url: &str, events: &[&str], rooms: Option<&[&str]>) -> (String, String) {
    let mut body = json!({"url": url, "events": events});
    if let Some(rooms) = rooms {
        body["rooms"] = json!(rooms);
    }
    let (status, created) = s.post("/v1/webhooks", body).await;
    assert_eq!(status, StatusCode::CREATED, "{created}");
    (created["webhook"]["id"].as_str().unwrap().to_owned(), created["secret"].as_str().unwrap().to_owned())
}

async fn deliveries(s: &Server, hook: &str) -> Vec<Value> {
    let (status, page) = s.get(&format!("/v1/webhooks/{hook}/deliveries?limit=500")).await;
    assert_eq!(status, StatusCode::OK, "{page}");
    page["data"].as_array().unwrap().clone()
}

/// Waits until `hook`'s deliveries satisfy `pred`. A delivery settles inside the server after the
/// receiver answered (or did not), which no event tells a test, so the list is read again until the
/// deadline, as `no_process_left` reads /proc.
async fn until_deliveries(s: &Server, hook: &str, mut pred: impl FnMut(&[Value]) -> bool) -> Vec<Value> {
    let deadline = tokio::time::Instant::now() + WAIT;
    loop {
        let d = deliveries(s, hook).await;
        if pred(&d) {
            return d;
        }
        assert!(tokio::time::Instant::now() < deadline, "deliveries never got there: {d:#?}");
        tokio::time::sleep(std::time::Duration::from_millis(50)).await;
    }
}

fn verify(got: &Got, secret: &str) {
    let ts = got.header("ensemble-timestamp");
    let mut mac = Hmac::<Sha256>::new_from_slice(secret.as_bytes()).unwrap();
    mac.update(format!("{ts}.{}", got.body).as_bytes());
    let expected: String = mac.finalize().into_bytes().iter().map(|b| format!("{b:02x}")).collect();
    assert_eq!(got.header("ensemble-signature"), format!("v1={expected}"), "the signature verifies");
    let age = ensemble_core::clock::unix_ms() / 1000 - ts.parse::<i64>().unwrap();
    assert!((0..60).contains(&age), "a current timestamp: {ts}");
}

/// The types of the next `n` deliveries, sorted (made at once, they may arrive in any order).
async fn next_types(rx: &mut Receiver, n: usize) -> Vec<String> {
    let mut types = Vec::new();
    for _ in 0..n {
        types.push(rx.next().await.json()["type"].as_str().unwrap().to_owned());
    }
    types.sort();
    types
}

/// Runs the README's Python verifier on a delivery: what it prints (`True`/`False`).
async fn readme_verifier(got: &Got, secret: &str) -> String {
    let readme =
        std::fs::read_to_string(std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("../README.md")).unwrap();
    let section = readme.split("\n## Webhooks\n").nth(1).expect("README has \"## Webhooks\"");
    let code = section.split("```python\n").nth(1).and_then(|b| b.split("```").next()).expect("a python block");
    let headers: HashMap<String, String> =
        got.headers.iter().map(|(k, v)| (k.as_str().to_owned(), v.to_str().unwrap().to_owned())).collect();
    let script = format!(
        "{code}\nimport json, sys\nd = json.load(sys.stdin)\nprint(verify(d['secret'], d['headers'], d['body'].encode()))\n"
    );
    let input = json!({"secret": secret, "headers": headers, "body": got.body}).to_string();
    let mut child = tokio::process::Command::new("python3")
        .args(["-c", &script])
        .stdin(std::process::Stdio::piped())
        .stdout(std::process::Stdio::piped())
        .spawn()
        .expect("python3");
    use tokio::io::AsyncWriteExt;
    child.stdin.take().unwrap().write_all(input.as_bytes()).await.unwrap();
    let out = tokio::time::timeout(WAIT, child.wait_with_output()).await.unwrap().unwrap();
    assert!(out.status.success(), "{out:?}");
    String::from_utf8(out.stdout).unwrap().trim().to_owned()
}

async fn run_turn(s: &Server, ws: &mut Ws, room: &str, session: &str, text: &str) -> String {
    let turn = s.turn(room, session, text).await;
    let t = turn.clone();
    ws.until(move |e| e["turnId"] == t.as_str() && e["type"] == "turn.completed").await;
    turn
}

#[tokio::test]
async fn deliveries_are_signed_filtered_and_attention_comes_once_after_the_delay() {
    let mut rx = Receiver::start().await;
    let s = Server::start(&["--webhook-allow-private", "--attention-after-secs", "1"]).await;
    let events = ["turn.completed", "interaction.requested", "interaction.resolved", "session.needs_attention"];
    let (hook, secret) = webhook(&s, &rx.url("a"), &events, Some(&["r"])).await;
    assert!(secret.starts_with("whsec_") && secret.len() > 40, "{secret}");
    let (_, list) = s.get("/v1/webhooks").await;
    assert_eq!(list["data"][0]["id"], hook.as_str());
    assert_eq!(list["data"][0]["rooms"], json!(["r"]));
    assert!(!list.to_string().contains(&secret), "no secret once made: {list}");

    s.session("r", "a").await;
    s.session("other", "o").await;
    let mut ws = s.ws("r", None).await;
    ws.hello().await;
    let turn = run_turn(&s, &mut ws, "r", "a", "hello").await;
    let got = rx.next().await;
    verify(&got, &secret);
    let body = got.json();
    let logged = s.events("r").await;
    let completed = logged.iter().find(|e| e["type"] == "turn.completed").unwrap();
    assert_eq!(body["type"], "turn.completed");
    assert_eq!(body["id"], completed["eventId"], "the event id is the idempotency key: {body}");
    assert_eq!(got.header("ensemble-event-id"), completed["eventId"].as_str().unwrap());
    assert_eq!(
        (got.header("ensemble-event-type"), got.header("ensemble-webhook-id")),
        ("turn.completed", hook.as_str())
    );
    assert_eq!(got.header("ensemble-delivery-attempt"), "1");
    assert_eq!(&body["event"], completed, "the event as the log has it");
    assert_eq!((body["roomId"].as_str(), body["sessionId"].as_str()), (Some("r"), Some("a")));
    assert_eq!(body["event"]["turnId"], turn.as_str());
    assert_eq!(readme_verifier(&got, &secret).await, "True", "the README's verifier takes the delivery");
    let tampered = Got { body: got.body.replace("turn.completed", "turn.failed"), ..got };
    assert_eq!(readme_verifier(&tampered, &secret).await, "False", "and refuses a changed body");
    assert_eq!(readme_verifier(&tampered, "whsec_another").await, "False");

    // Another room's turn is not delivered: the next delivery is r's next turn.
    let mut other_ws = s.ws("other", None).await;
    other_ws.hello().await;
    run_turn(&s, &mut other_ws, "other", "o", "elsewhere").await;
    let second = run_turn(&s, &mut ws, "r", "a", "again").await;
    let got = rx.next().await;
    assert_eq!(
        (got.json()["roomId"].as_str(), got.json()["event"]["turnId"].as_str()),
        (Some("r"), Some(second.as_str()))
    );

    // An approval left waiting: requested, then after a second needs_attention, once; answered.
    s.turn("r", "a", "/run make test").await;
    let asked = rx.next().await.json();
    assert_eq!(asked["type"], "interaction.requested", "{asked}");
    let first = asked["event"]["payload"]["requestId"].as_str().unwrap().to_owned();
    let attention = rx.next().await.json();
    assert_eq!(attention["type"], "session.needs_attention", "{attention}");
    assert_eq!(attention["event"]["payload"]["requestId"], first.as_str());
    let waited = attention["createdAtMs"].as_i64().unwrap() - asked["createdAtMs"].as_i64().unwrap();
    assert!(waited >= 1000, "after the delay: {waited} ms");
    let (status, b) =
        s.post(&format!("/v1/rooms/r/sessions/a/interactions/{first}"), json!({"decision": "accept"})).await;
    assert_eq!(status, StatusCode::OK, "{b}");
    assert_eq!(next_types(&mut rx, 2).await, ["interaction.resolved", "turn.completed"]);

    // One answered at once is never said to need attention: the next attention is the third's.
    s.turn("r", "a", "/run make check").await;
    let second_ask = rx.next().await.json();
    let second_id = second_ask["event"]["payload"]["requestId"].as_str().unwrap().to_owned();
    s.post(&format!("/v1/rooms/r/sessions/a/interactions/{second_id}"), json!({"decision": "accept"})).await;
    assert_eq!(next_types(&mut rx, 2).await, ["interaction.resolved", "turn.completed"]);
    s.turn("r", "a", "/run make lint").await;
    let third = rx.next().await.json();
    assert_eq!(third["type"], "interaction.requested");
    let attention = rx.next().await.json();
    assert_eq!(attention["type"], "session.needs_attention");
    assert_eq!(attention["event"]["payload"]["requestId"], third["event"]["payload"]["requestId"]);
    assert_ne!(attention["event"]["payload"]["requestId"], second_id.as_str());
    // It is in the room's log too, for the console and the clients.
    let logged = s.events("r").await;
    assert_eq!(logged.iter().filter(|e| e["type"] == "session.needs_attention").count(), 2);

    let d = deliveries(&s, &hook).await;
    assert_eq!(d.len(), 11, "{d:#?}");
    assert!(d.iter().all(|d| d["state"] == "delivered" && d["attempts"] == 1), "{d:#?}");
    assert_eq!(d[0]["lastAttempts"][0]["status"], 200);
}

#[tokio::test]
async fn a_receiver_that_is_down_loses_nothing_across_a_kill_9() {
    let mut rx = Receiver::start().await;
    rx.set("b", Mode::Fail(503));
    let dir = tempfile::tempdir().unwrap();
    let args = [
        "--webhook-allow-private",
        "--webhook-backoff-ms",
        "50",
        "--webhook-backoff-max-secs",
        "1",
        "--webhook-timeout-secs",
        "1",
    ];
    let s = Server::start_in(dir.path(), &args).await;
    let (hook, secret) = webhook(&s, &rx.url("b"), &["turn.completed", "session.closed"], None).await;
    s.session("r", "a").await;
    let mut ws = s.ws("r", None).await;
    ws.hello().await;
    run_turn(&s, &mut ws, "r", "a", "one").await;
    run_turn(&s, &mut ws, "r", "a", "two").await;
    // Tried, refused, tried again with the same event id.
    let first = rx.next().await;
    let again = loop {
        let got = rx.next().await;
        if got.header("ensemble-event-id") == first.header("ensemble-event-id") {
            break got;
        }
    };
    assert_eq!(first.header("ensemble-delivery-attempt"), "1");
    assert!(again.header("ensemble-delivery-attempt").parse::<u32>().unwrap() >= 2);
    let d = until_deliveries(&s, &hook, |d| d.len() == 2 && d.iter().all(|d| d["attempts"].as_u64() >= Some(1))).await;
    assert!(d.iter().all(|d| d["state"] == "pending"), "{d:#?}");
    let attempt = &d[0]["lastAttempts"][0];
    assert_eq!(attempt["status"], 503);
    // What the receiver said ("not now") is not relayed.
    assert_eq!(attempt["error"], "answered 503", "{attempt}");
    assert!(d[0]["nextAttemptAtMs"].as_i64().is_some());

    // Killed while the receiver is down; it comes back; the server too: everything arrives.
    s.kill9().await;
    rx.set("b", Mode::Ok);
    while rx.rx.try_recv().is_ok() {}
    let s = Server::start_in(dir.path(), &args).await;
    let mut ids = HashSet::new();
    while ids.len() < 2 {
        let got = rx.next().await;
        verify(&got, &secret);
        ids.insert(got.header("ensemble-event-id").to_owned());
    }
    let d = until_deliveries(&s, &hook, |d| d.iter().all(|d| d["state"] == "delivered")).await;
    assert_eq!(d.len(), 2);
    let logged: HashSet<String> = s
        .events("r")
        .await
        .iter()
        .filter(|e| e["type"] == "turn.completed")
        .map(|e| e["eventId"].as_str().unwrap().to_owned())
        .collect();
    assert_eq!(ids, logged, "both turns, by their event ids");
}

#[tokio::test]
async fn hostile_receivers_hold_back_no_other_webhook() {
    let mut rx = Receiver::start().await;
    for (path, mode) in
        [("hang", Mode::Hang), ("huge", Mode::Huge(200)), ("huge500", Mode::Huge(500)), ("drip", Mode::Drip)]
    {
        rx.set(path, mode);
    }
    let s =
        Server::start(&["--webhook-allow-private", "--webhook-timeout-secs", "8", "--webhook-backoff-ms", "100"]).await;
    let mut hooks = HashMap::new();
    for path in ["hang", "huge", "huge500", "drip", "ok"] {
        hooks.insert(path, webhook(&s, &rx.url(path), &["turn.completed"], None).await.0);
    }
    s.session("r", "a").await;
    let mut ws = s.ws("r", None).await;
    ws.hello().await;
    let mut seen = HashSet::new();
    for text in ["one", "two"] {
        let turn = run_turn(&s, &mut ws, "r", "a", text).await;
        let got = rx.next_at("ok").await;
        assert_eq!(got.json()["event"]["turnId"], turn.as_str());
        seen.insert(turn);
    }
    // Both reached the good receiver while the hanging one still held its first request open
    // (its attempt lasts 8 s: room for a loaded machine to run two short turns first).
    assert!(rx.shared.open.load(Ordering::SeqCst) >= 1, "a request still hangs");
    assert_eq!(seen.len(), 2);
    // 10 MB with a 200 is delivered without being read; with a 500 too, its status is the error.
    until_deliveries(&s, &hooks["huge"], |d| d.len() == 2 && d.iter().all(|d| d["state"] == "delivered")).await;
    let tried = |d: &[Value]| d.iter().any(|d| d["attempts"].as_u64() >= Some(1));
    let first_tried = |d: Vec<Value>| d.into_iter().rev().find(|d| d["attempts"].as_u64() >= Some(1)).unwrap();
    let d = first_tried(until_deliveries(&s, &hooks["huge500"], tried).await);
    let error = d["lastAttempts"][0]["error"].as_str().unwrap();
    assert_eq!(error, "answered 500");
    // The hanging and the dripping ones time out, and are tried again.
    let d = first_tried(until_deliveries(&s, &hooks["hang"], tried).await);
    assert!(d["lastAttempts"][0]["error"].as_str().unwrap().contains("no answer"), "{d:#?}");
    assert_eq!(d["state"], "pending");
    let d = first_tried(until_deliveries(&s, &hooks["drip"], tried).await);
    assert_eq!(d["state"], "pending", "{d:#?}");
    until_deliveries(&s, &hooks["ok"], |d| d.len() == 2 && d.iter().all(|d| d["state"] == "delivered")).await;
}

#[tokio::test]
async fn private_urls_and_redirects_are_refused_and_bad_input_is_named() {
    let s = Server::start(&[]).await;
    for url in [
        "http://127.0.0.1:9/x",
        "http://localhost:9/",
        "http://[::1]/",
        "http://169.254.169.254/latest",
        "http://10.0.0.1/",
    ] {
        let (status, body) = s.post("/v1/webhooks", json!({"url": url, "events": ["turn.completed"]})).await;
        assert_eq!(error_code(status, &body, StatusCode::BAD_REQUEST), "webhook_url_refused", "{url}");
        assert!(body["error"]["message"].as_str().unwrap().contains("--webhook-allow-private"), "{body}");
    }
    for (body, field) in [
        (json!({"url": "ftp://example.com/", "events": ["turn.completed"]}), "url"),
        (json!({"url": "https://example.com/", "events": ["turn.started"]}), "events"),
        (json!({"url": "https://example.com/", "events": []}), "events"),
        (json!({"url": "https://example.com/", "events": ["turn.completed"], "rooms": ["bad room"]}), "rooms"),
        (json!({"url": "https://example.com/", "events": ["turn.completed"], "secret": "short"}), "secret"),
    ] {
        let (status, answer) = s.post("/v1/webhooks", body.clone()).await;
        assert_eq!(status, StatusCode::BAD_REQUEST, "{body}: {answer}");
        assert_eq!(answer["error"]["details"]["field"], field, "{answer}");
    }
    let (status, body) =
        s.post("/v1/webhooks", json!({"url": "https://example.com/", "events": ["x"], "extra": 1})).await;
    assert_eq!(status, StatusCode::BAD_REQUEST, "{body}");

    // Allowed, to a test receiver: a redirect is not followed; test deliveries; the limit.
    let mut rx = Receiver::start().await;
    rx.set("redirect", Mode::Redirect);
    let s = Server::start(&["--webhook-allow-private", "--max-webhooks", "2", "--webhook-backoff-ms", "60000"]).await;
    let (redirect, _) = webhook(&s, &rx.url("redirect"), &["turn.completed"], None).await;
    let (ok, secret) = webhook(&s, &rx.url("ok"), &["turn.completed"], Some(&["*"])).await;
    let (status, body) = s.post("/v1/webhooks", json!({"url": rx.url("x"), "events": ["turn.failed"]})).await;
    assert_eq!(error_code(status, &body, StatusCode::CONFLICT), "too_many_webhooks");
    let (status, test) = s.post_empty(&format!("/v1/webhooks/{redirect}/test")).await;
    assert_eq!(status, StatusCode::ACCEPTED, "{test}");
    assert_eq!(rx.next().await.path, "redirect");
    let d = until_deliveries(&s, &redirect, |d| d.len() == 1 && d[0]["attempts"] == 1).await;
    assert_eq!((d[0]["type"].as_str(), d[0]["lastAttempts"][0]["status"].as_u64()), (Some("webhook.test"), Some(302)));
    assert_eq!(d[0]["eventId"], test["eventId"]);
    s.post_empty(&format!("/v1/webhooks/{ok}/test")).await;
    let got = rx.next().await;
    assert_eq!(got.path, "ok", "the redirect was not followed: the next request is the ok hook's own test");
    assert_eq!(got.json()["type"], "webhook.test");
    verify(&got, &secret);

    // Changed, disabled, deleted.
    let (status, changed) =
        s.patch(&format!("/v1/webhooks/{ok}"), json!({"enabled": false, "events": ["turn.failed"]})).await;
    assert_eq!(status, StatusCode::OK, "{changed}");
    assert_eq!((changed["enabled"].as_bool(), changed["events"].clone()), (Some(false), json!(["turn.failed"])));
    let (status, body) = s.post_empty(&format!("/v1/webhooks/{ok}/test")).await;
    assert_eq!(error_code(status, &body, StatusCode::CONFLICT), "webhook_disabled");
    let (status, _) = s.delete(&format!("/v1/webhooks/{ok}")).await;
    assert_eq!(status, StatusCode::NO_CONTENT);
    let (status, body) = s.get(&format!("/v1/webhooks/{ok}")).await;
    assert_eq!(error_code(status, &body, StatusCode::NOT_FOUND), "webhook_not_found");
    let (status, body) = s.get(&format!("/v1/webhooks/{ok}/deliveries")).await;
    assert_eq!(error_code(status, &body, StatusCode::NOT_FOUND), "webhook_not_found");
    let (status, body) = s.get(&format!("/v1/webhooks/{redirect}/deliveries?limit=0")).await;
    assert_eq!(status, StatusCode::BAD_REQUEST, "{body}");
}

/// A non-loopback address of one of this machine's interfaces (IPv4 first), if it has one.
fn own_interface_address() -> Option<std::net::IpAddr> {
    let mut found: Vec<std::net::IpAddr> = if_addrs::get_if_addrs()
        .unwrap()
        .into_iter()
        .map(|i| i.ip())
        .filter(|ip| !ip.is_loopback() && !matches!(ip, std::net::IpAddr::V6(v6) if v6.is_unicast_link_local()))
        .collect();
    found.sort_by_key(|ip| ip.is_ipv6());
    found.into_iter().next()
}

/// Delivers a test event to `hook` and waits for its first attempt.
async fn first_attempt(s: &Server, hook: &str) -> Value {
    let (status, body) = s.post_empty(&format!("/v1/webhooks/{hook}/test")).await;
    assert_eq!(status, StatusCode::ACCEPTED, "{body}");
    let d = until_deliveries(s, hook, |d| d.first().is_some_and(|d| d["attempts"].as_u64() >= Some(1))).await;
    d[0]["lastAttempts"][0].clone()
}

#[tokio::test]
async fn the_hosts_own_interface_address_is_refused_when_made_and_at_every_attempt() {
    let Some(ip) = own_interface_address() else {
        eprintln!("skipped: this machine has no non-loopback interface address");
        return;
    };
    let mut rx = Receiver::start_on(ip).await;
    let port = rx.addr.port();
    let mut urls = vec![rx.url("own")];
    if let std::net::IpAddr::V4(v4) = ip {
        // The IPv6 spellings that reach the same IPv4 address.
        let [a, b, c, d] = v4.octets();
        let (high, low) = (u16::from_be_bytes([a, b]), u16::from_be_bytes([c, d]));
        urls.push(format!("http://[::ffff:{v4}]:{port}/own"));
        urls.push(format!("http://[64:ff9b::{high:x}:{low:x}]:{port}/own"));
    }
    let s = Server::start(&[]).await;
    for url in &urls {
        let (status, body) = s.post("/v1/webhooks", json!({"url": url, "events": ["turn.completed"]})).await;
        assert_eq!(error_code(status, &body, StatusCode::BAD_REQUEST), "webhook_url_refused", "{url}");
        assert!(body["error"]["message"].as_str().unwrap().contains("one of this host's own"), "{url}: {body}");
    }
    drop(s);

    // Made while private addresses were allowed (it reaches the receiver then), then refused at
    // every attempt once they are not: nothing more reaches the receiver.
    let dir = tempfile::tempdir().unwrap();
    let s = Server::start_in(dir.path(), &["--webhook-allow-private"]).await;
    let (hook, _) = webhook(&s, &rx.url("own"), &["turn.completed"], None).await;
    assert_eq!(first_attempt(&s, &hook).await["status"], 200);
    assert_eq!(rx.next().await.path, "own", "allowed: the receiver is on this host");
    s.stop().await;
    let s = Server::start_in(dir.path(), &["--webhook-backoff-ms", "60000"]).await;
    let (status, body) = s.post_empty(&format!("/v1/webhooks/{hook}/test")).await;
    assert_eq!(status, StatusCode::ACCEPTED, "{body}");
    let d = until_deliveries(&s, &hook, |d| d.len() == 2 && d[0]["attempts"].as_u64() >= Some(1)).await;
    let attempt = &d[0]["lastAttempts"][0];
    assert!(attempt["error"].as_str().unwrap().contains("one of this host's own"), "{attempt}");
    assert!(attempt["status"].is_null(), "{attempt}");
    assert!(rx.rx.try_recv().is_err(), "nothing was sent to the host's own address");
}

/// This machine's name, when it resolves to nothing but this machine's own addresses (so that no
/// test traffic could leave it).
async fn hostname_of_this_host() -> Option<String> {
    let out = std::process::Command::new("hostname").output().ok()?;
    let name = String::from_utf8(out.stdout).ok()?.trim().to_owned();
    let resolved: Vec<std::net::IpAddr> =
        tokio::net::lookup_host((name.as_str(), 0)).await.ok()?.map(|a| a.ip()).collect();
    let own: Vec<std::net::IpAddr> = if_addrs::get_if_addrs().ok()?.into_iter().map(|i| i.ip()).collect();
    (!resolved.is_empty() && resolved.iter().all(|ip| ip.is_loopback() || own.contains(ip))).then_some(name)
}

#[tokio::test]
async fn a_name_leading_to_this_host_fails_without_saying_where_it_led() {
    let Some(name) = hostname_of_this_host().await else {
        eprintln!("skipped: this machine's name does not resolve to this machine alone");
        return;
    };
    let mut rx = Receiver::start().await;
    let s = Server::start(&["--webhook-backoff-ms", "60000"]).await;
    // A name is checked where it leads at connection, not when the webhook is made.
    let (hook, _) = webhook(&s, &format!("http://{name}:{}/named", rx.addr.port()), &["turn.completed"], None).await;
    let attempt = first_attempt(&s, &hook).await;
    let error = attempt["error"].as_str().unwrap();
    assert!(error.contains(&format!("{name} resolves to no public address")), "{attempt}");
    for ip in tokio::net::lookup_host((name.as_str(), 0)).await.unwrap() {
        assert!(!error.contains(&ip.ip().to_string()), "{error} names {ip}");
    }
    assert!(rx.rx.try_recv().is_err(), "nothing was sent");
}

#[tokio::test]
async fn a_reached_budget_is_a_webhook_event() {
    let mut rx = Receiver::start().await;
    let s = Server::start(&["--webhook-allow-private"]).await;
    webhook(&s, &rx.url("budget"), &["budget.exhausted"], None).await;
    s.session("r", "a").await;
    let (status, body) = s.put("/v1/rooms/r/sessions/a/budget", json!({"maxTokens": 10})).await;
    assert_eq!(status, StatusCode::OK, "{body}");
    s.turn("r", "a", "/spend 50").await;
    let got = rx.next().await.json();
    assert_eq!(got["type"], "budget.exhausted");
    let p = &got["event"]["payload"];
    assert_eq!((p["scope"].as_str(), p["budget"]["maxTokens"].as_u64()), (Some("session"), Some(10)), "{got}");
    assert_eq!(p["state"]["exhausted"], true);
}

#[tokio::test]
async fn on_two_hosts_each_event_is_delivered_exactly_once() {
    let mut rx = Receiver::start().await;
    let Some(e) = engines().await else { return };
    let extra = ["--webhook-allow-private"];
    let a = crate::cluster::host_with(&e, "wh-a", "2", &extra).await;
    let b = crate::cluster::host_with(&e, "wh-b", "2", &extra).await;
    webhook(&a, &rx.url("c"), &["turn.completed"], None).await;
    // Both hosts have it (b reads the webhooks again every few seconds).
    b.logged("webhooks: 1 enabled").await;
    a.session("r", "on-a").await;
    b.session("r", "on-b").await;
    let mut ws = a.ws("r", None).await;
    ws.hello().await;
    for i in 0..6 {
        let mut left: HashSet<String> =
            [a.turn("r", "on-a", &format!("a{i}")).await, b.turn("r", "on-b", &format!("b{i}")).await].into();
        while !left.is_empty() {
            let done = ws.until_type("turn.completed").await;
            left.remove(done.last().unwrap()["turnId"].as_str().unwrap());
        }
    }
    // Every turn's delivery, each once.
    let mut ids = HashMap::new();
    while ids.len() < 12 {
        let got = rx.next().await;
        *ids.entry(got.header("ensemble-event-id").to_owned()).or_insert(0) += 1;
        assert!(ids.values().all(|n| *n == 1), "delivered twice: {ids:?}");
    }
    let completed: HashSet<String> = a
        .events("r")
        .await
        .iter()
        .filter(|e| e["type"] == "turn.completed")
        .map(|e| e["eventId"].as_str().unwrap().to_owned())
        .collect();
    assert_eq!(completed.len(), 12);
    assert_eq!(ids.keys().cloned().collect::<HashSet<_>>(), completed);
    // Nothing comes twice later either: the deliveries all settled once.
    let hook = a.get("/v1/webhooks").await.1["data"][0]["id"].as_str().unwrap().to_owned();
    let d = until_deliveries(&a, &hook, |d| d.len() == 12 && d.iter().all(|d| d["state"] == "delivered")).await;
    assert!(d.iter().all(|d| d["attempts"] == 1), "{d:#?}");
    assert!(rx.rx.try_recv().is_err(), "no duplicate arrived");
}
