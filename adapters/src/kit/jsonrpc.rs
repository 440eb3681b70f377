//! Newline-delimited JSON-RPC over a child's stdin/stdout.
//!
//! Tolerant of what real peers do: no `"jsonrpc"` field, extra top-level fields (`emittedAtMs`),
//! integer or string ids (from 0), notifications at any time. Malformed lines, unknown response ids
//! and lines over the size limit are logged and skipped, never fatal, and an over-long line never
//! costs more than the limit in memory. When the peer's stdout ends, every pending call fails with
//! [`RpcError::Closed`].

use std::collections::HashMap;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex};
use std::time::Duration;

use ensemble_core::budget::ByteBudget;
use serde_json::{Map, Value, json};
use tokio::io::{AsyncRead, AsyncReadExt, AsyncWrite, AsyncWriteExt};
use tokio::sync::{mpsc, oneshot};
use tokio_util::sync::CancellationToken;

/// Splits a byte stream into lines of at most `max` bytes. Longer lines are reported once as
/// [`Line::TooLong`] and their bytes are dropped as they arrive (memory stays bounded by `max`).
#[derive(Debug)]
pub struct LineDecoder {
    max: usize,
    buf: Vec<u8>,
    /// Bytes of the current over-long line seen so far (None: not discarding).
    discarding: Option<usize>,
}

#[derive(Debug, PartialEq, Eq)]
pub enum Line {
    Complete(Vec<u8>),
    /// A line longer than the limit (its length in bytes) was skipped.
    TooLong(usize),
}

impl LineDecoder {
    pub fn new(max: usize) -> Self {
        Self { max: max.max(1), buf: Vec::new(), discarding: None }
    }

    /// Feeds bytes; returns the lines they complete.
    pub fn push(&mut self, mut bytes: &[u8]) -> Vec<Line> {
        let mut out = Vec::new();
        while !bytes.is_empty() {
            let nl = bytes.iter().position(|&b| b == b'\n');
            let (chunk, rest, ends) = match nl {
                Some(i) => (&bytes[..i], &bytes[i + 1..], true),
                None => (bytes, &[][..], false),
            };
            if let Some(seen) = self.discarding.as_mut() {
                *seen += chunk.len();
            } else if self.buf.len() + chunk.len() > self.max {
                self.discarding = Some(self.buf.len() + chunk.len());
                self.buf = Vec::new();
            } else {
                self.buf.extend_from_slice(chunk);
            }
            if ends {
                match self.discarding.take() {
                    Some(len) => out.push(Line::TooLong(len)),
                    None => {
                        let mut line = std::mem::take(&mut self.buf);
                        if line.last() == Some(&b'\r') {
                            line.pop();
                        }
                        out.push(Line::Complete(line));
                    }
                }
            }
            bytes = rest;
        }
        out
    }

    /// What is left when the stream ends (a last line without a newline).
    pub fn finish(&mut self) -> Option<Line> {
        match self.discarding.take() {
            Some(len) => Some(Line::TooLong(len)),
            None if !self.buf.is_empty() => Some(Line::Complete(std::mem::take(&mut self.buf))),
            None => None,
        }
    }

    /// Bytes currently buffered (never more than the limit).
    pub fn buffered(&self) -> usize {
        self.buf.len()
    }
}

/// A message from the peer.
#[derive(Clone, Debug, PartialEq)]
pub enum Incoming {
    /// The answer to one of our calls.
    Response {
        id: u64,
        result: Result<Value, ErrorObject>,
    },
    /// A request the peer expects us to answer (approvals, questions).
    Request {
        id: Value,
        method: String,
        params: Value,
    },
    Notification {
        method: String,
        params: Value,
    },
}

#[derive(Clone, Debug, PartialEq, thiserror::Error)]
#[error("{message} (code {code})")]
pub struct ErrorObject {
    pub code: i64,
    pub message: String,
    pub data: Option<Value>,
}

#[derive(Debug, PartialEq, thiserror::Error)]
pub enum DecodeError {
    #[error("not JSON: {0}")]
    NotJson(String),
    #[error("not a JSON object")]
    NotObject,
    #[error("neither a request, a response nor a notification")]
    Unclassifiable,
    #[error("a response to an id we never use: {0}")]
    ForeignId(String),
}

