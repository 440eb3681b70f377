//! Someone who reaches the NATS server between the hosts (issue 41): without its credentials they
//! are not let in; with them but without the cluster secret, nothing they publish is acted on — a
//! forged or replayed forwarded request runs nothing, a forged answer is 502, a forged room frame
//! reaches no client — and even a frame signed with the secret is dropped when the database does
//! not hold its seq.

use bytes::{BufMut, Bytes, BytesMut};
use futures::StreamExt;
use reqwest::StatusCode;
use serde_json::{Value, json};

use crate::cluster::{CLUSTER_SECRET, Engines, engines, host, host_with};
use crate::common::*;
use ensemble_server::cluster::auth::ClusterKeys;
use ensemble_server::cluster::{frame_headers, room_subject};
use ensemble_test_engines::NATS_USER;

/// A client of the hosts' NATS server with its credentials (what a leaked password gives).
async fn intruder(e: &Engines) -> async_nats::Client {
    let nats = e.nats.as_ref().unwrap();
    async_nats::ConnectOptions::with_user_and_password(NATS_USER.into(), nats.password().into())
        .connect(&e.nats_url)
        .await
        .unwrap()
}

/// Sends a request as NATS carries forwarded ones and returns the answer.
async fn publish_request(
    nats: &async_nats::Client,
    host: &str,
    headers: async_nats::HeaderMap,
    body: Value,
) -> async_nats::Message {
    let payload = Bytes::from(serde_json::to_vec(&body).unwrap());
    let request = async_nats::Request::new().headers(headers).payload(payload).timeout(Some(WAIT));
    nats.send_request(format!("ensemble.host.{host}.http"), request).await.unwrap()
}

fn header<'a>(msg: &'a async_nats::Message, name: &str) -> Option<&'a str> {
    msg.headers.as_ref().and_then(|h| h.get(name)).map(|v| v.as_str())
}

/// The headers of a forwarded `method uri` with a JSON body, as a host without the secret could
/// make them.
fn forged(method: &str, uri: &str, extra: &[(&str, &str)]) -> async_nats::HeaderMap {
    let mut h = async_nats::HeaderMap::new();
    h.insert("Ensemble-Method", method);
    h.insert("Ensemble-Uri", uri);
    h.insert("Ensemble-From", "b");
    h.insert("Content-Type", "application/json");
    for (k, v) in extra {
        h.insert(*k, *v);
    }
    h
}

/// Asserts the answer is the owner's refusal for `reason` (401, or 503 for a full cache).
fn assert_refused(answer: &async_nats::Message, reason: &str) {
    assert_eq!(header(answer, "Ensemble-Refused"), Some(reason), "{:?}", answer.headers);
    assert_eq!(header(answer, "Ensemble-Status"), Some("401"));
    assert!(header(answer, "Ensemble-Mac").is_none(), "a refusal is not authenticated");
    let body: Value = serde_json::from_slice(&answer.payload).unwrap();
    assert_eq!(body["error"]["code"], "cluster_unauthenticated", "{body}");
}

fn refused(reason: &str) -> String {
    format!("ensemble_cluster_forward_refused_total{{reason=\"{reason}\"}}")
}

#[tokio::test]
async fn nats_admits_only_clients_with_credentials_and_hosts_need_the_cluster_secret() {
    let Some(e) = engines().await else { return };
    // The test nats-server runs with authorization, as a deployment's must.
    let anonymous = async_nats::ConnectOptions::new().connect(&e.nats_url).await;
    assert!(anonymous.is_err(), "an anonymous client connected");
    let wrong =
        async_nats::ConnectOptions::with_user_and_password(NATS_USER.into(), "wrong".into()).connect(&e.nats_url).await;
    assert!(wrong.is_err(), "a wrong password connected");
    intruder(&e).await;
    // A host without --cluster-secret-file, or with a short one, does not start.
    let tmp = tempfile::tempdir().unwrap();
    let data = tmp.path().join("data");
    let base = ["--data-dir", data.to_str().unwrap(), "--database-url", &e.url, "--nats-url", &e.nats_url];
    let out = run_to_exit(&[&base[..], &["--nats-credentials", &e.credentials]].concat()).await;
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(1), "{stderr}");
    assert!(stderr.contains("--nats-url needs --cluster-secret-file"), "{stderr}");
    let short = tmp.path().join("short");
    write_private(&short, "too short\n");
    let out = run_to_exit(&[&base[..], &["--cluster-secret-file", short.to_str().unwrap()]].concat()).await;
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(1), "{stderr}");
    assert!(stderr.contains("at least 32 are required"), "{stderr}");
    // A credentials file others may read is refused like a token file.
    let shared = tmp.path().join("shared");
    std::fs::write(&shared, format!("user={NATS_USER}\npassword=x\n")).unwrap();
    use std::os::unix::fs::PermissionsExt;
    std::fs::set_permissions(&shared, std::fs::Permissions::from_mode(0o644)).unwrap();
    let flags = ["--cluster-secret-file", &e.secret_file, "--nats-credentials", shared.to_str().unwrap()];
    let out = run_to_exit(&[&base[..], &flags].concat()).await;
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(1), "{stderr}");
    assert!(stderr.contains("--nats-credentials file") && stderr.contains("chmod 600"), "{stderr}");
}

