//! The egress proxy: a confined agent's only way out. It listens on a Unix socket bound into the
//! sandbox (a forwarder inside makes it `127.0.0.1:PORT` there, `HTTPS_PROXY`), takes HTTP
//! `CONNECT host:port` and plain `http://` requests, and connects only to the endpoints the
//! session may reach; never to the server itself. A refused target is answered 403 and reported
//! (once a minute per target) so a user sees what the agent tried. Listed loopback endpoints
//! (a local model server) get a socket of their own, forwarded as they are.

use std::collections::HashMap;
use std::net::{IpAddr, SocketAddr};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::net::{TcpStream, UnixListener, UnixStream};
use tokio::sync::Semaphore;
use tokio::task::JoinSet;

/// The longest request head the proxy reads.
pub const MAX_HEAD_BYTES: usize = 16 * 1024;
/// How long a client may take to send its request head, and a connection to open.
const HEAD_TIMEOUT: Duration = Duration::from_secs(10);
const CONNECT_TIMEOUT: Duration = Duration::from_secs(15);
/// A refused target is reported at most this often.
const BLOCKED_EVERY: Duration = Duration::from_secs(60);

/// Called with a refused target's host and port.
pub type OnBlocked = Arc<dyn Fn(&str, u16) + Send + Sync>;

/// A `host:port` an agent may reach.
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub struct Endpoint {
    /// Lowercase; an IPv6 literal without its brackets.
    pub host: String,
    pub port: u16,
}

impl Endpoint {
    /// `host:port` or `[v6]:port`.
    pub fn parse(s: &str) -> Result<Endpoint, String> {
        let bad = || format!("`{s}` is not host:port");
        let (host, port) = match s.strip_prefix('[') {
            Some(rest) => {
                let (h, p) = rest.split_once("]:").ok_or_else(bad)?;
                (h, p)
            }
            None => s.rsplit_once(':').ok_or_else(bad)?,
        };
        let port: u16 = port.parse().map_err(|_| bad())?;
        if host.is_empty() || port == 0 || host.contains(|c: char| c.is_whitespace() || c == '/' || c == '@') {
            return Err(bad());
        }
        Ok(Endpoint { host: host.to_ascii_lowercase(), port })
    }

    /// The loopback address it names, when it is a loopback IP literal (or `localhost`).
    pub fn loopback(&self) -> Option<SocketAddr> {
        let ip: IpAddr = match self.host.as_str() {
            "localhost" => IpAddr::from([127, 0, 0, 1]),
            h => h.parse().ok()?,
        };
        ip.is_loopback().then_some(SocketAddr::new(ip, self.port))
    }
}

/// What one sandbox may reach.
pub struct Policy {
    /// `None`: every host (but the server).
    pub endpoints: Option<Vec<Endpoint>>,
    /// The server's own listening addresses: never reached, whatever is listed.
    pub server: Vec<SocketAddr>,
    pub on_blocked: OnBlocked,
    /// At most this many connections at once through the proxy and the forwarders.
    pub connections: Arc<Semaphore>,
    reported: Mutex<HashMap<(String, u16), Instant>>,
}

impl Policy {
    pub fn new(
        endpoints: Option<Vec<Endpoint>>,
        server: Vec<SocketAddr>,
        on_blocked: OnBlocked,
        max_connections: usize,
    ) -> Self {
        Policy {
            endpoints,
            server,
            on_blocked,
            connections: Arc::new(Semaphore::new(max_connections.max(1))),
            reported: Mutex::new(HashMap::new()),
        }
    }

    fn listed(&self, host: &str, port: u16) -> bool {
        match &self.endpoints {
            None => true,
            Some(list) => list.iter().any(|e| e.host.eq_ignore_ascii_case(host) && e.port == port),
        }
    }

    /// Whether `addr` is the server, or (unless the target was listed by name) an address of
    /// this machine that "all" should not open up: loopback and unspecified.
    fn refused_addr(&self, addr: &SocketAddr, listed: bool) -> bool {
        let ip = canonical(addr.ip());
        if self.server.iter().any(|s| s.port() == addr.port() && (canonical(s.ip()) == ip || s.ip().is_unspecified())) {
            return true;
        }
        ip.is_unspecified() || (!listed && ip.is_loopback())
    }

    fn blocked(&self, host: &str, port: u16) {
        let now = Instant::now();
        let mut seen = self.reported.lock().unwrap_or_else(|e| e.into_inner());
        seen.retain(|_, at| now.duration_since(*at) < BLOCKED_EVERY);
        if seen.len() < 10_000 && seen.insert((host.to_owned(), port), now).is_none() {
            drop(seen);
            (self.on_blocked)(host, port);
        }
    }
}

