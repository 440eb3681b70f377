//! Line transport over the process's stdin/stdout.
//!
//! The crate's own `Stdio` copies outgoing bytes to stdout in arbitrary chunks from a background
//! thread, so bytes written to stdout by anyone else could land inside a JSON-RPC line, and there is
//! no way to know when a message has reached the pipe. Here one thread writes each outgoing line
//! whole, under the stdout lock, and flushes; [`write_raw_lines`] takes the same lock, so raw lines
//! never interleave with protocol lines and are on the pipe when it returns.

use std::io::{BufRead as _, Write as _};
use std::time::Duration;

use agent_client_protocol::Lines;
use futures::{Sink, Stream};
use tokio::sync::mpsc;

/// How many lines may wait for the writer (or for the reader's consumer) before senders wait.
const QUEUE: usize = 1024;
/// The writer joins queued lines into one write up to about this many bytes.
const BATCH_BYTES: usize = 64 * 1024;

/// The stdout writer thread, to be waited for at exit.
#[derive(Debug)]
pub struct Writer {
    done: std::sync::mpsc::Receiver<()>,
}

impl Writer {
    /// Wait (at most `timeout`) for the writer thread to write out what is queued; it ends once the
    /// transport, the only sender, is gone.
    pub fn finish(self, timeout: Duration) {
        let _ended = self.done.recv_timeout(timeout);
    }
}

/// The transport for the connection: lines from stdin, lines to stdout.
pub fn stdio_lines() -> (
    Lines<
        impl Sink<String, Error = std::io::Error> + Send + 'static,
        impl Stream<Item = std::io::Result<String>> + Send + 'static,
    >,
    Writer,
) {
    let (out_tx, out_rx) = mpsc::channel::<String>(QUEUE);
    let (done_tx, done_rx) = std::sync::mpsc::channel();
    std::thread::Builder::new()
        .name("stdout-writer".to_owned())
        .spawn(move || {
            write_loop(out_rx);
            let _sent = done_tx.send(());
        })
        .map_err(|error| eprintln!("ensemble-acp-test-agent: cannot start the stdout writer: {error}"))
        .ok();

    let (in_tx, in_rx) = mpsc::channel::<std::io::Result<String>>(QUEUE);
    std::thread::Builder::new()
        .name("stdin-reader".to_owned())
        .spawn(move || read_loop(&in_tx))
        .map_err(|error| eprintln!("ensemble-acp-test-agent: cannot start the stdin reader: {error}"))
        .ok();

    let outgoing = futures::sink::unfold(out_tx, async |out_tx, line: String| {
        out_tx
            .send(line)
            .await
            .map_err(|_| std::io::Error::new(std::io::ErrorKind::BrokenPipe, "stdout writer ended"))?;
        Ok::<_, std::io::Error>(out_tx)
    });
    let incoming = futures::stream::unfold(in_rx, async |mut in_rx| in_rx.recv().await.map(|line| (line, in_rx)));
    (Lines::new(Box::pin(outgoing), Box::pin(incoming)), Writer { done: done_rx })
}

fn write_loop(mut lines: mpsc::Receiver<String>) {
    while let Some(first) = lines.blocking_recv() {
        let mut batch = first;
        batch.push('\n');
        while batch.len() < BATCH_BYTES {
            match lines.try_recv() {
                Ok(line) => {
                    batch.push_str(&line);
                    batch.push('\n');
                }
                Err(_) => break,
            }
        }
        let mut stdout = std::io::stdout().lock();
        if let Err(error) = stdout.write_all(batch.as_bytes()).and_then(|()| stdout.flush()) {
            eprintln!("ensemble-acp-test-agent: stdout: {error}");
            return;
        }
    }
}

fn read_loop(lines: &mpsc::Sender<std::io::Result<String>>) {
    let mut stdin = std::io::stdin().lock();
    let mut buf = Vec::new();
    loop {
        buf.clear();
        let item = match stdin.read_until(b'\n', &mut buf) {
            Ok(0) => return,
            Ok(_) => {
                if buf.last() == Some(&b'\n') {
                    buf.pop();
                    if buf.last() == Some(&b'\r') {
                        buf.pop();
                    }
                }
                Ok(String::from_utf8_lossy(&buf).into_owned())
            }
            Err(error) if error.kind() == std::io::ErrorKind::Interrupted => continue,
            Err(error) => Err(error),
        };
        let failed = item.is_err();
        if lines.blocking_send(item).is_err() || failed {
            return;
        }
    }
}

/// Write `lines` straight to stdout, each followed by a newline, under the stdout lock (so they do not
/// interleave with the transport's lines), and flush.
pub fn write_raw_lines(lines: &[&str]) -> std::io::Result<()> {
    let mut stdout = std::io::stdout().lock();
    for line in lines {
        stdout.write_all(line.as_bytes())?;
        stdout.write_all(b"\n")?;
    }
    stdout.flush()
}
