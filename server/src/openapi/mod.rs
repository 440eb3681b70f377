//! The OpenAPI document's static part: info, the schemas no route names, tags and the bearer scheme.
//!
//! The routes add their paths: the complete document is what `router::openapi()` splits off the
//! documented routes. The router serialises it once into an [`OpenApiJson`] that `/openapi.json`
//! serves; `ensemble openapi` prints it, and it is committed as `openapi/openapi.json` (a test diffs
//! the two). This module imports nothing of the crate but wire types.

mod finish;

use bytes::Bytes;
use ensemble_core::event::{Event, EventBody};
use utoipa::openapi::security::{HttpAuthScheme, HttpBuilder, SecurityScheme};
use utoipa::{Modify, OpenApi};

use ensemble_core::answers::{AnswerChoices, QuestionAnswer};

use crate::api::{ClientFrame, ServerFrame};

#[derive(OpenApi)]
#[openapi(
    info(
        title = "Ensemble",
        description = "Runs coding agents for people and tools that are not in the same process. \
            REST for the session lifecycle; one WebSocket per room for every activity event, in order, \
            with a gap-free sequence number.",
        license(name = "Apache-2.0"),
    ),
    modifiers(&BearerAuth),
    security(("bearer" = [])),
    // The event payloads' schemas come with `EventBody` (utoipa collects what its variants
    // refer to): the event table in `core/src/event.rs` is the one list of event types.
    components(schemas(Event, EventBody, ServerFrame, ClientFrame, QuestionAnswer, AnswerChoices)),
    tags(
        (name = "sessions", description = "Session lifecycle"),
        (name = "turns", description = "Turns: submit, steer, cancel"),
        (name = "interactions", description = "Approvals and questions"),
        (name = "sides", description = "Side conversations"),
        (name = "goals", description = "Goals"),
        (name = "workspaces", description = "Workspaces: checkpoints, changes, restore"),
        (name = "rooms", description = "Rooms, their event log and their WebSocket"),
        (name = "providers", description = "Providers"),
        (name = "system", description = "Health, readiness, metrics, this document"),
        (name = "access", description = "Managed tokens, the audit trail, the caller's role"),
        (name = "webhooks", description = "Webhooks: events POSTed to a URL, signed, retried, with their deliveries"),
    )
)]
struct ApiDoc;

/// Every operation needs the bearer token unless it says otherwise (`/healthz`, `/readyz`).
struct BearerAuth;

impl Modify for BearerAuth {
    fn modify(&self, openapi: &mut utoipa::openapi::OpenApi) {
        let components = openapi.components.get_or_insert_with(Default::default);
        components.add_security_scheme(
            "bearer",
            SecurityScheme::Http(
                HttpBuilder::new()
                    .scheme(HttpAuthScheme::Bearer)
                    .description(Some(
                        "The server's token (`--token-file`, or DATA_DIR/token; role admin on every room), or a \
                         managed token (`POST /v1/tokens`) with its role and rooms. Each operation names the role \
                         it needs in `x-ensemble-access` (viewer < operator < approver < admin; `allRooms`: a token \
                         for every room; `token: false`: none needed): too little is 403 `forbidden`, a room \
                         outside the token's rooms is 404 `room_not_found`. Browsers opening \
                         the room WebSocket pass the token as the subprotocol `ensemble.bearer.<token>` next to \
                         `ensemble.v1`.",
                    ))
                    .build(),
            ),
        );
    }
}

/// The document's static part (info, components, tags); the routes add their paths.
pub fn base() -> utoipa::openapi::OpenApi {
    ApiDoc::openapi()
}

/// The document as published: utoipa's derivation with the [`finish`] passes applied (named
/// unions with discriminators, every response described).
pub fn complete(doc: utoipa::openapi::OpenApi) -> utoipa::openapi::OpenApi {
    let finished = serde_json::to_value(&doc).map_err(|e| e.to_string()).and_then(|mut v| {
        finish::finish(&mut v).map_err(|e| e.to_string())?;
        serde_json::from_value(v).map_err(|e| e.to_string())
    });
    match finished {
        Ok(doc) => doc,
        Err(e) => {
            // The committed-document test fails on this; the server still serves what utoipa made.
            tracing::error!(error = %e, "the OpenAPI document could not be finished");
            doc
        }
    }
}

/// A document as pretty JSON with a trailing newline (the committed form).
pub fn pretty(doc: &utoipa::openapi::OpenApi) -> String {
    let mut s = doc.to_pretty_json().unwrap_or_else(|e| format!("{{\"error\":\"{e}\"}}"));
    s.push('\n');
    s
}

/// The complete document as `/openapi.json` serves it: serialised once, when the router is built,
/// and handed to the handler as an axum `Extension`.
#[derive(Clone, Debug)]
pub struct OpenApiJson(pub Bytes);

impl OpenApiJson {
    pub fn new(doc: &utoipa::openapi::OpenApi) -> Self {
        Self(Bytes::from(pretty(doc)))
    }
}
