//! Health, readiness, metrics, the OpenAPI document, the console page and the test-only panic.

use axum::extract::{Extension, State};
use axum::http::{HeaderValue, StatusCode, header};
use axum::response::{IntoResponse, Response};

use crate::api::Health;
use crate::error::{ErrorResponse, Json};
use crate::openapi::OpenApiJson;
use crate::state::AppState;
use crate::telemetry;

/// The built-in console: one static page that asks for everything with the token it finds in
/// the URL fragment (which browsers never send to the server).
pub async fn console() -> impl IntoResponse {
    (
        [
            (header::CONTENT_TYPE, HeaderValue::from_static("text/html; charset=utf-8")),
            (header::CACHE_CONTROL, HeaderValue::from_static("no-store")),
            (
                header::CONTENT_SECURITY_POLICY,
                HeaderValue::from_static(
                    "default-src 'none'; script-src 'unsafe-inline'; style-src 'unsafe-inline'; connect-src 'self'; \
                     frame-ancestors 'none'; base-uri 'none'; form-action 'none'",
                ),
            ),
            (header::REFERRER_POLICY, HeaderValue::from_static("no-referrer")),
            (header::X_FRAME_OPTIONS, HeaderValue::from_static("DENY")),
        ],
        include_str!("../console.html"),
    )
}

/// Test-only (behind `--test-hooks`): a handler that panics, to prove the JSON 500 and that the
/// server keeps serving.
pub async fn test_panic() -> StatusCode {
    panic!("test hook: a handler panicked on purpose");
}

/// Liveness.
#[utoipa::path(get, path = "/healthz", tag = "system", security(()), responses((status = 200, description = "The server is up", body = Health)))]
pub async fn healthz() -> Json<Health> {
    Json(Health { status: "ok".into() })
}

/// Readiness: 503 while draining.
#[utoipa::path(get, path = "/readyz", tag = "system", security(()),
    responses((status = 200, description = "Ready", body = Health), (status = 503, description = "Draining: the server is shutting down", body = Health)))]
pub async fn readyz(State(state): State<AppState>) -> (StatusCode, Json<Health>) {
    if state.is_draining() {
        (StatusCode::SERVICE_UNAVAILABLE, Json(Health { status: "draining".into() }))
    } else {
        (StatusCode::OK, Json(Health { status: "ok".into() }))
    }
}

/// Prometheus metrics.
#[utoipa::path(get, path = "/metrics", tag = "system",
    responses((status = 200, description = "Prometheus text exposition format", content_type = "text/plain", body = String),
        (status = "4XX", body = ErrorResponse), (status = "5XX", body = ErrorResponse)))]
pub async fn metrics(State(state): State<AppState>) -> Response {
    telemetry::render_metrics(&state.controller)
}

/// This OpenAPI document.
#[utoipa::path(get, path = "/openapi.json", tag = "system", security(()),
    responses((status = 200, description = "The OpenAPI document", content_type = "application/json", body = Object),
        (status = "4XX", body = ErrorResponse)))]
pub async fn openapi_json(Extension(OpenApiJson(spec)): Extension<OpenApiJson>) -> Response {
    ([(header::CONTENT_TYPE, HeaderValue::from_static("application/json"))], spec).into_response()
}
