//! Metrics, JSON logs and the served OpenAPI document, from the real binary.

use reqwest::StatusCode;

use crate::common::*;

#[tokio::test]
async fn metrics_count_what_happened() {
    let s = Server::start(&[]).await;
    s.session("r", "s").await;
    let mut ws = s.ws("r", Some(0)).await;
    ws.hello().await;
    s.turn("r", "s", "/chunks 10").await;
    ws.until_type("turn.completed").await;
    // The counters move right after the frames are written, so a client can be a moment ahead of
    // them: read until they have caught up with what it saw (bounded).
    let deadline = tokio::time::Instant::now() + WAIT;
    let text = loop {
        let seen = s.events("r").await.len();
        let res = s.http().get(s.url("/metrics")).send().await.unwrap();
        assert_eq!(res.status(), StatusCode::OK);
        assert!(res.headers()["content-type"].to_str().unwrap().starts_with("text/plain"));
        let text = res.text().await.unwrap();
        let sent = text.lines().find_map(|l| l.strip_prefix("ensemble_ws_frames_sent_total ")).map(str::trim);
        if sent.and_then(|v| v.parse::<f64>().ok()).is_some_and(|v| v >= seen as f64) {
            break text;
        }
        assert!(tokio::time::Instant::now() < deadline, "frames sent never reached {seen}: {sent:?}");
        tokio::time::sleep(std::time::Duration::from_millis(20)).await;
    };
    let value = |name: &str| -> f64 {
        text.lines()
            .find(|l| l.starts_with(name) && !l.starts_with('#'))
            .and_then(|l| l.rsplit(' ').next())
            .and_then(|v| v.parse().ok())
            .unwrap_or_else(|| panic!("{name} missing from:\n{text}"))
    };
    let events = s.events("r").await.len() as f64;
    assert_eq!(value("ensemble_events_appended_total"), events);
    assert!(value("ensemble_ws_frames_sent_total") >= events);
    assert_eq!(value("ensemble_sessions{status=\"ready\"}"), 1.0);
    assert_eq!(value("ensemble_ws_connections"), 1.0);
    assert!(value("ensemble_store_batch_events_count") >= 1.0);
    assert!(value("ensemble_store_commit_seconds_count") >= 1.0);
    assert_eq!(
        value("ensemble_http_requests_total{route=\"/v1/rooms/{roomId}/sessions\",method=\"POST\",status=\"201\"}"),
        1.0
    );
    assert!(text.contains("ensemble_live_provider_processes"));
}

#[tokio::test]
async fn json_logs_and_the_served_spec() {
    let s = Server::start(&["--log-format", "json"]).await;
    let (status, _) = s.get("/healthz").await;
    assert_eq!(status, StatusCode::OK);
    let res = s.http().get(s.url("/openapi.json")).send().await.unwrap();
    assert_eq!(res.status(), StatusCode::OK);
    let served = res.text().await.unwrap();
    let committed = std::fs::read_to_string(concat!(env!("CARGO_MANIFEST_DIR"), "/../openapi/openapi.json")).unwrap();
    assert_eq!(served, committed);
    let log = s.log();
    let started = log.lines().find(|l| l.contains("ensemble started")).expect("start line logged");
    let v: serde_json::Value = serde_json::from_str(started).expect("a JSON log line");
    assert_eq!(v["level"], "INFO");
    assert!(v["addr"].as_str().unwrap().starts_with("127.0.0.1:"));
}