#[tokio::test]
async fn a_forged_forwarded_request_runs_nothing() {
    let Some(e) = engines().await else { return };
    let (a, _b) = (host(&e, "a").await, host(&e, "b").await);
    a.session("r", "s").await;
    let nats = intruder(&e).await;
    // Without a MAC: a session start, and a turn on A's session.
    let answer =
        publish_request(&nats, "a", forged("POST", "/v1/rooms/r/sessions", &[]), json!({"sessionId": "forged"})).await;
    assert_refused(&answer, "unauthenticated");
    let turn = json!({"input": [{"type": "text", "text": "forged"}]});
    let answer = publish_request(&nats, "a", forged("POST", "/v1/rooms/r/sessions/s/turns", &[]), turn.clone()).await;
    assert_refused(&answer, "unauthenticated");
    // With a made-up MAC, fresh timestamp and nonce.
    let now = std::time::SystemTime::now().duration_since(std::time::UNIX_EPOCH).unwrap().as_millis().to_string();
    let guess = [
        ("Ensemble-Timestamp", now.as_str()),
        ("Ensemble-Nonce", "0123456789abcdef0123456789abcdef"),
        ("Ensemble-Mac", &"ab".repeat(32)),
    ];
    let answer = publish_request(&nats, "a", forged("POST", "/v1/rooms/r/sessions/s/turns", &guess), turn).await;
    assert_refused(&answer, "bad_mac");
    // Nothing happened: no session, no turn; A counted each refusal.
    let (status, body) = a.get("/v1/rooms/r/sessions/forged").await;
    assert_eq!(status, StatusCode::NOT_FOUND, "{body}");
    assert!(a.events("r").await.iter().all(|e| e["type"] != "turn.started"), "a forged turn ran");
    assert_eq!(metric(&a, &refused("unauthenticated")).await, 2.0);
    assert_eq!(metric(&a, &refused("bad_mac")).await, 1.0);
    assert!(a.log().contains("refused a forwarded request"), "a warning says so");
}

#[tokio::test]
async fn a_captured_forwarded_request_replayed_is_refused() {
    let Some(e) = engines().await else { return };
    let (a, b) = (host(&e, "a").await, host(&e, "b").await);
    a.session("r", "s").await;
    let mut ws = a.ws("r", None).await;
    ws.hello().await;
    let nats = intruder(&e).await;
    let mut wiretap = nats.subscribe("ensemble.host.a.http").await.unwrap();
    nats.flush().await.unwrap();
    // A genuine turn, submitted on B and forwarded to A: the wiretap gets a copy.
    let (status, body) =
        b.post("/v1/rooms/r/sessions/s/turns", json!({"input": [{"type": "text", "text": "once"}]})).await;
    assert_eq!(status, StatusCode::ACCEPTED, "{body}");
    ws.until_type("turn.completed").await;
    let captured = loop {
        let msg = tokio::time::timeout(WAIT, wiretap.next()).await.expect("a forwarded request").unwrap();
        if header(&msg, "Ensemble-Uri") == Some("/v1/rooms/r/sessions/s/turns") {
            break msg;
        }
    };
    let headers = captured.headers.clone().unwrap();
    assert!(header(&captured, "Ensemble-Mac").is_some() && header(&captured, "Ensemble-Nonce").is_some());
    // The caller's identity travels under the MAC: a copy claiming another token is a forgery.
    let body: Value = serde_json::from_slice(&captured.payload).unwrap();
    assert_eq!(header(&captured, "Ensemble-Token-Id"), Some("admin"));
    let mut swapped = headers.clone();
    swapped.insert("Ensemble-Token-Id", "tok_someone_else");
    let answer = publish_request(&nats, "a", swapped, body.clone()).await;
    assert_refused(&answer, "bad_mac");
    // Sent again as it was: refused as a replay. Sent to B instead: its MAC names A.
    let answer = publish_request(&nats, "a", headers.clone(), body.clone()).await;
    assert_refused(&answer, "replayed");
    let answer = publish_request(&nats, "b", headers, body).await;
    assert_refused(&answer, "bad_mac");
    assert_eq!(metric(&a, &refused("replayed")).await, 1.0);
    assert_eq!(metric(&a, &refused("bad_mac")).await, 1.0);
    assert_eq!(metric(&b, &refused("bad_mac")).await, 1.0);
    // One turn ran, not two.
    let started = a.events("r").await.iter().filter(|e| e["type"] == "turn.started").count();
    assert_eq!(started, 1);
}

