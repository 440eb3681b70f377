//! Who may do what: every operation of the OpenAPI document against every role, managed tokens
//! made, listed, used, expired and revoked (their WebSockets closed), room scopes without an
//! existence oracle, the actor on events, the audit trail, bad tokens, the token limit and the
//! `ensemble token` commands.

use std::time::{Duration, Instant};

use reqwest::StatusCode;
use serde_json::{Value, json};
use tokio_tungstenite::tungstenite::client::IntoClientRequest;

use crate::common::*;

/// Requests with one token.
pub(crate) struct As<'a> {
    pub s: &'a Server,
    pub token: String,
}

impl As<'_> {
    pub async fn call(&self, method: reqwest::Method, path: &str, body: Option<Value>) -> (StatusCode, Value) {
        let mut req = self.s.http().request(method, self.s.url(path)).bearer_auth(&self.token);
        if let Some(b) = body {
            req = req.json(&b);
        }
        let res = req.send().await.expect("request");
        let status = res.status();
        let text = res.text().await.unwrap_or_default();
        (status, serde_json::from_str(&text).unwrap_or(Value::String(text)))
    }
    pub async fn get(&self, path: &str) -> (StatusCode, Value) {
        self.call(reqwest::Method::GET, path, None).await
    }
    pub async fn post(&self, path: &str, body: Value) -> (StatusCode, Value) {
        self.call(reqwest::Method::POST, path, Some(body)).await
    }
    pub async fn delete(&self, path: &str) -> (StatusCode, Value) {
        self.call(reqwest::Method::DELETE, path, None).await
    }

    /// The room WebSocket opened with this token; `Err` with the upgrade's status when refused.
    pub async fn ws(&self, room: &str) -> Result<Ws, StatusCode> {
        let mut req = format!("ws://{}/v1/rooms/{room}/ws", self.s.addr).into_client_request().expect("request");
        req.headers_mut().insert("authorization", format!("Bearer {}", self.token).parse().expect("header"));
        match tokio::time::timeout(WAIT, tokio_tungstenite::connect_async(req)).await.expect("ws connect in time") {
            Ok((stream, _)) => Ok(Ws { stream }),
            Err(tokio_tungstenite::tungstenite::Error::Http(res)) => Err(res.status()),
            Err(e) => panic!("ws: {e}"),
        }
    }
}

/// Makes a token with the harness's admin token; returns (id, secret).
pub(crate) async fn make_token(s: &Server, name: &str, role: &str, rooms: &[&str]) -> (String, String) {
    let (status, body) = s.post("/v1/tokens", json!({"name": name, "role": role, "rooms": rooms})).await;
    assert_eq!(status, StatusCode::CREATED, "{body}");
    (body["token"]["id"].as_str().unwrap().to_owned(), body["secret"].as_str().unwrap().to_owned())
}

const ROLES: [&str; 4] = ["viewer", "operator", "approver", "admin"];

fn rank(role: &str) -> usize {
    ROLES.iter().position(|r| *r == role).unwrap_or_else(|| panic!("unknown role {role}"))
}

/// Every operation of the served document, as (method, path template, the role it says it needs).
async fn operations(s: &Server) -> Vec<(String, String, Option<String>, bool)> {
    let (status, doc) = s.get("/openapi.json").await;
    assert_eq!(status, StatusCode::OK);
    let mut out = Vec::new();
    for (path, item) in doc["paths"].as_object().unwrap() {
        for (method, op) in item.as_object().unwrap() {
            let public = op["security"].as_array().is_some_and(|s| s.iter().any(|r| r == &json!({})));
            if public {
                continue;
            }
            let role = op["x-ensemble-access"]["role"].as_str().map(str::to_owned);
            let all_rooms = op["x-ensemble-access"]["allRooms"] == true;
            out.push((method.to_uppercase(), path.clone(), role, all_rooms));
        }
    }
    out
}

fn concrete(path: &str, room: &str) -> String {
    path.replace("{roomId}", room).replace("{sessionId}", "s").replace("{requestId}", "q").replace("{tokenId}", "tok_x")
}

