//! The engines against the real binaries. None of these skip: a missing binary fails the test
//! with what to install (scripts/test installs both).
#![allow(clippy::unwrap_used, clippy::expect_used)]

use std::io::{BufRead, BufReader};
use std::path::Path;
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

use ensemble_test_engines::{NATS_USER, Nats, Postgres};
use futures::StreamExt;
use tokio::time::timeout;
use tokio_postgres::NoTls;

/// Bound on every wait in these tests.
const WAIT: Duration = Duration::from_secs(30);

fn postgres() -> Postgres {
    assert!(
        Postgres::available(),
        "PostgreSQL's server binaries are missing: apt-get install -y postgresql (scripts/test does)"
    );
    Postgres::start().unwrap_or_else(|e| panic!("starting PostgreSQL: {e:#}"))
}

fn nats() -> Nats {
    assert!(Nats::available(), "nats-server is missing: apt-get install -y nats-server (scripts/test does)");
    Nats::start().unwrap_or_else(|e| panic!("starting nats-server: {e:#}"))
}

async fn connect(url: &str) -> tokio_postgres::Client {
    let (client, connection) = timeout(WAIT, tokio_postgres::connect(url, NoTls)).await.unwrap().unwrap();
    tokio::spawn(connection);
    client
}

async fn bodies(client: &tokio_postgres::Client) -> Vec<String> {
    let rows = timeout(WAIT, client.query("SELECT body FROM notes ORDER BY id", &[])).await.unwrap().unwrap();
    rows.iter().map(|r| r.get(0)).collect()
}

/// The live processes whose cwd is in `dir` or whose command line names it: a PostgreSQL
/// server's processes all run in its data directory.
fn processes_in(dir: &Path) -> Vec<u32> {
    let needle = dir.to_string_lossy().into_owned();
    std::fs::read_dir("/proc")
        .unwrap()
        .filter_map(|e| e.ok()?.file_name().to_str()?.parse::<u32>().ok())
        .filter(|&pid| pid != std::process::id())
        .filter(|pid| {
            let cwd = std::fs::read_link(format!("/proc/{pid}/cwd")).ok();
            let cmdline = std::fs::read(format!("/proc/{pid}/cmdline")).unwrap_or_default();
            cwd.is_some_and(|c| c.to_string_lossy().starts_with(&needle))
                || String::from_utf8_lossy(&cmdline).contains(&needle)
        })
        .collect()
}

/// Whether a process exists and is not a zombie.
fn alive(pid: u32) -> bool {
    std::fs::read_to_string(format!("/proc/{pid}/stat"))
        .ok()
        .and_then(|s| Some(s[s.rfind(')')? + 1..].split_whitespace().next()?.to_string()))
        .is_some_and(|state| state != "Z" && state != "X")
}

fn wait_until(what: &str, mut done: impl FnMut() -> bool) {
    let deadline = Instant::now() + WAIT;
    while !done() {
        assert!(Instant::now() < deadline, "timed out waiting until {what}");
        std::thread::sleep(Duration::from_millis(20));
    }
}

/// The local addresses of the TCP sockets listening on `port` (IPv4 as `0100007F`, IPv6 too).
fn listeners(port: u16) -> Vec<String> {
    let port = format!("{port:04X}");
    ["/proc/net/tcp", "/proc/net/tcp6"]
        .iter()
        .filter_map(|f| std::fs::read_to_string(f).ok())
        .flat_map(|table| {
            table
                .lines()
                .skip(1)
                .filter_map(|line| {
                    let fields: Vec<&str> = line.split_whitespace().collect();
                    let (addr, local_port) = fields.get(1)?.split_once(':')?;
                    (local_port == port && *fields.get(3)? == "0A").then(|| addr.to_string())
                })
                .collect::<Vec<_>>()
        })
        .collect()
}

/// The effective uid of a process; `None` once it is gone (a backend may exit at any moment).
fn uid_of(pid: u32) -> Option<u32> {
    let status = std::fs::read_to_string(format!("/proc/{pid}/status")).ok()?;
    let line = status.lines().find(|l| l.starts_with("Uid:"))?;
    line.split_whitespace().nth(2)?.parse().ok()
}

