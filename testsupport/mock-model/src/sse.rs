//! The transport every SSE answer shares, whatever its dialect: a task writes frames into a
//! channel that is the response body, watching for the client's disconnect and the mock's
//! shutdown, and records how the answer ended.

use std::convert::Infallible;
use std::future::Future;
use std::sync::Arc;
use std::time::Duration;

use axum::body::{Body, Bytes};
use axum::http::{HeaderName, HeaderValue, header};
use axum::response::Response;
use tokio::sync::{mpsc, watch};

use crate::reply::{Gate, MessageStep, StreamEnd};
use crate::request::Outcome;

/// What a stream needs from the mock that serves it: the shutdown signal to watch, and the request
/// log to record how the answer ended in. A trait, so that the transport does not depend on the
/// server that uses it.
pub(crate) trait Host: Send + Sync + 'static {
    fn subscribe_shutdown(&self) -> watch::Receiver<bool>;
    fn set_outcome(&self, seq: u64, outcome: Outcome);
}

/// Why a stream stopped early.
pub(crate) enum Stop {
    Disconnected,
    ShutDown,
}

/// The writing end of one SSE response body.
pub(crate) struct Sink {
    tx: mpsc::Sender<Bytes>,
    shutdown: watch::Receiver<bool>,
}

impl Sink {
    /// Send one already framed SSE event (`data: …\n\n`, with its `event:` line if any).
    pub(crate) async fn frame(&mut self, frame: String) -> Result<(), Stop> {
        tokio::select! {
            sent = self.tx.send(Bytes::from(frame)) => sent.map_err(|_| Stop::Disconnected),
            _ = self.shutdown.wait_for(|stop| *stop) => Err(Stop::ShutDown),
        }
    }

    /// Sleep, but notice a client that goes away meanwhile (codex and the ACP agents cancel by
    /// dropping the connection, and the outcome should say so even if nothing is being written).
    pub(crate) async fn pause(&mut self, duration: Duration) -> Result<(), Stop> {
        if duration.is_zero() {
            return Ok(());
        }
        tokio::select! {
            () = tokio::time::sleep(duration) => Ok(()),
            () = self.tx.closed() => Err(Stop::Disconnected),
            _ = self.shutdown.wait_for(|stop| *stop) => Err(Stop::ShutDown),
        }
    }

    pub(crate) async fn wait_gate(&mut self, gate: &Gate) -> Result<(), Stop> {
        tokio::select! {
            () = gate.opened() => Ok(()),
            () = self.tx.closed() => Err(Stop::Disconnected),
            _ = self.shutdown.wait_for(|stop| *stop) => Err(Stop::ShutDown),
        }
    }
}

/// Answer with `200 text/event-stream` whose body `write` produces; when it is done (or the
/// client left), record the outcome of request `seq`.
pub(crate) fn sse_response<H, F, Fut>(
    host: Arc<H>,
    seq: u64,
    end: StreamEnd,
    extra_headers: Vec<(String, String)>,
    write: F,
) -> Response
where
    H: Host,
    F: FnOnce(Sink) -> Fut + Send + 'static,
    Fut: Future<Output = Result<(), Stop>> + Send + 'static,
{
    let (tx, rx) = mpsc::channel::<Bytes>(32);
    let sink = Sink { tx, shutdown: host.subscribe_shutdown() };
    tokio::spawn(async move {
        // The future owns the sink: once it is done the channel is closed and the body ends,
        // before the outcome is recorded (a waiter sees the outcome only after the last byte).
        let outcome = match write(sink).await {
            Ok(()) => match end {
                StreamEnd::Completed => Outcome::Completed,
                StreamEnd::Failed { .. } => Outcome::Failed,
                StreamEnd::Close => Outcome::Closed,
            },
            Err(Stop::Disconnected) => Outcome::ClientDisconnected,
            Err(Stop::ShutDown) => Outcome::ShutDown,
        };
        host.set_outcome(seq, outcome);
    });
    let body = futures::stream::unfold(rx, |mut rx| async move {
        rx.recv().await.map(|chunk| (Ok::<Bytes, Infallible>(chunk), rx))
    });
    let mut response = Response::new(Body::from_stream(body));
    let headers = response.headers_mut();
    headers.insert(header::CONTENT_TYPE, HeaderValue::from_static("text/event-stream"));
    headers.insert(header::CACHE_CONTROL, HeaderValue::from_static("no-cache"));
    // One response per connection, like the python mocks: a client's cancel is a connection drop.
    headers.insert(header::CONNECTION, HeaderValue::from_static("close"));
    for (name, value) in extra_headers {
        if let (Ok(name), Ok(value)) = (HeaderName::try_from(name), HeaderValue::try_from(value)) {
            headers.insert(name, value);
        }
    }
    response
}