/// Classifies one line.
pub fn decode(line: &[u8]) -> Result<Incoming, DecodeError> {
    let v: Value = serde_json::from_slice(line).map_err(|e| DecodeError::NotJson(e.to_string()))?;
    let Value::Object(mut obj) = v else { return Err(DecodeError::NotObject) };
    let method = match obj.remove("method") {
        Some(Value::String(m)) => Some(m),
        Some(_) => return Err(DecodeError::Unclassifiable),
        None => None,
    };
    let id = obj.remove("id").filter(|v| !v.is_null());
    let params = obj.remove("params").unwrap_or(Value::Null);
    match (method, id) {
        (Some(method), Some(id)) => Ok(Incoming::Request { id, method, params }),
        (Some(method), None) => Ok(Incoming::Notification { method, params }),
        (None, Some(id)) => {
            // Our ids are unsigned integers; anything else cannot answer one of our calls.
            let id = id.as_u64().ok_or_else(|| DecodeError::ForeignId(id.to_string()))?;
            if let Some(err) = obj.remove("error").filter(|e| !e.is_null()) {
                Ok(Incoming::Response { id, result: Err(error_object(err)) })
            } else if let Some(result) = obj.remove("result") {
                Ok(Incoming::Response { id, result: Ok(result) })
            } else {
                Err(DecodeError::Unclassifiable)
            }
        }
        (None, None) => Err(DecodeError::Unclassifiable),
    }
}

fn error_object(v: Value) -> ErrorObject {
    let mut m = match v {
        Value::Object(m) => m,
        other => {
            let mut m = Map::new();
            m.insert("message".into(), Value::String(other.to_string()));
            m
        }
    };
    ErrorObject {
        code: m.get("code").and_then(Value::as_i64).unwrap_or(0),
        message: m.get("message").and_then(Value::as_str).unwrap_or("error").to_owned(),
        data: m.remove("data"),
    }
}

#[derive(Clone, Debug, PartialEq, thiserror::Error)]
pub enum RpcError {
    #[error("`{method}` got no answer within {after:?}")]
    Timeout { method: String, after: Duration },
    #[error("the connection closed: {0}")]
    Closed(String),
    #[error("`{method}` failed: {error}")]
    /// Boxed: the error's data makes the variant, and every result carrying it, large.
    Server { method: String, error: Box<ErrorObject> },
}

/// Limits of a connection.
#[derive(Clone, Debug)]
pub struct RpcConfig {
    /// Longest accepted line from the peer.
    pub max_line_bytes: usize,
    /// Outgoing messages queued before senders wait (the write buffer bound).
    pub write_queue: usize,
    /// Incoming requests/notifications queued before the reader waits (backpressure on the peer).
    pub incoming_queue: usize,
    /// Bytes of lines of incoming requests/notifications queued before the reader waits: with
    /// lines up to `max_line_bytes` the count alone would let one peer park GiBs.
    pub incoming_bytes: usize,
}

impl Default for RpcConfig {
    fn default() -> Self {
        Self { max_line_bytes: 8 * 1024 * 1024, write_queue: 256, incoming_queue: 1024, incoming_bytes: 16 << 20 }
    }
}

/// The peer's requests and notifications, in order. Taking one gives its bytes back to the
/// queue's budget, so the reader goes on.
pub struct IncomingRx {
    rx: mpsc::Receiver<(Incoming, usize)>,
    budget: Arc<ByteBudget>,
}

impl IncomingRx {
    /// The next message; `None` once the connection is gone and everything was taken.
    /// Cancel-safe (as `mpsc::Receiver::recv`).
    pub async fn recv(&mut self) -> Option<Incoming> {
        let (msg, bytes) = self.rx.recv().await?;
        self.budget.release(bytes);
        Some(msg)
    }

    /// Bytes of the lines waiting to be taken.
    pub fn queued_bytes(&self) -> usize {
        self.budget.queued()
    }
}

type Pending = Arc<Mutex<HashMap<u64, oneshot::Sender<Result<Value, RpcError>>>>>;

/// A JSON-RPC connection. Cloning shares it.
#[derive(Clone)]
pub struct RpcClient {
    writer: mpsc::Sender<Vec<u8>>,
    pending: Pending,
    next_id: Arc<AtomicU64>,
    closed: CancellationToken,
    reason: Arc<Mutex<Option<String>>>,
}

