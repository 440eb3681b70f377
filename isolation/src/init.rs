//! What runs first inside a sandbox (`ensemble sandbox-init`): the network namespace has only
//! loopback, so it listens on the addresses the agent connects to — the egress proxy's
//! `127.0.0.1:PORT` and each listed loopback endpoint at its own address — and joins each
//! connection to the Unix socket the server serves it on; then it runs the agent and exits as the
//! agent does. Plain threads and blocking I/O: a handful of connections, no runtime needed.

use std::io;
use std::net::{Shutdown, SocketAddr, TcpListener, TcpStream};
use std::os::unix::net::UnixStream;
use std::os::unix::process::ExitStatusExt;
use std::path::PathBuf;
use std::process::Command;

/// One listener inside: `addr` joined to the socket at `socket`.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Forward {
    pub addr: SocketAddr,
    pub socket: PathBuf,
}

impl Forward {
    /// `ADDR=SOCKET`.
    pub fn parse(s: &str) -> Result<Forward, String> {
        let (addr, socket) = s.split_once('=').ok_or_else(|| format!("`{s}`: expected ADDR=SOCKET"))?;
        let addr = addr.parse().map_err(|e| format!("`{addr}`: {e}"))?;
        Ok(Forward { addr, socket: PathBuf::from(socket) })
    }

    pub fn arg(&self) -> String {
        format!("{}={}", self.addr, self.socket.display())
    }
}

/// Listens on every forward, runs `program args`, and returns the exit code to exit with
/// (128 + the signal when the agent was killed by one).
pub fn run(forwards: &[Forward], program: &str, args: &[String]) -> io::Result<i32> {
    for f in forwards {
        // One that cannot be listened on (a port under 1024: the box has no capability to bind
        // it) is said, not fatal: the agent runs, and that endpoint is simply not reachable.
        let listener = match TcpListener::bind(f.addr) {
            Ok(l) => l,
            Err(e) => {
                eprintln!("ensemble sandbox-init: {} is not reachable in the box: {e}", f.addr);
                continue;
            }
        };
        let socket = f.socket.clone();
        std::thread::spawn(move || accept(listener, socket));
    }
    let status = Command::new(program).args(args).status()?;
    if let Some(sig) = status.signal() {
        // The box's exit status can only say 128 + the signal: said here too, for the log and
        // the session's last error (the last lines of stderr).
        let name = match sig {
            9 => " (SIGKILL)",
            15 => " (SIGTERM)",
            11 => " (SIGSEGV)",
            6 => " (SIGABRT)",
            _ => "",
        };
        eprintln!("ensemble sandbox-init: the agent was killed by signal: {sig}{name}");
    }
    Ok(status.code().unwrap_or_else(|| 128 + status.signal().unwrap_or(0)))
}

fn accept(listener: TcpListener, socket: PathBuf) {
    for conn in listener.incoming() {
        let Ok(tcp) = conn else { continue };
        let socket = socket.clone();
        std::thread::spawn(move || {
            let _ = tcp.set_nodelay(true);
            if let Ok(unix) = UnixStream::connect(&socket) {
                join(tcp, unix);
            }
        });
    }
}

/// Copies both ways until either side is done, then closes both.
fn join(tcp: TcpStream, unix: UnixStream) {
    let (Ok(mut tcp_read), Ok(mut unix_write)) = (tcp.try_clone(), unix.try_clone()) else { return };
    let up = std::thread::spawn(move || {
        let _ = io::copy(&mut tcp_read, &mut unix_write);
        let _ = unix_write.shutdown(Shutdown::Write);
    });
    let (mut unix_read, mut tcp_write) = (unix, tcp);
    let _ = io::copy(&mut unix_read, &mut tcp_write);
    let _ = tcp_write.shutdown(Shutdown::Write);
    let _ = up.join();
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used, reason = "tests fail loudly")]
    use std::io::{Read, Write};
    use std::os::unix::net::UnixListener;

    use super::*;

    #[test]
    fn a_forward_joins_a_tcp_address_to_a_socket_and_the_agent_exits_as_it_does() {
        let dir = tempfile::tempdir().unwrap();
        let socket = dir.path().join("s.sock");
        let server = UnixListener::bind(&socket).unwrap();
        std::thread::spawn(move || {
            for s in server.incoming() {
                let mut s = s.unwrap();
                let mut buf = [0u8; 5];
                s.read_exact(&mut buf).unwrap();
                s.write_all(&buf).unwrap();
            }
        });
        let free = TcpListener::bind("127.0.0.1:0").unwrap().local_addr().unwrap();
        let f = Forward::parse(&Forward { addr: free, socket }.arg()).unwrap();
        assert_eq!(f.addr, free);
        // The "agent" talks through the forward, then exits with 3.
        let script = format!(
            "exec 3<>/dev/tcp/{}/{} && printf hello >&3 && head -c 5 <&3 | grep -q hello && exit 3",
            free.ip(),
            free.port()
        );
        let code = run(&[f], "bash", &["-c".into(), script]).unwrap();
        assert_eq!(code, 3);
        assert!(Forward::parse("nope").is_err() && Forward::parse("x=y").is_err());
    }
}
