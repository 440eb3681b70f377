//! Images and files in a turn: checked, read inside the session's workspace, images kept (their
//! data never in an event), handed to the agent as it takes them — the scripted agent describes
//! what it received, the ACP test agent what its prompt's blocks were — and refused clearly.

use reqwest::StatusCode;
use serde_json::{Value, json};

use crate::acp::AcpSetup;
use crate::common::*;

/// A 1×1 PNG (70 bytes).
const PNG: &str = "iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mNkYPhfDwAChwGA60e6kgAAAABJRU5ErkJggg==";

fn png_bytes() -> Vec<u8> {
    use base64::Engine;
    base64::engine::general_purpose::STANDARD.decode(PNG).unwrap()
}

async fn turn(s: &Server, session: &str, input: Value) -> (StatusCode, Value) {
    s.post(&format!("/v1/rooms/r/sessions/{session}/turns"), json!({ "input": input })).await
}

/// The text of the last message of the turn `turn_id`.
async fn reply(ws: &mut Ws, turn_id: &str) -> (Value, String) {
    let t = turn_id.to_owned();
    let events = ws
        .until(move |e| {
            e["type"].as_str().is_some_and(|ty| ty.starts_with("turn."))
                && e["turnId"] == t.as_str()
                && e["type"] != "turn.started"
        })
        .await;
    let started =
        events.iter().find(|e| e["type"] == "turn.started" && e["turnId"] == turn_id).cloned().unwrap_or_default();
    let text = events
        .iter()
        .filter(|e| e["type"] == "message.completed" && e["turnId"] == turn_id)
        .map(|e| e["payload"]["text"].as_str().unwrap_or_default().to_owned())
        .collect::<Vec<_>>()
        .join("\n");
    (started, text)
}

#[tokio::test]
async fn an_image_and_a_file_reach_the_agent_and_the_image_is_kept() {
    let s = Server::start(&[]).await;
    let proj = s.dir.join("proj");
    std::fs::create_dir_all(&proj).unwrap();
    std::fs::write(proj.join("notes.md"), "hello notes\nline two\n").unwrap();
    std::fs::write(proj.join("shot.png"), png_bytes()).unwrap();
    let (status, body) = s.post("/v1/rooms/r/sessions", json!({"sessionId": "s", "cwd": proj.to_str().unwrap()})).await;
    assert_eq!(status, StatusCode::CREATED, "{body}");
    let mut ws = s.ws("r", None).await;
    ws.hello().await;
    let input = json!([
        {"type": "text", "text": "look"},
        {"type": "image", "data": PNG, "mimeType": "image/png", "name": "pasted.png"},
        {"type": "file", "path": "notes.md"},
        {"type": "image", "path": "shot.png"},
    ]);
    let (status, body) = turn(&s, "s", input).await;
    assert_eq!(status, StatusCode::ACCEPTED, "{body}");
    let (started, text) = reply(&mut ws, body["turnId"].as_str().unwrap()).await;
    assert!(text.contains("You sent an image named pasted.png (image/png, 70 bytes)."), "{text}");
    assert!(text.contains("You sent the file notes.md (text/plain, 21 bytes, first line: hello notes)."), "{text}");
    assert!(
        text.contains(&format!("from {}", proj.canonicalize().unwrap().join("shot.png").display()))
            || text.contains("from "),
        "{text}"
    );
    assert!(text.contains("You said: look"), "{text}");
    // The event keeps the image by reference: its data is never stored or sent again.
    let items = started["payload"]["input"].as_array().unwrap();
    assert_eq!(items.len(), 4, "{started}");
    let image = &items[1];
    assert!(image.get("data").is_none(), "{image}");
    assert_eq!((image["mimeType"].as_str(), image["bytes"].as_u64()), (Some("image/png"), Some(70)), "{image}");
    assert_eq!(items[2], json!({"type": "file", "path": "notes.md", "bytes": 21, "mimeType": "text/plain"}));
    assert_eq!(items[3]["attachment"], image["attachment"], "the same image is kept once");
    let id = image["attachment"].as_str().unwrap();
    let res = s
        .http()
        .get(s.url(&format!("/v1/rooms/r/sessions/s/attachments/{id}")))
        .bearer_auth(TOKEN)
        .send()
        .await
        .unwrap();
    assert_eq!(res.status(), StatusCode::OK);
    assert_eq!(res.headers()["content-type"], "image/png");
    assert_eq!(res.headers()["x-content-type-options"], "nosniff");
    assert_eq!(res.bytes().await.unwrap().to_vec(), png_bytes());
    // Unknown ids, ids that are not a hash, and another session: not found.
    for path in [
        format!("/v1/rooms/r/sessions/s/attachments/{}.png", "0".repeat(64)),
        "/v1/rooms/r/sessions/s/attachments/..%2F..%2Ftoken".to_owned(),
        format!("/v1/rooms/r/sessions/other/attachments/{id}"),
    ] {
        let (status, body) = s.get(&path).await;
        assert_eq!(status, StatusCode::NOT_FOUND, "{path}: {body}");
    }
    // A purge takes them with it.
    let (status, _) = s.delete("/v1/rooms/r/sessions/s?purge=true").await;
    assert!(status.is_success());
    let dir = s.dir.join("data").join("attachments");
    let left: Vec<_> = std::fs::read_dir(&dir).map(|d| d.flatten().collect()).unwrap_or_default();
    assert!(left.is_empty(), "{left:?}");
}