/// Every operation that needs a token declares a role, and is refused (403 `forbidden`, naming
/// it) to every role below it and never refused for the role to the ones at or above it; a room
/// outside a token's rooms is 404 `room_not_found` on every operation that names a room.
#[tokio::test]
async fn every_operation_needs_exactly_the_role_it_declares() {
    let s = Server::start(&[]).await;
    s.session("r", "s").await;
    let mut by_role = Vec::new();
    for role in ROLES {
        let (_, secret) = make_token(&s, &format!("{role}-bot"), role, &["*"]).await;
        by_role.push((role, As { s: &s, token: secret }));
    }
    let (_, elsewhere) = make_token(&s, "elsewhere", "admin", &["other"]).await;
    let elsewhere = As { s: &s, token: elsewhere };
    let ops = operations(&s).await;
    assert!(ops.len() >= 40, "{}", ops.len());
    let mut undeclared = Vec::new();
    for (method, path, need, all_rooms) in &ops {
        let Some(need) = need else {
            undeclared.push(format!("{method} {path}"));
            continue;
        };
        let m = reqwest::Method::from_bytes(method.as_bytes()).unwrap();
        let body = (!matches!(method.as_str(), "GET" | "DELETE")).then(|| json!({}));
        let url = concrete(path, "r");
        for (role, who) in &by_role {
            let (status, res) = who.call(m.clone(), &url, body.clone()).await;
            let refused = status == StatusCode::FORBIDDEN && res["error"]["code"] == "forbidden";
            if rank(role) < rank(need) {
                assert!(refused, "{method} {path} as {role} (needs {need}): {status} {res}");
                assert_eq!(res["error"]["details"]["requiredRole"], need.as_str(), "{method} {path}: {res}");
            } else {
                assert!(!refused && status != StatusCode::UNAUTHORIZED, "{method} {path} as {role}: {status} {res}");
            }
        }
        if path.contains("{roomId}") {
            let (status, res) = elsewhere.call(m.clone(), &url, body.clone()).await;
            assert_eq!(
                (status, res["error"]["code"].as_str()),
                (StatusCode::NOT_FOUND, Some("room_not_found")),
                "{method} {path}"
            );
        } else if *all_rooms {
            let (status, _) = elsewhere.call(m.clone(), &url, body.clone()).await;
            assert_eq!(status, StatusCode::FORBIDDEN, "{method} {path} needs a token for every room");
        }
    }
    assert!(undeclared.is_empty(), "operations without a declared role: {undeclared:?}");
}

#[tokio::test]
async fn the_declared_roles_follow_the_policy() {
    // The walk above proves the server enforces what the document declares; both come from one
    // table, so this checks the table itself against the rules the roles are defined by.
    let s = Server::start(&[]).await;
    let (_, doc) = s.get("/openapi.json").await;
    let mut wrong = Vec::new();
    for (method, path, need, _) in operations(&s).await {
        let need = need.unwrap_or_else(|| panic!("{method} {path} declares no role"));
        // Webhooks send every room's events out: admin (of every room, checked in the walk).
        let admin_only = path.starts_with("/v1/tokens")
            || path == "/v1/audit"
            || path.starts_with("/v1/test/")
            || path.starts_with("/v1/webhooks");
        let expected = if admin_only {
            "admin"
        } else if path == "/v1/providers/{providerId}/sessions" {
            // Starts an agent to ask it: as much as a start.
            "operator"
        } else if method == "POST" && path.ends_with("/interactions/{requestId}") {
            "approver"
        } else if method == "GET" {
            "viewer"
        } else {
            "operator"
        };
        if need != expected {
            wrong.push(format!("{method} {path}: declares {need}, the policy says {expected}"));
        }
        // The same role, as the operation's security requirement.
        let security = &doc["paths"][&path][method.to_lowercase()]["security"];
        if *security != json!([{ "bearer": [need] }]) {
            wrong.push(format!("{method} {path}: security {security}"));
        }
    }
    assert!(wrong.is_empty(), "{wrong:#?}");
}

