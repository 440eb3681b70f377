//! Every string a client sends has a bound, every frame the server sends too: oversized fields are
//! refused with the limit in `details`, ids are ids, and `hello` stays bounded however many
//! sessions a room holds. (Found by an adversary: a 4 MB title made a room unreadable for good.)

use reqwest::StatusCode;
use serde_json::json;

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
