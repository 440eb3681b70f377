//! Real PostgreSQL and nats-server for tests.
//!
//! [`Postgres::start`] and [`Nats::start`] run the installed server binaries on a free port of
//! 127.0.0.1 (nothing listens on another address), wait until they answer, and stop them when
//! dropped. Each child is the leader of its own process group and gets SIGKILL when this process
//! dies (`PR_SET_PDEATHSIG`), so no server outlives the tests, not even one kept in a `static`.
//! nats-server admits only clients with its credentials ([`Nats::credentials_file`]).
//!
//! The calls block (they start processes and wait for them); they may be made from async tests.
//! When a binary is missing, `start` fails with what to install: tests must not skip silently.
//! A test that needs one asks [`tier`] first, which skips it with a line saying what is missing,
//! or fails it where `scripts/test` demands everything.

mod database;
mod nats;
mod postgres;
mod process;
pub mod tier;

pub use database::{SHARED_ENV, TestDatabase};
pub use nats::{NATS_USER, Nats};
pub use postgres::Postgres;
