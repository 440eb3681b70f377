//! The subscribers: tokio-tungstenite clients that read `hello`, then check every event frame's
//! `seq` and measure the latency the event text carries.

use std::sync::Arc;
use std::sync::atomic::{AtomicU64, Ordering};

use futures::StreamExt;
use tokio::sync::mpsc;
use tokio_tungstenite::tungstenite;
use tokio_tungstenite::tungstenite::client::IntoClientRequest;
use tokio_tungstenite::tungstenite::protocol::WebSocketConfig;

use crate::ensemble::BENCH_TOKEN;
use crate::measure::now_ns;

pub struct ClientOut {
    pub error: Option<String>,
    pub done_ns: u64,
    pub latencies_us: Vec<u32>,
    /// Size of the first event frame.
    pub frame_bytes: usize,
}

/// The number after `key` in `s`.
pub fn number_after(s: &str, key: &str) -> Option<u64> {
    let at = s.find(key)? + key.len();
    let digits = s[at..].bytes().take_while(u8::is_ascii_digit).count();
    s[at..at + digits].parse().ok()
}

/// Connects, reads `hello`, reports ready, then expects `events` event frames with consecutive seqs.
pub async fn run_client(
    url: String,
    read_buf: usize,
    events: u64,
    latency_after: Option<u64>,
    received: Arc<Vec<AtomicU64>>,
    index: usize,
    ready: mpsc::Sender<Result<(), String>>,
) -> ClientOut {
    let out = subscribe(url, read_buf, events, latency_after, &received[index], ready).await;
    if out.error.is_some() {
        // A failed subscriber must not hold the publisher's window back.
        received[index].store(u64::MAX, Ordering::Relaxed);
    }
    out
}

pub async fn subscribe(
    url: String,
    read_buf: usize,
    events: u64,
    latency_after: Option<u64>,
    received: &AtomicU64,
    ready: mpsc::Sender<Result<(), String>>,
) -> ClientOut {
    let fail = |e: String| ClientOut { error: Some(e), done_ns: 0, latencies_us: Vec::new(), frame_bytes: 0 };
    let config = WebSocketConfig::default().read_buffer_size(read_buf);
    let mut request = url.as_str().into_client_request().expect("ws request");
    // The baseline ignores it; Ensemble requires it.
    request.headers_mut().insert("authorization", format!("Bearer {BENCH_TOKEN}").parse().expect("header"));
    let connected = tokio_tungstenite::connect_async_with_config(request, Some(config), /*disable_nagle*/ true);
    let mut ws = match connected.await {
        Ok((ws, _)) => ws,
        Err(e) => {
            let _ = ready.send(Err(format!("connect: {e}"))).await;
            return fail(format!("connect: {e}"));
        }
    };
    let head = match ws.next().await {
        Some(Ok(tungstenite::Message::Text(t))) if t.as_str().starts_with(r#"{"type":"hello""#) => {
            number_after(t.as_str(), r#""headSeq":"#).unwrap_or(0)
        }
        other => {
            let e = format!("expected hello, got {other:?}");
            let _ = ready.send(Err(e.clone())).await;
            return fail(e);
        }
    };
    let _ = ready.send(Ok(())).await;
    drop(ready);
    let mut latencies_us = Vec::with_capacity(latency_after.map_or(0, |a| events.saturating_sub(a) as usize));
    let mut next = head + 1;
    let mut got = 0u64;
    let mut frame_bytes = 0;
    while let Some(msg) = ws.next().await {
        let text = match msg {
            Ok(tungstenite::Message::Text(t)) => t,
            Ok(tungstenite::Message::Ping(_) | tungstenite::Message::Pong(_) | tungstenite::Message::Frame(_)) => {
                continue;
            }
            Ok(other) => return fail(format!("after {got} events: unexpected {other:?}")),
            Err(e) => return fail(format!("after {got} events: {e}")),
        };
        let s = text.as_str();
        let Some(seq) = number_after(s, r#""seq":"#).filter(|_| s.starts_with(r#"{"type":"event""#)) else {
            return fail(format!("after {got} events: unexpected frame {s}"));
        };
        if seq != next {
            return fail(format!("expected seq {next}, got {seq}"));
        }
        if got == 0 {
            frame_bytes = s.len();
        }
        next += 1;
        got += 1;
        if latency_after.is_some_and(|a| got > a) {
            let sent = number_after(s, r#""text":"@"#).unwrap_or(0);
            let us = now_ns().saturating_sub(sent) / 1_000;
            latencies_us.push(u32::try_from(us).unwrap_or(u32::MAX));
        }
        received.store(got, Ordering::Relaxed);
        if got == events {
            let done_ns = now_ns();
            let _ = ws.close(None).await;
            return ClientOut { error: None, done_ns, latencies_us, frame_bytes };
        }
    }
    fail(format!("connection ended after {got} of {events} events"))
}
