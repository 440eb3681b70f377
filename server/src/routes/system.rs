//! Health, readiness, metrics, the OpenAPI document, the console page and the test-only panic.

use axum::extract::{Extension, RawQuery, State};
use axum::http::{HeaderMap, HeaderValue, StatusCode, header};
use axum::response::{IntoResponse, Response};

use crate::api::Health;
use crate::error::{ApiError, ErrorResponse, Json};
use crate::openapi::OpenApiJson;
use crate::security;
use crate::state::AppState;
use crate::telemetry;

/// The console's content security policy: only its own script, stylesheet and icon (served below), no
/// inline code or styles, requests and WebSockets to this origin only, never framed.
const CONSOLE_CSP: &str = "default-src 'none'; script-src 'self'; style-src 'self'; img-src 'self' blob:; connect-src 'self'; \
     frame-ancestors 'none'; base-uri 'none'; form-action 'none'";

/// The console's files, built by `scripts/build-console` from `console/` (a test fails when they
/// are stale), embedded so that the binary serves them without Node or a network.
const CONSOLE_FILES: [(&str, &str, &[u8]); 4] = [
    ("", "text/html; charset=utf-8", include_bytes!("../console/index.html")),
    ("app.js", "text/javascript; charset=utf-8", include_bytes!("../console/app.js")),
    ("app.css", "text/css; charset=utf-8", include_bytes!("../console/app.css")),
    ("icon.svg", "image/svg+xml", include_bytes!("../console/icon.svg")),
];

/// The console URL that opens with `token` (and `room`): the fragment keys the console reads, so
/// the token never reaches a server's logs. What a fragment may not carry verbatim is
/// percent-encoded (the token alphabet allows `#%&`).
pub fn console_url(base: &str, token: &str, room: Option<&str>) -> String {
    let encode = |s: &str| -> String {
        s.bytes()
            .map(|b| {
                if b.is_ascii_alphanumeric() || b"-._~".contains(&b) {
                    (b as char).to_string()
                } else {
                    format!("%{b:02X}")
                }
            })
            .collect()
    };
    let mut url = format!("{}/#token={}", base.trim_end_matches('/'), encode(token));
    if let Some(room) = room {
        url.push_str(&format!("&room={}", encode(room)));
    }
    url
}

/// The built-in console at `/`: the page, and its script, stylesheet and icon at `/?asset=app.js`,
/// `/?asset=app.css` and `/?asset=icon.svg` (on `/`, so the console stays the one route that needs no token; none of
/// these files holds data: the page asks the API with the token from its URL fragment, which
/// browsers never send to the server). Another `asset` is 404; any other query gets the page.
pub async fn console(RawQuery(query): RawQuery) -> Response {
    let asset = query.as_deref().and_then(|q| q.split('&').find_map(|kv| kv.strip_prefix("asset="))).unwrap_or("");
    let Some((_, content_type, body)) = CONSOLE_FILES.iter().find(|(name, _, _)| *name == asset) else {
        return ApiError::not_found("asset_not_found", "no such console asset").into_response();
    };
    (
        [
            (header::CONTENT_TYPE, HeaderValue::from_static(content_type)),
            (header::CACHE_CONTROL, HeaderValue::from_static("no-store")),
            (header::CONTENT_SECURITY_POLICY, HeaderValue::from_static(CONSOLE_CSP)),
            (header::REFERRER_POLICY, HeaderValue::from_static("no-referrer")),
            (header::X_FRAME_OPTIONS, HeaderValue::from_static("DENY")),
            (header::X_CONTENT_TYPE_OPTIONS, HeaderValue::from_static("nosniff")),
        ],
        *body,
    )
        .into_response()
}

/// Test-only (behind `--test-hooks`): a handler that panics, to prove the JSON 500 and that the
/// server keeps serving.
pub async fn test_panic() -> StatusCode {
    panic!("test hook: a handler panicked on purpose");
}