impl RpcClient {
    /// Starts the reader and writer tasks. Requests and notifications from the peer arrive on the
    /// returned receiver, in order.
    pub fn start<R, W>(reader: R, writer: W, config: RpcConfig, label: String) -> (Self, IncomingRx)
    where
        R: AsyncRead + Unpin + Send + 'static,
        W: AsyncWrite + Unpin + Send + 'static,
    {
        let (wtx, wrx) = mpsc::channel::<Vec<u8>>(config.write_queue.max(1));
        let (itx, rx) = mpsc::channel(config.incoming_queue.max(1));
        let budget = Arc::new(ByteBudget::new(config.incoming_bytes));
        let inbox = Inbox { tx: itx, budget: budget.clone() };
        let client = Self {
            writer: wtx,
            pending: Arc::new(Mutex::new(HashMap::new())),
            next_id: Arc::new(AtomicU64::new(1)),
            closed: CancellationToken::new(),
            reason: Arc::new(Mutex::new(None)),
        };
        tokio::spawn(write_loop(writer, wrx, client.clone()));
        tokio::spawn(read_loop(reader, inbox, client.clone(), config.max_line_bytes, label));
        (client, IncomingRx { rx, budget })
    }

    /// Calls `method` and waits at most `timeout` for the answer.
    pub async fn call(&self, method: &str, params: Value, timeout: Duration) -> Result<Value, RpcError> {
        let id = self.next_id.fetch_add(1, Ordering::Relaxed);
        let (tx, rx) = oneshot::channel();
        self.lock_pending().insert(id, tx);
        let msg = json!({"jsonrpc": "2.0", "id": id, "method": method, "params": params});
        if let Err(e) = self.send(&msg).await {
            self.lock_pending().remove(&id);
            return Err(e);
        }
        let outcome = tokio::select! {
            r = rx => r.unwrap_or_else(|_| Err(RpcError::Closed(self.close_reason()))),
            _ = tokio::time::sleep(timeout) => Err(RpcError::Timeout { method: method.to_owned(), after: timeout }),
        };
        self.lock_pending().remove(&id);
        match outcome {
            Err(RpcError::Server { error, .. }) => Err(RpcError::Server { method: method.to_owned(), error }),
            other => other,
        }
    }

    pub async fn notify(&self, method: &str, params: Value) -> Result<(), RpcError> {
        let msg = if params.is_null() {
            json!({"jsonrpc": "2.0", "method": method})
        } else {
            json!({"jsonrpc": "2.0", "method": method, "params": params})
        };
        self.send(&msg).await
    }

    /// Answers a request of the peer.
    pub async fn respond(&self, id: Value, result: Value) -> Result<(), RpcError> {
        self.send(&json!({"jsonrpc": "2.0", "id": id, "result": result})).await
    }

    pub async fn respond_error(&self, id: Value, code: i64, message: &str) -> Result<(), RpcError> {
        self.send(&json!({"jsonrpc": "2.0", "id": id, "error": {"code": code, "message": message}})).await
    }

    async fn send(&self, msg: &Value) -> Result<(), RpcError> {
        if self.closed.is_cancelled() {
            return Err(RpcError::Closed(self.close_reason()));
        }
        let mut line = serde_json::to_vec(msg).map_err(|e| RpcError::Closed(format!("encoding failed: {e}")))?;
        line.push(b'\n');
        tokio::select! {
            r = self.writer.send(line) => r.map_err(|_| RpcError::Closed(self.close_reason())),
            _ = self.closed.cancelled() => Err(RpcError::Closed(self.close_reason())),
        }
    }

    /// Resolves when the connection is gone.
    pub async fn closed(&self) {
        self.closed.cancelled().await;
    }

    pub fn is_closed(&self) -> bool {
        self.closed.is_cancelled()
    }

    pub fn close_reason(&self) -> String {
        self.reason.lock().ok().and_then(|r| r.clone()).unwrap_or_else(|| "closed".into())
    }

    /// Ends the connection: every pending call fails with `reason`.
    pub fn close(&self, reason: &str) {
        if let Ok(mut r) = self.reason.lock()
            && r.is_none()
        {
            *r = Some(reason.to_owned());
        }
        self.closed.cancel();
        let pending: Vec<_> = self.lock_pending().drain().collect();
        for (_, tx) in pending {
            let _ = tx.send(Err(RpcError::Closed(reason.to_owned())));
        }
    }

    /// Calls waiting for an answer.
    pub fn pending_calls(&self) -> usize {
        self.lock_pending().len()
    }