#[tokio::test]
async fn a_managed_token_is_made_listed_used_and_revoked_and_its_socket_closes() {
    let data = tempfile::tempdir().unwrap();
    let s = Server::start_in(data.path(), &[]).await;
    s.session("demo", "s").await;
    let (status, made) = s
        .post("/v1/tokens", json!({"name": "wall screen", "role": "viewer", "rooms": ["demo"], "ttlSecs": 3600}))
        .await;
    assert_eq!(status, StatusCode::CREATED, "{made}");
    let secret = made["secret"].as_str().unwrap().to_owned();
    assert!(secret.starts_with("ens_") && secret.len() >= 68, "{secret}");
    let id = made["token"]["id"].as_str().unwrap().to_owned();
    assert_eq!(made["token"]["createdBy"], "admin");
    assert_eq!(made["token"]["rooms"], json!(["demo"]));
    assert_eq!(made["token"]["active"], true);
    assert!(made["token"]["expiresAtMs"].as_i64().unwrap() > made["token"]["createdAtMs"].as_i64().unwrap());
    let viewer = As { s: &s, token: secret.clone() };

    let (status, me) = viewer.get("/v1/me").await;
    assert_eq!(status, StatusCode::OK);
    assert_eq!(
        (me["role"].as_str(), me["name"].as_str(), &me["rooms"]),
        (Some("viewer"), Some("wall screen"), &json!(["demo"]))
    );
    let (status, _) = viewer.get("/v1/rooms/demo/sessions").await;
    assert_eq!(status, StatusCode::OK);
    let (status, body) =
        viewer.post("/v1/rooms/demo/sessions/s/turns", json!({"input": [{"type": "text", "text": "hi"}]})).await;
    assert_eq!(error_code(status, &body, StatusCode::FORBIDDEN), "forbidden");
    assert_eq!(body["error"]["details"], json!({"requiredRole": "operator", "role": "viewer"}));
    let (status, body) = viewer.get("/v1/tokens").await;
    assert_eq!(error_code(status, &body, StatusCode::FORBIDDEN), "forbidden");

    // Its socket says the role and follows the room.
    let mut ws = viewer.ws("demo").await.expect("the viewer's socket");
    assert_eq!(ws.hello().await["role"], "viewer");
    let mut admin_ws = s.ws("demo", None).await;
    assert_eq!(admin_ws.hello().await["role"], "admin");
    s.turn("demo", "s", "hello").await;
    ws.until_type("turn.completed").await;

    // Listed without its secret, with its last use.
    s.post("/v1/tokens", json!({"name": "other", "role": "operator", "rooms": ["*"]})).await;
    let (_, list) = s.get("/v1/tokens").await;
    let text = list.to_string();
    assert!(!text.contains(&secret) && !text.contains("secretHash") && !text.contains("secret"), "{text}");
    let listed = list["data"].as_array().unwrap().iter().find(|t| t["id"] == id.as_str()).unwrap().clone();
    assert!(listed["lastUsedAtMs"].is_i64(), "{listed}");
    assert_eq!(list["data"][1]["name"], "other", "oldest first: {list}");

    // Revoked: the socket closes with 4003 within a second, and the token is refused.
    let at = Instant::now();
    let (status, revoked) = s.delete(&format!("/v1/tokens/{id}")).await;
    assert_eq!(status, StatusCode::OK, "{revoked}");
    assert!(revoked["revokedAtMs"].is_i64() && revoked["active"] == false, "{revoked}");
    let closed = ws.frames_until(|f| f["type"] == "__close").await;
    assert_eq!(closed.last().unwrap()["code"], 4003);
    assert!(at.elapsed() < Duration::from_secs(1), "closed after {:?}", at.elapsed());
    let (status, body) = viewer.get("/v1/rooms/demo/sessions").await;
    assert_eq!(error_code(status, &body, StatusCode::UNAUTHORIZED), "unauthorized");
    assert_eq!(viewer.ws("demo").await.err(), Some(StatusCode::UNAUTHORIZED));
    let (status, body) = s.delete(&format!("/v1/tokens/{id}")).await;
    assert_eq!(status, StatusCode::OK, "revoking twice is harmless: {body}");
    let (status, body) = s.delete("/v1/tokens/tok_nope").await;
    assert_eq!(error_code(status, &body, StatusCode::NOT_FOUND), "token_not_found");
    // The admin's socket is untouched.
    s.turn("demo", "s", "still here").await;
    admin_ws.until_type("turn.completed").await;

    // Kept across a restart: still revoked, the other still valid.
    s.stop().await;
    let s = Server::start_in(data.path(), &[]).await;
    assert_eq!(As { s: &s, token: secret.clone() }.get("/v1/me").await.0, StatusCode::UNAUTHORIZED);
    let (_, list) = s.get("/v1/tokens").await;
    assert_eq!(list["data"].as_array().unwrap().len(), 2, "{list}");
    // The secret was never logged, nor put in an event or the audit.
    let (_, audit) = s.get("/v1/audit?limit=1000").await;
    let events = s.events("demo").await;
    for (what, text) in
        [("log", s.log()), ("audit", audit.to_string()), ("events", serde_json::to_string(&events).unwrap())]
    {
        assert!(!text.contains(&secret), "the secret is in the {what}");
        assert!(!text.contains(&secret[4..20]), "part of the secret is in the {what}");
    }
}

