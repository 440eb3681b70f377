//! Every agent in a box Ensemble builds.
//!
//! A session's processes (its agent, the commands an ACP agent runs through `terminal/*`, the
//! scripted provider's `/run`) run under bubblewrap ([`Sandbox::wrap`]): the system read-only, a
//! fresh home and `/tmp`, the workspace read-write at its own path, the server's own files and
//! directories not there at all, no network but loopback, no view of other processes, no
//! capabilities. Their only way out is the server's egress proxy ([`proxy`]), which reaches the
//! endpoints the session may and reports what it refused. Their memory and processes are limited
//! together by a control group of their own ([`cgroup`]), where the machine lets the server make
//! one. Inside, the server's own binary runs first ([`init`]) to make the proxy and the listed
//! loopback endpoints reachable at their addresses.

pub mod cgroup;
pub mod init;
pub mod proxy;
mod sandbox;

pub use cgroup::Cgroups;
pub use proxy::{Endpoint, OnBlocked};
pub use sandbox::{Host, Plan, Sandbox, Wrapped, socket_dir};

/// Why a box was not made.
#[derive(Debug, Clone, thiserror::Error)]
pub enum IsolationError {
    /// Bubblewrap is missing or cannot make namespaces here (how to install it, or turn
    /// isolation off).
    #[error("{0}")]
    Unavailable(String),
    /// The isolation asked for cannot be built (an endpoint that is not host:port, the server's
    /// own address).
    #[error("{0}")]
    Invalid(String),
    /// A file the box needs could not be made.
    #[error("{what}: {message}")]
    Io { what: &'static str, message: String },
}

impl IsolationError {
    fn io(what: &'static str) -> impl Fn(std::io::Error) -> IsolationError {
        move |e| IsolationError::Io { what, message: e.to_string() }
    }
}
