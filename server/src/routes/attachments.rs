//! The images of a session's turns, kept by the server when the turn started.

use axum::extract::State;
use axum::http::{HeaderValue, header};
use axum::response::{IntoResponse, Response};
use serde::Deserialize;

use crate::api::attachments::ImageBytes;
use crate::api::params::SessionPath;
use crate::error::{ApiError, ErrorResponse, Path};
use crate::state::AppState;

/// The `{attachment}` of `…/attachments/{attachment}`.
#[derive(Debug, Deserialize)]
pub struct AttachmentPath {
    attachment: String,
}

/// An image of one of the session's turns (its `attachment` in the turn's input), with its type.
#[utoipa::path(get, path = "/v1/rooms/{roomId}/sessions/{sessionId}/attachments/{attachment}", tag = "turns",
    extensions(("x-ensemble-access" = json!({"role": "viewer"}))),
    params(SessionPath, ("attachment" = String, Path, description = "The image's id: its SHA-256 and its type's extension", pattern = "^[0-9a-f]{64}\\.(png|jpg|gif|webp)$")),
    responses((status = 200, description = "The image, served with its own type (`image/png`, `image/jpeg`, `image/gif` or `image/webp`)", content_type = "application/octet-stream", body = ImageBytes),
        (status = 404, description = "No such image in this session (`attachment_not_found`)", body = ErrorResponse),
        (status = "4XX", body = ErrorResponse), (status = "5XX", body = ErrorResponse)))]
pub async fn get_attachment(
    State(state): State<AppState>,
    session: SessionPath,
    Path(AttachmentPath { attachment }): Path<AttachmentPath>,
) -> Result<Response, ApiError> {
    let (mime, bytes) = state.controller.attachment(&session.key()?, &attachment).await?;
    Ok((
        [
            (header::CONTENT_TYPE, HeaderValue::from_static(mime)),
            // Named by its hash: it never changes.
            (header::CACHE_CONTROL, HeaderValue::from_static("private, max-age=31536000, immutable")),
            (header::X_CONTENT_TYPE_OPTIONS, HeaderValue::from_static("nosniff")),
            (header::CONTENT_SECURITY_POLICY, HeaderValue::from_static("sandbox; default-src 'none'")),
        ],
        bytes,
    )
        .into_response())
}
