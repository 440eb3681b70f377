//! Several real `ensemble` hosts on one real PostgreSQL, joined by a real nats-server (both from
//! `ensemble-test-engines`, on free loopback ports): a shared room looks the same from every host,
//! any host drives any session, two hosts racing a resume yield one live process, a killed host's
//! sessions are reported once and resumed elsewhere, and NATS restarting mid-stream costs no event.

use std::collections::HashSet;

use reqwest::StatusCode;
use serde_json::{Value, json};

use crate::common::*;
use ensemble_test_engines::{Nats, Postgres};

/// A database and a NATS server of this test's own, with the files that let hosts in.
pub(crate) struct Engines {
    pg: Option<Postgres>,
    pub url: String,
    pub nats: Option<Nats>,
    pub nats_url: String,
    /// `--nats-credentials` (user and password: the test nats-server admits nobody else).
    pub credentials: String,
    /// `--cluster-secret-file`, and the secret in it.
    pub secret_file: String,
    _secrets: tempfile::TempDir,
}

/// The cluster secret every test host shares.
pub(crate) const CLUSTER_SECRET: &str = "cluster-secret-0123456789abcdef0123456789abcdef";

/// PostgreSQL and nats-server for a test of several hosts; `None` (the test skips) where either
/// is missing and `scripts/test` does not demand them.
pub(crate) async fn engines() -> Option<Engines> {
    if !(tier::postgres() && tier::nats()) {
        return None;
    }
    // Their helpers block on a runtime of their own: off this one.
    let made = tokio::task::spawn_blocking(|| {
        let pg = Postgres::start().unwrap();
        let url = pg.create_database("ensemble").unwrap();
        let nats = Nats::start().unwrap();
        let nats_url = nats.url();
        let credentials = nats.credentials_file().to_str().unwrap().to_owned();
        let secrets = tempfile::tempdir().unwrap();
        let secret_file = secrets.path().join("cluster-secret");
        write_private(&secret_file, &format!("{CLUSTER_SECRET}\n"));
        let secret_file = secret_file.to_str().unwrap().to_owned();
        Engines { pg: Some(pg), url, nats: Some(nats), nats_url, credentials, secret_file, _secrets: secrets }
    })
    .await
    .unwrap();
    Some(made)
}

/// A host of the cluster: short leases and sweeps, so the tests wait seconds, not minutes.
pub(crate) async fn host(e: &Engines, id: &str) -> Server {
    host_with(e, id, "2", &[]).await
}

/// A host with its own lease (seconds) and more flags.
pub(crate) async fn host_with(e: &Engines, id: &str, lease_secs: &str, extra: &[&str]) -> Server {
    let mut args = vec!["--database-url", &e.url, "--nats-url", &e.nats_url, "--host-id", id];
    args.extend_from_slice(&["--nats-credentials", &e.credentials, "--cluster-secret-file", &e.secret_file]);
    args.extend_from_slice(&["--lease-secs", lease_secs]);
    args.extend_from_slice(&["--gap-sweep-ms", "100"]);
    args.extend_from_slice(extra);
    Server::start_relaying_log(&args).await
}

impl Engines {
    async fn stop_pg(&mut self) {
        self.on_pg(Postgres::stop).await;
    }

    /// Starts it again on the same port and data.
    async fn start_pg(&mut self) {
        self.on_pg(Postgres::start_again).await;
    }

    /// Runs one of PostgreSQL's helpers, which block: off the test's runtime.
    async fn on_pg(&mut self, op: fn(&mut Postgres) -> anyhow::Result<()>) {
        let mut pg = self.pg.take().expect("postgres");
        self.pg = Some(
            tokio::task::spawn_blocking(move || {
                op(&mut pg).unwrap();
                pg
            })
            .await
            .unwrap(),
        );
    }
}

/// Waits until a host has given its sessions up (it forgets them without publishing anything,
/// the database may be gone; it says so in its log).
async fn wait_lease_lost(s: &Server) {
    s.logged("gave its sessions up").await;
    assert!(metric(s, "ensemble_cluster_lease_lost_total").await >= 1.0);
}

/// `(seq, type)` of events, to compare what several sockets saw.
fn seq_types(events: &[Value]) -> Vec<(u64, String)> {
    events.iter().map(|e| (e["seq"].as_u64().unwrap(), e["type"].as_str().unwrap().to_owned())).collect()
}

