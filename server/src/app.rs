//! The application state and the router. `router(state)` is separate from `main` so tests can
//! drive it in-process.

use std::collections::HashMap;
use std::ops::Deref;
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};
use std::time::Duration;

use axum::Router;
use axum::extract::DefaultBodyLimit;
use axum::extract::{Request, State};
use axum::http::StatusCode;
use axum::middleware::Next;
use axum::response::{IntoResponse, Response};
use ensemble_runtime::controller::Controller;
use tokio_util::sync::CancellationToken;
use tower_http::catch_panic::CatchPanicLayer;
use utoipa_axum::router::OpenApiRouter;
use utoipa_axum::routes;

use crate::config::WsLimits;
use crate::security::Access;
use crate::workspace::WorkspaceRoots;
use crate::{error, routes, security, telemetry, ws};

/// Everything a handler may need.
pub struct App {
    pub controller: Controller,
    pub ws: WsLimits,
    /// Cancelled when the server stops: WebSockets close with a close frame.
    pub shutdown: CancellationToken,
    draining: AtomicBool,
    pub ws_connections: AtomicUsize,
    /// Open WebSockets per room (entries removed at zero).
    pub ws_rooms: Mutex<HashMap<String, usize>>,
    pub max_body_bytes: usize,
    pub request_timeout: Duration,
    pub access: Access,
    pub workspace: WorkspaceRoots,
    /// Enables test-only routes (a handler that panics).
    pub test_hooks: bool,
}

/// What the HTTP edge is configured with.
pub struct AppConfig {
    pub ws: WsLimits,
    pub max_body_bytes: usize,
    pub request_timeout: Duration,
    pub access: Access,
    pub workspace: WorkspaceRoots,
    pub test_hooks: bool,
}

#[derive(Clone)]
pub struct AppState(pub Arc<App>);

impl Deref for AppState {
    type Target = App;
    fn deref(&self) -> &App {
        &self.0
    }
}

impl AppState {
    pub fn new(controller: Controller, config: AppConfig) -> Self {
        Self(Arc::new(App {
            controller,
            ws: config.ws,
            shutdown: CancellationToken::new(),
            draining: AtomicBool::new(false),
            ws_connections: AtomicUsize::new(0),
            ws_rooms: Mutex::new(HashMap::new()),
            max_body_bytes: config.max_body_bytes,
            request_timeout: config.request_timeout,
            access: config.access,
            workspace: config.workspace,
            test_hooks: config.test_hooks,
        }))
    }

    pub fn is_draining(&self) -> bool {
        self.draining.load(Ordering::Relaxed)
    }

    pub fn start_draining(&self) {
        self.draining.store(true, Ordering::Relaxed);
    }
}

/// Every documented route, with its OpenAPI description.
pub fn api_router() -> OpenApiRouter<AppState> {
    OpenApiRouter::with_openapi(crate::openapi::base())
        .routes(routes!(routes::list_providers))
        .routes(routes!(routes::list_rooms))
        .routes(routes!(routes::list_events))
        .routes(routes!(routes::start_session, routes::list_sessions))
        .routes(routes!(routes::get_session, routes::close_session))
        .routes(routes!(routes::submit_turn))
        .routes(routes!(routes::cancel_turn))
        .routes(routes!(routes::resume_session))
        .routes(routes!(routes::release_session))
        .routes(routes!(routes::disconnect_session))
        .routes(routes!(routes::list_interactions))
        .routes(routes!(routes::answer_interaction))
        .routes(routes!(routes::side_capabilities))
        .routes(routes!(routes::open_side))
        .routes(routes!(routes::side_events))
        .routes(routes!(routes::get_goal, routes::set_goal, routes::clear_goal))
        .routes(routes!(routes::pause_goal))
        .routes(routes!(routes::resume_goal))
        .routes(routes!(ws::room_ws))
        .routes(routes!(routes::healthz))
        .routes(routes!(routes::readyz))
        .routes(routes!(routes::metrics))
        .routes(routes!(routes::openapi_json))
}

/// The whole HTTP application.
pub fn router(state: AppState) -> Router {
    let (mut router, _) = api_router().split_for_parts();
    router = router.route("/", axum::routing::get(routes::console));
    if state.test_hooks {
        router = router.route("/v1/test/panic", axum::routing::get(routes::test_panic));
    }
    router
        .fallback(error::not_found)
        .method_not_allowed_fallback(error::method_not_allowed)
        .layer(axum::middleware::from_fn_with_state(state.clone(), refuse_when_draining))
        // Before anything reads the body or reaches a handler; after the metrics, so refusals count.
        .layer(axum::middleware::from_fn_with_state(state.clone(), security::guard))
        .layer(axum::middleware::from_fn_with_state(state.clone(), telemetry::track_http))
        .layer(DefaultBodyLimit::max(state.max_body_bytes))
        .layer(axum::middleware::from_fn_with_state(state.clone(), request_timeout))
        .layer(CatchPanicLayer::custom(error::panic_response))
        .with_state(state)
}

/// Bounds every request's time; the answer is the JSON 408.
async fn request_timeout(State(state): State<AppState>, req: Request, next: Next) -> Response {
    match tokio::time::timeout(state.request_timeout, next.run(req)).await {
        Ok(res) => res,
        Err(_) => error::ApiError::new(StatusCode::REQUEST_TIMEOUT, "request_timeout", "the request took too long")
            .into_response(),
    }
}

/// While draining, changes are refused (503) so that nothing new starts; reads still work.
async fn refuse_when_draining(State(state): State<AppState>, req: Request, next: Next) -> Response {
    if state.is_draining() && !req.method().is_safe() {
        return error::ApiError::new(StatusCode::SERVICE_UNAVAILABLE, "shutting_down", "the server is shutting down")
            .retry_after(1)
            .into_response();
    }
    next.run(req).await
}
