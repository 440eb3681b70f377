//! Every string a client sends has a bound, every frame the server sends too: oversized fields are
//! refused with the limit in `details`, ids are ids, and `hello` stays bounded however many
//! sessions a room holds. (Found by an adversary: a 4 MB title made a room unreadable for good.)

use reqwest::StatusCode;
use serde_json::{Value, json};

use crate::common::*;

#[tokio::test]
async fn ids_and_fields_out_of_bounds_are_refused_with_their_limit() {
    let s = Server::start(&["--max-input-bytes", "1000"]).await;
    // Ids: only dots, too long, other characters.
    for id in [".", "..", "...", "a b", "é", &"x".repeat(129)] {
        let (status, body) = s.post("/v1/rooms/r/sessions", json!({"sessionId": id})).await;
        assert_eq!(error_code(status, &body, StatusCode::BAD_REQUEST), "invalid_input", "{id:?}");
        assert_eq!(body["error"]["details"]["field"], "sessionId");
        assert_eq!(body["error"]["details"]["maxBytes"], 128);
    }
    let (status, body) = s.get("/v1/rooms/.../sessions").await;
    assert_eq!(error_code(status, &body, StatusCode::BAD_REQUEST), "invalid_id");
    // A title of 4 MB (under the body limit) is refused, not stored.
    let (status, body) = s.post("/v1/rooms/r/sessions", json!({"sessionId": "t", "title": "x".repeat(4 << 20)})).await;
    assert_eq!(error_code(status, &body, StatusCode::BAD_REQUEST), "invalid_input");
    assert_eq!(body["error"]["details"], json!({"field": "title", "maxChars": 4096}));
    for (field, body) in [
        ("cwd", json!({"cwd": "/".repeat(5000)})),
        ("settings.model", json!({"settings": {"model": "m".repeat(5000)}})),
    ] {
        let (status, res) = s.post("/v1/rooms/r/sessions", body).await;
        assert_eq!(error_code(status, &res, StatusCode::BAD_REQUEST), "invalid_input", "{field}");
        assert_eq!(res["error"]["details"]["field"], field);
    }
    s.session("r", "s").await;
    let submit = |body| s.post("/v1/rooms/r/sessions/s/turns", body);
    let (status, body) =
        submit(json!({"input": [{"type": "text", "text": "hi"}], "clientSubmitId": "x".repeat(129)})).await;
    assert_eq!(error_code(status, &body, StatusCode::BAD_REQUEST), "invalid_input");
    assert_eq!(body["error"]["details"]["field"], "clientSubmitId");
    let (status, body) = submit(json!({"input": [{"type": "text", "text": "x".repeat(1001)}]})).await;
    assert_eq!(error_code(status, &body, StatusCode::BAD_REQUEST), "invalid_input");
    assert_eq!(body["error"]["details"], json!({"field": "input", "maxBytes": 1000}));
    let goal = json!({"objective": "o".repeat(1001), "clientSubmitId": "g"});
    let (status, body) =
        decode(s.http().put(s.url("/v1/rooms/r/sessions/s/goal")).json(&goal).send().await.unwrap()).await;
    assert_eq!(error_code(status, &body, StatusCode::BAD_REQUEST), "invalid_input");
    assert_eq!(body["error"]["details"]["field"], "objective");
    let (status, body) = s.post("/v1/rooms/r/sessions/s/sides", json!({"requestId": "a/b"})).await;
    assert_eq!(error_code(status, &body, StatusCode::BAD_REQUEST), "invalid_input");
    let (status, body) = s.post("/v1/rooms/r/sessions/s/interactions/a%20b", json!({"decision": "accept"})).await;
    assert_eq!(error_code(status, &body, StatusCode::BAD_REQUEST), "invalid_id");
    // Nothing of it reached the room.
    let mut ws = s.ws("r", Some(0)).await;
    let hello = ws.hello().await;
    assert_eq!(hello["sessions"].as_array().unwrap().len(), 1);
}

#[tokio::test]
async fn hello_stays_bounded_and_the_rest_is_read_over_rest() {
    let max = 64 * 1024;
    let s = Server::start(&["--max-event-bytes", &max.to_string(), "--max-live-sessions", "100"]).await;
    for i in 0..40 {
        let (status, body) =
            s.post("/v1/rooms/r/sessions", json!({"sessionId": format!("s{i}"), "title": "t".repeat(4000)})).await;
        assert_eq!(status, StatusCode::CREATED, "{body}");
    }
    let mut ws = s.ws("r", None).await;
    let hello = ws.hello().await;
    let size = serde_json::to_string(&hello).unwrap().len();
    assert!(size <= max + 1024, "hello is {size} bytes");
    assert_eq!(hello["sessionsTruncated"], true);
    let shown = hello["sessions"].as_array().unwrap().len();
    assert!(shown > 0 && shown < 40, "{shown}");
    let (_, all) = s.get("/v1/rooms/r/sessions").await;
    assert_eq!(all["data"].as_array().unwrap().len(), 40);
    // Every event stays under the bound too: one that echoes a large input is cut.
    let s = Server::start(&["--max-event-bytes", &max.to_string(), "--max-input-bytes", &max.to_string()]).await;
    s.session("r", "s").await;
    let (status, _) = s
        .post("/v1/rooms/r/sessions/s/turns", json!({"input": [{"type": "text", "text": "y".repeat(max - 10)}]}))
        .await;
    assert_eq!(status, StatusCode::ACCEPTED);
    let mut ws = s.ws("r", Some(0)).await;
    ws.hello().await;
    let started = ws.until_type("turn.started").await.pop().unwrap();
    let size = serde_json::to_string(&started).unwrap().len();
    assert!(size <= max + 1024, "turn.started is {size} bytes");
    assert!(started["payload"]["input"][0]["text"].as_str().unwrap().ends_with("…[truncated]"));
}