/// Reads a socket until both turns completed.
async fn until_both_complete(ws: &mut Ws, turns: [&str; 2]) -> Vec<Value> {
    let mut left: HashSet<String> = turns.iter().map(|t| (*t).to_owned()).collect();
    ws.until(|e| {
        if e["type"] == "turn.completed" {
            left.remove(e["turnId"].as_str().unwrap_or(""));
        }
        left.is_empty()
    })
    .await
}

/// Submits a turn, returning the answer as it is.
async fn submit(s: &Server, room: &str, id: &str, text: &str) -> (StatusCode, Value) {
    s.post(&format!("/v1/rooms/{room}/sessions/{id}/turns"), json!({"input": [{"type": "text", "text": text}]})).await
}

#[tokio::test]
async fn every_host_sees_one_identical_gap_free_sequence_of_a_shared_room() {
    let Some(e) = engines().await else { return };
    let (a, b, c) = (host(&e, "a").await, host(&e, "b").await, host(&e, "c").await);
    let (_, ready) = c.get("/readyz").await;
    assert_eq!((ready["hostId"].as_str(), ready["nats"].as_str()), (Some("c"), Some("connected")), "{ready}");
    // Without the token: ready or not, nothing more.
    let res = reqwest::get(c.url("/readyz")).await.unwrap();
    let (status, ready) = decode(res).await;
    assert_eq!((status, ready), (StatusCode::OK, json!({"status": "ok"})));
    let mut sockets = [a.ws("r", None).await, b.ws("r", None).await, c.ws("r", None).await];
    for ws in &mut sockets {
        ws.hello().await;
    }
    a.session("r", "on-a").await;
    b.session("r", "on-b").await;
    // Both stream at once, from two hosts, into one room.
    let text = "/slow 5\n/chunks 40";
    let (ta, tb) = tokio::join!(a.turn("r", "on-a", text), b.turn("r", "on-b", text));
    let mut seen = Vec::new();
    for ws in &mut sockets {
        seen.push(seq_types(&until_both_complete(ws, [&ta, &tb]).await));
    }
    let log = a.events("r").await;
    assert_gap_free(&log);
    let logged = seq_types(&log);
    for (i, s) in seen.iter().enumerate() {
        assert_eq!(s[0].0, 1, "host {i} starts at the room's first event");
        assert_eq!(s[..], logged[..s.len()], "host {i} saw the log's order, without gap or duplicate");
    }
    assert_eq!(seen[0], seen[1]);
    assert_eq!(seen[1], seen[2]);
    // Every host lists both sessions, whichever host holds them.
    let (_, list) = c.get("/v1/rooms/r/sessions").await;
    let ids: HashSet<&str> =
        list["data"].as_array().unwrap().iter().map(|s| s["sessionId"].as_str().unwrap()).collect();
    assert_eq!(ids, HashSet::from(["on-a", "on-b"]));
    // A session id is unique across hosts.
    let (status, body) = c.post("/v1/rooms/r/sessions", json!({"sessionId": "on-a"})).await;
    assert_eq!(error_code(status, &body, StatusCode::CONFLICT), "session_exists");
}

#[tokio::test]
async fn the_session_limits_count_every_hosts_sessions() {
    let Some(e) = engines().await else { return };
    let limited = ["--max-sessions-per-room", "2"];
    let (a, b) = (host_with(&e, "a", "2", &limited).await, host_with(&e, "b", "2", &limited).await);
    a.session("r", "one").await;
    b.session("r", "two").await;
    // B holds one session, A the other: the room is full for both.
    let (status, body) = b.post("/v1/rooms/r/sessions", json!({"sessionId": "three"})).await;
    assert_eq!(error_code(status, &body, StatusCode::TOO_MANY_REQUESTS), "too_many_sessions", "{body}");
    // Closing A's frees one place; two hosts racing for it: exactly one gets it.
    let (status, _) = a.delete("/v1/rooms/r/sessions/one").await;
    assert!(status.is_success());
    let (ra, rb) = tokio::join!(
        a.post("/v1/rooms/r/sessions", json!({"sessionId": "three"})),
        b.post("/v1/rooms/r/sessions", json!({"sessionId": "four"}))
    );
    let mut statuses = [ra.0, rb.0];
    statuses.sort();
    assert_eq!(statuses, [StatusCode::CREATED, StatusCode::TOO_MANY_REQUESTS], "{} {}", ra.1, rb.1);
}

