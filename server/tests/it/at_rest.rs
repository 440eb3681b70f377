//! What the server keeps on disk and reads at start (issue #11): the data dir and everything in it
//! private, a data dir someone else could change refused, token files that others can read (or
//! that are not small regular files) refused, and every start-up error on stderr with a non-zero
//! exit, never on stdout.

use std::ffi::{OsStr, OsString};
use std::os::unix::fs::{MetadataExt, PermissionsExt};
use std::path::Path;

use reqwest::StatusCode;
use serde_json::json;

use crate::common::*;

fn mode(p: &Path) -> u32 {
    std::fs::metadata(p).unwrap_or_else(|e| panic!("{}: {e}", p.display())).mode() & 0o777
}

fn set_mode(p: &Path, mode: u32) {
    std::fs::set_permissions(p, std::fs::Permissions::from_mode(mode)).unwrap();
}

/// Command-line arguments from paths and strings alike.
fn args<const N: usize>(parts: [&dyn AsRef<OsStr>; N]) -> Vec<OsString> {
    parts.iter().map(|p| p.as_ref().to_owned()).collect()
}

/// A start that must fail: non-zero exit, nothing on stdout, and `expect` (each part) on stderr.
async fn refused(args: &[OsString], expect: &[&str]) -> String {
    let out = run_to_exit(args).await;
    let stdout = String::from_utf8_lossy(&out.stdout);
    let stderr = String::from_utf8_lossy(&out.stderr).into_owned();
    assert!(!out.status.success(), "started: {stderr}");
    assert_eq!(out.status.code(), Some(1), "{stderr}");
    assert!(stdout.is_empty(), "stdout carries only the `listening on` and `console:` lines: {stdout}");
    for e in expect {
        assert!(stderr.contains(e), "expected `{e}` in stderr: {stderr}");
    }
    stderr
}

#[tokio::test]
async fn the_data_dir_and_every_file_in_it_are_private() {
    // No --token-file: the server generates its token into the data dir too. Started from a shell
    // with the usual umask 022, which would have made all of these readable by everyone.
    let tmp = tempfile::tempdir().unwrap();
    let s = Server::start_after_shell(tmp.path(), &["--no-test-token"], "umask 022").await;
    let data = s.dir.join("data");
    let token = std::fs::read_to_string(data.join("token")).unwrap().trim().to_owned();
    let http = reqwest::Client::new();
    let res = http
        .post(s.url("/v1/rooms/r/sessions"))
        .bearer_auth(&token)
        .json(&json!({"sessionId": "s"}))
        .send()
        .await
        .unwrap();
    assert_eq!(res.status(), StatusCode::CREATED);
    assert_eq!(mode(&data), 0o700, "the data dir");
    for f in ["ensemble.sqlite3", "ensemble.sqlite3-wal", "ensemble.sqlite3-shm", "token", "lock"] {
        assert_eq!(mode(&data.join(f)), 0o600, "{f}");
    }
    assert_eq!(mode(&data.join("runs")), 0o700, "runs/");
    let runs: Vec<_> = std::fs::read_dir(data.join("runs")).unwrap().flatten().collect();
    assert_eq!(runs.len(), 1);
    assert_eq!(mode(&runs[0].path()), 0o600, "the run file");
    // Nothing in it, at any depth, is readable by anyone else.
    let mut stack = vec![data.clone()];
    while let Some(dir) = stack.pop() {
        for entry in std::fs::read_dir(&dir).unwrap().flatten() {
            let m = entry.metadata().unwrap();
            assert_eq!(m.mode() & 0o077, 0, "{} is {:o}", entry.path().display(), m.mode() & 0o777);
            if m.is_dir() {
                stack.push(entry.path());
            }
        }
    }
}

#[tokio::test]
async fn a_data_dir_someone_else_could_change_is_refused_and_a_readable_one_is_made_private() {
    let tmp = tempfile::tempdir().unwrap();
    let data = tmp.path().join("data");
    std::fs::create_dir(&data).unwrap();
    let token = tmp.path().join("token");
    write_private(&token, TOKEN);
    let args = |data: &Path| {
        args([
            &"--listen",
            &"127.0.0.1:0",
            &"--token-file",
            &token,
            &"--default-cwd",
            &tmp.path(),
            &"--workspace-roots",
            &tmp.path(),
            &"--data-dir",
            &data,
        ])
    };
    let shown = data.display().to_string();
    for m in [0o777, 0o775, 0o757, 0o1777] {
        set_mode(&data, m);
        refused(&args(&data), &[&shown, &format!("mode {:o}", m & 0o777), "writable by group or others", "chmod 700"])
            .await;
        assert!(!data.join("ensemble.sqlite3").exists(), "nothing was opened in it");
    }
    // Owned by another user (the tests run as root, who could read it anyway: what counts is who
    // else can change it).
    set_mode(&data, 0o700);
    std::os::unix::fs::chown(&data, Some(4242), None).unwrap();
    refused(&args(&data), &[&shown, "belongs to uid 4242", "--data-dir"]).await;
    std::os::unix::fs::chown(&data, Some(std::fs::metadata(tmp.path()).unwrap().uid()), None).unwrap();
    // A file is not a data dir.
    let file = tmp.path().join("file");
    std::fs::write(&file, "").unwrap();
    refused(&args(&file), &[&file.display().to_string(), "is not a directory"]).await;

    // Readable by others (as earlier versions made it, with a 0644 database): made private.
    set_mode(&data, 0o755);
    std::fs::write(data.join("lock"), "").unwrap();
    set_mode(&data.join("lock"), 0o644);
    let s = Server::start_in(tmp.path(), &["--token-file", token.to_str().unwrap()]).await;
    assert_eq!(mode(&data), 0o700);
    assert_eq!(mode(&data.join("lock")), 0o600);
    assert!(s.log().contains("made private"), "{}", s.log());
}