#[tokio::test]
async fn bad_images_and_files_are_refused_clearly_and_nothing_starts() {
    let s = Server::start(&["--max-image-bytes", "60", "--max-turn-attachment-bytes", "100"]).await;
    let proj = s.dir.join("proj");
    std::fs::create_dir_all(&proj).unwrap();
    std::fs::write(proj.join("a.txt"), "x".repeat(80)).unwrap();
    std::fs::write(proj.join("b.txt"), "y".repeat(80)).unwrap();
    s.post("/v1/rooms/r/sessions", json!({"sessionId": "s", "cwd": proj.to_str().unwrap()})).await;
    let small_gif = {
        use base64::Engine;
        base64::engine::general_purpose::STANDARD.encode(b"GIF89a\x01\x00\x01\x00")
    };
    let cases = [
        (json!([{"type": "image", "data": "not base64!", "mimeType": "image/png"}]), "not base64"),
        (json!([{"type": "image", "data": small_gif, "mimeType": "image/png"}]), "its bytes are image/gif"),
        (json!([{"type": "image", "data": "aGVsbG8=", "mimeType": "image/png"}]), "not a PNG, JPEG, GIF or WebP"),
        (json!([{"type": "image", "data": PNG, "mimeType": "image/png"}]), "larger than the limit of 60 bytes"),
        (json!([{"type": "image", "data": small_gif, "mimeType": "image/gif", "path": "x.gif"}]), "not both"),
        (json!([{"type": "image"}]), "needs `data`"),
        (json!([{"type": "image", "path": "../../../etc/passwd"}]), "outside the session's workspace"),
        (json!([{"type": "file", "path": "missing.txt"}]), "does not exist"),
        (json!([{"type": "file", "path": "/etc/passwd"}]), "outside the session's workspace"),
        (json!([{"type": "file", "path": "a.txt", "bytes": 3}]), "set by the server"),
        (
            json!([{"type": "image", "data": small_gif, "mimeType": "image/gif", "attachment": "x"}]),
            "set by the server",
        ),
        (
            json!([{"type": "file", "path": "a.txt"}, {"type": "file", "path": "b.txt"}]),
            "more than the limit of 100 bytes",
        ),
        (json!([{"type": "video", "path": "a.txt"}]), ""),
    ];
    for (input, says) in cases {
        let (status, body) = turn(&s, "s", input.clone()).await;
        assert_eq!(status, StatusCode::BAD_REQUEST, "{input}: {body}");
        let message = body["error"]["message"].as_str().unwrap_or_default();
        assert!(message.contains(says), "{input}: {message}");
    }
    let (_, body) = turn(&s, "s", json!([{"type": "image", "data": PNG, "mimeType": "image/png"}])).await;
    assert_eq!(body["error"]["details"]["maxBytes"], 60, "{body}");
    assert!(s.events("r").await.iter().all(|e| e["type"] != "turn.started"), "a refused turn started");
}