#[tokio::test]
async fn rest_on_one_host_drives_a_session_another_host_owns() {
    let Some(e) = engines().await else { return };
    let (a, b) = (host(&e, "a").await, host(&e, "b").await);
    a.session("r", "s").await;
    let mut ws = b.ws("r", None).await;
    ws.hello().await;
    // A turn submitted on B runs on A and asks for approval; B answers it.
    let (status, body) = submit(&b, "r", "s", "/run make test").await;
    assert_eq!(status, StatusCode::ACCEPTED, "{body}");
    let turn = body["turnId"].as_str().unwrap().to_owned();
    let asked = ws.until_type("interaction.requested").await;
    let request = asked.last().unwrap()["payload"]["requestId"].as_str().unwrap().to_owned();
    let (status, list) = b.get("/v1/rooms/r/sessions/s/interactions").await;
    assert_eq!(status, StatusCode::OK);
    assert_eq!(list["data"][0]["requestId"], request.as_str(), "{list}");
    let (status, body) =
        b.post(&format!("/v1/rooms/r/sessions/s/interactions/{request}"), json!({"decision": "accept"})).await;
    assert!(status.is_success(), "{status} {body}");
    ws.until(|e| e["type"] == "turn.completed" && e["turnId"] == turn.as_str()).await;
    // Errors come back as the owner gives them: same status, same body.
    let (sa, ea) = a.post("/v1/rooms/r/sessions/s/interactions/nope", json!({"decision": "accept"})).await;
    let (sb, eb) = b.post("/v1/rooms/r/sessions/s/interactions/nope", json!({"decision": "accept"})).await;
    assert_eq!((sa, &ea), (sb, &eb));
    assert!(sa.is_client_error(), "{sa} {ea}");
    // Cancel from B.
    let (status, body) = submit(&b, "r", "s", "/hang").await;
    assert_eq!(status, StatusCode::ACCEPTED, "{body}");
    ws.until_type("turn.started").await;
    let (status, body) = b.post_empty("/v1/rooms/r/sessions/s/cancel").await;
    assert!(status.is_success(), "{status} {body}");
    ws.until_type("turn.canceled").await;
    // The session is A's all along: A reports it live, B reads it through A.
    let (_, on_a) = a.get("/v1/rooms/r/sessions/s").await;
    let (_, on_b) = b.get("/v1/rooms/r/sessions/s").await;
    assert_eq!(on_a["live"], true, "{on_a}");
    assert_eq!(on_a, on_b);
    // Close from B.
    let (status, body) = b.delete("/v1/rooms/r/sessions/s").await;
    assert!(status.is_success(), "{status} {body}");
    ws.until_type("session.completed").await;
    let (_, closed) = a.get("/v1/rooms/r/sessions/s").await;
    assert_eq!(closed["status"], "completed", "{closed}");
    let log = b.events("r").await;
    assert_gap_free(&log);
}

/// Side frames of every side event, in arrival order.
fn side_events(frames: &[Value], side: &str) -> Vec<Value> {
    frames
        .iter()
        .filter(|f| f["type"] == "side_event" && f["event"]["sessionId"] == side)
        .map(|f| f["event"].clone())
        .collect()
}

