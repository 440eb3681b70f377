//! Requests for a session another host owns: sent to the owner over NATS request/reply, answered
//! with the owner's status, headers that matter and body, as if served here.
//!
//! A request carries `Ensemble-Method`, `Ensemble-Uri`, `Ensemble-From` and its `Content-Type` as
//! NATS headers and its body as the payload; the answer carries `Ensemble-Status` and the
//! response's `Content-Type`, `Retry-After` and `Location`. The owner runs the request through the
//! same router, marked [`Forwarded`] (the edge here already checked Host, Origin and token), and
//! never forwards it again: a session that moved meanwhile answers 503 with `Retry-After`.
//!
//! Only a request the owner can authenticate becomes [`Forwarded`]: it carries
//! `Ensemble-Timestamp` (unix ms), `Ensemble-Nonce` (128 random bits) and `Ensemble-Mac` over
//! method, URI, sending host, receiving host, content type, timestamp, nonce and body
//! ([`super::auth`]). The owner checks them before it reads anything else of the message: a
//! missing or wrong MAC, a timestamp beyond `--cluster-max-skew-secs` or a nonce it saw before is
//! refused (`ensemble_cluster_forward_refused_total{reason}`), never run. The answer carries a MAC
//! over status, kept headers, body and the request's nonce, so a forged answer (anyone on NATS may
//! publish to the reply subject) is 502 here, not passed on.

use std::sync::Arc;

use axum::body::Body;
use axum::extract::{Request, State};
use axum::http::{HeaderValue, Method, StatusCode, header};
use axum::middleware::Next;
use axum::response::{IntoResponse, Response};
use bytes::Bytes;
use ensemble_core::model::SessionKey;
use ensemble_runtime::controller::{Controller, Location};
use futures::StreamExt;
use tokio_util::sync::CancellationToken;
use tower::ServiceExt;

use super::auth::{self, MAC_HEADER, NONCE_HEADER, Purpose, Rejection, TIMESTAMP_HEADER};
use super::{Node, host_subject};
use crate::access::Principal;
use crate::error::{ApiError, ErrorBody, ErrorResponse};
use crate::security::{Forwarded, percent_decode};

/// What the routing middleware needs.
#[derive(Clone)]
pub struct Forwarding {
    pub controller: Controller,
    pub node: Arc<Node>,
}

/// Headers a forwarded answer keeps.
const KEPT: [header::HeaderName; 4] =
    [header::CONTENT_TYPE, header::RETRY_AFTER, header::LOCATION, crate::routes::sessions::WAIT_HEADER];

/// Serves a session-scoped request here, or forwards it to the session's owner.
pub async fn route(State(f): State<Forwarding>, req: Request, next: Next) -> Response {
    let Some(key) = session_key(req.uri().path()) else { return next.run(req).await };
    let forwarded = req.extensions().get::<Forwarded>().is_some();
    match f.controller.locate(&key).await {
        Ok(Location::Local) => next.run(req).await,
        Ok(Location::Remote(owner)) if forwarded => {
            tracing::info!(session = %key, owner = %owner, "a forwarded request found its session moved");
            ApiError::new(StatusCode::SERVICE_UNAVAILABLE, "owner_moved", "the session moved to another host; retry")
                .retry_after(1)
                .into_response()
        }
        Ok(Location::Remote(owner)) => f.node.forward(&owner, req).await,
        Err(e) => ApiError::from(e).into_response(),
    }
}

/// `(room, session)` of a path under `/v1/rooms/{roomId}/sessions/{sessionId}`.
fn session_key(path: &str) -> Option<SessionKey> {
    let rest = path.strip_prefix("/v1/rooms/")?;
    let mut parts = rest.split('/');
    let room = percent_decode(parts.next()?)?;
    if parts.next()? != "sessions" {
        return None;
    }
    let session = percent_decode(parts.next()?)?;
    if room.is_empty() || session.is_empty() {
        return None;
    }
    Some(SessionKey { room_id: room, session_id: session })
}

fn outcome(label: &'static str) {
    metrics::counter!("ensemble_cluster_forwarded_total", "outcome" => label).increment(1);
}

