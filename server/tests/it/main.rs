//! The server's integration tests, in one test binary: one link instead of one per file. Most start
//! the real `ensemble` binary on port 0 (see `common`); the property tests (`*_props`) call the
//! library.

#![allow(clippy::unwrap_used, clippy::expect_used, reason = "tests fail loudly")]

mod common;

mod access;
mod access_props;
mod acp;
mod agent_claude;
mod agent_codex_acp2;
mod agent_gemini;
mod agent_opencode;
mod at_rest;
mod bounds;
mod chaos;
mod cluster;
mod cluster_attacks;
mod codex;
mod codex_env;
mod codex_goals;
mod codex_sides;
mod config;
mod connections;
mod docs;
mod durability;
mod errors;
mod export;
mod first_session;
mod full_disk;
mod git_walls;
mod goals;
mod hostile_agents;
mod house;
mod inherited_fds;
mod input;
mod isolation;
mod limits;
mod made_tokens;
mod misbehaving_agents;
mod observability;
mod openapi;
mod per_token;
mod postgres;
mod queue;
mod real_agents;
mod replay;
mod roles;
mod session_tail;
mod sessions;
mod sides;
mod start_output;
mod usage;
mod webhooks;
mod workspace_faults;
mod workspace_fork;
mod workspace_keep;
mod workspace_recovery;
mod workspaces;
mod ws_frame_props;