fn canonical(ip: IpAddr) -> IpAddr {
    ip.to_canonical()
}

/// Serves the proxy on `listener` until the task is aborted.
pub async fn serve(listener: UnixListener, policy: Arc<Policy>) {
    let mut conns = JoinSet::new();
    loop {
        tokio::select! {
            accepted = listener.accept() => {
                let Ok((stream, _)) = accepted else { continue };
                let Ok(permit) = policy.connections.clone().try_acquire_owned() else {
                    let mut stream = stream;
                    let _ = stream.write_all(&answer(503, "too many connections through the proxy")).await;
                    continue;
                };
                let policy = policy.clone();
                conns.spawn(async move {
                    let _permit = permit;
                    if let Err(e) = handle(stream, &policy).await {
                        tracing::debug!(error = %e, "egress proxy connection");
                    }
                });
            }
            Some(_) = conns.join_next(), if !conns.is_empty() => {}
        }
    }
}

/// Serves a listed loopback endpoint on `listener`: each connection to it is joined to `target`.
pub async fn forward(listener: UnixListener, target: SocketAddr, policy: Arc<Policy>) {
    let mut conns = JoinSet::new();
    loop {
        tokio::select! {
            accepted = listener.accept() => {
                let Ok((mut inside, _)) = accepted else { continue };
                let Ok(permit) = policy.connections.clone().try_acquire_owned() else { continue };
                conns.spawn(async move {
                    let _permit = permit;
                    if let Ok(Ok(mut out)) = tokio::time::timeout(CONNECT_TIMEOUT, TcpStream::connect(target)).await {
                        let _ = out.set_nodelay(true);
                        let _ = tokio::io::copy_bidirectional(&mut inside, &mut out).await;
                    }
                });
            }
            Some(_) = conns.join_next(), if !conns.is_empty() => {}
        }
    }
}

fn answer(status: u16, why: &str) -> Vec<u8> {
    let reason = match status {
        403 => "Forbidden",
        400 => "Bad Request",
        502 => "Bad Gateway",
        _ => "Service Unavailable",
    };
    format!("HTTP/1.1 {status} {reason}\r\nContent-Type: text/plain\r\nContent-Length: {}\r\nConnection: close\r\n\r\n{why}", why.len())
        .into_bytes()
}

/// What a request asked for.
struct Target {
    host: String,
    port: u16,
    /// `CONNECT`: a tunnel; otherwise the head to send on (origin-form, `Connection: close`).
    head: Option<Vec<u8>>,
}

async fn handle(mut stream: UnixStream, policy: &Policy) -> std::io::Result<()> {
    let mut buf = Vec::with_capacity(1024);
    let end = match tokio::time::timeout(HEAD_TIMEOUT, read_head(&mut stream, &mut buf)).await {
        Ok(Ok(Some(end))) => end,
        Ok(Ok(None)) => return stream.write_all(&answer(400, "request head too long or cut")).await,
        Ok(Err(e)) => return Err(e),
        Err(_) => return Ok(()),
    };
    let target = match parse(&buf[..end]) {
        Ok(t) => t,
        Err(why) => return stream.write_all(&answer(400, &why)).await,
    };
    let listed = policy.listed(&target.host, target.port);
    if !listed {
        policy.blocked(&target.host, target.port);
        let why = format!("{}:{} is not an endpoint this session may reach", target.host, target.port);
        return stream.write_all(&answer(403, &why)).await;
    }
    let out = match connect(&target.host, target.port, policy, policy.endpoints.is_some()).await {
        Ok(s) => s,
        Err(Refusal::Refused) => {
            policy.blocked(&target.host, target.port);
            return stream.write_all(&answer(403, "that address is not reachable from a session")).await;
        }
        Err(Refusal::Failed(e)) => return stream.write_all(&answer(502, &format!("cannot connect: {e}"))).await,
    };
    let mut out = out;
    let _ = out.set_nodelay(true);
    match target.head {
        None => stream.write_all(b"HTTP/1.1 200 Connection Established\r\n\r\n").await?,
        Some(head) => out.write_all(&head).await?,
    }
    // What the client sent past its head goes on as it is.
    if buf.len() > end {
        out.write_all(&buf[end..]).await?;
    }
    tokio::io::copy_bidirectional(&mut stream, &mut out).await.map(drop)
}

/// Reads until the end of the head; its length, or `None` past [`MAX_HEAD_BYTES`] or at EOF.
async fn read_head(stream: &mut UnixStream, buf: &mut Vec<u8>) -> std::io::Result<Option<usize>> {
    let mut chunk = [0u8; 2048];
    loop {
        if let Some(i) = buf.windows(4).position(|w| w == b"\r\n\r\n") {
            return Ok(Some(i + 4));
        }
        if buf.len() >= MAX_HEAD_BYTES {
            return Ok(None);
        }
        let n = stream.read(&mut chunk).await?;
        if n == 0 {
            return Ok(None);
        }
        buf.extend_from_slice(&chunk[..n]);
    }
}