#[tokio::test]
async fn a_side_conversation_on_one_host_streams_to_every_hosts_sockets_with_its_own_seq() {
    let Some(e) = engines().await else { return };
    let (a, b) = (host(&e, "a").await, host(&e, "b").await);
    a.session("r", "src").await;
    let (mut on_a, mut on_b) = (a.ws("r", None).await, b.ws("r", None).await);
    on_a.hello().await;
    on_b.hello().await;
    // Opened and driven through B; the side lives with its source on A.
    let (status, side) =
        b.post("/v1/rooms/r/sessions/src/sides", json!({"requestId": "q", "sideSessionId": "side"})).await;
    assert_eq!(status, StatusCode::CREATED, "{side}");
    let (status, body) = submit(&b, "r", "side", "a side question").await;
    assert_eq!(status, StatusCode::ACCEPTED, "{body}");
    let done = |f: &Value| f["type"] == "side_event" && f["event"]["type"] == "turn.completed";
    let seen_b = side_events(&on_b.frames_until(done).await, "side");
    let seen_a = side_events(&on_a.frames_until(done).await, "side");
    assert_eq!(seen_b[0]["type"], "session.started", "{seen_b:?}");
    for (i, ev) in seen_b.iter().enumerate() {
        assert_eq!(ev["seq"].as_u64(), Some(i as u64 + 1), "the side's own gap-free seq on B: {seen_b:?}");
    }
    assert_eq!(seen_a, seen_b, "both hosts' sockets carry the same side events");
    // Replay through B (forwarded to A, which holds the side) matches what the sockets carried.
    let (status, page) = b.get("/v1/rooms/r/sessions/side/events?after=0").await;
    assert_eq!(status, StatusCode::OK, "{page}");
    assert_eq!(page["data"].as_array().unwrap()[..seen_b.len()], seen_b[..]);
    let (status, sides) = b.get("/v1/rooms/r/sessions/src/sides").await;
    assert_eq!(status, StatusCode::OK, "{sides}");
    assert_eq!(sides["data"][0]["sessionId"], "side", "{sides}");
    // A socket opened on B later learns of the side from its hello, as on A.
    let hello_b = b.ws("r", None).await.hello().await;
    let hello_a = a.ws("r", None).await.hello().await;
    assert_eq!(hello_b["sides"][0]["sessionId"], "side", "{hello_b}");
    assert_eq!(hello_b["sides"], hello_a["sides"]);
    // Once closed it is gone from the hello everywhere.
    let (status, body) = b.delete("/v1/rooms/r/sessions/side").await;
    assert!(status.is_success(), "{status} {body}");
    on_b.frames_until(|f| f["type"] == "side_event" && f["event"]["type"] == "session.completed").await;
    let hello_b = b.ws("r", None).await.hello().await;
    assert_eq!(hello_b["sides"], json!([]), "{hello_b}");
    // Nothing of the side reached the room's log.
    assert!(b.events("r").await.iter().all(|e| e["sessionId"] != "side"));
}

#[tokio::test]
async fn two_hosts_racing_to_resume_yield_one_live_process() {
    let Some(e) = engines().await else { return };
    let a = host(&e, "a").await;
    a.session("r", "s").await;
    // A stops cleanly: the session is disconnected and free for any host at once.
    a.stop().await;
    let (b, c) = (host(&e, "b").await, host(&e, "c").await);
    let mut ws = b.ws("r", None).await;
    ws.hello().await;
    let (rb, rc) =
        tokio::join!(b.post_empty("/v1/rooms/r/sessions/s/resume"), c.post_empty("/v1/rooms/r/sessions/s/resume"));
    assert_eq!(rb.0, StatusCode::OK, "{}", rb.1);
    assert_eq!(rc.0, StatusCode::OK, "{}", rc.1);
    assert_eq!(rb.1["live"], true);
    ws.until(|e| e["type"] == "session.updated" && e["payload"]["reason"] == "resumed").await;
    // Exactly one resume happened, on one host.
    let log = b.events("r").await;
    let resumed = log.iter().filter(|e| e["type"] == "session.updated" && e["payload"]["reason"] == "resumed").count();
    assert_eq!(resumed, 1, "{log:?}");
    // Each host counts the sessions it holds; a live scripted session is `ready`.
    let ready = r#"ensemble_sessions{status="ready"}"#;
    let live = metric(&b, ready).await + metric(&c, ready).await;
    assert_eq!(live, 1.0, "one live session across the hosts");
    // And it works from either host.
    let (status, body) = submit(&c, "r", "s", "hello").await;
    assert_eq!(status, StatusCode::ACCEPTED, "{body}");
    ws.until_type("turn.completed").await;
}

