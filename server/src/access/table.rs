//! The one table of what each route needs. A route missing here is refused (403) for every token
//! but none is: a test walks every operation of the OpenAPI document against this table and
//! against every role, so a route added without a line here fails the build.

use axum::http::Method;

use super::Role;

/// What a route needs of the caller's token.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Need {
    pub role: Role,
    /// The route reads across rooms (metrics): only a token for every room may.
    pub all_rooms: bool,
}

const fn need(role: Role) -> Option<Need> {
    Some(Need { role, all_rooms: false })
}

/// What `method` on the route template `route` (as axum's `MatchedPath` names it) needs; `None`:
/// the route is not in the table.
pub fn requirement(method: &Method, route: &str) -> Option<Need> {
    use Role::{Admin, Approver, Operator, Viewer};
    const S: &str = "/v1/rooms/{roomId}/sessions/{sessionId}";
    let rest = route.strip_prefix(S);
    let m = method.as_str();
    match (m, route, rest) {
        ("GET", "/metrics", _) => Some(Need { role: Viewer, all_rooms: true }),
        // Only served with --test-hooks.
        ("GET", "/v1/test/panic", _) => need(Admin),
        ("GET", "/v1/providers" | "/v1/rooms" | "/v1/me", _) => need(Viewer),
        (
            "GET",
            "/v1/rooms/{roomId}/events"
            | "/v1/rooms/{roomId}/export"
            | "/v1/rooms/{roomId}/sessions"
            | "/v1/rooms/{roomId}/ws"
            | "/v1/rooms/{roomId}/usage",
            _,
        ) => need(Viewer),
        ("PUT" | "DELETE", "/v1/rooms/{roomId}/budget", _) => need(Operator),
        ("POST", "/v1/rooms/{roomId}/sessions", _) => need(Operator),
        // It starts the agent, and shows sessions of every room's agent: an operator of them all.
        ("GET", "/v1/providers/{providerId}/sessions", _) => Some(Need { role: Operator, all_rooms: true }),
        ("GET" | "POST", "/v1/tokens", _) | ("DELETE", "/v1/tokens/{tokenId}", _) | ("GET", "/v1/audit", _) => {
            need(Admin)
        }
        // A webhook sends every room's events to a URL: admin only.
        ("GET" | "POST", "/v1/webhooks", _)
        | ("GET" | "PATCH" | "DELETE", "/v1/webhooks/{webhookId}", _)
        | ("POST", "/v1/webhooks/{webhookId}/test", _)
        | ("GET", "/v1/webhooks/{webhookId}/deliveries", _) => Some(Need { role: Admin, all_rooms: true }),
        (
            "GET",
            _,
            Some(
                ""
                | "/attachments/{attachment}"
                | "/changes"
                | "/checkpoints"
                | "/events"
                | "/files"
                | "/files/content"
                | "/files/search"
                | "/goal"
                | "/interactions"
                | "/queue"
                | "/usage"
                | "/side-capabilities"
                | "/sides"
                | "/workspace",
            ),
        ) => need(Viewer),
        ("POST", _, Some("/interactions/{requestId}")) => need(Approver),
        (
            "POST",
            _,
            Some(
                "/cancel"
                | "/disconnect"
                | "/fork"
                | "/goal/pause"
                | "/goal/resume"
                | "/release"
                | "/restore"
                | "/resume"
                | "/sides"
                | "/turns"
                | "/workspace/commit"
                | "/queue/{turnId}/send",
            ),
        )
        | ("PATCH", _, Some("/config" | "/queue/{turnId}"))
        | ("PUT", _, Some("/queue" | "/budget"))
        | ("DELETE", _, Some("/budget"))
        | ("DELETE", _, Some("/queue/{turnId}"))
        | ("PUT" | "DELETE", _, Some("/goal"))
        | ("DELETE", _, Some("")) => need(Operator),
        _ => None,
    }
}

/// What a request needs: its route's line, or — for a method the route does not serve, which
/// axum answers 405 — admin (so only the table can open a route to anyone else). `None`: a route
/// missing from the table altogether.
pub fn need_of(method: &Method, route: &str) -> Option<Need> {
    if let Some(need) = requirement(method, route) {
        return Some(need);
    }
    let served = [Method::GET, Method::POST, Method::PUT, Method::PATCH, Method::DELETE];
    served.iter().any(|m| requirement(m, route).is_some()).then_some(Need { role: Role::Admin, all_rooms: false })
}
