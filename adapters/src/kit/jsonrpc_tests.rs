//! Tests of `jsonrpc`.

use super::*;

#[test]
fn lines_split_across_chunks_and_over_long_ones_are_skipped() {
    let mut d = LineDecoder::new(8);
    assert_eq!(d.push(b"ab"), vec![]);
    assert_eq!(d.push(b"c\nde\r\n"), vec![Line::Complete(b"abc".to_vec()), Line::Complete(b"de".to_vec())]);
    assert_eq!(d.push(b"0123456789"), vec![]);
    assert!(d.buffered() <= 8, "memory stays bounded");
    assert_eq!(d.push(b"abc\nok\n"), vec![Line::TooLong(13), Line::Complete(b"ok".to_vec())]);
    assert_eq!(d.push(b"tail"), vec![]);
    assert_eq!(d.finish(), Some(Line::Complete(b"tail".to_vec())));
}

#[test]
fn decodes_the_peers_quirks() {
    assert_eq!(
        decode(br#"{"id":0,"method":"item/commandExecution/requestApproval","params":{"x":1}}"#).unwrap(),
        Incoming::Request {
            id: json!(0),
            method: "item/commandExecution/requestApproval".into(),
            params: json!({"x": 1})
        }
    );
    assert_eq!(
        decode(br#"{"method":"turn/started","params":{},"emittedAtMs":1}"#).unwrap(),
        Incoming::Notification { method: "turn/started".into(), params: json!({}) }
    );
    assert_eq!(
        decode(br#"{"id":3,"result":{"ok":true}}"#).unwrap(),
        Incoming::Response { id: 3, result: Ok(json!({"ok": true})) }
    );
    match decode(br#"{"id":4,"error":{"code":-32600,"message":"Not initialized"}}"#).unwrap() {
        Incoming::Response { id: 4, result: Err(e) } => {
            assert_eq!(e.code, -32600);
            assert_eq!(e.message, "Not initialized");
        }
        other => panic!("{other:?}"),
    }
    assert!(matches!(decode(b"garbage"), Err(DecodeError::NotJson(_))));
    assert_eq!(decode(b"[1,2]"), Err(DecodeError::NotObject));
    assert_eq!(decode(br#"{"id":"x","result":1}"#), Err(DecodeError::ForeignId("\"x\"".into())));
    assert_eq!(decode(br#"{"foo":1}"#), Err(DecodeError::Unclassifiable));
}

#[tokio::test]
async fn calls_correlate_and_end_when_the_peer_goes_away() {
    let (ours, theirs) = tokio::io::duplex(1 << 16);
    let (our_r, our_w) = tokio::io::split(ours);
    let (client, mut incoming) = RpcClient::start(our_r, our_w, RpcConfig::default(), "test".into());
    let (their_r, mut their_w) = tokio::io::split(theirs);
    let peer = tokio::spawn(async move {
        let mut lines = tokio::io::BufReader::new(their_r);
        let mut line = String::new();
        use tokio::io::AsyncBufReadExt;
        // Answer the first call out of order with garbage around it, then hang up.
        lines.read_line(&mut line).await.unwrap();
        let req: Value = serde_json::from_str(&line).unwrap();
        let id = req["id"].as_u64().unwrap();
        their_w.write_all(b"not json\n{\"method\":\"note\",\"params\":{\"a\":1}}\n").await.unwrap();
        their_w
            .write_all(format!("{{\"id\":999,\"result\":1}}\n{{\"id\":{id},\"result\":{{\"v\":2}}}}\n").as_bytes())
            .await
            .unwrap();
        their_w.write_all(b"{\"id\":0,\"method\":\"ask\",\"params\":{}}\n").await.unwrap();
        line.clear();
        lines.read_line(&mut line).await.unwrap();
        drop(their_w);
        line
    });
    let v = client.call("first", json!({}), Duration::from_secs(5)).await.unwrap();
    assert_eq!(v, json!({"v": 2}));
    assert_eq!(
        incoming.recv().await.unwrap(),
        Incoming::Notification { method: "note".into(), params: json!({"a": 1}) }
    );
    let Incoming::Request { id, .. } = incoming.recv().await.unwrap() else { panic!() };
    client.respond(id, json!({"decision": "accept"})).await.unwrap();
    let answer: Value = serde_json::from_str(&peer.await.unwrap()).unwrap();
    assert_eq!(answer["id"], 0);
    assert_eq!(answer["result"]["decision"], "accept");
    // The peer hung up: pending and later calls fail with a clear error, not a hang.
    let err = client.call("second", json!({}), Duration::from_secs(5)).await.unwrap_err();
    assert!(matches!(err, RpcError::Closed(_)), "{err:?}");
    client.closed().await;
}

/// A peer that writes faster than its session handles is held back by the incoming queue's byte
/// budget (`--rpc-queue-bytes`): the reader stops reading, the peer's writes block, and nothing
/// is lost or reordered once the session catches up.
#[tokio::test]
async fn a_flooding_peer_is_held_back_by_the_queues_bytes_not_buffered() {
    const LINES: u64 = 64;
    let (ours, theirs) = tokio::io::duplex(8 * 1024);
    let (r, w) = tokio::io::split(ours);
    let budget = 4 * 1024;
    let config = RpcConfig { incoming_bytes: budget, ..RpcConfig::default() };
    let (_client, mut incoming) = RpcClient::start(r, w, config, "test".into());
    let (_their_r, mut their_w) = tokio::io::split(theirs);
    let line = |i: u64| format!("{{\"method\":\"note\",\"params\":{{\"i\":{i},\"pad\":\"{}\"}}}}\n", "x".repeat(1000));
    let line_len = line(0).len();
    let mut writer = tokio::spawn(async move {
        for i in 0..LINES {
            their_w.write_all(line(i).as_bytes()).await.unwrap();
        }
        their_w
    });
    let deadline = tokio::time::Instant::now() + Duration::from_secs(10);
    while incoming.queued_bytes() < budget {
        assert!(tokio::time::Instant::now() < deadline, "the reader never filled its budget");
        tokio::task::yield_now().await;
    }
    // Without the budget the whole flood (66 KB) would sit in the queue at once and the writer
    // would be done in microseconds; with it the reader waits, and so does the writer.
    assert!(
        tokio::time::timeout(Duration::from_millis(200), &mut writer).await.is_err(),
        "the peer wrote everything: its output was buffered, not held back"
    );
    assert!(incoming.queued_bytes() < budget + line_len, "{} bytes queued", incoming.queued_bytes());
    for i in 0..LINES {
        let msg = tokio::time::timeout(Duration::from_secs(10), incoming.recv()).await.expect("the flood goes on");
        let Some(Incoming::Notification { params, .. }) = msg else { panic!("{msg:?}") };
        assert_eq!(params["i"], i, "in order, none lost");
        assert!(incoming.queued_bytes() < budget + line_len, "{} bytes queued", incoming.queued_bytes());
    }
    tokio::time::timeout(Duration::from_secs(10), writer).await.expect("the peer got everything out").unwrap();
    assert_eq!(incoming.queued_bytes(), 0);
}

#[tokio::test(start_paused = true)]
async fn a_silent_peer_times_out() {
    let (ours, _theirs) = tokio::io::duplex(1024);
    let (r, w) = tokio::io::split(ours);
    let (client, _rx) = RpcClient::start(r, w, RpcConfig::default(), "test".into());
    let err = client.call("thread/start", json!({}), Duration::from_secs(90)).await.unwrap_err();
    assert_eq!(err, RpcError::Timeout { method: "thread/start".into(), after: Duration::from_secs(90) });
    assert_eq!(client.pending_calls(), 0, "no residue");
}

#[test]
fn json_errors_are_logged_without_the_values_they_quote() {
    let e = serde_json::from_str::<u64>("\"a secret said by the agent\"").unwrap_err();
    let r = redacted(&e);
    assert!(!r.contains("secret"), "{r}");
    assert!(r.contains("invalid type: string \"…\""), "{r}");
    #[derive(Debug, serde::Deserialize)]
    #[allow(dead_code)]
    struct S {
        id: u64,
    }
    let e = serde_json::from_str::<S>("{}").unwrap_err();
    assert!(redacted(&e).contains("missing field `id`"), "{}", redacted(&e));
}