#[tokio::test]
async fn a_killed_hosts_sessions_are_reported_once_and_resume_on_another() {
    let Some(e) = engines().await else { return };
    let (a, b) = (host(&e, "a").await, host(&e, "b").await);
    a.session("r", "s").await;
    let mut ws = b.ws("r", None).await;
    ws.hello().await;
    let turn = a.turn("r", "s", "/hang").await;
    ws.until(|e| e["type"] == "turn.started" && e["turnId"] == turn.as_str()).await;
    a.kill9().await;
    // B takes the session over once A's lease expires (2 s here).
    let failed = ws.until(|e| e["type"] == "turn.failed" && e["turnId"] == turn.as_str()).await;
    assert_eq!(failed.last().unwrap()["payload"]["error"]["code"], "host_lost", "{:?}", failed.last());
    let updated = ws.until_type("session.updated").await;
    let updated = &updated.last().unwrap()["payload"];
    assert_eq!(
        (updated["reason"].as_str(), updated["session"]["status"].as_str()),
        (Some("host_lost"), Some("disconnected")),
        "{updated}"
    );
    // Resumable on B (its transcript is in the database).
    let (status, body) = b.post_empty("/v1/rooms/r/sessions/s/resume").await;
    assert_eq!(status, StatusCode::OK, "{body}");
    let (status, body) = submit(&b, "r", "s", "/history").await;
    assert_eq!(status, StatusCode::ACCEPTED, "{body}");
    ws.until_type("turn.completed").await;
    // Reported exactly once.
    let log = b.events("r").await;
    assert_gap_free(&log);
    let reports = log.iter().filter(|e| e["type"] == "turn.failed" && e["turnId"] == turn.as_str()).count();
    assert_eq!(reports, 1);
}

#[tokio::test]
async fn nats_restarting_mid_stream_costs_no_event() {
    let Some(mut e) = engines().await else { return };
    let (a, b) = (host(&e, "a").await, host(&e, "b").await);
    a.session("r", "s").await;
    let mut ws = b.ws("r", None).await;
    ws.hello().await;
    let turn = a.turn("r", "s", "/slow 20\n/chunks 150").await;
    ws.until_type("message.delta").await;
    let nats = e.nats.take().unwrap();
    let nats = tokio::task::spawn_blocking(move || {
        let mut nats = nats;
        nats.stop().unwrap();
        nats.start_again().unwrap();
        nats
    })
    .await
    .unwrap();
    e.nats = Some(nats);
    let seen = ws.until(|e| e["type"] == "turn.completed" && e["turnId"] == turn.as_str()).await;
    let log = a.events("r").await;
    let logged = seq_types(&log);
    let seen = seq_types(&seen);
    let first = seen[0].0 as usize - 1;
    assert_eq!(seen[..], logged[first..first + seen.len()], "no gap, no duplicate across the NATS restart");
}

