//! `/v1/providers`: what this server can run.

use axum::extract::State;
use ensemble_core::limits::{check_id, check_text};
use ensemble_core::model::ProviderSessionList;
use serde::Deserialize;

use crate::api::ProviderList;
use crate::api::providers::ProviderSessionsQuery;
use crate::error::{ApiError, ErrorResponse, Json, Path, Query};
use crate::state::AppState;

/// Providers this server can run. An available agent is asked (without a session, at most once
/// a minute) whether it needs a login, so `authState` says so before any session has started.
#[utoipa::path(get, path = "/v1/providers", tag = "providers",
    extensions(("x-ensemble-access" = json!({"role": "viewer"}))),
    responses((status = 200, description = "The providers", body = ProviderList), (status = "4XX", body = ErrorResponse), (status = "5XX", body = ErrorResponse)))]
pub async fn list_providers(State(state): State<AppState>) -> Json<ProviderList> {
    Json(ProviderList { data: state.controller.providers_checked(state.auth_check_wait).await })
}

/// The `{providerId}` of `/v1/providers/{providerId}/…`.
#[derive(Debug, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct ProviderPath {
    provider_id: String,
}

/// The agent's own earlier sessions of a directory (ACP `session/list`, for an agent that
/// advertises it): a session of a room continues one with `providerSessionId` in
/// `POST …/sessions`. The agent is started for the question, then stopped.
#[utoipa::path(get, path = "/v1/providers/{providerId}/sessions", tag = "providers",
    extensions(("x-ensemble-access" = json!({"role": "operator", "allRooms": true}))),
    params(("providerId" = String, Path, pattern = "^[A-Za-z0-9._~:-]*[A-Za-z0-9_~:-][A-Za-z0-9._~:-]*$", min_length = 1, max_length = 128), ProviderSessionsQuery),
    responses((status = 200, description = "A page of the agent's sessions", body = ProviderSessionList),
        (status = 404, description = "No such provider (`unknown_provider`)", body = ErrorResponse),
        (status = 422, description = "The agent does not list its sessions (`unsupported`)", body = ErrorResponse),
        (status = "4XX", body = ErrorResponse), (status = "5XX", body = ErrorResponse)))]
pub async fn list_provider_sessions(
    State(state): State<AppState>,
    Path(ProviderPath { provider_id }): Path<ProviderPath>,
    Query(q): Query<ProviderSessionsQuery>,
) -> Result<Json<ProviderSessionList>, ApiError> {
    check_id("providerId", &provider_id)?;
    // In the path: a provider that is not there is not found (in a start's body it is a 400).
    if !state.controller.providers().iter().any(|p| p.id == provider_id) {
        return Err(ApiError::not_found("unknown_provider", format!("unknown provider `{provider_id}`")));
    }
    if let Some(c) = &q.cwd {
        check_text("cwd", c)?;
    }
    if let Some(c) = &q.cursor {
        check_text("cursor", c)?;
    }
    let cwd = q.cwd.as_deref().map(|c| state.workspace.resolve(c)).transpose()?;
    let cwd = cwd.map(|c| c.to_string_lossy().into_owned());
    Ok(Json(state.controller.provider_sessions(&provider_id, cwd.as_deref(), q.cursor).await?))
}
