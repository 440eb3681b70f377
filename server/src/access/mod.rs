//! Who may do what: roles, room scopes, the one table of what each route needs, and the
//! principal a request acts for. The token file's token is `admin` on every room; managed tokens
//! ([`tokens`]) carry a role and a room scope of their own.

pub mod audit;
pub mod per_token;
pub mod table;
pub mod tokens;

use std::collections::BTreeSet;
use std::sync::Arc;

use axum::http::StatusCode;
use ensemble_runtime::actor::Actor;
use serde::{Deserialize, Serialize};

use crate::error::ApiError;

/// What a token may do; each role may do everything the ones before it may.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize, utoipa::ToSchema)]
#[serde(rename_all = "lowercase")]
pub enum Role {
    /// Read REST and room WebSockets.
    Viewer,
    /// Viewer, and start, turns, steer, cancel, config, sides, goals, workspaces.
    Operator,
    /// Operator, and answering interactions (approvals, questions).
    Approver,
    /// Everything, tokens and the audit trail included.
    Admin,
}

impl Role {
    pub const ALL: [Role; 4] = [Role::Viewer, Role::Operator, Role::Approver, Role::Admin];

    pub fn name(self) -> &'static str {
        match self {
            Role::Viewer => "viewer",
            Role::Operator => "operator",
            Role::Approver => "approver",
            Role::Admin => "admin",
        }
    }

    pub fn parse(s: &str) -> Option<Role> {
        Role::ALL.into_iter().find(|r| r.name() == s)
    }
}

/// The rooms a token reaches.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum RoomScope {
    All,
    Only(BTreeSet<String>),
}

impl RoomScope {
    /// From the stored list (`["*"]` is every room).
    pub fn from_list(rooms: &[String]) -> RoomScope {
        if rooms.iter().any(|r| r == "*") { RoomScope::All } else { RoomScope::Only(rooms.iter().cloned().collect()) }
    }

    pub fn contains(&self, room: &str) -> bool {
        match self {
            RoomScope::All => true,
            RoomScope::Only(rooms) => rooms.contains(room),
        }
    }

    pub fn is_all(&self) -> bool {
        matches!(self, RoomScope::All)
    }
}

/// The id of the token file's token (the server's own admin token) in actors and the audit.
pub const ADMIN_TOKEN_ID: &str = "admin";

/// What a request acts as: the token's identity, role and rooms.
#[derive(Clone, Debug)]
pub struct Principal {
    pub actor: Arc<Actor>,
    pub role: Role,
    pub rooms: RoomScope,
}

impl Principal {
    /// The token file's token (one shared actor: most requests are made with it).
    pub fn admin() -> Principal {
        static ADMIN: std::sync::LazyLock<Arc<Actor>> =
            std::sync::LazyLock::new(|| Arc::new(Actor { token_id: ADMIN_TOKEN_ID.into(), name: "admin".into() }));
        Principal { actor: ADMIN.clone(), role: Role::Admin, rooms: RoomScope::All }
    }

    pub fn token_id(&self) -> &str {
        &self.actor.token_id
    }

    /// May this principal do what `need` says, in `room` (if the route names one)? A room outside
    /// the scope is answered as a room that does not exist, whatever the role, so a scoped token
    /// learns nothing about other rooms.
    pub fn check(&self, need: table::Need, room: Option<&str>) -> Result<(), ApiError> {
        if let Some(room) = room
            && !self.rooms.contains(room)
        {
            return Err(ApiError::new(StatusCode::NOT_FOUND, "room_not_found", format!("no room `{room}`")));
        }
        if need.all_rooms && !self.rooms.is_all() {
            return Err(forbidden(need.role, self.role, "a token for every room (`*`)"));
        }
        if self.role < need.role {
            return Err(forbidden(need.role, self.role, need.role.name()));
        }
        Ok(())
    }
}

fn forbidden(needed: Role, have: Role, what: &str) -> ApiError {
    ApiError::new(
        StatusCode::FORBIDDEN,
        "forbidden",
        format!("this needs the role {what}; the token's role is {}", have.name()),
    )
    .with_details(serde_json::json!({ "requiredRole": needed.name(), "role": have.name() }))
}
