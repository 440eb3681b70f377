//! Wire types: A provider's own sessions.

use serde::Deserialize;
use utoipa::IntoParams;

#[derive(Debug, Deserialize, IntoParams)]
#[serde(rename_all = "camelCase")]
#[into_params(parameter_in = Query)]
pub struct ProviderSessionsQuery {
    /// The directory whose sessions are listed (inside the workspace roots; default: the default cwd).
    pub cwd: Option<String>,
    /// The `next` of the page before.
    pub cursor: Option<String>,
}