    fn lock_pending(&self) -> std::sync::MutexGuard<'_, HashMap<u64, oneshot::Sender<Result<Value, RpcError>>>> {
        self.pending.lock().unwrap_or_else(|e| e.into_inner())
    }

    fn resolve(&self, id: u64, result: Result<Value, ErrorObject>) -> bool {
        let Some(tx) = self.lock_pending().remove(&id) else { return false };
        let _ = tx.send(result.map_err(|error| RpcError::Server { method: String::new(), error: Box::new(error) }));
        true
    }
}

async fn write_loop<W: AsyncWrite + Unpin>(mut w: W, mut rx: mpsc::Receiver<Vec<u8>>, client: RpcClient) {
    loop {
        let line = tokio::select! {
            l = rx.recv() => l,
            _ = client.closed.cancelled() => None,
        };
        let Some(line) = line else { break };
        if let Err(e) = w.write_all(&line).await {
            client.close(&format!("writing to the peer failed: {e}"));
            break;
        }
        // Flush when nothing else is queued, so bursts go out in one write.
        if rx.is_empty()
            && let Err(e) = w.flush().await
        {
            client.close(&format!("writing to the peer failed: {e}"));
            break;
        }
    }
}

/// The reader's end of the incoming queue.
struct Inbox {
    tx: mpsc::Sender<(Incoming, usize)>,
    budget: Arc<ByteBudget>,
}

async fn read_loop<R: AsyncRead + Unpin>(mut r: R, incoming: Inbox, client: RpcClient, max_line: usize, label: String) {
    let mut decoder = LineDecoder::new(max_line);
    let mut buf = vec![0u8; 64 * 1024];
    let reason = loop {
        let n = match r.read(&mut buf).await {
            Ok(0) => break "the peer closed its output".to_owned(),
            Ok(n) => n,
            Err(e) => break format!("reading from the peer failed: {e}"),
        };
        for line in decoder.push(&buf[..n]) {
            if !dispatch(line, &incoming, &client, &label).await {
                client.close("the connection was dropped");
                return;
            }
        }
    };
    if let Some(line) = decoder.finish() {
        dispatch(line, &incoming, &client, &label).await;
    }
    client.close(&reason);
}

/// A JSON error's message with its quoted strings replaced (`invalid type: string "…"`): serde
/// quotes the offending value, which may be what the agent saw or said, and logs must not carry
/// that. Field and variant names (in backticks) are kept.
pub fn redacted(e: &serde_json::Error) -> String {
    let mut out = String::new();
    let mut quoted = false;
    for c in e.to_string().chars() {
        match (c, quoted) {
            ('"', false) => {
                quoted = true;
                out.push_str("\"…");
            }
            ('"', true) => {
                quoted = false;
                out.push('"');
            }
            (_, true) => {}
            (c, false) => out.push(c),
        }
    }
    out
}

/// Handles one line; false when nobody listens anymore.
async fn dispatch(line: Line, incoming: &Inbox, client: &RpcClient, label: &str) -> bool {
    let bytes = match line {
        Line::Complete(b) if b.iter().all(u8::is_ascii_whitespace) => return true,
        Line::Complete(b) => b,
        Line::TooLong(len) => {
            tracing::warn!(peer = %label, len, "skipping a line over the size limit");
            metrics::counter!("ensemble_rpc_lines_skipped_total", "reason" => "too_long").increment(1);
            return true;
        }
    };
    match decode(&bytes) {
        Ok(Incoming::Response { id, result }) => {
            if !client.resolve(id, result) {
                tracing::debug!(peer = %label, id, "response to an unknown id; skipped");
            }
            true
        }
        Ok(msg) => {
            // While the queue holds its budget the reader reads no further, so the peer's writes
            // block: it is held back, not buffered. A receiver gone gives nothing back: stop.
            if !incoming.budget.try_admit(bytes.len()) {
                tokio::select! {
                    () = incoming.budget.admit(bytes.len()) => {}
                    () = incoming.tx.closed() => return false,
                }
            }
            incoming.tx.send((msg, bytes.len())).await.is_ok()
        }
        Err(e) => {
            // The line itself is not logged: it may carry what the agent saw or said.
            tracing::warn!(peer = %label, error = %e, len = bytes.len(), "skipping a malformed line");
            metrics::counter!("ensemble_rpc_lines_skipped_total", "reason" => "malformed").increment(1);
            true
        }
    }
}

#[cfg(test)]
#[path = "jsonrpc_tests.rs"]
mod tests;
