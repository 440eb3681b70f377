//! What a person sees when the server starts: `listening on` and `console:` first (stdout), then
//! one log line at the default level; no colour escapes when stderr is not a terminal (a file, a
//! pipe) unless asked; `ensemble --help` lists the commands and leaves the server's flags to
//! `ensemble serve --help`, where each has a description.

use std::process::Stdio;

use ensemble_server::config::LogColor;
use ensemble_server::telemetry::colored;
use tokio::io::{AsyncBufReadExt, BufReader};
use tokio::process::Command;

use crate::common::WAIT;

/// Starts the server with `extra` flags, stdout and stderr piped; returns its first two stdout
/// lines and its stderr up to the `ensemble started` line.
async fn start(extra: &[&str]) -> (Vec<String>, String) {
    let dir = tempfile::tempdir().unwrap();
    let mut child = Command::new(env!("CARGO_BIN_EXE_ensemble"))
        .args(["serve", "--listen", "127.0.0.1:0", "--isolation", "off", "--data-dir"])
        .arg(dir.path().join("data"))
        .args(extra)
        .env_remove("RUST_LOG")
        .env_remove("NO_COLOR")
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .kill_on_drop(true)
        .spawn()
        .expect("spawn ensemble");
    let mut out = BufReader::new(child.stdout.take().unwrap()).lines();
    let mut err = BufReader::new(child.stderr.take().unwrap()).lines();
    let read = async {
        let mut first = Vec::new();
        while first.len() < 2 {
            first.push(out.next_line().await.unwrap().expect("stdout ended"));
        }
        let mut log = String::new();
        while let Some(line) = err.next_line().await.unwrap() {
            log.push_str(&line);
            log.push('\n');
            if line.contains("ensemble started") {
                break;
            }
        }
        (first, log)
    };
    let got = tokio::time::timeout(WAIT, read).await.expect("the server started in time");
    let _ = child.kill().await;
    got
}

#[tokio::test]
async fn the_two_lines_come_first_and_piped_logs_have_no_colour() {
    let (first, log) = start(&[]).await;
    assert!(first[0].starts_with("listening on http://127.0.0.1:"), "{first:?}");
    assert!(first[1].starts_with("console: http://127.0.0.1:"), "{first:?}");
    assert!(!log.contains('\u{1b}'), "no escapes in a pipe: {log:?}");
    // The routine start-up steps (migrations, the store, the run, the listener) are debug.
    let info: Vec<&str> = log.lines().filter(|l| l.contains(" INFO ")).collect();
    assert_eq!(info.len(), 1, "one line at the default level: {log}");
    assert!(info[0].contains("ensemble started"), "{log}");

    let (_, log) = start(&["--log-color", "always"]).await;
    assert!(log.contains("\u{1b}["), "colour when asked: {log:?}");
}

#[test]
fn colour_follows_the_terminal_and_no_color() {
    assert!(colored(LogColor::Auto, true, false));
    assert!(!colored(LogColor::Auto, false, false), "a file or a pipe");
    assert!(!colored(LogColor::Auto, true, true), "NO_COLOR");
    assert!(colored(LogColor::Always, false, true));
    assert!(!colored(LogColor::Never, true, false));
}

#[tokio::test]
async fn help_lists_the_commands_and_serve_help_describes_every_flag() {
    let run = |args: &'static [&'static str]| async move {
        let out = Command::new(env!("CARGO_BIN_EXE_ensemble")).args(args).output().await.expect("run");
        assert!(out.status.success());
        String::from_utf8(out.stdout).unwrap()
    };
    let top = run(&["--help"]).await;
    assert!(top.lines().count() < 30, "{top}");
    for command in ["serve", "openapi", "url", "token"] {
        assert!(top.lines().any(|l| l.trim_start().starts_with(command)), "{command}: {top}");
    }
    assert!(!top.contains("--listen") || top.contains("ensemble --listen …"), "no serve flags listed: {top}");
    assert!(top.contains("ensemble serve --help"), "{top}");

    let serve = run(&["serve", "--help"]).await;
    let lines: Vec<&str> = serve.lines().collect();
    let mut undescribed = Vec::new();
    for (i, l) in lines.iter().enumerate() {
        let flag = l.trim_start();
        if !flag.starts_with("--") {
            continue;
        }
        // A description on the next line (clap's long help), before the next flag.
        let next = lines.get(i + 1).map(|n| n.trim()).unwrap_or_default();
        if next.is_empty() || next.starts_with("--") {
            undescribed.push(flag.split_whitespace().next().unwrap_or(flag).to_owned());
        }
    }
    assert!(undescribed.is_empty(), "flags without a description: {undescribed:?}");
    assert!(serve.contains("--log-color") && serve.contains("--log-format"), "{serve}");
}