#[tokio::test]
async fn a_forged_answer_to_a_forwarded_request_is_502() {
    let Some(e) = engines().await else { return };
    // Leases longer than the test: A stays the owner while it is frozen.
    let (a, b) = (host_with(&e, "a", "30", &[]).await, host_with(&e, "b", "30", &[]).await);
    a.session("r", "s").await;
    let nats = intruder(&e).await;
    let mut requests = nats.subscribe("ensemble.host.a.http").await.unwrap();
    nats.flush().await.unwrap();
    // A is frozen; the intruder answers in its place, with whatever it likes.
    a.signal(19); // SIGSTOP
    let answering = nats.clone();
    let impostor = tokio::spawn(async move {
        while let Some(msg) = requests.next().await {
            let mut h = async_nats::HeaderMap::new();
            h.insert("Ensemble-Status", "200");
            h.insert("Content-Type", "application/json");
            h.insert("Ensemble-Mac", "ab".repeat(32).as_str());
            let body = Bytes::from_static(br#"{"sessionId":"s","forged":true}"#);
            answering.publish_with_headers(msg.reply.unwrap(), h, body).await.unwrap();
        }
    });
    let (status, body) = b.get("/v1/rooms/r/sessions/s").await;
    a.signal(18); // SIGCONT
    impostor.abort();
    assert_eq!(error_code(status, &body, StatusCode::BAD_GATEWAY), "forward_unauthenticated", "{body}");
    let counted = metric(&b, r#"ensemble_cluster_forwarded_total{outcome="unauthenticated_answer"}"#).await;
    assert_eq!(counted, 1.0);
}

/// A room frame message: `[kind][seq][frame]`.
fn frame(kind: u8, seq: u64, frame: &Value) -> Bytes {
    let mut p = BytesMut::new();
    p.put_u8(kind);
    p.put_u64(seq);
    p.put_slice(&serde_json::to_vec(frame).unwrap());
    p.freeze()
}

#[tokio::test]
async fn forged_room_frames_reach_no_client() {
    let Some(e) = engines().await else { return };
    let (a, b) = (host(&e, "a").await, host(&e, "b").await);
    a.session("r", "s").await;
    let mut ws = b.ws("r", None).await;
    let head = ws.hello().await["headSeq"].as_u64().unwrap();
    let nats = intruder(&e).await;
    let subject = room_subject("r");
    let event =
        |seq: u64| json!({"type": "event", "event": {"seq": seq, "roomId": "r", "sessionId": "s", "type": "forged"}});
    let side = json!({"type": "side_event", "event": {"seq": 1, "roomId": "r", "sessionId": "x", "type": "forged"}});
    // Without a MAC: the next seq, a seq far ahead (which made every client resync), a side frame.
    for payload in
        [frame(b'e', head + 1, &event(head + 1)), frame(b'e', 1 << 62, &event(1 << 62)), frame(b's', 0, &side)]
    {
        nats.publish(subject.clone(), payload).await.unwrap();
    }
    // Signed with another secret.
    let stranger = ClusterKeys::from_secret(b"not-the-cluster-secret-0123456789abcdef");
    let payload = frame(b'e', head + 1, &event(head + 1));
    nats.publish_with_headers(subject.clone(), frame_headers(&stranger, &subject, &payload), payload).await.unwrap();
    // Signed with the cluster secret itself (a host with a bug, a stolen secret): the seqs are not
    // in the database, so they are dropped all the same.
    let keys = ClusterKeys::from_secret(CLUSTER_SECRET.as_bytes());
    for seq in [head + 1, 1 << 62] {
        let payload = frame(b'e', seq, &event(seq));
        nats.publish_with_headers(subject.clone(), frame_headers(&keys, &subject, &payload), payload).await.unwrap();
    }
    // Processed by the NATS server before A publishes anything it commits from here on.
    nats.flush().await.unwrap();
    // The marker: a genuine turn on A. B's socket gets it, and nothing forged before it.
    let turn = a.turn("r", "s", "hello").await;
    let frames = ws.frames_until(|f| f["type"] == "event" && f["event"]["type"] == "turn.completed").await;
    for f in &frames {
        assert_ne!(f["type"], "resync", "{frames:?}");
        assert_ne!(f["event"]["type"], "forged", "a forged frame reached the client: {frames:?}");
    }
    let first = frames.iter().find(|f| f["type"] == "event").unwrap();
    assert_eq!(first["event"]["seq"].as_u64(), Some(head + 1), "{frames:?}");
    assert!(frames.iter().any(|f| f["event"]["turnId"] == turn.as_str()));
    let reason = |r: &str| format!("ensemble_cluster_frames_refused_total{{reason=\"{r}\"}}");
    assert_eq!(metric(&b, &reason("unauthenticated")).await, 3.0);
    assert_eq!(metric(&b, &reason("bad_mac")).await, 1.0);
    assert_eq!(metric(&b, &reason("seq_beyond_head")).await, 2.0);
    // The socket is still open and live.
    let (status, body) =
        a.post("/v1/rooms/r/sessions/s/turns", json!({"input": [{"type": "text", "text": "again"}]})).await;
    assert_eq!(status, StatusCode::ACCEPTED, "{body}");
    ws.until_type("turn.completed").await;
}

/// A forwarded request signed with the cluster secret, for `token_id`.
fn signed(method: &str, uri: &str, token_id: &str, body: &Value) -> async_nats::HeaderMap {
    use ensemble_server::cluster::auth::{self, Purpose};
    let keys = ClusterKeys::from_secret(CLUSTER_SECRET.as_bytes());
    let (timestamp, nonce) = (auth::now_ms().to_string(), auth::nonce());
    let payload = serde_json::to_vec(body).unwrap();
    let ct = auth::optional(Some("application/json"));
    let fields: [&[u8]; 9] = [
        method.as_bytes(),
        uri.as_bytes(),
        b"b",
        b"a",
        token_id.as_bytes(),
        &ct,
        timestamp.as_bytes(),
        nonce.as_bytes(),
        &payload,
    ];
    let mac = keys.sign(Purpose::Request, &fields);
    let extra = [
        ("Ensemble-Token-Id", token_id),
        ("Ensemble-Timestamp", timestamp.as_str()),
        ("Ensemble-Nonce", nonce.as_str()),
        ("Ensemble-Mac", mac.as_str()),
    ];
    forged(method, uri, &extra)
}

#[tokio::test]
async fn the_owner_checks_the_callers_token_again_on_a_signed_forward() {
    // Even a request signed with the cluster secret acts only as the token it names, as the
    // owner knows that token now: unknown, revoked or too weak, it runs nothing.
    let Some(e) = engines().await else { return };
    let (a, _b) = (host(&e, "a").await, host(&e, "b").await);
    a.session("r", "s").await;
    let (viewer, _) = crate::roles::make_token(&a, "looker", "viewer", &["*"]).await;
    let (revoked, _) = crate::roles::make_token(&a, "gone", "operator", &["*"]).await;
    let (status, _) = a.delete(&format!("/v1/tokens/{revoked}")).await;
    assert_eq!(status, StatusCode::OK);
    let (elsewhere, _) = crate::roles::make_token(&a, "other-room", "operator", &["other"]).await;
    let nats = intruder(&e).await;
    let turn = json!({"input": [{"type": "text", "text": "forwarded"}]});
    let uri = "/v1/rooms/r/sessions/s/turns";
    for (token, status) in
        [("tok_unknown", "401"), (revoked.as_str(), "401"), (viewer.as_str(), "403"), (elsewhere.as_str(), "404")]
    {
        let answer = publish_request(&nats, "a", signed("POST", uri, token, &turn), turn.clone()).await;
        assert_eq!(header(&answer, "Ensemble-Status"), Some(status), "{token}: {:?}", answer.headers);
        assert!(header(&answer, "Ensemble-Refused").is_none(), "authentic, then refused by the token check");
    }
    assert!(a.events("r").await.iter().all(|e| e["type"] != "turn.started"), "a refused forward ran a turn");
    // The same request for a token that may: runs.
    let (operator, _) = crate::roles::make_token(&a, "driver", "operator", &["r"]).await;
    let answer = publish_request(&nats, "a", signed("POST", uri, &operator, &turn), turn.clone()).await;
    assert_eq!(header(&answer, "Ensemble-Status"), Some("202"), "{:?}", answer.headers);
}