#[tokio::test]
async fn a_room_scoped_token_sees_only_its_rooms_and_learns_nothing_of_others() {
    let s = Server::start(&[]).await;
    s.session("a", "s").await;
    s.session("b", "s").await;
    let (_, secret) = make_token(&s, "scoped", "operator", &["a"]).await;
    let t = As { s: &s, token: secret };
    let (status, rooms) = t.get("/v1/rooms").await;
    assert_eq!(status, StatusCode::OK);
    let ids: Vec<&str> = rooms["data"].as_array().unwrap().iter().map(|r| r["roomId"].as_str().unwrap()).collect();
    assert_eq!(ids, ["a"], "{rooms}");
    // A room that exists and one that does not answer alike.
    let existing = t.get("/v1/rooms/b/sessions/s").await;
    let missing = t.get("/v1/rooms/nowhere/sessions/s").await;
    assert_eq!(existing.0, StatusCode::NOT_FOUND);
    assert_eq!(existing.1["error"]["code"], "room_not_found");
    assert_eq!(
        existing.1["error"]["message"].as_str().map(|m| m.replace("`b`", "`X`")),
        missing.1["error"]["message"].as_str().map(|m| m.replace("`nowhere`", "`X`"))
    );
    let (status, body) = t.post("/v1/rooms/b/sessions", json!({"sessionId": "x"})).await;
    assert_eq!(error_code(status, &body, StatusCode::NOT_FOUND), "room_not_found");
    assert_eq!(t.ws("b").await.err(), Some(StatusCode::NOT_FOUND));
    let (status, body) = t.get("/metrics").await;
    assert_eq!(error_code(status, &body, StatusCode::FORBIDDEN), "forbidden");
    // Its own room works in full.
    let (status, body) = t.post("/v1/rooms/a/sessions", json!({"sessionId": "mine"})).await;
    assert_eq!(status, StatusCode::CREATED, "{body}");
    // An admin of one room cannot make a token for another, nor for every room.
    let (_, room_admin) = make_token(&s, "room admin", "admin", &["a"]).await;
    let ra = As { s: &s, token: room_admin };
    for rooms in [json!(["b"]), json!(["*"]), json!(["a", "b"])] {
        let (status, body) = ra.post("/v1/tokens", json!({"name": "n", "role": "viewer", "rooms": rooms})).await;
        assert_eq!(error_code(status, &body, StatusCode::FORBIDDEN), "forbidden", "{rooms}");
    }
    let (status, body) = ra.post("/v1/tokens", json!({"name": "n", "role": "viewer", "rooms": ["a"]})).await;
    assert_eq!(status, StatusCode::CREATED, "{body}");
}

/// What a request caused carries who made it; agent output does not. The audit trail lists the
/// mutating requests, refused ones too, and pages.
#[tokio::test]
async fn who_did_it_is_on_the_events_and_in_the_audit() {
    let s = Server::start(&[]).await;
    let (bot_id, bot) = make_token(&s, "ci-bot", "approver", &["r"]).await;
    let bot = As { s: &s, token: bot };
    let mut ws = s.ws("r", None).await;
    ws.hello().await;
    let (status, body) = bot.post("/v1/rooms/r/sessions", json!({"sessionId": "s"})).await;
    assert_eq!(status, StatusCode::CREATED, "{body}");
    let (status, body) =
        bot.post("/v1/rooms/r/sessions/s/turns", json!({"input": [{"type": "text", "text": "/run make"}]})).await;
    assert_eq!(status, StatusCode::ACCEPTED, "{body}");
    let asked = ws.until_type("interaction.requested").await;
    let request = asked.last().unwrap()["payload"]["requestId"].as_str().unwrap().to_owned();
    let (status, body) =
        bot.post(&format!("/v1/rooms/r/sessions/s/interactions/{request}"), json!({"decision": "accept"})).await;
    assert!(status.is_success(), "{body}");
    ws.until_type("turn.completed").await;
    let (status, _) = bot.delete("/v1/rooms/r/sessions/s").await;
    assert!(status.is_success());
    ws.until_type("session.completed").await;
    let who = json!({"tokenId": bot_id, "name": "ci-bot"});
    let events = s.events("r").await;
    let actor_of = |ty: &str| events.iter().find(|e| e["type"] == ty).map(|e| e["actor"].clone()).unwrap_or_default();
    for ty in ["session.started", "turn.started", "interaction.resolved", "session.completed"] {
        assert_eq!(actor_of(ty), who, "{ty}");
    }
    for e in events
        .iter()
        .filter(|e| matches!(e["type"].as_str(), Some("message.delta" | "call.started" | "turn.completed")))
    {
        assert!(e.get("actor").is_none(), "agent output carries no actor: {e}");
    }
    // Refused requests are audited too: too little role, and no valid token.
    let (_, viewer) = make_token(&s, "looker", "viewer", &["r"]).await;
    let (status, _) = As { s: &s, token: viewer }.post("/v1/rooms/r/sessions", json!({})).await;
    assert_eq!(status, StatusCode::FORBIDDEN);
    let (status, _) =
        As { s: &s, token: "ens_not-a-token-at-all".into() }.post("/v1/rooms/r/sessions", json!({})).await;
    assert_eq!(status, StatusCode::UNAUTHORIZED);
    // The writer batches: wait for the last record.
    let entries = wait_audit(&s, |d| d.iter().any(|e| e["status"] == 401)).await;
    let mine: Vec<(&str, &str, u64)> = entries
        .iter()
        .filter(|e| e["actor"] == "ci-bot")
        .map(|e| (e["method"].as_str().unwrap(), e["route"].as_str().unwrap(), e["status"].as_u64().unwrap()))
        .collect();
    assert_eq!(
        mine,
        [
            ("POST", "/v1/rooms/{roomId}/sessions", 201),
            ("POST", "/v1/rooms/{roomId}/sessions/{sessionId}/turns", 202),
            ("POST", "/v1/rooms/{roomId}/sessions/{sessionId}/interactions/{requestId}", 200),
            ("DELETE", "/v1/rooms/{roomId}/sessions/{sessionId}", mine[3].2),
        ]
    );
    let turn = entries.iter().find(|e| e["route"].as_str().is_some_and(|r| r.ends_with("/turns"))).unwrap();
    assert_eq!(
        (turn["roomId"].as_str(), turn["sessionId"].as_str(), turn["tokenId"].as_str()),
        (Some("r"), Some("s"), Some(bot_id.as_str()))
    );
    let refused = entries.iter().find(|e| e["actor"] == "looker").unwrap();
    assert_eq!((refused["status"].as_u64(), refused["code"].as_str()), (Some(403), Some("forbidden")), "{refused}");
    let anonymous = entries.iter().find(|e| e["status"] == 401).unwrap();
    assert!(anonymous.get("tokenId").is_none() && anonymous["code"] == "unauthorized", "{anonymous}");
    // Paged by seq.
    let (_, first) = s.get("/v1/audit?limit=2").await;
    assert_eq!(first["data"].as_array().unwrap().len(), 2);
    let next = first["next"].as_u64().unwrap();
    let (_, rest) = s.get(&format!("/v1/audit?after={next}&limit=1000")).await;
    let seqs: Vec<u64> = first["data"]
        .as_array()
        .unwrap()
        .iter()
        .chain(rest["data"].as_array().unwrap())
        .map(|e| e["seq"].as_u64().unwrap())
        .collect();
    assert_eq!(seqs, (1..=seqs.len() as u64).collect::<Vec<_>>());
    assert!(rest.get("next").is_none(), "{rest}");
    let (status, body) = s.get("/v1/audit?limit=0").await;
    assert_eq!(error_code(status, &body, StatusCode::BAD_REQUEST), "invalid_query");
}

