//! The one error shape of the HTTP edge: `{"error": {"code", "message", "details"?}}`.
//!
//! Every failure, including axum's own extractor rejections, becomes an [`ApiError`]; unexpected
//! ones are logged once and answered with a generic 500 that leaks nothing.

use std::borrow::Cow;

use axum::extract::rejection::{JsonRejection, PathRejection, QueryRejection};
use axum::extract::{FromRequest, FromRequestParts, Request};
use axum::http::{HeaderValue, StatusCode, header};
use axum::response::{IntoResponse, Response};
use ensemble_core::adapter::AdapterError;
use ensemble_core::limits::FieldError;
use ensemble_runtime::controller::ControllerError;
use ensemble_runtime::store::StoreError;
use serde::Serialize;
use serde::de::DeserializeOwned;
use serde_json::Value;
use serde_json::value::RawValue;
use utoipa::ToSchema;

/// The body of every error response.
#[derive(Debug, Serialize, ToSchema)]
pub struct ErrorResponse {
    pub error: ErrorBody,
}

#[derive(Debug, Serialize, ToSchema)]
pub struct ErrorBody {
    /// A stable snake_case code, e.g. `session_not_found`.
    pub code: String,
    /// A human readable explanation.
    pub message: String,
    /// Facts about the error, e.g. the limit that was exceeded.
    #[serde(skip_serializing_if = "Option::is_none")]
    #[schema(schema_with = ensemble_core::schema::free_object)]
    pub details: Option<Value>,
}

#[derive(Debug)]
pub struct ApiError {
    pub status: StatusCode,
    pub code: Cow<'static, str>,
    pub message: String,
    /// Boxed: a JSON value is large, and every handler's `Result` carries this error.
    pub details: Option<Box<Value>>,
    /// Seconds, for 429/503.
    pub retry_after: Option<u64>,
}

impl ApiError {
    pub fn new(status: StatusCode, code: impl Into<Cow<'static, str>>, message: impl Into<String>) -> Self {
        Self { status, code: code.into(), message: message.into(), details: None, retry_after: None }
    }

    pub fn bad_request(code: &'static str, message: impl Into<String>) -> Self {
        Self::new(StatusCode::BAD_REQUEST, code, message)
    }

    pub fn not_found(code: &'static str, message: impl Into<String>) -> Self {
        Self::new(StatusCode::NOT_FOUND, code, message)
    }

    pub fn internal(context: &str, err: impl std::fmt::Display) -> Self {
        tracing::error!(error = %err, "{context}");
        Self::new(StatusCode::INTERNAL_SERVER_ERROR, "internal", "something went wrong on the server")
    }

    pub fn with_details(mut self, details: Value) -> Self {
        self.details = Some(Box::new(details));
        self
    }

    pub fn retry_after(mut self, secs: u64) -> Self {
        self.retry_after = Some(secs);
        self
    }
}

/// The code of an error response, on the response for middleware to read.
#[derive(Clone, Debug)]
pub struct ErrorCode(pub String);

impl IntoResponse for ApiError {
    fn into_response(self) -> Response {
        let body = ErrorResponse {
            error: ErrorBody { code: self.code.into_owned(), message: self.message, details: self.details.map(|d| *d) },
        };
        let code = ErrorCode(body.error.code.clone());
        let mut res = (self.status, axum::Json(body)).into_response();
        // For the audit trail, which records a refusal's code without reading the body.
        res.extensions_mut().insert(code);
        if let Some(secs) = self.retry_after
            && let Ok(v) = HeaderValue::from_str(&secs.to_string())
        {
            res.headers_mut().insert(header::RETRY_AFTER, v);
        }
        res
    }
}

impl From<FieldError> for ApiError {
    fn from(e: FieldError) -> Self {
        ApiError::bad_request(e.code, e.message).with_details(*e.details)
    }
}