#[tokio::test]
async fn an_owner_that_does_not_answer_is_504_and_one_that_is_gone_503_until_its_lease_ends() {
    let Some(e) = engines().await else { return };
    // Forwarded calls time out after 90% of the request timeout.
    let quick = ["--request-timeout-secs", "2"];
    let (a, b) = (host_with(&e, "a", "6", &quick).await, host_with(&e, "b", "6", &quick).await);
    a.session("r", "s").await;
    // A frozen owner keeps its NATS subscription but never answers: 504.
    a.signal(19); // SIGSTOP
    let (status, body) = b.get("/v1/rooms/r/sessions/s").await;
    a.signal(18); // SIGCONT
    assert_eq!(error_code(status, &body, StatusCode::GATEWAY_TIMEOUT), "forward_timeout", "{body}");
    // A dead owner has no responders: 503 with Retry-After, until its lease runs out.
    a.kill9().await;
    let mut res = b.http().get(b.url("/v1/rooms/r/sessions/s")).send().await.unwrap();
    // The NATS server may not have seen A's socket close yet (then the call times out): ask again.
    for _ in 0..3 {
        if res.status() != StatusCode::GATEWAY_TIMEOUT {
            break;
        }
        res = b.http().get(b.url("/v1/rooms/r/sessions/s")).send().await.unwrap();
    }
    let retry = res.headers().get("retry-after").and_then(|v| v.to_str().ok()).map(str::to_owned);
    let (status, body) = decode(res).await;
    assert_eq!(error_code(status, &body, StatusCode::SERVICE_UNAVAILABLE), "owner_unreachable", "{body}");
    assert_eq!(retry.as_deref(), Some("6"));
    // Then B takes it over (replayed from the start: whenever that happened, the socket sees it).
    let mut ws = b.ws("r", Some(0)).await;
    ws.hello().await;
    ws.until(|e| e["type"] == "session.updated" && e["payload"]["reason"] == "host_lost").await;
    let (status, body) = b.get("/v1/rooms/r/sessions/s").await;
    assert_eq!((status, body["status"].as_str()), (StatusCode::OK, Some("disconnected")), "{body}");
    let forwarded = metric(&b, r#"ensemble_cluster_forwarded_total{outcome="unreachable"}"#).await;
    assert!(forwarded >= 1.0, "{forwarded}");
}

#[tokio::test]
async fn a_database_restart_answers_503_on_every_host_then_service_resumes() {
    let Some(mut e) = engines().await else { return };
    // A lease longer than the outage: no host gives its sessions up meanwhile.
    let (a, b) = (host_with(&e, "a", "30", &[]).await, host_with(&e, "b", "30", &[]).await);
    a.session("r", "s").await;
    let acknowledged = b.events("r").await;
    e.stop_pg().await;
    // A new session on B, and B asking who owns a session it does not hold: 503, not a hang.
    let res = b.http().post(b.url("/v1/rooms/r/sessions")).json(&json!({"sessionId": "during"})).send().await.unwrap();
    assert!(res.headers().get("retry-after").is_some(), "503 carries Retry-After");
    let (status, body) = decode(res).await;
    assert_eq!(error_code(status, &body, StatusCode::SERVICE_UNAVAILABLE), "store_unavailable");
    let (status, body) = submit(&b, "r", "s", "hello").await;
    assert_eq!(error_code(status, &body, StatusCode::SERVICE_UNAVAILABLE), "store_unavailable");
    for s in [&a, &b] {
        let (status, body) = s.get("/readyz").await;
        assert_eq!((status, body["status"].as_str()), (StatusCode::SERVICE_UNAVAILABLE, Some("database_unavailable")));
    }
    // The database accepts queries again when `start_pg` returns: the hosts are ready at once.
    e.start_pg().await;
    a.assert_ready().await;
    b.assert_ready().await;
    // Service resumes: B drives A's session again, and B starts the id that failed.
    let mut ws = b.ws("r", None).await;
    ws.hello().await;
    let (status, body) = submit(&b, "r", "s", "after the outage").await;
    assert_eq!(status, StatusCode::ACCEPTED, "{body}");
    ws.until_type("turn.completed").await;
    b.session("r", "during").await;
    let events = a.events("r").await;
    assert_eq!(events[..acknowledged.len()], acknowledged[..], "nothing acknowledged was lost");
    assert_gap_free(&events);
}

#[tokio::test]
async fn a_host_that_was_written_off_gives_its_sessions_up() {
    let Some(e) = engines().await else { return };
    let (a, b) = (host(&e, "a").await, host(&e, "b").await);
    a.session("r", "s").await;
    let mut ws = b.ws("r", None).await;
    ws.hello().await;
    // A freezes past its lease: B writes it off and takes the session over.
    a.signal(19); // SIGSTOP
    ws.until(|e| e["type"] == "session.updated" && e["payload"]["reason"] == "host_lost").await;
    a.signal(18); // SIGCONT
    // A's next renewal finds its lease gone: it stops its agents and forgets its sessions.
    wait_lease_lost(&a).await;
    // The session is B's alone: asked on A, A forwards to B.
    let (_, on_a) = a.get("/v1/rooms/r/sessions/s").await;
    let (_, on_b) = b.get("/v1/rooms/r/sessions/s").await;
    assert_eq!(on_a, on_b);
    assert_eq!(on_b["status"], "disconnected", "{on_b}");
    assert_eq!(metric(&a, r#"ensemble_sessions{status="disconnected"}"#).await, 0.0, "A holds nothing");
    // And it resumes on B when asked on A.
    let (status, body) = a.post_empty("/v1/rooms/r/sessions/s/resume").await;
    assert_eq!(status, StatusCode::OK, "{body}");
    assert_eq!(metric(&b, r#"ensemble_sessions{status="ready"}"#).await, 1.0);
}

#[tokio::test]
async fn a_host_that_cannot_renew_its_lease_stops_its_agents_before_the_lease_ends() {
    let Some(mut e) = engines().await else { return };
    let (a, b) = (host(&e, "a").await, host(&e, "b").await);
    a.session("r", "s").await;
    e.stop_pg().await;
    // Renewals fail: A gives its sessions up at its last attempt before the 2 s lease ends.
    wait_lease_lost(&a).await;
    assert_eq!(metric(&a, r#"ensemble_sessions{status="ready"}"#).await, 0.0, "A's agent is stopped");
    // The database accepts queries again when `start_pg` returns: the hosts are ready at once.
    e.start_pg().await;
    a.assert_ready().await;
    b.assert_ready().await;
    // Whoever claims it next reports the lost process once; it resumes.
    let mut ws = b.ws("r", Some(0)).await;
    ws.hello().await;
    ws.until(|e| e["type"] == "session.updated" && e["payload"]["reason"] == "host_lost").await;
    let (status, body) = b.post_empty("/v1/rooms/r/sessions/s/resume").await;
    assert_eq!(status, StatusCode::OK, "{body}");
    let log = b.events("r").await;
    assert_gap_free(&log);
    let lost = log.iter().filter(|e| e["type"] == "session.updated" && e["payload"]["reason"] == "host_lost").count();
    assert_eq!(lost, 1, "{log:?}");
}

/// Tokens live in PostgreSQL: one made on A works on B at once, a command sent to B for A's
/// session is forwarded with the caller's identity (A checks it again: the actor is the token's),
/// and a revocation on A closes the token's sockets on B within two seconds and stops its
/// forwarded commands.
#[tokio::test]
async fn tokens_and_revocations_reach_every_host() {
    use crate::roles::{As, make_token};
    let Some(e) = engines().await else { return };
    let (a, b) = (host(&e, "a").await, host(&e, "b").await);
    a.session("r", "s").await;
    let (id, secret) = make_token(&a, "ops-bot", "operator", &["r"]).await;
    let on_b = As { s: &b, token: secret.clone() };
    let (status, me) = on_b.get("/v1/me").await;
    assert_eq!((status, me["role"].as_str()), (StatusCode::OK, Some("operator")), "{me}");
    let mut ws = on_b.ws("r").await.expect("the token's socket on B");
    assert_eq!(ws.hello().await["role"], "operator");
    let (status, body) =
        on_b.post("/v1/rooms/r/sessions/s/turns", json!({"input": [{"type": "text", "text": "hi"}]})).await;
    assert_eq!(status, StatusCode::ACCEPTED, "{body}");
    let done = ws.until_type("turn.started").await;
    assert_eq!(
        done.last().unwrap()["actor"],
        json!({"tokenId": id, "name": "ops-bot"}),
        "the owner acted for the caller"
    );
    ws.until_type("turn.completed").await;
    // Too little role on B is refused on B, before anything is forwarded.
    let (status, body) = on_b.post("/v1/rooms/r/sessions/s/interactions/q", json!({"decision": "accept"})).await;
    assert_eq!(error_code(status, &body, StatusCode::FORBIDDEN), "forbidden");

    let at = std::time::Instant::now();
    let (status, _) = a.delete(&format!("/v1/tokens/{id}")).await;
    assert_eq!(status, StatusCode::OK);
    let closed = ws.frames_until(|f| f["type"] == "__close").await;
    assert_eq!(closed.last().unwrap()["code"], 4003);
    assert!(at.elapsed() < std::time::Duration::from_secs(2), "closed on B after {:?}", at.elapsed());
    let (status, _) =
        on_b.post("/v1/rooms/r/sessions/s/turns", json!({"input": [{"type": "text", "text": "hi"}]})).await;
    assert_eq!(status, StatusCode::UNAUTHORIZED);

    // The other way round, at once: a token made on B drives A's session in the same moment, its
    // announcement to A perhaps still on the way (A looks in the store for a token it does not know).
    let (id, secret) = make_token(&b, "quick-bot", "operator", &["r"]).await;
    let on_b = As { s: &b, token: secret };
    let (status, body) =
        on_b.post("/v1/rooms/r/sessions/s/turns", json!({"input": [{"type": "text", "text": "quick"}]})).await;
    assert_eq!(status, StatusCode::ACCEPTED, "{body}");
    let mut ws = a.ws("r", Some(0)).await;
    ws.hello().await;
    let started = ws.until(|e| e["type"] == "turn.started" && e["actor"]["tokenId"] == id.as_str()).await;
    assert_eq!(started.last().unwrap()["actor"]["name"], "quick-bot");
}