/// Reads the audit trail until `done` holds for it (records are written in batches).
pub(crate) async fn wait_audit(s: &Server, done: impl Fn(&[Value]) -> bool) -> Vec<Value> {
    let deadline = Instant::now() + WAIT;
    loop {
        let (_, page) = s.get("/v1/audit?limit=1000").await;
        let data = page["data"].as_array().cloned().unwrap_or_default();
        if done(&data) {
            return data;
        }
        assert!(Instant::now() < deadline, "the audit trail never showed it: {page}");
        tokio::task::yield_now().await;
    }
}

#[tokio::test]
async fn a_cancel_is_on_the_turn_canceled_the_agent_sends_later() {
    let s = Server::start(&[]).await;
    let (bot_id, bot) = make_token(&s, "stopper", "operator", &["r"]).await;
    let bot = As { s: &s, token: bot };
    let mut ws = s.ws("r", None).await;
    ws.hello().await;
    s.session("r", "s").await;
    let turn = s.turn("r", "s", "/slow 50\n/chunks 200").await;
    ws.until_type("message.delta").await;
    let (status, body) = bot.post("/v1/rooms/r/sessions/s/cancel", json!({})).await;
    assert_eq!(status, StatusCode::ACCEPTED, "{body}");
    let end = ws.until_type("turn.canceled").await.last().cloned().unwrap();
    assert_eq!(end["payload"]["turnId"], turn.as_str());
    assert_eq!(end["actor"], json!({"tokenId": bot_id, "name": "stopper"}), "{end}");
    // The next turn's end, by the agent alone, is nobody's.
    s.turn("r", "s", "again").await;
    let done = ws.until_type("turn.completed").await.last().cloned().unwrap();
    assert!(done.get("actor").is_none(), "{done}");
}

#[tokio::test]
async fn ended_tokens_are_removed_after_their_retention_and_valid_ones_stay() {
    let s = Server::start(&["--token-retention-secs", "1"]).await;
    let (kept, _) = make_token(&s, "kept", "viewer", &["*"]).await;
    let (gone, secret) = make_token(&s, "gone", "viewer", &["*"]).await;
    let (status, _) = s.delete(&format!("/v1/tokens/{gone}")).await;
    assert_eq!(status, StatusCode::OK);
    let ids = async || -> Vec<String> {
        let (_, list) = s.get("/v1/tokens").await;
        list["data"].as_array().unwrap().iter().map(|t| t["id"].as_str().unwrap().to_owned()).collect()
    };
    assert!(ids().await.contains(&gone), "listed as revoked at first");
    let deadline = Instant::now() + WAIT;
    while ids().await.contains(&gone) {
        assert!(Instant::now() < deadline, "the revoked token was never removed");
        tokio::task::yield_now().await;
    }
    assert_eq!(ids().await, [kept], "the valid one stays");
    assert_eq!(As { s: &s, token: secret }.get("/v1/me").await.0, StatusCode::UNAUTHORIZED);
}