/// Liveness.
#[utoipa::path(get, path = "/healthz", tag = "system",
    extensions(("x-ensemble-access" = json!({"token": false, "anyHost": true}))),
    responses((status = 200, description = "The server is up", body = Health)))]
pub async fn healthz() -> Json<Health> {
    Json(Health { status: "ok".into(), database: None, host_id: None, nats: None })
}

/// Readiness: 503 while draining, while the database does not answer, or (with several hosts)
/// while NATS is disconnected.
///
/// Without the bearer token only `status` (a probe needs no more; the engine, the host id and the
/// NATS state are for those who hold the token).
#[utoipa::path(get, path = "/readyz", tag = "system",
    extensions(("x-ensemble-access" = json!({"token": false, "anyHost": true}))),
    responses((status = 200, description = "Ready (`database`, `hostId` and `nats` only with the bearer token)", body = Health),
        (status = 503, description = "Draining (shutting down), the database does not answer or cannot write (`storage_full`, `store_unwritable`), or NATS is disconnected", body = Health)))]
pub async fn readyz(State(state): State<AppState>, headers: HeaderMap) -> (StatusCode, Json<Health>) {
    let detailed = security::authenticate(&state.access.token, &headers, false).is_some();
    let health = |status: &str, database: Option<&str>| {
        if !detailed {
            return Health { status: status.into(), database: None, host_id: None, nats: None };
        }
        Health {
            status: status.into(),
            database: database.map(str::to_owned),
            host_id: state.cluster.as_ref().map(|n| n.host_id.clone()),
            nats: state.cluster.as_ref().map(|n| if n.nats_connected() { "connected" } else { "disconnected" }.into()),
        }
    };
    if state.is_draining() {
        return (StatusCode::SERVICE_UNAVAILABLE, Json(health("draining", None)));
    }
    match state.controller.store_ready().await {
        Ok(engine) => {
            // The database answers reads, but its last commit failed (a full disk): not ready
            // until a probe writes again (tried here too, so readiness does not lag the store).
            let store = state.controller.store();
            if let Some(failure) = store.health().failing()
                && store.probe().await.is_err()
            {
                let status = if failure.full { "storage_full" } else { "store_unwritable" };
                return (StatusCode::SERVICE_UNAVAILABLE, Json(health(status, Some(engine))));
            }
            if state.cluster.as_ref().is_some_and(|n| !n.nats_connected()) {
                return (StatusCode::SERVICE_UNAVAILABLE, Json(health("nats_unavailable", Some(engine))));
            }
            (StatusCode::OK, Json(health("ok", Some(engine))))
        }
        Err(e) => {
            tracing::warn!(error = %e, "readiness: the database does not answer");
            (StatusCode::SERVICE_UNAVAILABLE, Json(health("database_unavailable", None)))
        }
    }
}

/// Prometheus metrics.
#[utoipa::path(get, path = "/metrics", tag = "system",
    extensions(("x-ensemble-access" = json!({"role": "viewer", "allRooms": true}))),
    responses((status = 200, description = "Prometheus text exposition format", content_type = "text/plain", body = String),
        (status = "4XX", body = ErrorResponse), (status = "5XX", body = ErrorResponse)))]
pub async fn metrics(State(state): State<AppState>) -> Response {
    telemetry::render_metrics(&state.controller)
}

/// This OpenAPI document.
#[utoipa::path(get, path = "/openapi.json", tag = "system",
    extensions(("x-ensemble-access" = json!({"token": false}))),
    responses((status = 200, description = "The OpenAPI document", content_type = "application/json", body = Object),
        (status = "4XX", body = ErrorResponse)))]
pub async fn openapi_json(Extension(OpenApiJson(spec)): Extension<OpenApiJson>) -> Response {
    ([(header::CONTENT_TYPE, HeaderValue::from_static("application/json"))], spec).into_response()
}