#[tokio::test]
async fn open_sides_are_found_again_after_a_reload() {
    let s = Server::start(&[]).await;
    s.session("r", "src").await;
    let (status, opened) =
        s.post("/v1/rooms/r/sessions/src/sides", json!({"requestId": "q", "sideSessionId": "side"})).await;
    assert_eq!(status, StatusCode::CREATED, "{opened}");
    // A reload: a new socket's hello lists the open side with its source.
    let mut ws = s.ws("r", None).await;
    let hello = ws.hello().await;
    let sides = hello["sides"].as_array().unwrap();
    assert_eq!(sides.len(), 1);
    assert_eq!((sides[0]["sessionId"].as_str(), sides[0]["sourceSessionId"].as_str()), (Some("side"), Some("src")));
    assert_eq!(hello["sessionsTruncated"], false);
    let (_, listed) = s.get("/v1/rooms/r/sessions/src/sides").await;
    assert_eq!(listed["data"].as_array().unwrap().len(), 1);
    assert_eq!(listed["data"][0]["sessionId"], "side");
    let (status, body) = s.get("/v1/rooms/r/sessions/nope/sides").await;
    assert_eq!(error_code(status, &body, StatusCode::NOT_FOUND), "session_not_found");
    // An ended side is not listed.
    s.delete("/v1/rooms/r/sessions/side").await;
    let (_, listed) = s.get("/v1/rooms/r/sessions/src/sides").await;
    assert_eq!(listed["data"], json!([]));
    let mut ws = s.ws("r", None).await;
    assert_eq!(ws.hello().await["sides"], json!([]));
}

/// One page of `GET …/events` of a room of large events (a page of 381 MB; six readers 4.5 GB) and
/// `GET …/sessions/{side}/events`: a page holds no more than `--events-page-bytes` of events (one
/// larger event alone), and a client that goes on from each page's `next` reads every event once;
/// an export and a WebSocket's replay read the whole log too.
#[tokio::test]
async fn a_room_of_large_events_is_read_page_by_page_in_bounded_pages() {
    let max = 1_000_000;
    let s = Server::start(&["--events-page-bytes", &max.to_string(), "--max-input-bytes", "400000"]).await;
    s.session("r", "s").await;
    let mut ws = s.ws("r", None).await;
    ws.hello().await;
    // Each turn logs its input (`turn.started`) and the agent's echo of it, 300 kB each.
    for i in 0..6 {
        let turn = s.turn("r", "s", &format!("{i}{}", "x".repeat(300_000))).await;
        ws.until(move |e| e["turnId"] == turn.as_str() && e["type"] == "turn.completed").await;
    }
    let (status, side) =
        s.post("/v1/rooms/r/sessions/s/sides", json!({"requestId": "q", "sideSessionId": "side"})).await;
    assert_eq!(status, StatusCode::CREATED, "{side}");
    for i in 0..4 {
        let turn = s.turn("r", "side", &format!("side {i} {}", "y".repeat(300_000))).await;
        let ended = move |f: &Value| f["event"]["turnId"] == turn.as_str() && f["event"]["type"] == "turn.completed";
        ws.frames_until(move |f| f["type"] == "side_event" && ended(f)).await;
    }
    for path in ["/v1/rooms/r/events", "/v1/rooms/r/sessions/side/events"] {
        let (mut after, mut seqs, mut pages) = (0u64, Vec::new(), 0);
        let head = loop {
            let res = s.http().get(s.url(&format!("{path}?after={after}&limit=1000"))).send().await.unwrap();
            assert_eq!(res.status(), StatusCode::OK);
            let body = res.text().await.unwrap();
            let page: Value = serde_json::from_str(&body).unwrap();
            let data = page["data"].as_array().unwrap();
            pages += 1;
            assert!(!data.is_empty(), "{path}: an empty page before the head");
            assert!(body.len() <= max + 100 || data.len() == 1, "{path}: a page of {} bytes", body.len());
            seqs.extend(data.iter().map(|e| e["seq"].as_u64().unwrap()));
            match page["next"].as_u64() {
                Some(next) => {
                    assert_eq!(Some(next), seqs.last().copied(), "{path}: next is the page's last seq");
                    after = next;
                }
                None => break page["headSeq"].as_u64().unwrap(),
            }
        };
        assert_eq!(seqs, (1..=head).collect::<Vec<_>>(), "{path}: every event once, in order");
        assert!(pages >= 3, "{path}: {pages} pages");
    }
    // A client that pages on until an empty page (as before `next`) reads them all too.
    let all = s.events("r").await;
    let head = all.last().unwrap()["seq"].as_u64().unwrap();
    assert_eq!(all.len() as u64, head);
    // The export (whose reads are cut the same way) and a replaying WebSocket have every event.
    let res = s.http().get(s.url("/v1/rooms/r/export")).send().await.unwrap();
    let lines: Vec<Value> = res.text().await.unwrap().lines().map(|l| serde_json::from_str(l).unwrap()).collect();
    assert_eq!(lines.last().unwrap()["events"].as_u64(), Some(head), "the export ends with every event");
    let mut replay = s.ws("r", Some(0)).await;
    replay.hello().await;
    let read = replay.frames_until(move |f| f["type"] == "event" && f["event"]["seq"].as_u64() == Some(head)).await;
    let replayed: Vec<u64> =
        read.iter().filter(|f| f["type"] == "event").filter_map(|f| f["event"]["seq"].as_u64()).collect();
    assert_eq!(replayed, (1..=head).collect::<Vec<_>>());
}