#[tokio::test]
async fn a_token_file_token_longer_than_a_managed_secret_still_works() {
    // The token file may hold up to 4 KiB; managed secrets are cut at 512 bytes. The first must not
    // fall under the second's cap.
    let tmp = tempfile::tempdir().unwrap();
    let token = "t".repeat(3000);
    let file = tmp.path().join("long-token");
    write_private(&file, &format!("{token}\n"));
    let s = Server::start_in(tmp.path(), &["--token-file", file.to_str().unwrap()]).await;
    let get = |t: String| {
        let req = s.http().get(s.url("/v1/rooms")).header("authorization", format!("Bearer {t}"));
        async move { req.send().await.unwrap().status() }
    };
    assert_eq!(get(token.clone()).await, StatusCode::OK);
    assert_eq!(get(format!("{token}x")).await, StatusCode::UNAUTHORIZED);
    assert_eq!(get("t".repeat(5000)).await, StatusCode::UNAUTHORIZED);
}

#[tokio::test]
async fn bad_tokens_and_bad_token_requests_are_refused_clearly() {
    let s = Server::start(&["--max-tokens", "2"]).await;
    // Malformed, unknown, over-long, wrong scheme: 401 alike.
    let long = format!("ens_{}", "a".repeat(8000));
    for header in ["Bearer ", "Bearer ens_", "Bearer ens_0000", "Basic ens_0000", &format!("Bearer {long}")] {
        let res = s.http().get(s.url("/v1/rooms")).header("authorization", header).send().await.unwrap();
        assert_eq!(res.status(), StatusCode::UNAUTHORIZED, "{}", &header[..header.len().min(20)]);
        // The answer never repeats what was presented.
        let text = res.text().await.unwrap();
        let presented = header.split_once(' ').map_or("", |(_, t)| t);
        assert!(presented.len() < 8 || !text.contains(presented), "{text}");
    }
    // Bad bodies.
    let bad = [
        json!({"name": "", "role": "viewer", "rooms": ["*"]}),
        json!({"name": "x".repeat(129), "role": "viewer", "rooms": ["*"]}),
        json!({"name": "n", "role": "root", "rooms": ["*"]}),
        json!({"name": "n", "role": "viewer", "rooms": []}),
        json!({"name": "n", "role": "viewer", "rooms": ["bad room"]}),
        json!({"name": "n", "role": "viewer", "rooms": ["*"], "ttlSecs": 0}),
        json!({"name": "n", "role": "viewer", "rooms": ["*"], "expiresAtMs": 1}),
        json!({"name": "n", "role": "viewer", "rooms": ["*"], "ttlSecs": 5, "expiresAtMs": 99999999999999i64}),
        json!({"name": "n", "role": "viewer", "rooms": ["*"], "secret": "mine"}),
    ];
    for body in bad {
        let (status, res) = s.post("/v1/tokens", body.clone()).await;
        assert_eq!(status, StatusCode::BAD_REQUEST, "{body}: {res}");
        assert!(res["error"]["code"].is_string(), "{res}");
    }
    // The limit counts valid tokens.
    let (first, _) = make_token(&s, "one", "viewer", &["*"]).await;
    make_token(&s, "two", "viewer", &["*"]).await;
    let (status, body) = s.post("/v1/tokens", json!({"name": "three", "role": "viewer", "rooms": ["*"]})).await;
    assert_eq!(error_code(status, &body, StatusCode::CONFLICT), "too_many_tokens");
    assert_eq!(body["error"]["details"]["limit"], 2);
    s.delete(&format!("/v1/tokens/{first}")).await;
    make_token(&s, "three", "viewer", &["*"]).await;
    // An expiring token closes its socket when it expires, and is refused after.
    let soon = now_ms() + 1500;
    let (status, made) =
        s.post("/v1/tokens", json!({"name": "brief", "role": "viewer", "rooms": ["*"], "expiresAtMs": soon})).await;
    assert_eq!(error_code(status, &made, StatusCode::CONFLICT), "too_many_tokens", "still at the limit");
    let (_, list) = s.get("/v1/tokens").await;
    let three = list["data"].as_array().unwrap().iter().find(|t| t["name"] == "three").unwrap()["id"]
        .as_str()
        .unwrap()
        .to_owned();
    s.delete(&format!("/v1/tokens/{three}")).await;
    let (status, made) =
        s.post("/v1/tokens", json!({"name": "brief", "role": "viewer", "rooms": ["*"], "expiresAtMs": soon})).await;
    assert_eq!(status, StatusCode::CREATED, "{made}");
    let brief = As { s: &s, token: made["secret"].as_str().unwrap().to_owned() };
    let mut ws = brief.ws("r").await.expect("socket");
    ws.hello().await;
    let closed = ws.frames_until(|f| f["type"] == "__close").await;
    assert_eq!(closed.last().unwrap()["code"], 4003);
    assert!(now_ms() >= soon, "closed at expiry, not before");
    assert_eq!(brief.get("/v1/me").await.0, StatusCode::UNAUTHORIZED);
    let (status, body) = s.delete("/v1/tokens/admin").await;
    assert_eq!(error_code(status, &body, StatusCode::BAD_REQUEST), "admin_token");
}

