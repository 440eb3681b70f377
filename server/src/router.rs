//! The HTTP application: every documented route with its OpenAPI description, the routes outside
//! the contract, and the middleware stack. `router(state)` is separate from `main` so tests can
//! drive it in-process.

use std::sync::Arc;

use axum::Router;
use axum::extract::{DefaultBodyLimit, Extension, Request, State};
use axum::http::{HeaderValue, Method, StatusCode, header};
use axum::middleware::{self, Next};
use axum::response::{IntoResponse, Response};
use axum::routing::get;
use tower::ServiceBuilder;
use tower_http::catch_panic::CatchPanicLayer;
use utoipa_axum::router::OpenApiRouter;
use utoipa_axum::routes;

use crate::access::Role;
use crate::access::table::{Need, RouteTable, Rule};
use crate::cluster::forward;
use crate::error::{self, ApiError};
use crate::openapi::{self, OpenApiJson};
use crate::routes::{
    attachments, export, files, goals, interactions, providers, queue, rooms, sessions, sides, system, tokens, turns,
    usage, webhooks, workspaces,
};
use crate::state::AppState;
use crate::{security, telemetry, ws};

/// Every documented route, with its OpenAPI description.
fn api_router() -> OpenApiRouter<AppState> {
    OpenApiRouter::with_openapi(openapi::base())
        .routes(routes!(providers::list_providers))
        .routes(routes!(providers::list_provider_sessions))
        .routes(routes!(rooms::list_rooms))
        .routes(routes!(rooms::list_events))
        .routes(routes!(export::export_room))
        .routes(routes!(sessions::start_session, sessions::list_sessions))
        .routes(routes!(sessions::get_session, sessions::close_session, sessions::rename_session))
        .routes(routes!(turns::submit_turn))
        .routes(routes!(turns::cancel_turn))
        .routes(routes!(attachments::get_attachment))
        .routes(routes!(queue::get_queue, queue::reorder_queue))
        .routes(routes!(queue::edit_queued, queue::remove_queued))
        .routes(routes!(queue::send_queued))
        .routes(routes!(usage::session_usage))
        .routes(routes!(usage::set_session_budget, usage::clear_session_budget))
        .routes(routes!(usage::room_usage))
        .routes(routes!(usage::set_room_budget, usage::clear_room_budget))
        .routes(routes!(sessions::session_present))
        .routes(routes!(sessions::resume_session))
        .routes(routes!(sessions::configure_session))
        .routes(routes!(sessions::release_session))
        .routes(routes!(sessions::disconnect_session))
        .routes(routes!(interactions::list_interactions))
        .routes(routes!(interactions::answer_interaction))
        .routes(routes!(sides::side_capabilities))
        .routes(routes!(sides::open_side, sides::list_sides))
        .routes(routes!(sides::session_events))
        .routes(routes!(goals::get_goal, goals::set_goal, goals::clear_goal))
        .routes(routes!(goals::pause_goal))
        .routes(routes!(goals::resume_goal))
        .routes(routes!(workspaces::list_checkpoints))
        .routes(routes!(workspaces::get_changes))
        .routes(routes!(workspaces::restore))
        .routes(routes!(workspaces::get_workspace))
        .routes(routes!(workspaces::left_worktrees))
        .routes(routes!(sessions::fork_session))
        .routes(routes!(workspaces::commit_workspace))
        .routes(routes!(files::list_files))
        .routes(routes!(files::file_content))
        .routes(routes!(files::search_files))
        .routes(routes!(ws::room_ws))
        .routes(routes!(tokens::me))
        .routes(routes!(tokens::create_token, tokens::list_tokens))
        .routes(routes!(tokens::revoke_token))
        .routes(routes!(tokens::list_audit))
        .routes(routes!(webhooks::create_webhook, webhooks::list_webhooks))
        .routes(routes!(webhooks::get_webhook, webhooks::update_webhook, webhooks::delete_webhook))
        .routes(routes!(webhooks::test_webhook))
        .routes(routes!(webhooks::list_deliveries))
        .routes(routes!(system::healthz))
        .routes(routes!(system::readyz))
        .routes(routes!(system::metrics))
        .routes(routes!(system::openapi_json))
}

/// The complete OpenAPI document: the static part (`openapi::base`) with every route's path.
pub fn openapi() -> utoipa::openapi::OpenApi {
    openapi::complete(api_router().split_for_parts().1)
}

/// What each route needs: read from the document (each handler's `#[utoipa::path]` declares it).
pub fn route_table(doc: &utoipa::openapi::OpenApi) -> RouteTable {
    let json = serde_json::to_value(doc).unwrap_or_default();
    let (table, problems) = RouteTable::from_openapi(&json);
    for problem in problems {
        // Fail closed (the route is refused to everyone); `routes_are_declared` keeps this empty.
        tracing::error!(%problem, "a route's access declaration is missing or unreadable");
    }
    table
}

