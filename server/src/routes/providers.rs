//! `/v1/providers`: what this server can run.

use axum::extract::State;

use crate::api::ProviderList;
use crate::error::{ErrorResponse, Json};
use crate::state::AppState;

/// Providers this server can run. An available agent is asked (without a session, at most once
/// a minute) whether it needs a login, so `authState` says so before any session has started.
#[utoipa::path(get, path = "/v1/providers", tag = "providers",
    responses((status = 200, description = "The providers", body = ProviderList), (status = "4XX", body = ErrorResponse), (status = "5XX", body = ErrorResponse)))]
pub async fn list_providers(State(state): State<AppState>) -> Json<ProviderList> {
    Json(ProviderList { data: state.controller.providers_checked(state.auth_check_wait).await })
}
