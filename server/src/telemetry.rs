//! Logs (`tracing`, `RUST_LOG`, text or JSON) and metrics (Prometheus text at `/metrics`).

use std::collections::HashMap;
use std::sync::{LazyLock, OnceLock, RwLock};
use std::time::Instant;

use axum::extract::{MatchedPath, Request};
use axum::http::{HeaderValue, Method, StatusCode, header};
use axum::response::{IntoResponse, Response};
use ensemble_core::model::SessionStatus;
use ensemble_runtime::controller::Controller;
use metrics::{Counter, Histogram};
use metrics_exporter_prometheus::{PrometheusBuilder, PrometheusHandle};
use tracing_subscriber::EnvFilter;
use tracing_subscriber::filter::LevelFilter;

use crate::config::{LogColor, LogFormat};

/// Libraries that log what passes through them — message and frame contents, request bodies in
/// rejections — at `debug` or `trace`. Room content must never reach the logs, so these are held at
/// `info` whatever `RUST_LOG` says.
pub const CONTENT_LOGGING_TARGETS: [&str; 3] = ["tungstenite", "tokio_tungstenite", "axum::rejection"];

/// The log filter: `RUST_LOG` (default `info`), with [`CONTENT_LOGGING_TARGETS`] held at `info`.
pub fn log_filter(rust_log: Option<&str>) -> EnvFilter {
    let builder = EnvFilter::builder().with_default_directive(LevelFilter::INFO.into());
    let mut filter = builder.parse_lossy(rust_log.unwrap_or_default());
    for target in CONTENT_LOGGING_TARGETS {
        if let Ok(d) = format!("{target}=info").parse() {
            filter = filter.add_directive(d);
        }
    }
    filter
}

/// Logs go to stderr (stdout carries the `listening on` and `console:` lines). `RUST_LOG`
/// filters; colour only where a person reads them (see [`LogColor`]).
pub fn init_tracing(format: LogFormat, color: LogColor) {
    let filter = log_filter(std::env::var("RUST_LOG").ok().as_deref());
    let ansi =
        colored(color, std::io::IsTerminal::is_terminal(&std::io::stderr()), std::env::var_os("NO_COLOR").is_some());
    let builder = tracing_subscriber::fmt().with_env_filter(filter).with_writer(std::io::stderr).with_ansi(ansi);
    let result = match format {
        LogFormat::Json => builder.json().flatten_event(true).with_current_span(true).try_init(),
        LogFormat::Text => builder.try_init(),
    };
    if let Err(e) = result {
        eprintln!("logging already initialised: {e}");
    }
}

/// Whether text logs carry colour: `auto` when stderr is a terminal and `NO_COLOR` is not set
/// (<https://no-color.org>).
pub fn colored(color: LogColor, terminal: bool, no_color: bool) -> bool {
    match color {
        LogColor::Always => true,
        LogColor::Never => false,
        LogColor::Auto => terminal && !no_color,
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
    metrics::gauge!("ensemble_store_queue_bytes").set(controller.store().queued_bytes() as f64);
    metrics::gauge!("ensemble_active_rooms").set(controller.hub().active_rooms() as f64);
    ([(header::CONTENT_TYPE, HeaderValue::from_static("text/plain; version=0.0.4; charset=utf-8"))], handle.render())
        .into_response()
}

/// A request method as a metric label: the standard ones by name, anything else `other`, so a
/// client cannot grow the label set (and the recorder's memory) by inventing methods.
pub fn method_label(method: &Method) -> &'static str {
    match *method {
        Method::GET => "GET",
        Method::POST => "POST",
        Method::PUT => "PUT",
        Method::DELETE => "DELETE",
        Method::PATCH => "PATCH",
        Method::HEAD => "HEAD",
        Method::OPTIONS => "OPTIONS",
        Method::CONNECT => "CONNECT",
        Method::TRACE => "TRACE",
        _ => "other",
    }
}

