//! The HTTP application: every documented route with its OpenAPI description, the routes outside
//! the contract, and the middleware stack. `router(state)` is separate from `main` so tests can
//! drive it in-process.

use std::time::Duration;

use axum::Router;
use axum::extract::{DefaultBodyLimit, Extension, Request, State};
use axum::http::{HeaderValue, StatusCode, header};
use axum::middleware::{self, Next};
use axum::response::{IntoResponse, Response};
use axum::routing::get;
use tower_http::catch_panic::CatchPanicLayer;
use utoipa_axum::router::OpenApiRouter;
use utoipa_axum::routes;

use crate::cluster::forward;
use crate::error::{self, ApiError};
use crate::openapi::{self, OpenApiJson};
use crate::routes::{goals, interactions, providers, rooms, sessions, sides, system, turns};
use crate::state::AppState;
use crate::{security, telemetry, ws};

/// Every documented route, with its OpenAPI description.
fn api_router() -> OpenApiRouter<AppState> {
    OpenApiRouter::with_openapi(openapi::base())
        .routes(routes!(providers::list_providers))
        .routes(routes!(rooms::list_rooms))
        .routes(routes!(rooms::list_events))
        .routes(routes!(sessions::start_session, sessions::list_sessions))
        .routes(routes!(sessions::get_session, sessions::close_session))
        .routes(routes!(turns::submit_turn))
        .routes(routes!(turns::cancel_turn))
        .routes(routes!(sessions::resume_session))
        .routes(routes!(sessions::configure_session))
        .routes(routes!(sessions::release_session))
        .routes(routes!(sessions::disconnect_session))
        .routes(routes!(interactions::list_interactions))
        .routes(routes!(interactions::answer_interaction))
        .routes(routes!(sides::side_capabilities))
        .routes(routes!(sides::open_side, sides::list_sides))
        .routes(routes!(sides::side_events))
        .routes(routes!(goals::get_goal, goals::set_goal, goals::clear_goal))
        .routes(routes!(goals::pause_goal))
        .routes(routes!(goals::resume_goal))
        .routes(routes!(ws::room_ws))
        .routes(routes!(system::healthz))
        .routes(routes!(system::readyz))
        .routes(routes!(system::metrics))
        .routes(routes!(system::openapi_json))
}

/// The complete OpenAPI document: the static part (`openapi::base`) with every route's path.
pub fn openapi() -> utoipa::openapi::OpenApi {
    openapi::complete(api_router().split_for_parts().1)
}

/// The whole HTTP application.
pub fn router(state: AppState) -> Router {
    let (mut router, doc) = api_router().split_for_parts();
    let doc = openapi::complete(doc);
    router = router.route("/", get(system::console));
    if state.test_hooks {
        router = router.route("/v1/test/panic", get(system::test_panic));
    }
    router = router.fallback(error::not_found).method_not_allowed_fallback(error::method_not_allowed);
    if let Some(node) = state.cluster.clone() {
        // Innermost: a session another host owns is served there, after this edge's checks.
        let forwarding = forward::Forwarding { controller: state.controller.clone(), node };
        router = router.layer(middleware::from_fn_with_state(forwarding, forward::route));
    }
    router
        .layer(Extension(OpenApiJson::new(&doc)))
        .layer(middleware::from_fn_with_state(state.clone(), refuse_when_draining))
        // A declared body over the limit is refused before any of it is read.
        .layer(middleware::from_fn_with_state(state.max_body_bytes, refuse_declared_oversize))
        // Before anything reads the body or reaches a handler; after the metrics, so refusals count.
        .layer(middleware::from_fn_with_state(state.access.clone(), security::guard))
        .layer(middleware::from_fn(telemetry::track_http))
        .layer(DefaultBodyLimit::max(state.max_body_bytes))
        .layer(middleware::from_fn_with_state(state.request_timeout, request_timeout))
        .layer(CatchPanicLayer::custom(error::panic_response))
        .with_state(state)
}

/// Bounds every request's time; the answer is the JSON 408.
async fn request_timeout(State(limit): State<Duration>, req: Request, next: Next) -> Response {
    match tokio::time::timeout(limit, next.run(req)).await {
        Ok(res) => res,
        Err(_) => {
            ApiError::new(StatusCode::REQUEST_TIMEOUT, "request_timeout", "the request took too long").into_response()
        }
    }
}

/// A `Content-Length` over the body limit is answered 413 at once, before any of the body is read
/// (and the connection is closed, so the unread body is never waited for). Bodies without a declared
/// length (chunked) are cut by `DefaultBodyLimit` as they are read.
async fn refuse_declared_oversize(State(limit): State<usize>, req: Request, next: Next) -> Response {
    let declared = req
        .headers()
        .get(header::CONTENT_LENGTH)
        .and_then(|v| v.to_str().ok())
        .and_then(|v| v.trim().parse::<u64>().ok());
    if let Some(len) = declared
        && len > limit as u64
    {
        let mut res = ApiError::new(
            StatusCode::PAYLOAD_TOO_LARGE,
            "payload_too_large",
            format!("the request body is {len} bytes; the limit is {limit} (--max-body-bytes)"),
        )
        .with_details(serde_json::json!({ "limit": limit, "declared": len }))
        .into_response();
        res.headers_mut().insert(header::CONNECTION, HeaderValue::from_static("close"));
        return res;
    }
    next.run(req).await
}

/// While draining, changes are refused (503) so that nothing new starts; reads still work.
async fn refuse_when_draining(State(state): State<AppState>, req: Request, next: Next) -> Response {
    if state.is_draining() && !req.method().is_safe() {
        return ApiError::new(StatusCode::SERVICE_UNAVAILABLE, "shutting_down", "the server is shutting down")
            .retry_after(1)
            .into_response();
    }
    next.run(req).await
}
