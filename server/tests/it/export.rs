//! Room export: `GET /v1/rooms/{roomId}/export` streams a header, the sessions, every event in
//! seq order (read a page at a time) and an end line; an unknown room is an empty export; a token
//! scoped to other rooms sees nothing.

use reqwest::StatusCode;
use serde_json::Value;

use crate::common::*;
use crate::roles::make_token;

/// The export's lines, parsed, and its content type.
async fn export(s: &Server, room: &str, token: Option<&str>) -> (StatusCode, String, Vec<Value>) {
    let mut req = reqwest::Client::new().get(s.url(&format!("/v1/rooms/{room}/export")));
    if let Some(t) = token.or(s.token.as_deref()) {
        req = req.bearer_auth(t);
    }
    let res = req.send().await.expect("GET export");
    let status = res.status();
    let ct = res.headers().get("content-type").and_then(|v| v.to_str().ok()).unwrap_or_default().to_owned();
    let text = res.text().await.expect("body");
    let lines = if status == StatusCode::OK {
        text.lines().map(|l| serde_json::from_str(l).unwrap_or_else(|e| panic!("{e}: {l}"))).collect()
    } else {
        vec![serde_json::from_str(&text).expect("error body")]
    };
    (status, ct, lines)
}

#[tokio::test]
async fn an_export_is_the_header_the_sessions_every_event_in_order_and_the_end() {
    // Three events a page: the log is read in many pages.
    let s = Server::start(&["--export-page-events", "3"]).await;
    s.session("r", "a").await;
    s.session("r", "b").await;
    let mut ws = s.ws("r", None).await;
    ws.hello().await;
    for (session, text) in [("a", "one two three"), ("b", "four"), ("a", "five six")] {
        let turn = s.turn("r", session, text).await;
        ws.until(move |e| e["turnId"] == turn.as_str() && e["type"] == "turn.completed").await;
    }
    let events = s.events("r").await;
    assert!(events.len() > 10, "several pages of events: {}", events.len());

    let (status, ct, lines) = export(&s, "r", None).await;
    assert_eq!(status, StatusCode::OK);
    assert_eq!(ct, "application/x-ndjson");
    let header = &lines[0];
    assert_eq!((header["format"].as_str(), header["version"].as_u64()), (Some("ensemble.export"), Some(1)));
    assert_eq!(header["roomId"], "r");
    assert_eq!(header["head"], events.last().unwrap()["seq"], "{header}");
    assert_eq!(header["firstSeq"], 1);
    assert!(header["exportedAtMs"].as_i64().unwrap() > 0);

    let sessions: Vec<&str> =
        lines.iter().filter(|l| l["kind"] == "session").map(|l| l["session"]["sessionId"].as_str().unwrap()).collect();
    assert_eq!(sessions.len(), 2);
    assert!(sessions.contains(&"a") && sessions.contains(&"b"), "{sessions:?}");
    // The sessions come before any event.
    let first_event = lines.iter().position(|l| l["kind"] == "event").unwrap();
    assert!(lines[first_event..].iter().all(|l| l["kind"] != "session"));

    let exported: Vec<Value> = lines.iter().filter(|l| l["kind"] == "event").map(|l| l["event"].clone()).collect();
    assert_eq!(exported, events, "every event, as the log has it, in seq order");
    assert_gap_free(&exported);
    let end = lines.last().unwrap();
    assert_eq!((end["kind"].as_str(), end["events"].as_u64()), (Some("end"), Some(events.len() as u64)));
    assert_eq!(lines.len(), 1 + 2 + events.len() + 1, "nothing else");
}

#[tokio::test]
async fn an_unknown_room_is_an_empty_export_and_a_scoped_token_sees_only_its_rooms() {
    let s = Server::start(&[]).await;
    let (status, _, lines) = export(&s, "nobody-here", None).await;
    assert_eq!(status, StatusCode::OK);
    assert_eq!(lines.len(), 2, "{lines:?}");
    assert_eq!((lines[0]["head"].as_u64(), lines[1]["events"].as_u64()), (Some(0), Some(0)));

    s.session("r", "a").await;
    let (_, mine) = make_token(&s, "reader", "viewer", &["r"]).await;
    let (status, _, lines) = export(&s, "r", Some(&mine)).await;
    assert_eq!(status, StatusCode::OK, "a viewer of the room exports it");
    assert_eq!(lines.iter().filter(|l| l["kind"] == "session").count(), 1);
    let (_, other) = make_token(&s, "elsewhere", "viewer", &["other"]).await;
    let (status, _, body) = export(&s, "r", Some(&other)).await;
    assert_eq!(error_code(status, &body[0], StatusCode::NOT_FOUND), "room_not_found");
    let (status, _, body) = export(&s, "bad room!", None).await;
    assert_eq!(status, StatusCode::BAD_REQUEST, "{body:?}");
}