fn parse(head: &[u8]) -> Result<Target, String> {
    let mut headers = [httparse::EMPTY_HEADER; 64];
    let mut req = httparse::Request::new(&mut headers);
    match req.parse(head) {
        Ok(httparse::Status::Complete(_)) => {}
        _ => return Err("not an HTTP request".into()),
    }
    let (Some(method), Some(path)) = (req.method, req.path) else { return Err("not an HTTP request".into()) };
    if method.eq_ignore_ascii_case("CONNECT") {
        let e = Endpoint::parse(path)?;
        return Ok(Target { host: e.host, port: e.port, head: None });
    }
    let rest = path.strip_prefix("http://").ok_or("only CONNECT and http:// requests go through the proxy")?;
    let (authority, origin) = match rest.find('/') {
        Some(i) => (&rest[..i], &rest[i..]),
        None => (rest, "/"),
    };
    let e = Endpoint::parse(authority).or_else(|_| Endpoint::parse(&format!("{authority}:80")))?;
    let mut out = format!("{method} {origin} HTTP/1.1\r\n").into_bytes();
    for h in req.headers.iter() {
        let name = h.name.to_ascii_lowercase();
        if matches!(name.as_str(), "connection" | "proxy-connection" | "proxy-authorization" | "keep-alive") {
            continue;
        }
        out.extend_from_slice(h.name.as_bytes());
        out.extend_from_slice(b": ");
        out.extend_from_slice(h.value);
        out.extend_from_slice(b"\r\n");
    }
    // One request per connection: the next one comes through the proxy again, and is checked.
    out.extend_from_slice(b"Connection: close\r\n\r\n");
    Ok(Target { host: e.host, port: e.port, head: Some(out) })
}

enum Refusal {
    Refused,
    Failed(String),
}