impl From<ControllerError> for ApiError {
    fn from(e: ControllerError) -> Self {
        use ControllerError as C;
        let code = e.code().to_owned();
        let status = match &e {
            C::Field(f) => return ApiError::from(f.clone()),
            C::InvalidInput(_) | C::UnknownProvider(_) | C::InvalidDecision(_) => StatusCode::BAD_REQUEST,
            C::ProviderUnavailable { .. }
            | C::Unsupported(_)
            | C::SideUnsupported(_)
            | C::GoalsUnsupported(_)
            | C::ConfigUnsupported(_)
            | C::UnknownConfig(_) => StatusCode::UNPROCESSABLE_ENTITY,
            C::SessionNotFound(_) | C::InteractionNotFound(_) | C::NoGoal => StatusCode::NOT_FOUND,
            C::SessionExists(_)
            | C::TurnActive(_)
            | C::NoActiveTurn
            | C::SessionBusy(_)
            | C::SessionClosed
            | C::SessionStarting
            | C::NotResumable
            | C::SideExpired
            | C::SideConflict(_)
            | C::SubmitIdConflict(_)
            | C::InteractionResolved(_) => StatusCode::CONFLICT,
            C::LockTimeout(_) => {
                return ApiError::new(StatusCode::SERVICE_UNAVAILABLE, code, e.to_string()).retry_after(1);
            }
            C::AuthRequired(message) => {
                // The command to run, when the provider's message quotes one (`codex login`).
                let mut details = serde_json::json!({ "authMessage": message });
                if let Some(login) = ensemble_core::model::login_command(message) {
                    details["loginCommand"] = serde_json::Value::String(login);
                }
                return ApiError::new(StatusCode::CONFLICT, code, e.to_string()).with_details(details);
            }
            C::BudgetExhausted { details, .. } => {
                return ApiError::new(StatusCode::CONFLICT, code, e.to_string()).with_details(details.clone());
            }
            C::ShuttingDown => StatusCode::SERVICE_UNAVAILABLE,
            C::TooManySessions(_) => {
                return ApiError::new(StatusCode::TOO_MANY_REQUESTS, code, e.to_string()).retry_after(5);
            }
            C::AtCapacity(_) => {
                return ApiError::new(StatusCode::SERVICE_UNAVAILABLE, code, e.to_string()).retry_after(5);
            }
            // The database is down or restarting: nothing was acknowledged, retry shortly.
            C::Store(StoreError::Unavailable(_)) => {
                return ApiError::new(StatusCode::SERVICE_UNAVAILABLE, code, e.to_string()).retry_after(2);
            }
            // The disk is full: nothing was acknowledged; the store writes again once space is
            // freed (`/readyz` says when).
            C::Store(err) if err.is_full() => {
                let message = "the server's store cannot write: its disk is full; free space and retry";
                return ApiError::new(StatusCode::INSUFFICIENT_STORAGE, code, message).retry_after(5);
            }
            C::Store(err) => return ApiError::internal("store failure", err),
            C::Provider(a) => return provider_error(a),
            C::NoWorkspace(_) | C::ForkUnsupported(_) | C::InputUnsupported(_) => StatusCode::UNPROCESSABLE_ENTITY,
            C::UnknownCheckpoint(_) | C::AttachmentNotFound(_) | C::QueuedTurnNotFound(_) => StatusCode::NOT_FOUND,
            C::QueueFull { details, .. } => {
                return ApiError::new(StatusCode::CONFLICT, code, e.to_string()).with_details(details.clone());
            }
            C::WorkTreeBusy(_) => StatusCode::CONFLICT,
            C::IsolationUnavailable(_) => StatusCode::SERVICE_UNAVAILABLE,
            C::InvalidIsolation(_) => StatusCode::BAD_REQUEST,
            C::CwdOutsideWorkspace(_) => StatusCode::BAD_REQUEST,
            C::Workspace(g) => return git_error(g),
        };
        ApiError::new(status, code, e.to_string())
    }
}

fn provider_error(e: &AdapterError) -> ApiError {
    use AdapterError as A;
    let status = match e {
        A::NotLive | A::Busy(_) | A::AlreadyAnswered(_) => StatusCode::CONFLICT,
        A::Unsupported(_) | A::Unavailable(_) => StatusCode::UNPROCESSABLE_ENTITY,
        A::UnknownInteraction(_) => StatusCode::NOT_FOUND,
        A::Invalid(_) => StatusCode::BAD_REQUEST,
        A::Timeout(_) => StatusCode::GATEWAY_TIMEOUT,
        A::Overloaded(_) => {
            return ApiError::new(StatusCode::SERVICE_UNAVAILABLE, e.code().to_owned(), e.to_string()).retry_after(5);
        }
        A::State(_) => {
            return ApiError::new(StatusCode::SERVICE_UNAVAILABLE, e.code().to_owned(), e.to_string()).retry_after(2);
        }
        // The agent wants a login: the same answer as a turn refused for it.
        A::Failed { code, .. } if code == "auth_required" => StatusCode::CONFLICT,
        // The agent behind us failed: a bad gateway, not a bug of ours.
        A::Failed { .. } => StatusCode::BAD_GATEWAY,
    };
    ApiError::new(status, e.code().to_owned(), e.to_string())
}

impl From<JsonRejection> for ApiError {
    fn from(r: JsonRejection) -> Self {
        let (status, code) = match &r {
            JsonRejection::MissingJsonContentType(_) => (StatusCode::UNSUPPORTED_MEDIA_TYPE, "unsupported_media_type"),
            JsonRejection::JsonSyntaxError(_) => (StatusCode::BAD_REQUEST, "invalid_json"),
            JsonRejection::JsonDataError(_) => (StatusCode::BAD_REQUEST, "invalid_body"),
            _ if r.status() == StatusCode::PAYLOAD_TOO_LARGE => (StatusCode::PAYLOAD_TOO_LARGE, "payload_too_large"),
            _ => (StatusCode::BAD_REQUEST, "invalid_body"),
        };
        ApiError::new(status, code, r.body_text())
    }
}

impl From<PathRejection> for ApiError {
    fn from(r: PathRejection) -> Self {
        ApiError::new(StatusCode::BAD_REQUEST, "invalid_path", r.body_text())
    }
}