/// The header that says why an owner refused a forwarded request (not authenticated: a refusal
/// proves nothing, and the requester answers 502 either way).
const REFUSED_HEADER: &str = "Ensemble-Refused";

/// What a forwarded request's MAC covers, in this order.
struct RequestFields<'a> {
    method: &'a str,
    uri: &'a str,
    from: &'a str,
    to: &'a str,
    /// The caller's token id on the receiving host (checked again by the owner).
    token_id: &'a str,
    content_type: Option<&'a str>,
    timestamp: &'a str,
    nonce: &'a str,
    body: &'a [u8],
}

impl RequestFields<'_> {
    fn mac(&self, node: &Node) -> String {
        let ct = auth::optional(self.content_type);
        node.keys.sign(Purpose::Request, &self.encoded(&ct))
    }

    fn verify(&self, node: &Node, mac: &str) -> bool {
        let ct = auth::optional(self.content_type);
        node.keys.verify(Purpose::Request, &self.encoded(&ct), mac)
    }

    fn encoded<'b>(&'b self, content_type: &'b [u8]) -> [&'b [u8]; 9] {
        [
            self.method.as_bytes(),
            self.uri.as_bytes(),
            self.from.as_bytes(),
            self.to.as_bytes(),
            self.token_id.as_bytes(),
            content_type,
            self.timestamp.as_bytes(),
            self.nonce.as_bytes(),
            self.body,
        ]
    }
}

/// The MAC fields of an answer: status, the kept headers (present or not), the request's nonce,
/// the body.
fn answer_fields(status: &str, kept: &[Option<&str>], nonce: &str, body: &[u8]) -> Vec<Vec<u8>> {
    let mut fields = vec![status.as_bytes().to_vec()];
    fields.extend(kept.iter().map(|v| auth::optional(*v)));
    fields.push(nonce.as_bytes().to_vec());
    fields.push(body.to_vec());
    fields
}

fn as_slices(fields: &[Vec<u8>]) -> Vec<&[u8]> {
    fields.iter().map(Vec::as_slice).collect()
}

impl Node {
    /// Sends `req` to `owner` and turns its answer (or the lack of one) into the response.
    async fn forward(&self, owner: &str, req: Request) -> Response {
        let (parts, body) = req.into_parts();
        // The edge here authenticated the caller; without a principal nothing is forwarded.
        let Some(token_id) = parts.extensions.get::<Principal>().map(|p| p.token_id().to_owned()) else {
            return ApiError::new(StatusCode::UNAUTHORIZED, "unauthorized", "a valid bearer token is required")
                .into_response();
        };
        let Ok(body) = axum::body::to_bytes(body, self.max_body_bytes).await else {
            return ApiError::new(StatusCode::PAYLOAD_TOO_LARGE, "body_too_large", "the request body is too large")
                .into_response();
        };
        let uri = parts.uri.path_and_query().map(|p| p.as_str()).unwrap_or("/");
        let content_type = parts.headers.get(header::CONTENT_TYPE).and_then(|v| v.to_str().ok());
        let (timestamp, nonce) = (auth::now_ms().to_string(), auth::nonce());
        let fields = RequestFields {
            method: parts.method.as_str(),
            uri,
            from: &self.host_id,
            to: owner,
            token_id: &token_id,
            content_type,
            timestamp: &timestamp,
            nonce: &nonce,
            body: &body,
        };
        let mut h = async_nats::HeaderMap::new();
        h.insert("Ensemble-Method", parts.method.as_str());
        h.insert("Ensemble-Uri", uri);
        h.insert("Ensemble-From", self.host_id.as_str());
        h.insert("Ensemble-Token-Id", token_id.as_str());
        if let Some(ct) = content_type {
            h.insert("Content-Type", ct);
        }
        h.insert(TIMESTAMP_HEADER, timestamp.as_str());
        h.insert(NONCE_HEADER, nonce.as_str());
        h.insert(MAC_HEADER, fields.mac(self).as_str());
        let request = async_nats::Request::new().headers(h).payload(body).timeout(Some(self.forward_timeout));
        let answer = self.client.send_request(host_subject(owner), request).await;
        let retry = self.lease.as_secs().max(1);
        match answer {
            Ok(msg) => answer_response(self, owner, &nonce, &msg),
            Err(e) => match e.kind() {
                async_nats::RequestErrorKind::TimedOut => {
                    outcome("timeout");
                    ApiError::new(
                        StatusCode::GATEWAY_TIMEOUT,
                        "forward_timeout",
                        format!("the host that owns the session ({owner}) did not answer in time"),
                    )
                    .into_response()
                }
                async_nats::RequestErrorKind::NoResponders => {
                    outcome("unreachable");
                    ApiError::new(
                        StatusCode::SERVICE_UNAVAILABLE,
                        "owner_unreachable",
                        format!(
                            "the host that owns the session ({owner}) cannot be reached; another host takes it over \
                             when its lease expires"
                        ),
                    )
                    .retry_after(retry)
                    .into_response()
                }
                _ => {
                    outcome("error");
                    tracing::warn!(error = %e, owner, "forwarding a request failed");
                    ApiError::new(
                        StatusCode::SERVICE_UNAVAILABLE,
                        "nats_unavailable",
                        "the hosts cannot reach each other",
                    )
                    .retry_after(retry)
                    .into_response()
                }
            },
        }
    }
}