/// One thing to do while streaming a message's text.
pub(crate) enum Beat<'a> {
    Delta(String),
    Wait(&'a Gate),
    Pause(Duration),
}

/// A message step as the sequence of deltas, holds and pauses every dialect plays the same way:
/// after `hold_after(n)` deltas wait for the gate; after each delta pause `delay`; an unstreamed
/// message is one delta with the whole text.
pub(crate) fn beats(message: &MessageStep) -> Vec<Beat<'_>> {
    let mut out = Vec::new();
    if !message.streamed {
        if let Some((_, gate)) = &message.hold {
            out.push(Beat::Wait(gate));
        }
        out.push(Beat::Delta(message.text()));
        return out;
    }
    for (i, chunk) in message.chunks.iter().enumerate() {
        if let Some((_, gate)) = message.hold.as_ref().filter(|(after, _)| *after == i) {
            out.push(Beat::Wait(gate));
        }
        out.push(Beat::Delta(chunk.clone()));
        if !message.delay.is_zero() {
            out.push(Beat::Pause(message.delay));
        }
    }
    if let Some((_, gate)) = message.hold.as_ref().filter(|(after, _)| *after >= message.chunks.len()) {
        out.push(Beat::Wait(gate));
    }
    out
}

/// Split a JSON text in two near its middle (on a character boundary), so that clients have to
/// put streamed tool arguments back together as they would with a real model.
pub(crate) fn halves(text: &str) -> Vec<&str> {
    if text.len() < 2 {
        return vec![text];
    }
    let mut mid = text.len() / 2;
    while !text.is_char_boundary(mid) {
        mid += 1;
    }
    let (a, b) = text.split_at(mid);
    if b.is_empty() { vec![a] } else { vec![a, b] }
}

/// Ids handed out in one answer: `prefix_mock_SEQ` for the first with this prefix, then
/// `prefix_mock_SEQ_2`, ….
pub(crate) struct Ids {
    seq: u64,
    counts: std::collections::HashMap<&'static str, u32>,
}

impl Ids {
    pub(crate) fn new(seq: u64) -> Self {
        Self { seq, counts: std::collections::HashMap::new() }
    }

    pub(crate) fn next(&mut self, prefix: &'static str) -> String {
        let n = self.counts.entry(prefix).or_insert(0);
        *n += 1;
        if *n == 1 { format!("{prefix}_mock_{}", self.seq) } else { format!("{prefix}_mock_{}_{n}", self.seq) }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn halves_respect_char_boundaries() {
        assert_eq!(halves(""), vec![""]);
        assert_eq!(halves("{}"), vec!["{", "}"]);
        assert_eq!(halves("aéé").concat(), "aéé");
        assert_eq!(halves("ééé").len(), 2);
    }

    #[test]
    fn ids_count_per_prefix() {
        let mut ids = Ids::new(7);
        assert_eq!(ids.next("toolu"), "toolu_mock_7");
        assert_eq!(ids.next("toolu"), "toolu_mock_7_2");
        assert_eq!(ids.next("msg"), "msg_mock_7");
    }
}
