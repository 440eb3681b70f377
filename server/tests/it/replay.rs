//! The room WebSocket's replay/live switch, reconnects, resync and client frames.

use reqwest::StatusCode;
use serde_json::{Value, json};

use crate::common::*;

#[tokio::test]
async fn reconnecting_mid_stream_with_after_returns_exactly_the_missing_events() {
    let s = Server::start(&[]).await;
    s.session("r", "s").await;
    let mut first = s.ws("r", Some(0)).await;
    first.hello().await;
    first.until_type("commands.updated").await;
    s.turn("r", "s", "/slow 10\n/chunks 120").await;
    // Read a part of the stream, then drop the connection mid-turn.
    let mut seen = Vec::new();
    for _ in 0..15 {
        seen.push(first.event().await);
    }
    let n = seen.last().unwrap()["seq"].as_u64().unwrap();
    drop(first);
    let mut second = s.ws("r", Some(n)).await;
    let hello = second.hello().await;
    assert!(hello["headSeq"].as_u64().unwrap() >= n);
    let rest = second.until_type("turn.completed").await;
    assert_eq!(rest[0]["seq"].as_u64(), Some(n + 1), "resumes right after what the client had");
    assert_gap_free(&rest);
    let logged = s.events("r").await;
    let tail: Vec<Value> = logged.into_iter().filter(|e| e["seq"].as_u64().unwrap() > n).collect();
    assert_eq!(rest, tail, "exactly the missing events, no more, no fewer");
}

#[tokio::test]
async fn many_readers_get_the_same_sequence_and_live_only_starts_at_the_head() {
    let s = Server::start(&[]).await;
    s.session("r", "s").await;
    let head = s.events("r").await.len() as u64;
    let mut live = s.ws("r", None).await;
    assert_eq!(live.hello().await["headSeq"], head);
    let mut readers = Vec::new();
    for _ in 0..5 {
        let mut ws = s.ws("r", Some(0)).await;
        ws.hello().await;
        readers.push(ws);
    }
    s.turn("r", "s", "/chunks 40").await;
    let live_events = live.until_type("turn.completed").await;
    assert_eq!(live_events[0]["seq"].as_u64(), Some(head + 1));
    let all = s.events("r").await;
    for ws in &mut readers {
        assert_eq!(ws.until_type("turn.completed").await, all);
    }
}

#[tokio::test]
async fn history_that_is_gone_gets_resync_not_a_gap() {
    let s = Server::start(&["--retention-events", "8"]).await;
    s.session("r", "s").await;
    let mut ws = s.ws("r", None).await;
    ws.hello().await;
    s.turn("r", "s", "/chunks 40").await;
    ws.until_type("turn.completed").await;
    let (_, page) = s.get("/v1/rooms/r/events?after=1000000").await;
    let head = page["headSeq"].as_u64().unwrap();
    assert!(head > 40);

    let mut old = s.ws("r", Some(0)).await;
    assert_eq!(old.hello().await["headSeq"], head);
    let resync = old.frame().await;
    assert_eq!(resync["type"], "resync", "{resync}");
    assert_eq!(resync["reason"], "history_expired");
    assert_eq!(resync["headSeq"], head);
    assert_eq!(old.frame().await, json!({"type": "__close", "code": 4000}));

    let (status, body) = s.get("/v1/rooms/r/events?after=0").await;
    assert_eq!(error_code(status, &body, StatusCode::GONE), "history_expired");
    let oldest = body["error"]["details"]["oldestSeq"].as_u64().unwrap();
    assert!(oldest > 1);
    // From the oldest retained event on, the log is complete.
    let (status, page) = s.get(&format!("/v1/rooms/r/events?after={}", oldest - 1)).await;
    assert_eq!(status, StatusCode::OK);
    assert_eq!(page["data"][0]["seq"].as_u64(), Some(oldest));
    assert_gap_free(page["data"].as_array().unwrap());

    let mut ahead = s.ws("r", Some(head + 100)).await;
    ahead.hello().await;
    let f = ahead.frame().await;
    assert_eq!((f["type"].as_str(), f["reason"].as_str()), (Some("resync"), Some("ahead_of_log")));
}

#[tokio::test]
async fn client_frames_ping_and_garbage() {
    let s = Server::start(&[]).await;
    let mut ws = s.ws("r", None).await;
    ws.hello().await;
    ws.send_text(r#"{"type":"ping"}"#).await;
    assert_eq!(ws.frame().await, json!({"type": "pong"}));
    ws.send_text("not json").await;
    let err = ws.frame().await;
    assert_eq!(err["type"], "error");
    assert_eq!(err["code"], "invalid_frame");
    // Still open and live.
    s.session("r", "s").await;
    assert_eq!(ws.event().await["type"], "session.started");
}

#[tokio::test]
async fn an_oversized_client_message_closes_only_that_connection() {
    let s = Server::start(&["--ws-max-message-bytes", "1024"]).await;
    let mut big = s.ws("r", None).await;
    big.hello().await;
    let mut other = s.ws("r", None).await;
    other.hello().await;
    // One byte over the limit, far over it, and over it in fragments: each gets close code 1009
    // ("message too big"), not a reset connection (1006).
    use tokio_tungstenite::tungstenite::Message;
    use tokio_tungstenite::tungstenite::protocol::frame::coding::{Data, OpCode};
    use tokio_tungstenite::tungstenite::protocol::frame::{Frame, FrameHeader};
    let fragment = |data: Vec<u8>, opcode: OpCode, is_final: bool| {
        Message::Frame(Frame::from_payload(FrameHeader { is_final, opcode, ..FrameHeader::default() }, data.into()))
    };
    let oversized: Vec<Vec<Message>> = vec![
        vec![Message::Text("x".repeat(1025).into())],
        vec![Message::Text("x".repeat(256 * 1024).into())],
        vec![Message::Binary(vec![0u8; 4096].into())],
        vec![
            fragment(vec![b'x'; 600], OpCode::Data(Data::Text), false),
            fragment(vec![b'x'; 600], OpCode::Data(Data::Continue), true),
        ],
    ];
    for (i, messages) in oversized.into_iter().enumerate() {
        if i > 0 {
            big = s.ws("r", None).await;
            big.hello().await;
        }
        for m in messages {
            futures::SinkExt::send(&mut big.stream, m).await.unwrap();
        }
        let code = tokio::time::timeout(WAIT, async {
            loop {
                match futures::StreamExt::next(&mut big.stream).await {
                    Some(Ok(Message::Close(c))) => return c.map(|c| u16::from(c.code)),
                    Some(Ok(_)) => continue,
                    other => panic!("case {i}: no close frame: {other:?}"),
                }
            }
        })
        .await
        .expect("closed in time");
        assert_eq!(code, Some(1009), "case {i}: message too big");
    }
    s.session("r", "s").await;
    assert_eq!(other.event().await["type"], "session.started");
}
