//! Logs (`tracing`, `RUST_LOG`, text or JSON) and metrics (Prometheus text at `/metrics`).

use std::sync::OnceLock;
use std::time::Instant;

use axum::extract::{MatchedPath, Request};
use axum::http::{HeaderValue, StatusCode, header};
use axum::middleware::Next;
use axum::response::{IntoResponse, Response};
use ensemble_runtime::controller::Controller;
use ensemble_runtime::model::SessionStatus;
use metrics_exporter_prometheus::{PrometheusBuilder, PrometheusHandle};
use tracing_subscriber::EnvFilter;
use tracing_subscriber::filter::LevelFilter;

use crate::config::LogFormat;

/// Logs go to stderr (stdout carries the `listening on` line). `RUST_LOG` filters.
pub fn init_tracing(format: LogFormat) {
    let filter = EnvFilter::builder().with_default_directive(LevelFilter::INFO.into()).from_env_lossy();
    let builder = tracing_subscriber::fmt().with_env_filter(filter).with_writer(std::io::stderr);
    let result = match format {
        LogFormat::Json => builder.json().flatten_event(true).with_current_span(true).try_init(),
        LogFormat::Text => builder.try_init(),
    };
    if let Err(e) = result {
        eprintln!("logging already initialised: {e}");
    }
}

/// The process-wide Prometheus recorder (installed once; `None` if another recorder won).
pub fn metrics_handle() -> Option<&'static PrometheusHandle> {
    static HANDLE: OnceLock<Option<PrometheusHandle>> = OnceLock::new();
    HANDLE
        .get_or_init(|| match PrometheusBuilder::new().install_recorder() {
            Ok(h) => Some(h),
            Err(e) => {
                tracing::warn!(error = %e, "metrics recorder not installed");
                None
            }
        })
        .as_ref()
}

/// The Prometheus text, with the gauges of this controller read now.
pub fn render_metrics(controller: &Controller) -> Response {
    let Some(handle) = metrics_handle() else {
        return (StatusCode::SERVICE_UNAVAILABLE, "metrics are not available").into_response();
    };
    // Gauges that are cheaper to read at scrape time than to maintain.
    let counts = controller.status_counts();
    for status in SessionStatus::ALL {
        let n = counts.get(&status).copied().unwrap_or(0);
        metrics::gauge!("ensemble_sessions", "status" => status.as_str()).set(n as f64);
    }
    metrics::gauge!("ensemble_live_provider_processes").set(controller.live_processes() as f64);
    metrics::gauge!("ensemble_store_queue_length").set(controller.store().queue_len() as f64);
    metrics::gauge!("ensemble_active_rooms").set(controller.hub().active_rooms() as f64);
    ([(header::CONTENT_TYPE, HeaderValue::from_static("text/plain; version=0.0.4; charset=utf-8"))], handle.render())
        .into_response()
}

/// Counts requests by route and status, and logs each at debug level. The span names the matched
/// route, never the raw URI, so query strings stay out of logs.
pub async fn track_http(req: Request, next: Next) -> Response {
    let route =
        req.extensions().get::<MatchedPath>().map(|p| p.as_str().to_owned()).unwrap_or_else(|| "unmatched".into());
    let method = req.method().as_str().to_owned();
    let started = Instant::now();
    let res = next.run(req).await;
    let status = res.status().as_u16();
    let elapsed = started.elapsed();
    metrics::counter!("ensemble_http_requests_total", "route" => route.clone(), "method" => method.clone(), "status" => status.to_string())
        .increment(1);
    metrics::histogram!("ensemble_http_request_seconds", "route" => route.clone()).record(elapsed.as_secs_f64());
    tracing::debug!(%method, %route, status, elapsed_ms = elapsed.as_millis() as u64, "request");
    res
}