#[tokio::test]
async fn token_files_others_can_read_are_refused_unless_allowed_for_a_secret_mount() {
    let tmp = tempfile::tempdir().unwrap();
    let shared = tmp.path().join("shared-token");
    std::fs::write(&shared, format!("{TOKEN}\n")).unwrap();
    set_mode(&shared, 0o644);
    let link = tmp.path().join("private-looking-link");
    std::os::unix::fs::symlink(&shared, &link).unwrap();
    let data = tmp.path().join("data");
    let base = |token: &Path| args([&"--listen", &"127.0.0.1:0", &"--data-dir", &data, &"--token-file", &token]);
    for f in [&shared, &link] {
        refused(&base(f), &[&f.display().to_string(), "mode 644", "chmod 600", "--allow-shared-token-file"]).await;
    }
    // Allowed, by flag or by its variable (as the Docker image sets it): the server starts.
    let s = Server::start_in(tmp.path(), &["--token-file", link.to_str().unwrap(), "--allow-shared-token-file"]).await;
    let res = reqwest::Client::new().get(s.url("/v1/rooms")).bearer_auth(TOKEN).send().await.unwrap();
    assert_eq!(res.status(), StatusCode::OK);
    drop(s);
    let s = Server::start_with_env(
        &["--token-file", shared.to_str().unwrap()],
        &[("ENSEMBLE_ALLOW_SHARED_TOKEN_FILE", "true")],
    )
    .await;
    let res = reqwest::Client::new().get(s.url("/v1/rooms")).bearer_auth(TOKEN).send().await.unwrap();
    assert_eq!(res.status(), StatusCode::OK);
}

#[tokio::test]
async fn token_files_that_are_not_small_regular_files_are_refused_at_once() {
    let tmp = tempfile::tempdir().unwrap();
    let fifo = tmp.path().join("fifo");
    assert!(std::process::Command::new("mkfifo").arg(&fifo).status().unwrap().success());
    let long = tmp.path().join("long");
    write_private(&long, &format!("{TOKEN}\n{}", " ".repeat(8192)));
    let data = tmp.path().join("data");
    // Even with the escape hatch for shared files: what is read is bounded.
    for (file, expect) in [
        (Path::new("/dev/zero"), "is not a regular file (it is a character device)"),
        (fifo.as_path(), "is not a regular file (it is a FIFO)"),
        (tmp.path(), "is not a regular file (it is a directory)"),
        (long.as_path(), "is longer than 4096 bytes"),
    ] {
        let started = std::time::Instant::now();
        refused(
            &args([
                &"--listen",
                &"127.0.0.1:0",
                &"--data-dir",
                &data,
                &"--allow-shared-token-file",
                &"--token-file",
                &file,
            ]),
            &[&file.display().to_string(), expect],
        )
        .await;
        assert!(started.elapsed() < std::time::Duration::from_secs(5), "{}", file.display());
    }
}

#[tokio::test]
async fn start_up_errors_go_to_stderr_with_a_non_zero_exit() {
    let s = Server::start(&[]).await;
    let token = s.dir.join("token");
    let data = s.dir.join("data");
    // Another server on the same data dir (the issue saw this one on stdout).
    refused(
        &args([&"--listen", &"127.0.0.1:0", &"--data-dir", &data, &"--token-file", &token]),
        &["ensemble: another ensemble server is using the data dir", &data.display().to_string()],
    )
    .await;
    // The address is taken.
    let cwd = ["--default-cwd", s.dir.to_str().unwrap(), "--workspace-roots", s.dir.to_str().unwrap()];
    let mut a = args([&"--listen", &s.addr, &"--token-file", &token, &"--data-dir", &s.dir.join("d2")]);
    a.extend(cwd.iter().map(OsString::from));
    refused(&a, &["is already in use", &s.addr, "--listen"]).await;
    // An unknown default provider.
    let mut a = args([&"--listen", &"127.0.0.1:0", &"--token-file", &token, &"--data-dir", &s.dir.join("d3")]);
    a.extend(["--default-provider", "nope"].map(OsString::from));
    a.extend(cwd.iter().map(OsString::from));
    refused(&a, &["ensemble: --default-provider `nope` is not a registered provider"]).await;
    // The first server is unharmed.
    let (st, _) = s.get("/v1/rooms").await;
    assert_eq!(st, StatusCode::OK);
}