async fn connect(host: &str, port: u16, policy: &Policy, listed: bool) -> Result<TcpStream, Refusal> {
    let addrs: Vec<SocketAddr> =
        match tokio::time::timeout(CONNECT_TIMEOUT, tokio::net::lookup_host((host, port))).await {
            Ok(Ok(a)) => a.collect(),
            Ok(Err(e)) => return Err(Refusal::Failed(e.to_string())),
            Err(_) => return Err(Refusal::Failed("name resolution timed out".into())),
        };
    let allowed: Vec<SocketAddr> = addrs.iter().copied().filter(|a| !policy.refused_addr(a, listed)).collect();
    if allowed.is_empty() {
        return Err(if addrs.is_empty() { Refusal::Failed("no address".into()) } else { Refusal::Refused });
    }
    let mut last = String::new();
    for addr in allowed {
        match tokio::time::timeout(CONNECT_TIMEOUT, TcpStream::connect(addr)).await {
            Ok(Ok(s)) => return Ok(s),
            Ok(Err(e)) => last = e.to_string(),
            Err(_) => last = "connection timed out".into(),
        }
    }
    Err(Refusal::Failed(last))
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used, reason = "tests fail loudly")]
    use super::*;

    #[test]
    fn endpoints_are_host_and_port() {
        assert_eq!(
            Endpoint::parse("API.example.com:443").unwrap(),
            Endpoint { host: "api.example.com".into(), port: 443 }
        );
        assert_eq!(Endpoint::parse("[::1]:8089").unwrap().loopback(), Some("[::1]:8089".parse().unwrap()));
        assert_eq!(Endpoint::parse("127.0.0.1:8089").unwrap().loopback(), Some("127.0.0.1:8089".parse().unwrap()));
        assert_eq!(Endpoint::parse("example.com:1").unwrap().loopback(), None);
        for bad in ["example.com", ":443", "a:0", "a:99999", "a b:1", "user@a:1", "a/b:1", ""] {
            assert!(Endpoint::parse(bad).is_err(), "{bad}");
        }
    }

    #[test]
    fn requests_are_read_as_tunnels_or_rewritten_plain_requests() {
        let t = parse(b"CONNECT api.example.com:443 HTTP/1.1\r\nHost: x\r\n\r\n").unwrap();
        assert_eq!((t.host.as_str(), t.port, t.head.is_none()), ("api.example.com", 443, true));
        let t =
            parse(b"GET http://h.example/p?q=1 HTTP/1.1\r\nHost: h.example\r\nProxy-Connection: keep-alive\r\n\r\n")
                .unwrap();
        assert_eq!((t.host.as_str(), t.port), ("h.example", 80));
        let head = String::from_utf8(t.head.unwrap()).unwrap();
        assert!(head.starts_with("GET /p?q=1 HTTP/1.1\r\n"), "{head}");
        assert!(head.contains("Host: h.example\r\n") && head.ends_with("Connection: close\r\n\r\n"), "{head}");
        assert!(!head.to_ascii_lowercase().contains("proxy-connection"));
        assert!(parse(b"GET https://h/ HTTP/1.1\r\n\r\n").is_err());
        assert!(parse(b"GET /local HTTP/1.1\r\n\r\n").is_err());
        assert!(parse(b"garbage\r\n\r\n").is_err());
    }

    fn policy(endpoints: Option<Vec<&str>>, server: &str, blocked: Arc<Mutex<Vec<(String, u16)>>>) -> Arc<Policy> {
        let list = endpoints.map(|l| l.into_iter().map(|e| Endpoint::parse(e).unwrap()).collect());
        let on: OnBlocked = Arc::new(move |h: &str, p: u16| blocked.lock().unwrap().push((h.to_owned(), p)));
        Arc::new(Policy::new(list, vec![server.parse().unwrap()], on, 16))
    }

    async fn through(sock: &std::path::Path, request: &str) -> String {
        let mut s = UnixStream::connect(sock).await.unwrap();
        s.write_all(request.as_bytes()).await.unwrap();
        let mut out = Vec::new();
        let _ = tokio::time::timeout(Duration::from_secs(10), s.read_to_end(&mut out)).await;
        String::from_utf8_lossy(&out).into_owned()
    }

    #[tokio::test]
    async fn only_listed_endpoints_are_reached_never_the_server_and_refusals_are_reported_once() {
        // A target (it answers each connection with "hello") and a stand-in for the server.
        let target = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
        let target_addr = target.local_addr().unwrap();
        tokio::spawn(async move {
            while let Ok((mut s, _)) = target.accept().await {
                let _ = s.write_all(b"hello").await;
            }
        });
        let server = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
        let server_addr = server.local_addr().unwrap().to_string();
        let dir = tempfile::tempdir().unwrap();
        let sock = dir.path().join("proxy.sock");
        let blocked = Arc::new(Mutex::new(Vec::new()));
        let listed = target_addr.to_string();
        let p = policy(Some(vec![listed.as_str(), server_addr.as_str()]), &server_addr, blocked.clone());
        let task = tokio::spawn(serve(UnixListener::bind(&sock).unwrap(), p));
        let ok = through(&sock, &format!("CONNECT {listed} HTTP/1.1\r\n\r\n")).await;
        assert!(ok.starts_with("HTTP/1.1 200") && ok.ends_with("hello"), "{ok}");
        let plain = through(&sock, &format!("GET http://{listed}/x HTTP/1.1\r\nHost: a\r\n\r\n")).await;
        assert!(plain.ends_with("hello"), "{plain}");
        let no = through(&sock, "CONNECT unlisted.example:443 HTTP/1.1\r\n\r\n").await;
        assert!(no.starts_with("HTTP/1.1 403"), "{no}");
        through(&sock, "CONNECT unlisted.example:443 HTTP/1.1\r\n\r\n").await;
        // Listed or not, the server is never reached.
        let srv = through(&sock, &format!("CONNECT {server_addr} HTTP/1.1\r\n\r\n")).await;
        assert!(srv.starts_with("HTTP/1.1 403"), "{srv}");
        let seen = blocked.lock().unwrap().clone();
        assert_eq!(seen.len(), 2, "once per target: {seen:?}");
        assert_eq!(seen[0], ("unlisted.example".to_owned(), 443));
        let long =
            through(&sock, &format!("GET http://a/ HTTP/1.1\r\nX: {}\r\n\r\n", "x".repeat(MAX_HEAD_BYTES))).await;
        assert!(long.starts_with("HTTP/1.1 400"), "{long}");
        task.abort();
    }

    #[tokio::test]
    async fn all_hosts_is_still_not_this_machine() {
        let local = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
        let addr = local.local_addr().unwrap();
        let dir = tempfile::tempdir().unwrap();
        let sock = dir.path().join("proxy.sock");
        let blocked = Arc::new(Mutex::new(Vec::new()));
        let p = policy(None, "127.0.0.1:1", blocked.clone());
        let task = tokio::spawn(serve(UnixListener::bind(&sock).unwrap(), p));
        let no = through(&sock, &format!("CONNECT {addr} HTTP/1.1\r\n\r\n")).await;
        assert!(no.starts_with("HTTP/1.1 403"), "loopback is not `all`: {no}");
        let no = through(&sock, &format!("CONNECT localhost:{} HTTP/1.1\r\n\r\n", addr.port())).await;
        assert!(no.starts_with("HTTP/1.1 403"), "{no}");
        task.abort();
    }
}
