#![forbid(unsafe_code)]
//! Serve the mock model APIs (Responses, Anthropic Messages, Gemini, chat completions) until
//! killed (side requests and keyword rules only).
//!
//! ```text
//! mock-model [--port N] [--api-key KEY] [--log FILE] [--port-file FILE]
//!            [--slow-deltas N] [--slow-delay-ms MS] [--text-delay-ms MS]
//! ```
//! Prints `listening on http://127.0.0.1:PORT` (codex's and opencode's base URL is that plus
//! `/v1`; Claude Code's and Gemini CLI's is that address).

use std::io::Write;
use std::net::{Ipv4Addr, SocketAddr};
use std::process::ExitCode;
use std::time::Duration;

use ensemble_mock_model::{MockConfig, MockModel};

fn usage() -> ExitCode {
    eprintln!(
        "usage: mock-model [--port N] [--api-key KEY] [--log FILE] [--port-file FILE] \
         [--slow-deltas N] [--slow-delay-ms MS] [--text-delay-ms MS]"
    );
    ExitCode::from(2)
}

fn parse_args(mut config: MockConfig) -> Result<(MockConfig, Option<String>), String> {
    let mut args = std::env::args().skip(1);
    let mut port_file = None;
    while let Some(flag) = args.next() {
        let mut value = || args.next().ok_or_else(|| format!("{flag} needs a value"));
        let number = |v: String| v.parse::<u64>().map_err(|e| format!("{flag}: {e}"));
        match flag.as_str() {
            "--port" => {
                let port = u16::try_from(number(value()?)?).map_err(|e| format!("--port: {e}"))?;
                config.addr = SocketAddr::from((Ipv4Addr::LOCALHOST, port));
            }
            "--api-key" => config.api_key = Some(value()?),
            "--log" => config.log_file = Some(value()?.into()),
            "--port-file" => port_file = Some(value()?),
            "--slow-deltas" => {
                config.slow_deltas = usize::try_from(number(value()?)?).map_err(|e| format!("{flag}: {e}"))?;
            }
            "--slow-delay-ms" => config.slow_delay = Duration::from_millis(number(value()?)?),
            "--text-delay-ms" => config.text_delay = Duration::from_millis(number(value()?)?),
            other => return Err(format!("unknown argument {other}")),
        }
    }
    Ok((config, port_file))
}

#[tokio::main]
async fn main() -> ExitCode {
    let (config, port_file) = match parse_args(MockConfig::default()) {
        Ok(parsed) => parsed,
        Err(msg) => {
            eprintln!("mock-model: {msg}");
            return usage();
        }
    };
    let mock = match MockModel::start(config).await {
        Ok(mock) => mock,
        Err(err) => {
            eprintln!("mock-model: cannot listen: {err}");
            return ExitCode::FAILURE;
        }
    };
    if let Some(path) = port_file {
        let tmp = format!("{path}.tmp");
        let written = std::fs::write(&tmp, mock.addr().port().to_string()).and_then(|()| std::fs::rename(&tmp, &path));
        if let Err(err) = written {
            eprintln!("mock-model: cannot write {path}: {err}");
            return ExitCode::FAILURE;
        }
    }
    println!("listening on {}", mock.url());
    let _ = std::io::stdout().flush();
    if let Err(err) = tokio::signal::ctrl_c().await {
        eprintln!("mock-model: cannot wait for a signal: {err}");
        return ExitCode::FAILURE;
    }
    mock.shutdown().await;
    ExitCode::SUCCESS
}