impl Node {
    /// The open side conversations of `room` that other hosts hold, each read from its host (as
    /// `GET …/sessions/{id}` would be forwarded). Best effort: a host that does not answer in time
    /// leaves its sides out; a client finds them later through their `side_event`s or REST.
    pub async fn remote_sides(&self, controller: &Controller, room: &str) -> Vec<ensemble_core::model::Session> {
        let remote = match controller.remote_sides(room).await {
            Ok(r) => r,
            Err(e) => {
                tracing::warn!(room, error = %e, "listing other hosts' side conversations failed");
                return Vec::new();
            }
        };
        let reads = remote.into_iter().map(|(key, owner)| async move {
            let uri = format!("/v1/rooms/{}/sessions/{}", key.room_id, key.session_id);
            // For a WebSocket's `hello`, whose caller was checked for the room already.
            let req = Request::builder()
                .method(Method::GET)
                .uri(uri)
                .extension(Principal::admin())
                .body(Body::empty())
                .ok()?;
            let resp = self.forward(&owner, req).await;
            if resp.status() != StatusCode::OK {
                tracing::debug!(session = %key, owner, status = %resp.status(), "a side's snapshot was not read");
                return None;
            }
            let body = axum::body::to_bytes(resp.into_body(), self.max_body_bytes).await.ok()?;
            serde_json::from_slice::<ensemble_core::model::Session>(&body).ok()
        });
        let mut sides: Vec<_> = futures::future::join_all(reads)
            .await
            .into_iter()
            .flatten()
            .filter(|s| s.status != ensemble_core::model::SessionStatus::Completed)
            .collect();
        sides.sort_by(|a, b| (a.created_at_ms, &a.session_id).cmp(&(b.created_at_ms, &b.session_id)));
        sides
    }
}