fn now_ms() -> i64 {
    std::time::SystemTime::now().duration_since(std::time::UNIX_EPOCH).unwrap().as_millis() as i64
}

/// `ensemble token create|list|revoke` against the running server of a data dir.
#[tokio::test]
async fn the_token_commands_make_list_and_revoke() {
    let s = Server::start(&[]).await;
    let cli = |args: &[&str]| {
        let mut c = tokio::process::Command::new(env!("CARGO_BIN_EXE_ensemble"));
        c.arg("token").args(args).arg("--data-dir").arg(s.dir.join("data"));
        c.env_remove("ENSEMBLE_DATA_DIR");
        async move {
            let out = tokio::time::timeout(WAIT, c.output()).await.expect("in time").expect("runs");
            (
                out.status.success(),
                String::from_utf8_lossy(&out.stdout).into_owned(),
                String::from_utf8_lossy(&out.stderr).into_owned(),
            )
        }
    };
    let (ok, secret, err) =
        cli(&["create", "--role", "viewer", "--rooms", "demo", "--ttl", "7d", "--name", "phone"]).await;
    assert!(ok, "{err}");
    let secret = secret.trim().to_owned();
    assert!(secret.starts_with("ens_"), "{secret}");
    assert!(err.contains("viewer") && err.contains("expires in 7d 0h"), "{err}");
    // The console URL for it, as Share… makes it (the token's one room opened), on stderr: stdout
    // stays the secret alone, for scripts.
    let link = format!("{}/#token={secret}&room=demo", s.base);
    assert!(err.lines().any(|l| l == format!("console: {link}")), "{err}");
    assert!(!err.contains('\u{2588}'), "no QR code unless asked: {err}");
    let (ok, other, err) = cli(&["create", "--role", "viewer", "--rooms", "demo,work", "--qr"]).await;
    assert!(ok, "{err}");
    assert!(err.contains(&format!("console: {}/#token={}\n", s.base, other.trim())), "two rooms: none opened: {err}");
    // The QR code: a square of block characters (two modules a character), its quiet zone light.
    let blocks = |l: &str| !l.is_empty() && l.chars().all(|c| " \u{2580}\u{2584}\u{2588}".contains(c));
    let qr: Vec<&str> = err.lines().filter(|l| blocks(l)).collect();
    let width = qr.first().map_or(0, |l| l.chars().count());
    assert!(width >= 29 && qr.iter().all(|l| l.chars().count() == width), "{err}");
    assert_eq!(qr.len(), width.div_ceil(2), "{err}");
    assert!(qr[0].chars().all(|c| c == '\u{2588}'), "the quiet zone is light: {}", qr[0]);
    let (status, me) = As { s: &s, token: secret.clone() }.get("/v1/me").await;
    assert_eq!((status, me["name"].as_str()), (StatusCode::OK, Some("phone")));
    let (ok, table, err) = cli(&["list"]).await;
    assert!(ok, "{err}");
    let line = table.lines().find(|l| l.contains("phone")).unwrap_or_else(|| panic!("{table}"));
    assert!(line.contains("viewer") && line.contains("demo") && line.ends_with("active"), "{line}");
    assert!(!table.contains(&secret));
    let id = me["tokenId"].as_str().unwrap();
    let (ok, out, err) = cli(&["revoke", id]).await;
    assert!(ok && out.trim() == format!("revoked {id}"), "{out} {err}");
    assert_eq!(As { s: &s, token: secret }.get("/v1/me").await.0, StatusCode::UNAUTHORIZED);
    let (ok, _, err) = cli(&["create", "--role", "root", "--rooms", "demo"]).await;
    assert!(!ok && err.contains("invalid_input") || err.contains("role"), "{err}");
    let (ok, _, err) = cli(&["create", "--role", "viewer", "--rooms", "demo", "--ttl", "7w"]).await;
    assert!(!ok && err.contains("s, m, h, d"), "{err}");
}

