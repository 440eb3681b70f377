//! Placeholder: the fake agent for the server's tests.
fn main() {}