/// Counts requests by route, method and status, and logs each at debug level. Every label comes
/// from a fixed set: the route is the matched route template (`unmatched` when none matched), the
/// method one of [`method_label`]'s, the status a three-digit code. The log names the same, never
/// the raw URI, so query strings stay out of logs.
pub async fn track_http<F, Fut>(req: Request, next: F) -> Response
where
    F: FnOnce(Request) -> Fut,
    Fut: Future<Output = Response>,
{
    let route = req.extensions().get::<MatchedPath>().cloned();
    let method = method_label(req.method());
    let started = Instant::now();
    let res = next(req).await;
    let status = res.status().as_u16();
    let elapsed = started.elapsed();
    let route = route.as_ref().map_or(UNMATCHED, |p| p.as_str());
    let (count, time) = HTTP_METRICS.handles(route, method, status);
    count.increment(1);
    time.record(elapsed.as_secs_f64());
    tracing::debug!(%method, %route, status, elapsed_ms = elapsed.as_millis() as u64, "request");
    res
}

/// The route label of a request no route matched.
const UNMATCHED: &str = "unmatched";

/// The request metrics' handles, registered once per label set. Registering per request built
/// the key's labels (three allocations) and looked it up in the recorder's registry: about a
/// fiftieth of the server's CPU per session start. Every label comes from a fixed set (see
/// [`track_http`]), so this map stays as small as the recorder's own.
static HTTP_METRICS: LazyLock<HttpMetrics> = LazyLock::new(|| HttpMetrics { routes: RwLock::default() });

struct HttpMetrics {
    routes: RwLock<HashMap<String, RouteMetrics>>,
}

struct RouteMetrics {
    time: Histogram,
    counts: Vec<(&'static str, u16, Counter)>,
}

impl HttpMetrics {
    fn handles(&self, route: &str, method: &'static str, status: u16) -> (Counter, Histogram) {
        let found = |routes: &HashMap<String, RouteMetrics>| {
            let r = routes.get(route)?;
            let (_, _, count) = r.counts.iter().find(|(m, s, _)| *m == method && *s == status)?;
            Some((count.clone(), r.time.clone()))
        };
        if let Some(h) = found(&self.routes.read().unwrap_or_else(|e| e.into_inner())) {
            return h;
        }
        let mut routes = self.routes.write().unwrap_or_else(|e| e.into_inner());
        if let Some(h) = found(&routes) {
            return h;
        }
        let r = routes.entry(route.to_owned()).or_insert_with(|| RouteMetrics {
            time: metrics::histogram!("ensemble_http_request_seconds", "route" => route.to_owned()),
            counts: Vec::new(),
        });
        let count = metrics::counter!("ensemble_http_requests_total", "route" => route.to_owned(), "method" => method, "status" => status.to_string());
        r.counts.push((method, status, count.clone()));
        (count, r.time.clone())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn methods_outside_the_standard_set_share_one_label() {
        assert_eq!(method_label(&Method::GET), "GET");
        assert_eq!(method_label(&Method::DELETE), "DELETE");
        for m in ["FOO", "get", "PROPFIND", "X".repeat(1000).as_str()] {
            assert_eq!(method_label(&Method::from_bytes(m.as_bytes()).unwrap()), "other", "{m}");
        }
    }

    #[test]
    fn content_logging_libraries_stay_at_info_whatever_rust_log_says() {
        use tracing::Level;
        use tracing::level_filters::LevelFilter;
        for rust_log in ["trace", "tungstenite=trace,tokio_tungstenite=trace,axum=trace", "debug,axum::rejection=trace"]
        {
            let filter = log_filter(Some(rust_log));
            let text = filter.to_string();
            for target in CONTENT_LOGGING_TARGETS {
                assert!(text.contains(&format!("{target}=info")), "{rust_log}: {text}");
                assert!(!text.contains(&format!("{target}=trace")), "{rust_log}: {text}");
            }
            assert!(filter.max_level_hint().is_none_or(|l| l >= LevelFilter::from_level(Level::DEBUG)));
        }
    }
}
