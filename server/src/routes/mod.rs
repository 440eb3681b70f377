//! REST handlers, one file per resource (the contract's tags). Each converts between wire types and
//! controller calls; no agent dialect here. The room WebSocket is `crate::ws`; the routes are put
//! together, with their OpenAPI descriptions, in `crate::router`.

pub mod attachments;
pub mod export;
pub mod files;
pub mod goals;
pub mod interactions;
pub mod providers;
pub mod queue;
pub mod rooms;
pub mod sessions;
pub mod sides;
pub mod system;
pub mod tokens;
pub mod turns;
pub mod usage;
pub mod webhooks;
pub mod workspaces;