#[tokio::test]
async fn postgres_databases_hold_data_across_a_restart() {
    let mut pg = postgres();
    let port = pg.port();
    assert_eq!(pg.url(), format!("postgres://postgres@127.0.0.1:{port}/postgres"));
    assert_eq!(listeners(port), ["0100007F"], "PostgreSQL listens on 127.0.0.1 only");

    let url = pg.create_database("notes_db").unwrap();
    assert_eq!(url, format!("postgres://postgres@127.0.0.1:{port}/notes_db"));
    let other = pg.create_database("Other-db").unwrap();
    assert!(pg.create_database("no spaces").is_err());
    assert!(pg.create_database("notes_db").is_err(), "the database exists");

    let client = connect(&url).await;
    client
        .batch_execute("CREATE TABLE notes (id int PRIMARY KEY, body text NOT NULL); INSERT INTO notes VALUES (1, 'one'), (2, 'two')")
        .await
        .unwrap();
    assert_eq!(bodies(&client).await, ["one", "two"]);
    // Each database is its own: the table is not in the other one.
    let other_client = connect(&other).await;
    assert!(timeout(WAIT, other_client.query("SELECT * FROM notes", &[])).await.unwrap().is_err());

    pg.stop().unwrap();
    assert!(timeout(WAIT, client.simple_query("SELECT 1")).await.unwrap().is_err(), "the server is down");
    assert!(pg.create_database("while_stopped").is_err());
    pg.stop().unwrap(); // stopping twice is fine

    // A port taken while the server was down is reported as such.
    let squatter = std::net::TcpListener::bind(("127.0.0.1", port)).unwrap();
    let err = pg.start_again().unwrap_err();
    assert!(format!("{err:#}").contains("was taken"), "{err:#}");
    drop(squatter);

    pg.start_again().unwrap();
    assert_eq!(pg.port(), port);
    assert!(pg.start_again().is_err(), "already running");
    let client = connect(&url).await;
    assert_eq!(bodies(&client).await, ["one", "two"]);
}

#[test]
fn postgres_drop_leaves_no_process_and_no_files() {
    let pg = postgres();
    let data_dir = pg.data_dir();
    let processes = processes_in(&data_dir);
    assert!(!processes.is_empty(), "the server runs in {}", data_dir.display());
    if is_root() {
        // PostgreSQL refuses root: the engine runs it as an unprivileged user.
        assert!(processes.iter().all(|&pid| uid_of(pid) != Some(0)), "postgres runs unprivileged");
    }
    drop(pg);
    assert_eq!(processes_in(&data_dir), Vec::<u32>::new(), "no process of {} is left", data_dir.display());
    assert!(!data_dir.exists(), "{} is removed", data_dir.display());
}

fn is_root() -> bool {
    uid_of(std::process::id()) == Some(0)
}

#[tokio::test]
async fn nats_round_trip_survives_a_restart() {
    let mut nats = nats();
    let port = nats.port();
    assert_eq!(nats.url(), format!("nats://127.0.0.1:{port}"));
    assert_eq!(listeners(port), ["0100007F"], "nats-server listens on 127.0.0.1 only");

    // Without the credentials a client is turned away; with them it is in.
    let refused = async_nats::ConnectOptions::new().connect(nats.url()).await;
    assert!(refused.is_err(), "an anonymous client connected");
    let creds = std::fs::read_to_string(nats.credentials_file()).unwrap();
    assert_eq!(creds, format!("user={NATS_USER}\npassword={}\n", nats.password()));
    let (events_tx, mut events) = tokio::sync::mpsc::unbounded_channel();
    let client = async_nats::ConnectOptions::with_user_and_password(NATS_USER.into(), nats.password().into())
        .event_callback(move |event| {
            let events_tx = events_tx.clone();
            async move {
                let _ = events_tx.send(event);
            }
        })
        // Quick reconnects: the test waits for one.
        .reconnect_delay_callback(|_| Duration::from_millis(50))
        .connect(nats.url())
        .await
        .unwrap();
    let mut sub = client.subscribe("engines.test").await.unwrap();
    client.publish("engines.test", "one".into()).await.unwrap();
    let msg = timeout(WAIT, sub.next()).await.unwrap().unwrap();
    assert_eq!(&msg.payload[..], b"one");

    nats.stop().unwrap();
    let deadline = tokio::time::Instant::now() + WAIT;
    loop {
        let event = tokio::time::timeout_at(deadline, events.recv()).await.expect("a disconnect").unwrap();
        if matches!(event, async_nats::Event::Disconnected) {
            break;
        }
    }
    nats.stop().unwrap(); // stopping twice is fine

    // A port taken while the server was down is reported as such.
    let squatter = std::net::TcpListener::bind(("127.0.0.1", port)).unwrap();
    let err = nats.start_again().unwrap_err();
    assert!(format!("{err:#}").contains("was taken"), "{err:#}");
    drop(squatter);

    nats.start_again().unwrap();
    assert_eq!(nats.port(), port);
    assert!(nats.start_again().is_err(), "already running");
    loop {
        let event = tokio::time::timeout_at(deadline, events.recv()).await.expect("a reconnect").unwrap();
        if matches!(event, async_nats::Event::Connected) {
            break;
        }
    }
    // The subscription is renewed on reconnect.
    client.publish("engines.test", "two".into()).await.unwrap();
    let msg = timeout(WAIT, sub.next()).await.unwrap().unwrap();
    assert_eq!(&msg.payload[..], b"two");
}