/// The owner's answer as this host's response, if it is authentic (502 otherwise).
fn answer_response(node: &Node, owner: &str, nonce: &str, msg: &async_nats::Message) -> Response {
    let headers = msg.headers.as_ref();
    let get = |name: &str| headers.and_then(|h| h.get(name)).map(|v| v.as_str());
    let status_text = get("Ensemble-Status").unwrap_or("");
    let kept = KEPT.each_ref().map(|name| get(name.as_str()));
    let fields = answer_fields(status_text, &kept, nonce, &msg.payload);
    if !get(MAC_HEADER).is_some_and(|mac| node.keys.verify(Purpose::Answer, &as_slices(&fields), mac)) {
        outcome("unauthenticated_answer");
        let refused = get(REFUSED_HEADER);
        tracing::warn!(owner, refused, "a forwarded request's answer failed the cluster authentication check");
        let message = match refused {
            Some(reason) => format!(
                "the host that owns the session ({owner}) refused the forwarded request ({reason}); do the hosts \
                 share --cluster-secret-file, and do their clocks agree within --cluster-max-skew-secs?"
            ),
            None => format!("the answer of the host that owns the session ({owner}) failed authentication"),
        };
        return ApiError::new(StatusCode::BAD_GATEWAY, "forward_unauthenticated", message).into_response();
    }
    let status = status_text.parse::<u16>().ok().and_then(|s| StatusCode::from_u16(s).ok());
    let Some(status) = status else {
        outcome("error");
        return ApiError::new(StatusCode::BAD_GATEWAY, "forward_failed", "the owning host sent an unreadable answer")
            .into_response();
    };
    outcome("ok");
    let mut resp = Response::new(Body::from(msg.payload.clone()));
    *resp.status_mut() = status;
    for name in KEPT {
        if let Some(v) = headers.and_then(|h| h.get(name.as_str())).and_then(|v| HeaderValue::from_str(v.as_str()).ok())
        {
            resp.headers_mut().insert(name, v);
        }
    }
    resp
}

/// Answers the requests other hosts forward to this one, each on a task of its own.
pub async fn answer(node: Arc<Node>, mut requests: async_nats::Subscriber, app: axum::Router, stop: CancellationToken) {
    loop {
        let msg = tokio::select! {
            () = stop.cancelled() => return,
            msg = requests.next() => match msg {
                Some(m) => m,
                None => return,
            },
        };
        let (node, app) = (node.clone(), app.clone());
        tokio::spawn(async move {
            let Some(reply) = msg.reply.clone() else { return };
            let (headers, body) = serve(&node, app, &msg).await;
            if let Err(e) = node.client.publish_with_headers(reply, headers, body).await {
                tracing::warn!(error = %e, "answering a forwarded request failed");
            }
        });
    }
}

/// Checks a forwarded request's MAC, timestamp and nonce, in that order (a nonce is remembered
/// only for a request whose MAC is valid, so forgeries cannot fill the cache).
fn authenticate(node: &Node, msg: &async_nats::Message) -> Result<(), Rejection> {
    let h = msg.headers.as_ref();
    let get = |name: &str| h.and_then(|h| h.get(name)).map(|v| v.as_str());
    let (Some(method), Some(uri), Some(timestamp), Some(nonce), Some(mac)) =
        (get("Ensemble-Method"), get("Ensemble-Uri"), get(TIMESTAMP_HEADER), get(NONCE_HEADER), get(MAC_HEADER))
    else {
        return Err(Rejection::Unauthenticated);
    };
    let fields = RequestFields {
        method,
        uri,
        from: get("Ensemble-From").unwrap_or(""),
        to: &node.host_id,
        token_id: get("Ensemble-Token-Id").unwrap_or(""),
        content_type: get("Content-Type"),
        timestamp,
        nonce,
        body: &msg.payload,
    };
    if !fields.verify(node, mac) {
        return Err(Rejection::BadMac);
    }
    if !timestamp.parse::<u64>().is_ok_and(|ts| auth::fresh(ts, node.max_skew)) {
        return Err(Rejection::Stale);
    }
    node.replays.admit(nonce)
}

/// The answer to a request that was not authenticated: 401 with the reason, without a MAC.
fn refusal(rejection: Rejection) -> (async_nats::HeaderMap, Bytes) {
    let status = if rejection == Rejection::ReplayCacheFull {
        StatusCode::SERVICE_UNAVAILABLE
    } else {
        StatusCode::UNAUTHORIZED
    };
    let body = serde_json::to_vec(&ErrorResponse {
        error: ErrorBody {
            code: "cluster_unauthenticated".into(),
            message: format!("the forwarded request was refused: {}", rejection.label()),
            details: None,
        },
    })
    .unwrap_or_default();
    let mut out = async_nats::HeaderMap::new();
    out.insert("Ensemble-Status", status.as_str());
    out.insert("Content-Type", "application/json");
    out.insert(REFUSED_HEADER, rejection.label());
    (out, Bytes::from(body))
}

