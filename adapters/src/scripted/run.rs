//! `/run COMMAND`, really: `sh -c COMMAND` in the session's cwd, inside the session's box (the
//! isolation every provider's processes get), its output kept up to a bound, stopped at the run
//! timeout or when the turn is canceled.

use std::ffi::OsString;
use std::path::PathBuf;
use std::sync::Arc;

use ensemble_core::event::CallStatus;
use tokio::io::{AsyncRead, AsyncReadExt};
use tokio_util::sync::CancellationToken;

use super::live::Live;
use crate::kit::process::{ProcessSpec, Supervised, base_env};
use crate::kit::sandbox::Extras;

/// What a run left.
pub(super) struct Ran {
    pub status: CallStatus,
    pub output: String,
    pub exit_code: Option<i32>,
}

fn failed(output: String) -> Ran {
    Ran { status: CallStatus::Failed, output, exit_code: None }
}

/// Runs `cmd` for `live`'s session.
pub(super) async fn execute(live: &Live, cmd: &str, cancel: &CancellationToken) -> Ran {
    let config = &live.config;
    // No box can be made here (no bubblewrap, no user namespaces): the command is refused, never
    // run unconfined.
    let sandbox = match config.sandboxes.sandbox_at(&live.place, Some(live.handle.sink.clone()), &Extras::default()) {
        Ok(s) => s,
        Err(e) => return failed(format!("{e}\n")),
    };
    let spec = ProcessSpec {
        program: PathBuf::from("/bin/sh"),
        args: vec![OsString::from("-c"), OsString::from(cmd)],
        env: base_env(),
        cwd: PathBuf::from(&live.cwd),
        cgroup_procs: Vec::new(),
    }
    .boxed(sandbox.as_ref());
    let spawned = match spec.and_then(|spec| Supervised::spawn(&spec)) {
        Ok(s) => s,
        Err(e) => return failed(format!("cannot run it: {e}\n")),
    };
    // No input: the command reads end of file.
    drop(spawned.stdin);
    let mut process = spawned.process;
    let family = process.family();
    let kept = Arc::new(std::sync::Mutex::new(Vec::new()));
    let limit = config.run_output_bytes;
    let read = async {
        tokio::join!(collect(spawned.stdout, kept.clone(), limit), collect(spawned.stderr, kept.clone(), limit));
    };
    let outcome = tokio::select! {
        () = read => None,
        () = tokio::time::sleep(config.run_timeout) => Some(format!("\n[stopped after {} s]\n", config.run_timeout.as_secs())),
        () = cancel.cancelled() => Some("\n[stopped: the turn was canceled]\n".to_owned()),
    };
    let status = match &outcome {
        None => process.wait().await.ok(),
        Some(_) => {
            process.kill_family(&family);
            process.terminate(std::time::Duration::from_millis(200)).await
        }
    };
    let bytes = std::mem::take(&mut *kept.lock().unwrap_or_else(|e| e.into_inner()));
    let mut output = String::from_utf8_lossy(&bytes).into_owned();
    if let Some(why) = &outcome {
        output.push_str(why);
    }
    if let Some(s) = &sandbox
        && s.oom_kills() > 0
    {
        output.push_str("\n[a process was killed: the session's memory limit was reached]\n");
    }
    let exit_code = status.and_then(|s| s.code());
    let ok = outcome.is_none() && exit_code == Some(0);
    Ran { status: if ok { CallStatus::Completed } else { CallStatus::Failed }, output, exit_code }
}

/// Reads `r` to its end, keeping what fits in `limit` bytes of `kept` (shared by stdout and
/// stderr) and counting the rest in a last line.
async fn collect(r: impl AsyncRead + Unpin, kept: Arc<std::sync::Mutex<Vec<u8>>>, limit: usize) {
    let mut r = r;
    let mut buf = [0u8; 8192];
    let mut dropped = 0usize;
    loop {
        let n = match r.read(&mut buf).await {
            Ok(0) | Err(_) => break,
            Ok(n) => n,
        };
        let mut k = kept.lock().unwrap_or_else(|e| e.into_inner());
        let room = limit.saturating_sub(k.len()).min(n);
        k.extend_from_slice(&buf[..room]);
        dropped += n - room;
    }
    if dropped > 0 {
        let mut k = kept.lock().unwrap_or_else(|e| e.into_inner());
        k.extend_from_slice(format!("\n[{dropped} more bytes of output not kept]\n").as_bytes());
    }
}