#[test]
fn nats_drop_kills_the_server() {
    let nats = nats();
    let port = nats.port();
    drop(nats);
    assert!(listeners(port).is_empty(), "nothing listens on {port} any more");
}

/// The parent-death signal is tied to the thread that forked; the engines fork on a thread of
/// their own, so a server started by a thread that has ended (as a test's `static` server would
/// be) keeps running.
#[tokio::test]
async fn a_server_outlives_the_thread_that_started_it() {
    let nats = std::thread::spawn(nats).join().unwrap();
    let login = async_nats::ConnectOptions::with_user_and_password(NATS_USER.into(), nats.password().into());
    let client = timeout(WAIT, login.connect(nats.url())).await.unwrap().unwrap();
    let mut sub = client.subscribe("engines.thread").await.unwrap();
    client.publish("engines.thread", "still here".into()).await.unwrap();
    let msg = timeout(WAIT, sub.next()).await.unwrap().unwrap();
    assert_eq!(&msg.payload[..], b"still here");
}

const HELPER_ENV: &str = "ENSEMBLE_TEST_ENGINES_HELPER";

/// When the test process dies without dropping its servers (SIGKILL), they die with it.
///
/// The test runs this same test binary, filtered to this test, as a helper that starts both
/// servers, prints their pids, and waits to be killed.
#[test]
fn servers_die_with_the_test_process() {
    if std::env::var_os(HELPER_ENV).is_some() {
        let pg = postgres();
        let nats = nats();
        let data_dir = pg.data_dir().display().to_string();
        let postmaster = pid_with_args(&["-D", &data_dir]);
        let nats_server = pid_with_args(&["-p", &nats.port().to_string()]);
        println!("HELPER {postmaster} {nats_server} {data_dir}");
        // Killed long before this ends; bounded all the same.
        std::thread::sleep(WAIT);
        return;
    }
    let mut helper = Command::new(std::env::current_exe().unwrap())
        .args(["servers_die_with_the_test_process", "--exact", "--nocapture", "--test-threads=1"])
        .env(HELPER_ENV, "1")
        .stdout(Stdio::piped())
        .stderr(Stdio::inherit())
        .spawn()
        .unwrap();
    let stdout = helper.stdout.take().unwrap();
    let (tx, rx) = std::sync::mpsc::channel();
    std::thread::spawn(move || {
        for line in BufReader::new(stdout).lines().map_while(Result::ok) {
            // libtest may have written "test NAME ... " on the same line.
            if let Some((_, rest)) = line.split_once("HELPER ") {
                let _ = tx.send(rest.to_string());
            }
        }
    });
    let line = rx.recv_timeout(WAIT * 2).expect("the helper's pids");
    let mut fields = line.splitn(3, ' ');
    let postmaster: u32 = fields.next().unwrap().parse().unwrap();
    let nats: u32 = fields.next().unwrap().parse().unwrap();
    let data_dir = Path::new(fields.next().unwrap()).to_path_buf();
    assert!(alive(postmaster) && alive(nats));
    // nats-server runs in its temp dir (which holds its log).
    let nats_dir = std::fs::read_link(format!("/proc/{nats}/cwd")).unwrap();

    helper.kill().unwrap();
    helper.wait().unwrap();
    wait_until("nats-server is gone", || !alive(nats));
    wait_until("the postmaster is gone", || !alive(postmaster));
    // Its backends notice the postmaster's death and exit.
    wait_until("no PostgreSQL process is left", || processes_in(&data_dir).is_empty());
    // Nobody dropped the engines, so their temp dirs are left: remove them.
    std::fs::remove_dir_all(data_dir.parent().unwrap()).unwrap();
    std::fs::remove_dir_all(nats_dir).unwrap();
}

/// The process whose command line holds `args` in a row (the postmaster is the one PostgreSQL
/// process that keeps its arguments: the others rewrite theirs).
fn pid_with_args(args: &[&str]) -> u32 {
    let found: Vec<u32> = std::fs::read_dir("/proc")
        .unwrap()
        .filter_map(|e| e.ok()?.file_name().to_str()?.parse::<u32>().ok())
        .filter(|pid| {
            let cmdline = std::fs::read(format!("/proc/{pid}/cmdline")).unwrap_or_default();
            let cmdline: Vec<String> =
                cmdline.split(|&b| b == 0).map(|a| String::from_utf8_lossy(a).into_owned()).collect();
            cmdline.windows(args.len()).any(|w| w == args)
        })
        .collect();
    assert_eq!(found.len(), 1, "one process with arguments {args:?}");
    found[0]
}
