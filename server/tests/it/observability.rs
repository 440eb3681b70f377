//! Metrics, JSON logs and the served OpenAPI document, from the real binary.

use reqwest::StatusCode;

use crate::common::*;

#[tokio::test]
async fn metrics_count_what_happened() {
    // A store queue budget of one byte: each reply's output waits until the writer has taken the
    // last, and still nothing waits forever.
    let s = Server::start(&["--store-queue-bytes", "1"]).await;
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
    assert!(text.contains("ensemble_store_queue_bytes"));
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

#[tokio::test]
async fn invented_methods_and_paths_do_not_grow_the_metrics() {
    let s = Server::start(&[]).await;
    s.session("r", "s").await;
    let metrics = || async { s.http().get(s.url("/metrics")).send().await.unwrap().text().await.unwrap() };
    let before = metrics().await;
    // The issue's attack, smaller: distinct long method names, and distinct paths, with and
    // without the token.
    let plain = reqwest::Client::new();
    for i in 0..300 {
        let method = reqwest::Method::from_bytes(format!("M{i:04}{}", "X".repeat(20_000)).as_bytes()).unwrap();
        let res = s.http().request(method.clone(), s.url("/v1/rooms")).send().await.unwrap();
        assert_eq!(res.status(), StatusCode::METHOD_NOT_ALLOWED);
        let res = plain.request(method, s.url(&format!("/nowhere/{i}"))).send().await.unwrap();
        assert_eq!(res.status(), StatusCode::UNAUTHORIZED);
        let res = s.http().get(s.url(&format!("/v1/nowhere-{i}/{}", "p".repeat(1000)))).send().await.unwrap();
        assert_eq!(res.status(), StatusCode::NOT_FOUND);
    }
    let after = metrics().await;
    assert!(after.len() < before.len() + 4096, "/metrics grew from {} to {} bytes", before.len(), after.len());
    assert!(!after.contains("XXXX") && !after.contains("nowhere"), "an invented name became a label");
    // Every request line's labels come from the fixed sets.
    const METHODS: [&str; 10] =
        ["GET", "POST", "PUT", "DELETE", "PATCH", "HEAD", "OPTIONS", "CONNECT", "TRACE", "other"];
    let mut seen = std::collections::BTreeSet::new();
    for line in after.lines().filter(|l| l.starts_with("ensemble_http_requests_total{")) {
        let label = |name: &str| {
            let start = line.find(&format!("{name}=\"")).unwrap_or_else(|| panic!("{name} in {line}")) + name.len() + 2;
            line[start..].split('"').next().unwrap().to_owned()
        };
        let (method, route) = (label("method"), label("route"));
        assert!(METHODS.contains(&method.as_str()), "{line}");
        assert!(route == "unmatched" || route.starts_with("/v1/") || route.starts_with('/'), "{line}");
        assert!(!route.contains("nowhere"), "{line}");
        seen.insert((method, route));
    }
    assert!(seen.contains(&("other".to_owned(), "/v1/rooms".to_owned())), "{seen:?}");
    assert!(seen.contains(&("other".to_owned(), "unmatched".to_owned())), "{seen:?}");
    assert!(seen.contains(&("GET".to_owned(), "unmatched".to_owned())), "{seen:?}");
}
