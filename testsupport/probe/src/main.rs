//! `ensemble-probe PROBE…`: tries each probe and prints one JSON line per probe,
//! `{"probe": "read:/x", "reached": true|false, "detail": "…"}`, then `{"done": N}`. `reached`
//! says whether the action succeeded — a confined agent should reach only what it may.
//!
//! Probes: `read:PATH`, `list:PATH`, `write:PATH`, `tcp:HOST:PORT` (a direct connection),
//! `proxy:HOST:PORT` (an HTTP CONNECT through `$HTTPS_PROXY`), `proc:PID` (another process's
//! command line), `alloc:MB` (a child that touches that much memory), `fork:N` (that many
//! children at once), `env:NAME` (a variable of the environment).

use std::io::{Read, Write};
use std::net::TcpStream;
use std::process::{Child, Command, ExitCode};
use std::time::Duration;

fn main() -> ExitCode {
    let args: Vec<String> = std::env::args().skip(1).collect();
    // The child of `alloc`: touches the memory, then exits 0.
    if let [first, mb] = args.as_slice()
        && first == "--touch"
    {
        let mb: usize = mb.parse().unwrap_or(0);
        let mut v: Vec<u8> = Vec::new();
        for _ in 0..mb {
            let mut chunk = vec![1u8; 1 << 20];
            // Written, so the pages are really used.
            chunk[4095] = 2;
            v.append(&mut chunk);
        }
        println!("{}", v.len());
        return ExitCode::SUCCESS;
    }
    if let [first] = args.as_slice()
        && first == "--sleep"
    {
        std::thread::sleep(Duration::from_secs(30));
        return ExitCode::SUCCESS;
    }
    for probe in &args {
        let (reached, detail) = run(probe);
        println!("{}", serde_json::json!({ "probe": probe, "reached": reached, "detail": detail }));
    }
    println!("{}", serde_json::json!({ "done": args.len() }));
    ExitCode::SUCCESS
}

fn run(probe: &str) -> (bool, String) {
    let Some((kind, arg)) = probe.split_once(':') else { return (false, "not KIND:ARG".into()) };
    let result: Result<String, String> = match kind {
        "read" => std::fs::read(arg).map(|b| format!("{} bytes", b.len())).map_err(|e| e.to_string()),
        "list" => std::fs::read_dir(arg)
            .map(|d| d.flatten().map(|e| e.file_name().to_string_lossy().into_owned()).collect::<Vec<_>>().join(","))
            .map_err(|e| e.to_string())
            .and_then(|l| if l.is_empty() { Err("empty".into()) } else { Ok(l) }),
        "write" => std::fs::write(arg, "written by the probe\n").map(|()| "written".into()).map_err(|e| e.to_string()),
        "tcp" => tcp(arg),
        "proxy" => proxy(arg),
        "proc" => std::fs::read(format!("/proc/{arg}/cmdline"))
            .map(|b| String::from_utf8_lossy(&b).replace('\0', " "))
            .map_err(|e| e.to_string()),
        "env" => std::env::var(arg).map_err(|e| e.to_string()),
        "alloc" => alloc(arg),
        "fork" => fork(arg),
        _ => Err("unknown probe".into()),
    };
    match result {
        Ok(d) => (true, d),
        Err(e) => (false, e),
    }
}

fn tcp(addr: &str) -> Result<String, String> {
    let addr = std::net::ToSocketAddrs::to_socket_addrs(addr).map_err(|e| e.to_string())?.next().ok_or("no address")?;
    TcpStream::connect_timeout(&addr, Duration::from_secs(5)).map(|_| "connected".into()).map_err(|e| e.to_string())
}

fn proxy(target: &str) -> Result<String, String> {
    let proxy = std::env::var("HTTPS_PROXY").map_err(|_| "no HTTPS_PROXY".to_owned())?;
    let hostport = proxy.trim_start_matches("http://").trim_end_matches('/');
    let mut s = TcpStream::connect(hostport).map_err(|e| format!("the proxy: {e}"))?;
    let _ = s.set_read_timeout(Some(Duration::from_secs(10)));
    write!(s, "CONNECT {target} HTTP/1.1\r\nHost: {target}\r\n\r\n").map_err(|e| e.to_string())?;
    let mut buf = [0u8; 256];
    let n = s.read(&mut buf).map_err(|e| e.to_string())?;
    let answer = String::from_utf8_lossy(&buf[..n]).lines().next().unwrap_or_default().to_owned();
    if answer.contains(" 200") { Ok(answer) } else { Err(answer) }
}

fn alloc(mb: &str) -> Result<String, String> {
    let me = std::env::current_exe().map_err(|e| e.to_string())?;
    let out = Command::new(me).args(["--touch", mb]).output().map_err(|e| e.to_string())?;
    if out.status.success() { Ok(format!("touched {mb} MiB")) } else { Err(format!("the child ended: {}", out.status)) }
}

fn fork(n: &str) -> Result<String, String> {
    let n: usize = n.parse().map_err(|_| "not a number")?;
    let me = std::env::current_exe().map_err(|e| e.to_string())?;
    let mut children: Vec<Child> = Vec::new();
    let mut refused = None;
    for _ in 0..n {
        match Command::new(&me).arg("--sleep").spawn() {
            Ok(c) => children.push(c),
            Err(e) => {
                refused = Some(e.to_string());
                break;
            }
        }
    }
    let started = children.len();
    for mut c in children {
        let _ = c.kill();
        let _ = c.wait();
    }
    match refused {
        None => Ok(format!("started all {started}")),
        Some(e) => Err(format!("started {started}, then: {e}")),
    }
}