/// Restoring, committing and forking name who did it too.
#[tokio::test]
async fn workspace_actions_name_who_did_them() {
    let s = Server::start(&[]).await;
    let repo = git_repo(&s.dir.join("proj"), &[("README.md", b"# demo\n")]);
    let (id, secret) = make_token(&s, "ops", "operator", &["r"]).await;
    let ops = As { s: &s, token: secret };
    let (status, body) = ops
        .post(
            "/v1/rooms/r/sessions",
            json!({"sessionId": "w", "workspace": {"kind": "worktree", "repo": repo.to_str().unwrap()}}),
        )
        .await;
    assert_eq!(status, StatusCode::CREATED, "{body}");
    let mut ws = s.ws("r", None).await;
    ws.hello().await;
    let (status, turn) = ops
        .post("/v1/rooms/r/sessions/w/turns", json!({"input": [{"type": "text", "text": "/write a.txt one"}]}))
        .await;
    assert_eq!(status, StatusCode::ACCEPTED, "{turn}");
    let turn = turn["turnId"].as_str().unwrap().to_owned();
    let t = turn.clone();
    let changes = ws.until(move |e| e["type"] == "turn.changes" && e["turnId"] == t.as_str()).await;
    let before = changes.last().unwrap()["payload"]["before"].as_str().unwrap().to_owned();
    let (status, body) = ops.post("/v1/rooms/r/sessions/w/workspace/commit", json!({"message": "one"})).await;
    assert!(status.is_success(), "{body}");
    let (status, body) = ops.post("/v1/rooms/r/sessions/w/restore", json!({"checkpoint": before})).await;
    assert!(status.is_success(), "{body}");
    let (status, body) = ops.post("/v1/rooms/r/sessions/w/fork", json!({"atTurn": turn, "sessionId": "f"})).await;
    assert_eq!(status, StatusCode::CREATED, "{body}");
    let events = s.events("r").await;
    let who = json!({"tokenId": id, "name": "ops"});
    for (ty, session) in [("workspace.committed", "w"), ("workspace.restored", "w"), ("session.started", "f")] {
        let e =
            events.iter().find(|e| e["type"] == ty && e["sessionId"] == session).unwrap_or_else(|| panic!("no {ty}"));
        assert_eq!(e["actor"], who, "{ty}: {e}");
    }
}

/// An admin of some rooms sees and revokes the tokens of those rooms only, and reads only their
/// part of the audit trail.
#[tokio::test]
async fn a_room_admin_manages_only_its_rooms_tokens_and_audit() {
    let s = Server::start(&[]).await;
    let (_, room_admin) = make_token(&s, "a-admin", "admin", &["a"]).await;
    let ra = As { s: &s, token: room_admin };
    let (in_a, _) = make_token(&s, "in a", "viewer", &["a"]).await;
    let (in_b, _) = make_token(&s, "in b", "viewer", &["b"]).await;
    let (everywhere, _) = make_token(&s, "everywhere", "viewer", &["*"]).await;
    let (_, list) = ra.get("/v1/tokens").await;
    let names: Vec<&str> = list["data"].as_array().unwrap().iter().map(|t| t["name"].as_str().unwrap()).collect();
    assert_eq!(names, ["a-admin", "in a"], "{list}");
    for id in [&in_b, &everywhere] {
        let (status, body) = ra.delete(&format!("/v1/tokens/{id}")).await;
        assert_eq!(error_code(status, &body, StatusCode::NOT_FOUND), "token_not_found");
    }
    let (status, _) = ra.delete(&format!("/v1/tokens/{in_a}")).await;
    assert_eq!(status, StatusCode::OK);
    s.session("a", "s").await;
    s.session("b", "s").await;
    wait_audit(&s, |d| d.iter().any(|e| e["roomId"] == "b")).await;
    let (_, audit) = ra.get("/v1/audit?limit=1000").await;
    let rooms: Vec<&str> =
        audit["data"].as_array().unwrap().iter().map(|e| e["roomId"].as_str().unwrap_or("-")).collect();
    assert!(!rooms.is_empty() && rooms.iter().all(|r| *r == "a"), "{audit}");
    let (_, all) = s.get("/v1/audit?limit=1000").await;
    assert!(all["data"].as_array().unwrap().iter().any(|e| e["roomId"] == "b"), "the token file's admin sees it all");
}

/// Refusals without a valid token are recorded at a bounded rate; the rest are counted.
#[tokio::test]
async fn refusals_without_a_token_cannot_fill_the_audit_trail() {
    let s = Server::start(&[]).await;
    let anonymous = As { s: &s, token: "ens_nobody".into() };
    for _ in 0..150 {
        let (status, _) = anonymous.post("/v1/rooms/r/sessions", json!({})).await;
        assert_eq!(status, StatusCode::UNAUTHORIZED);
    }
    let dropped = metric(&s, "ensemble_audit_anonymous_dropped_total").await;
    let expect = 150 - dropped as usize;
    let audit = wait_audit(&s, |d| d.iter().filter(|e| e["status"] == 401).count() >= expect).await;
    let kept = audit.iter().filter(|e| e["status"] == 401).count();
    assert_eq!(kept, expect, "every refusal is kept or counted");
    assert!((60..=90).contains(&kept), "{kept} kept");
}