#[tokio::test]
async fn an_acp_agent_gets_images_only_if_it_takes_them_and_files_as_it_takes_them() {
    let without = AcpSetup::new(&[], "");
    std::fs::write(without.work.path().join("notes.md"), "hello notes\n").unwrap();
    let s = without.server().await;
    let (status, body) =
        s.post("/v1/rooms/r/sessions", json!({"sessionId": "a", "provider": "test-acp", "cwd": without.cwd()})).await;
    assert_eq!(status, StatusCode::CREATED, "{body}");
    let mut ws = s.ws("r", None).await;
    ws.hello().await;
    let (status, body) = turn(
        &s,
        "a",
        json!([{"type": "text", "text": "see"}, {"type": "image", "data": PNG, "mimeType": "image/png"}]),
    )
    .await;
    assert_eq!(error_code(status, &body, StatusCode::UNPROCESSABLE_ENTITY), "input_unsupported");
    let message = body["error"]["message"].as_str().unwrap();
    assert!(message.contains("input[1]") && message.contains("promptCapabilities.image"), "{message}");
    // A file goes as a link, which every agent takes.
    let (status, body) =
        turn(&s, "a", json!([{"type": "text", "text": "look"}, {"type": "file", "path": "notes.md"}])).await;
    assert_eq!(status, StatusCode::ACCEPTED, "{body}");
    let (_, text) = reply(&mut ws, body["turnId"].as_str().unwrap()).await;
    let real = std::path::Path::new(without.cwd()).canonicalize().unwrap();
    assert!(
        text.contains(&format!("[link notes.md file://{}", real.display())) || text.contains("[link notes.md file://"),
        "{text}"
    );

    // An agent that takes images and embedded context gets the image, and the file's content.
    let with = AcpSetup::new(&["--images"], "");
    std::fs::write(with.work.path().join("notes.md"), "hello notes\n").unwrap();
    let s = with.server().await;
    s.post("/v1/rooms/r/sessions", json!({"sessionId": "b", "provider": "test-acp", "cwd": with.cwd()})).await;
    let mut ws = s.ws("r", None).await;
    ws.hello().await;
    let input = json!([
        {"type": "text", "text": "see"},
        {"type": "image", "data": PNG, "mimeType": "image/png"},
        {"type": "file", "path": "notes.md"},
    ]);
    let (status, body) = turn(&s, "b", input).await;
    assert_eq!(status, StatusCode::ACCEPTED, "{body}");
    let (_, text) = reply(&mut ws, body["turnId"].as_str().unwrap()).await;
    assert!(text.contains("[image image/png 70 bytes]"), "{text}");
    assert!(text.contains("notes.md 12 bytes]") && text.contains("[resource file://"), "{text}");
}

/// An image's `name` and the paths of images and files are bounded like every text a client sends
/// (a 7 MB name made a 7 MB `turn.started`): over 4096 characters they are refused with the field
/// and its limit, in a submit, a queued submit and an edit of a queued turn, before anything starts.
#[tokio::test]
async fn an_images_name_and_the_paths_of_images_and_files_are_bounded() {
    let s = Server::start(&[]).await;
    s.session("r", "s").await;
    let image = |name: &str| json!({"type": "image", "data": PNG, "mimeType": "image/png", "name": name});
    let long = "n".repeat(4097);
    let huge = "é".repeat(3 << 20);
    let cases = [
        (json!([{"type": "text", "text": "see"}, image(&long)]), "input[1].name"),
        (json!([image(&huge)]), "input[0].name"),
        (json!([{"type": "image", "path": long}]), "input[0].path"),
        (json!([{"type": "file", "path": long}]), "input[0].path"),
    ];
    for (input, field) in &cases {
        for queue in [false, true] {
            let (status, body) = s.post("/v1/rooms/r/sessions/s/turns", json!({"input": input, "queue": queue})).await;
            assert_eq!(error_code(status, &body, StatusCode::BAD_REQUEST), "invalid_input", "{field}");
            assert_eq!(body["error"]["details"], json!({"field": field, "maxChars": 4096}));
        }
    }
    // At the limit it is taken, and the turn carries it whole.
    let mut ws = s.ws("r", Some(0)).await;
    ws.hello().await;
    let at_limit = "n".repeat(4096);
    s.turn("r", "s", "/hang").await;
    let (status, queued) =
        s.post("/v1/rooms/r/sessions/s/turns", json!({"input": [image(&at_limit)], "queue": true})).await;
    assert_eq!(status, StatusCode::ACCEPTED, "{queued}");
    let queued = queued["turnId"].as_str().unwrap();
    // An edit of the queued turn is held to the same bound.
    let (status, body) =
        s.patch(&format!("/v1/rooms/r/sessions/s/queue/{queued}"), json!({"input": [image(&long)]})).await;
    assert_eq!(error_code(status, &body, StatusCode::BAD_REQUEST), "invalid_input");
    assert_eq!(body["error"]["details"]["field"], "input[0].name");
    let (status, body) = s.post_empty("/v1/rooms/r/sessions/s/cancel").await;
    assert!(status.is_success(), "{body}");
    let q = queued.to_owned();
    let started = ws.until(move |e| e["type"] == "turn.started" && e["turnId"] == q.as_str()).await;
    assert_eq!(started.last().unwrap()["payload"]["input"][0]["name"].as_str(), Some(at_limit.as_str()));
}