/// The whole HTTP application.
pub fn router(state: AppState) -> Router {
    let (mut router, doc) = api_router().split_for_parts();
    let doc = openapi::complete(doc);
    let mut routes = route_table(&doc);
    // The routes outside the contract, each declared where it is added.
    router = router.route("/", get(system::console));
    routes.declare(&Method::GET, "/", Rule::Public, false);
    if state.test_hooks {
        router = router.route("/v1/test/panic", get(system::test_panic));
        routes.declare(
            &Method::GET,
            "/v1/test/panic",
            Rule::Token(Need { role: Role::Admin, all_rooms: false }),
            false,
        );
    }
    router = router.fallback(error::not_found).method_not_allowed_fallback(error::method_not_allowed);
    if let Some(node) = state.cluster.clone() {
        // Innermost: a session another host owns is served there, after this edge's checks.
        let forwarding = forward::Forwarding { controller: state.controller.clone(), node };
        router = router.layer(middleware::from_fn_with_state(forwarding, forward::route));
    }
    let max_body_bytes = state.max_body_bytes;
    // `edge` reads the matched route (metrics labels, the WebSocket's token rule), so it wraps
    // each route; the layers that need no route wrap the router once. `Router::layer` wraps every
    // route in every layer, and each wrapping clones a boxed service per request.
    let edge_state = Edge { state: state.clone(), routes: Arc::new(routes) };
    let routed = router.layer(middleware::from_fn_with_state(edge_state, edge)).with_state(state);
    let outer = ServiceBuilder::new()
        .layer(CatchPanicLayer::custom(error::panic_response))
        .layer(DefaultBodyLimit::max(max_body_bytes))
        .layer(Extension(OpenApiJson::new(&doc)))
        .service(routed);
    Router::new().fallback_service(outer)
}

/// The edge middleware's state: the application's, and the route table read from the document.
#[derive(Clone)]
struct Edge {
    state: AppState,
    routes: Arc<RouteTable>,
}

/// What every request passes before its handler, outermost first: the time limit (408), the
/// metrics (so refusals count), the guard (Host, Origin, token), a declared body over the limit
/// (413, before any of it is read), and while draining the refusal of changes (503).
///
/// One middleware rather than five: `Router::layer` wraps every route in the whole stack, and each
/// `from_fn` layer clones the boxed services below it per request (allocations, copies of large
/// futures). Merged, the lifecycle bench's server CPU fell (docs/performance/log.md).
async fn edge(State(Edge { state, routes }): State<Edge>, req: Request, next: Next) -> Response {
    let work = telemetry::track_http(req, |req| {
        let gate =
            security::Gate { access: &state.access, tokens: &state.tokens, audit: &state.audit, routes: &routes };
        security::guarded(gate, req, |req| async {
            if let Some(refused) = refuse_declared_oversize(state.max_body_bytes, &req) {
                return refused;
            }
            if state.is_draining() && !req.method().is_safe() {
                return ApiError::new(StatusCode::SERVICE_UNAVAILABLE, "shutting_down", "the server is shutting down")
                    .retry_after(1)
                    .into_response();
            }
            next.run(req).await
        })
    });
    match tokio::time::timeout(state.request_timeout, work).await {
        Ok(res) => res,
        Err(_) => {
            ApiError::new(StatusCode::REQUEST_TIMEOUT, "request_timeout", "the request took too long").into_response()
        }
    }
}

/// A `Content-Length` over the body limit is answered 413 at once, before any of the body is read
/// (and the connection is closed, so the unread body is never waited for). Bodies without a declared
/// length (chunked) are cut by `DefaultBodyLimit` as they are read.
fn refuse_declared_oversize(limit: usize, req: &Request) -> Option<Response> {
    let declared = req
        .headers()
        .get(header::CONTENT_LENGTH)
        .and_then(|v| v.to_str().ok())
        .and_then(|v| v.trim().parse::<u64>().ok());
    let len = declared.filter(|len| *len > limit as u64)?;
    let mut res = ApiError::new(
        StatusCode::PAYLOAD_TOO_LARGE,
        "payload_too_large",
        format!("the request body is {len} bytes; the limit is {limit} (--max-body-bytes)"),
    )
    .with_details(serde_json::json!({ "limit": limit, "declared": len }))
    .into_response();
    res.headers_mut().insert(header::CONNECTION, HeaderValue::from_static("close"));
    Some(res)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_documented_operation_declares_its_access() {
        let doc = serde_json::to_value(openapi()).expect("the document serialises");
        let (table, problems) = RouteTable::from_openapi(&doc);
        assert!(problems.is_empty(), "{problems:#?}");
        // Each kind of rule is declared somewhere (the probes, the document, the rest).
        let rules: Vec<Rule> = doc["paths"]
            .as_object()
            .into_iter()
            .flat_map(|paths| paths.keys())
            .filter_map(|path| table.rule(&Method::GET, path))
            .collect();
        assert!(rules.contains(&Rule::Probe) && rules.contains(&Rule::Public), "{rules:?}");
        assert!(rules.iter().any(|r| matches!(r, Rule::Token(Need { all_rooms: true, .. }))), "{rules:?}");
    }
}