impl From<QueryRejection> for ApiError {
    fn from(r: QueryRejection) -> Self {
        ApiError::new(StatusCode::BAD_REQUEST, "invalid_query", r.body_text())
    }
}

/// `axum::Json` whose rejections use the JSON error shape, and which takes nothing but a JSON
/// object: serde also reads a struct from an array of its fields in order, so `[null, null]` would
/// otherwise start a session.
#[derive(Debug)]
pub struct Json<T>(pub T);

impl<T: DeserializeOwned, S: Send + Sync> FromRequest<S> for Json<T> {
    type Rejection = ApiError;

    async fn from_request(req: Request, state: &S) -> Result<Self, ApiError> {
        let axum::Json(raw) = axum::Json::<Box<RawValue>>::from_request(req, state).await?;
        if !raw.get().trim_start().starts_with('{') {
            return Err(ApiError::bad_request("invalid_body", "the request body must be a JSON object"));
        }
        // Read straight into the type; only a body that does not fit it is read again through
        // axum's `Json` (serde_path_to_error, which tracks each member's path for the error
        // message: most of a submit body's reading when it succeeds, for nothing).
        if let Ok(value) = serde_json::from_str::<T>(raw.get()) {
            return Ok(Json(value));
        }
        let axum::Json(value) = axum::Json::<T>::from_bytes(raw.get().as_bytes())?;
        Ok(Json(value))
    }
}

impl<T: Serialize> IntoResponse for Json<T> {
    fn into_response(self) -> Response {
        // Sized for a session snapshot (~700 bytes): axum's `Json` starts at 128 and grew a
        // session's answer three times, copying it each time.
        let mut body = Vec::with_capacity(1024);
        match serde_json::to_writer(&mut body, &self.0) {
            Ok(()) => ([(header::CONTENT_TYPE, HeaderValue::from_static("application/json"))], body).into_response(),
            Err(e) => ApiError::internal("an answer could not be serialised", e).into_response(),
        }
    }
}

/// `axum::extract::Path` whose rejections use the JSON error shape.
#[derive(Debug, FromRequestParts)]
#[from_request(via(axum::extract::Path), rejection(ApiError))]
pub struct Path<T>(pub T);

/// `axum::extract::Query` whose rejections use the JSON error shape.
#[derive(Debug, FromRequestParts)]
#[from_request(via(axum::extract::Query), rejection(ApiError))]
pub struct Query<T>(pub T);

/// The answer to any route that does not exist.
pub async fn not_found() -> ApiError {
    ApiError::not_found("route_not_found", "no such route")
}

pub async fn method_not_allowed() -> ApiError {
    ApiError::new(StatusCode::METHOD_NOT_ALLOWED, "method_not_allowed", "this route does not accept that method")
}

/// Turns a handler panic into the JSON 500 (the server keeps serving).
pub fn panic_response(err: Box<dyn std::any::Any + Send + 'static>) -> Response {
    let what = err
        .downcast_ref::<String>()
        .map(String::as_str)
        .or_else(|| err.downcast_ref::<&str>().copied())
        .unwrap_or("a panic");
    tracing::error!(panic = %what, "request handler panicked");
    metrics::counter!("ensemble_http_panics_total").increment(1);
    ApiError::new(StatusCode::INTERNAL_SERVER_ERROR, "internal", "something went wrong on the server").into_response()
}

/// What git refused, in the one error shape: the request's fault (400, 409), git missing (503),
/// or git failing (500, its stderr logged, not sent).
fn git_error(e: &ensemble_workspace::GitError) -> ApiError {
    use ensemble_workspace::GitError as G;
    let code = e.code();
    match e {
        G::NotARepo(_) | G::UnknownBase(_) | G::UnknownRev(_) | G::InvalidBranch(_) | G::InvalidRef(_) => {
            ApiError::bad_request(code, e.to_string())
        }
        // A start naming a branch that exists is a bad request (pick another name); a purge that
        // would lose an unmerged branch conflicts with the branch's state.
        G::BranchExists(branch) => {
            ApiError::bad_request(code, e.to_string()).with_details(serde_json::json!({ "branch": branch }))
        }
        G::BranchNotMerged(branch) => ApiError::new(StatusCode::CONFLICT, code, e.to_string())
            .with_details(serde_json::json!({ "branch": branch })),
        G::NothingToCommit => ApiError::new(StatusCode::CONFLICT, code, e.to_string()),
        G::Unavailable(_) => ApiError::new(StatusCode::SERVICE_UNAVAILABLE, code, e.to_string()),
        G::Timeout(_) => ApiError::new(StatusCode::GATEWAY_TIMEOUT, code, e.to_string()),
        G::Failed { .. } | G::Io(_) => {
            tracing::warn!(error = %e, "git failed");
            ApiError::new(
                StatusCode::INTERNAL_SERVER_ERROR,
                code,
                "git failed on the session's workspace (see the server log)",
            )
        }
    }
}
