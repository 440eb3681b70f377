//! An agent process's stderr: drained line by line into the log (so the pipe never fills and
//! blocks the agent), with its last lines kept for the error messages of a failed start or a lost
//! process.

use std::collections::VecDeque;
use std::fmt;
use std::sync::{Arc, Mutex};

use tokio::io::{AsyncRead, AsyncReadExt};

use super::jsonrpc::{Line, LineDecoder};

/// Longest stderr line read whole; longer lines are skipped (and logged as skipped).
const MAX_LINE_BYTES: usize = 64 * 1024;
/// Most characters of a line kept in the tail.
const TAIL_LINE_CHARS: usize = 300;

/// The last lines a process wrote to stderr. Cloning shares it.
#[derive(Clone, Debug)]
pub struct StderrTail {
    lines: Arc<Mutex<VecDeque<String>>>,
    keep: usize,
}

impl StderrTail {
    /// Keeps the last `keep` lines.
    pub fn new(keep: usize) -> Self {
        Self { lines: Arc::new(Mutex::new(VecDeque::new())), keep }
    }

    pub fn lines(&self) -> Vec<String> {
        self.lines.lock().map(|t| t.iter().cloned().collect()).unwrap_or_default()
    }

    /// `; last stderr: a | b` to end an error message with, or nothing when stderr was silent.
    pub fn suffix(&self) -> String {
        let lines = self.lines();
        if lines.is_empty() { String::new() } else { format!("; last stderr: {}", lines.join(" | ")) }
    }

    fn push(&self, line: &str) {
        if let Ok(mut t) = self.lines.lock() {
            t.push_back(line.chars().take(TAIL_LINE_CHARS).collect());
            while t.len() > self.keep {
                t.pop_front();
            }
        }
    }
}

/// Forwards `stderr` to the log (target `ensemble::agent::stderr`, with the provider and the
/// session), line by line, until it ends; `tail` keeps its last lines. Lines over `max_line`
/// bytes (at most 64 KiB) are skipped as they arrive.
pub async fn drain<R, P, S>(mut stderr: R, provider: P, session: S, tail: StderrTail, max_line: usize)
where
    R: AsyncRead + Unpin,
    P: fmt::Display,
    S: fmt::Display,
{
    let mut decoder = LineDecoder::new(max_line.min(MAX_LINE_BYTES));
    let mut buf = vec![0u8; 8192];
    loop {
        let n = match stderr.read(&mut buf).await {
            Ok(0) | Err(_) => break,
            Ok(n) => n,
        };
        for line in decoder.push(&buf[..n]) {
            let text = match line {
                Line::Complete(b) => String::from_utf8_lossy(&b).trim_end().to_owned(),
                Line::TooLong(len) => format!("<{len} bytes skipped>"),
            };
            if text.is_empty() {
                continue;
            }
            tracing::info!(target: "ensemble::agent::stderr", provider = %provider, session = %session, "{text}");
            tail.push(&text);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[tokio::test]
    async fn the_tail_keeps_the_last_lines_cut_short() {
        let tail = StderrTail::new(2);
        let long = "x".repeat(400);
        let input = format!("first\n\n  \nsecond\r\n{long}\n");
        drain(input.as_bytes(), "agent", "r/s", tail.clone(), 1024).await;
        assert_eq!(tail.lines(), vec!["second".to_owned(), "x".repeat(300)]);
        assert_eq!(tail.suffix(), format!("; last stderr: second | {}", "x".repeat(300)));
    }

    #[tokio::test]
    async fn over_long_lines_are_skipped_and_said_so() {
        let tail = StderrTail::new(5);
        let input = format!("{}\nafter\nno newline at the end", "y".repeat(100));
        drain(input.as_bytes(), "agent", "r/s", tail.clone(), 50).await;
        assert_eq!(tail.lines(), ["<100 bytes skipped>", "after"]);
    }

    #[test]
    fn a_silent_process_adds_nothing_to_messages() {
        assert_eq!(StderrTail::new(3).suffix(), "");
    }
}