/// Runs one forwarded request through the router, if it is authentic.
async fn serve(node: &Node, app: axum::Router, msg: &async_nats::Message) -> (async_nats::HeaderMap, Bytes) {
    if let Err(rejection) = authenticate(node, msg) {
        metrics::counter!("ensemble_cluster_forward_refused_total", "reason" => rejection.label()).increment(1);
        tracing::warn!(
            from = msg.headers.as_ref().and_then(|h| h.get("Ensemble-From")).map(|v| v.as_str()).unwrap_or(""),
            reason = rejection.label(),
            "refused a forwarded request that failed the cluster authentication check"
        );
        return refusal(rejection);
    }
    metrics::counter!("ensemble_cluster_forward_served_total").increment(1);
    let h = msg.headers.as_ref();
    let get = |name: &str| h.and_then(|h| h.get(name)).map(|v| v.as_str().to_owned());
    let method = get("Ensemble-Method").and_then(|m| Method::from_bytes(m.as_bytes()).ok());
    let uri = get("Ensemble-Uri");
    let from = get("Ensemble-From").unwrap_or_default();
    let token_id = get("Ensemble-Token-Id").unwrap_or_default();
    let nonce = get(NONCE_HEADER).unwrap_or_default();
    let response = match (method, uri) {
        (Some(method), Some(uri)) => {
            let mut builder = Request::builder().method(method).uri(uri).extension(Forwarded { from, token_id });
            if let Some(ct) = get("Content-Type") {
                builder = builder.header(header::CONTENT_TYPE, ct);
            }
            match builder.body(Body::from(msg.payload.clone())) {
                Ok(req) => match app.oneshot(req).await {
                    Ok(r) => r,
                    Err(never) => match never {},
                },
                Err(_) => ApiError::bad_request("bad_forward", "unreadable forwarded request").into_response(),
            }
        }
        _ => ApiError::bad_request("bad_forward", "unreadable forwarded request").into_response(),
    };
    // Room for the headers; 1 MiB (NATS's default) if the server has not said yet.
    let max = match node.client.server_info().max_payload {
        0 => 1 << 20,
        n => n,
    }
    .saturating_sub(4096);
    let (parts, body) = response.into_parts();
    let (status, body) = match axum::body::to_bytes(body, max).await {
        Ok(b) => (parts.status, b),
        Err(_) => {
            let e = ApiError::new(
                StatusCode::BAD_GATEWAY,
                "forward_too_large",
                "the answer is larger than NATS carries; ask the owning host directly or page smaller",
            );
            let r = e.into_response();
            let status = r.status();
            (status, axum::body::to_bytes(r.into_body(), max).await.unwrap_or_default())
        }
    };
    let mut out = async_nats::HeaderMap::new();
    out.insert("Ensemble-Status", status.as_str());
    if status != StatusCode::BAD_GATEWAY {
        for name in KEPT {
            if let Some(v) = parts.headers.get(&name).and_then(|v| v.to_str().ok()) {
                out.insert(name.as_str(), v);
            }
        }
    } else {
        out.insert("Content-Type", "application/json");
    }
    let kept = KEPT.each_ref().map(|name| out.get(name.as_str()).map(|v| v.as_str()));
    let mac = node.keys.sign(Purpose::Answer, &as_slices(&answer_fields(status.as_str(), &kept, &nonce, &body)));
    out.insert(MAC_HEADER, mac.as_str());
    (out, body)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn session_paths_are_recognised() {
        let k = session_key("/v1/rooms/r%3A1/sessions/s.2/turns").unwrap();
        assert_eq!((k.room_id.as_str(), k.session_id.as_str()), ("r:1", "s.2"));
        assert!(session_key("/v1/rooms/r/sessions/s").is_some());
        assert!(session_key("/v1/rooms/r/sessions").is_none());
        assert!(session_key("/v1/rooms/r/sessions/").is_none());
        assert!(session_key("/v1/rooms/r/events").is_none());
        assert!(session_key("/v1/rooms/r/sessions/%zz").is_none());
    }
}
