//! The REST API's wire types that are not the domain's own (those are `ensemble_core`'s): request
//! bodies, query strings, list wrappers, the room WebSocket's frames. The sessions' and turns'
//! are here; the other resources' are in a file each. Handlers (`crate::routes`) hold none.

pub mod attachments;
pub mod files;
pub mod params;
pub mod providers;
pub mod queue;
pub mod tokens;
pub mod webhooks;

use ensemble_core::answers::Answers;
use ensemble_core::event::{Decision, Event, Interaction};
use ensemble_core::model::{InputItem, ProviderInfo, Room, Session, SessionSettings, SideCapabilities};
use serde::{Deserialize, Serialize};
use utoipa::{IntoParams, ToSchema};

/// `POST /v1/rooms/{roomId}/sessions`.
#[derive(Debug, Deserialize, ToSchema)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct StartSessionRequest {
    /// Provider id (see `GET /v1/providers`); defaults to the built-in `scripted` provider.
    #[serde(default)]
    #[schema(max_length = 4096)]
    pub provider: Option<String>,
    /// Chosen by the client; generated when absent.
    #[serde(default)]
    #[schema(pattern = "^[A-Za-z0-9._~:-]*[A-Za-z0-9_~:-][A-Za-z0-9._~:-]*$", min_length = 1, max_length = 128)]
    pub session_id: Option<String>,
    #[serde(default)]
    #[schema(max_length = 4096)]
    pub title: Option<String>,
    /// Absolute working directory of the agent.
    #[serde(default)]
    #[schema(max_length = 4096)]
    pub cwd: Option<String>,
    #[serde(default, deserialize_with = "objects::option")]
    pub settings: Option<SessionSettings>,
    /// Where the session works: `{"kind": "dir"}` (the default: `cwd` as given) or a git worktree
    /// of its own (`cwd`, if given, is then relative to the worktree).
    #[serde(default)]
    pub workspace: Option<WorkspaceSpec>,
    /// Continue this session of the agent's own (see `GET /v1/providers/{providerId}/sessions`)
    /// instead of starting a new one: the agent loads it (`session/load` or `session/resume`).
    #[serde(default)]
    pub provider_session_id: Option<String>,
    /// `false`: no checkpoints around turns even in a git work tree (default: on when the
    /// session's cwd is in one).
    #[serde(default)]
    pub checkpoints: Option<bool>,
    /// A narrower box than the provider's: fewer endpoints, lower limits (never wider: 400
    /// `invalid_isolation`).
    #[serde(default, deserialize_with = "objects::option")]
    pub isolation: Option<ensemble_runtime::controller::IsolationRequest>,
}

/// A session's workspace, as a start asks for it.
#[derive(Debug, Deserialize, ToSchema)]
#[serde(tag = "kind", rename_all = "snake_case", deny_unknown_fields)]
pub enum WorkspaceSpec {
    /// The `cwd` as given (checkpointed when it is in a git work tree).
    Dir {},
    /// A new git worktree of `repo` (which must be inside the workspace roots), on a new branch.
    Worktree {
        /// Absolute path of the repository.
        #[schema(max_length = 4096)]
        repo: String,
        /// The commit, branch or tag to start from (default: the repository's `HEAD`).
        #[serde(default)]
        #[schema(max_length = 4096)]
        base: Option<String>,
        /// The new branch (default `ensemble/<room>/<session>`).
        #[serde(default)]
        #[schema(max_length = 4096)]
        branch: Option<String>,
    },
}

/// `POST …/fork`.
#[derive(Debug, Deserialize, ToSchema)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct ForkRequest {
    /// The source's turn the fork goes through (its workspace starts from the checkpoint after it).
    #[schema(min_length = 1, max_length = 128)]
    pub at_turn: String,
    /// The fork's id; generated when absent.
    #[serde(default)]
    #[schema(pattern = "^[A-Za-z0-9._~:-]*[A-Za-z0-9_~:-][A-Za-z0-9._~:-]*$", min_length = 1, max_length = 128)]
    pub session_id: Option<String>,
    /// Default: the source's title with " (fork)".
    #[serde(default)]
    #[schema(max_length = 4096)]
    pub title: Option<String>,
}

/// `POST …/workspace/commit`.
#[derive(Debug, Deserialize, ToSchema)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct CommitRequest {
    #[schema(min_length = 1, max_length = 4096)]
    pub message: String,
    /// Default: git's configuration where the repository is.
    #[serde(default)]
    pub author: Option<CommitAuthor>,
}

#[derive(Debug, Deserialize, ToSchema)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct CommitAuthor {
    #[schema(min_length = 1, max_length = 256)]
    pub name: String,
    #[schema(min_length = 1, max_length = 256)]
    pub email: String,
}

/// `DELETE …/sessions/{id}`.
#[derive(Debug, Deserialize, IntoParams)]
#[serde(rename_all = "camelCase")]
#[into_params(parameter_in = Query)]
pub struct CloseQuery {
    /// Also remove the session's worktree and its checkpoints' refs (its branch too, when merged).
    pub purge: Option<bool>,
    /// With `purge`: delete the branch even when it is not merged.
    pub force: Option<bool>,
}

/// `POST …/restore`.
#[derive(Debug, Deserialize, ToSchema)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct RestoreRequest {
    /// A checkpoint id from `…/checkpoints` (or a `turn.changes` event).
    #[schema(max_length = 128)]
    pub checkpoint: String,
}

/// `GET …/checkpoints`.
#[derive(Debug, Serialize, ToSchema)]
#[serde(rename_all = "camelCase")]
pub struct CheckpointList {
    pub data: Vec<ensemble_core::workspace::CheckpointInfo>,
    /// The id to pass as `after` for the next page (absent on the last).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub next: Option<String>,
}

/// `GET …/checkpoints`: a page.
#[derive(Debug, Deserialize, IntoParams)]
#[serde(rename_all = "camelCase")]
#[into_params(parameter_in = Query)]
pub struct CheckpointsQuery {
    /// Checkpoints after this id (oldest first).
    #[param(max_length = 128)]
    pub after: Option<String>,
    /// At most this many (default 100, at most 1000).
    #[param(minimum = 1, maximum = 1000)]
    pub limit: Option<u32>,
}

/// `GET …/changes`: which checkpoints to compare (none: the session's base to its latest).
#[derive(Debug, Deserialize, IntoParams)]
#[serde(rename_all = "camelCase")]
#[into_params(parameter_in = Query)]
pub struct ChangesQuery {
    /// One turn: its checkpoints before and after.
    #[param(max_length = 128)]
    pub turn: Option<String>,
    /// A checkpoint id to compare from (with `to`).
    #[param(max_length = 128)]
    pub from: Option<String>,
    /// A checkpoint id to compare to (with `from`).
    #[param(max_length = 128)]
    pub to: Option<String>,
    /// Only this file's diff (a path relative to the work tree's top).
    #[param(max_length = 4096)]
    pub path: Option<String>,
}

/// `PATCH .../config`: what to change for the next turn.
#[derive(Debug, Deserialize, ToSchema)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct ConfigRequest {
    /// A mode id from the session's `modes.available`.
    #[serde(default)]
    #[schema(max_length = 4096)]
    pub mode: Option<String>,
    /// Option ids from the session's `configOptions`, each with one of its choices' values.
    #[serde(default)]
    pub options: Option<std::collections::BTreeMap<String, String>>,
}

/// `PATCH /v1/rooms/{roomId}/sessions/{sessionId}`.
#[derive(Debug, Deserialize, ToSchema)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct RenameRequest {
    /// The session's new title (not blank).
    #[schema(min_length = 1, max_length = 4096, pattern = r"\S")]
    pub title: String,
}

/// `POST .../turns`.
#[derive(Debug, Deserialize, ToSchema)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct SubmitTurnRequest {
    /// What the user says; every item has some text, all of it at most `--max-input-bytes` bytes.
    #[serde(deserialize_with = "objects::vec")]
    #[schema(min_items = 1)]
    pub input: Vec<InputItem>,
    /// Idempotency key: the same value again returns the same turn and starts nothing.
    #[serde(default)]
    #[schema(pattern = "^[A-Za-z0-9._~:-]*[A-Za-z0-9_~:-][A-Za-z0-9._~:-]*$", min_length = 1, max_length = 128)]
    pub client_submit_id: Option<String>,
    /// Add the input to the running turn instead of refusing with 409 (if the provider can steer).
    #[serde(default)]
    pub steer: Option<bool>,
    /// While a turn runs (or others wait), queue the input as the session's next turn instead of
    /// refusing with 409: it starts when the turns before it have ended (see `…/queue`).
    #[serde(default)]
    pub queue: Option<bool>,
}

/// Request fields the contract types as objects. serde also reads a struct, and an internally
/// tagged enum, from an array of its fields (`"settings": [null]`, `"input": [["text", "hi"]]`);
/// these take JSON objects only.
mod objects {
    use std::fmt;
    use std::marker::PhantomData;

    use serde::de::value::MapAccessDeserializer;
    use serde::de::{MapAccess, Visitor};
    use serde::{Deserialize, Deserializer};

    pub fn option<'de, D: Deserializer<'de>, T: Deserialize<'de>>(d: D) -> Result<Option<T>, D::Error> {
        Ok(Option::<Object<T>>::deserialize(d)?.map(|o| o.0))
    }

    pub fn vec<'de, D: Deserializer<'de>, T: Deserialize<'de>>(d: D) -> Result<Vec<T>, D::Error> {
        Ok(Vec::<Object<T>>::deserialize(d)?.into_iter().map(|o| o.0).collect())
    }

    /// A `T` read from a JSON object and nothing else, straight from the body: asked for a map,
    /// serde_json refuses an array (or a string, number, ...) with "expected a JSON object". Read
    /// through a `serde_json::Value` first, a submit's input was built twice.
    struct Object<T>(T);

    impl<'de, T: Deserialize<'de>> Deserialize<'de> for Object<T> {
        fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
            d.deserialize_map(ObjectVisitor(PhantomData))
        }
    }

    struct ObjectVisitor<T>(PhantomData<T>);

    impl<'de, T: Deserialize<'de>> Visitor<'de> for ObjectVisitor<T> {
        type Value = Object<T>;

        fn expecting(&self, f: &mut fmt::Formatter) -> fmt::Result {
            f.write_str("a JSON object")
        }

        fn visit_map<A: MapAccess<'de>>(self, map: A) -> Result<Self::Value, A::Error> {
            T::deserialize(MapAccessDeserializer::new(map)).map(Object)
        }
    }
}

/// The answer to an accepted submit.
#[derive(Debug, Serialize, ToSchema)]
#[serde(rename_all = "camelCase")]
pub struct TurnAccepted {
    pub turn_id: String,
    /// True when this `clientSubmitId` was seen before and no new turn started.
    pub duplicate: bool,
    /// True when the input was added to the running turn.
    pub steered: bool,
    /// True when the turn waits in the session's queue (it starts, as `turnId`, later).
    pub queued: bool,
}

/// `POST .../cancel`.
#[derive(Debug, Serialize, ToSchema)]
#[serde(rename_all = "camelCase")]
pub struct CancelAccepted {
    pub turn_id: String,
}

/// `POST .../interactions/{requestId}`.
#[derive(Debug, Deserialize, ToSchema)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct AnswerRequest {
    pub decision: Decision,
    /// For `userInput` requests: answers keyed by question id.
    #[serde(default)]
    #[schema(schema_with = ensemble_core::schema::answers)]
    pub answers: Option<Answers>,
    /// One of the request's `agentOptions` (ACP agents), standing for `decision`; without it the
    /// decision picks the agent's first option of its kind.
    #[serde(default)]
    #[schema(pattern = "^[A-Za-z0-9._~:-]*[A-Za-z0-9_~:-][A-Za-z0-9._~:-]*$", min_length = 1, max_length = 128)]
    pub option_id: Option<String>,
}

#[derive(Debug, Serialize, ToSchema)]
#[serde(rename_all = "camelCase")]
pub struct AnswerAccepted {
    pub request_id: String,
    pub decision: Decision,
}

#[derive(Debug, Serialize, ToSchema)]
pub struct SessionList {
    pub data: Vec<Session>,
}

#[derive(Debug, Serialize, ToSchema)]
pub struct RoomList {
    pub data: Vec<Room>,
}

#[derive(Debug, Serialize, ToSchema)]
pub struct ProviderList {
    pub data: Vec<ProviderInfo>,
}

#[derive(Debug, Serialize, ToSchema)]
pub struct InteractionList {
    pub data: Vec<Interaction>,
}

/// A page of a room's durable events.
#[derive(Debug, Serialize, ToSchema)]
#[serde(rename_all = "camelCase")]
pub struct EventList {
    pub data: Vec<Event>,
    /// The room's latest seq.
    pub head_seq: u64,
    /// The `after` of the next page, when events follow this one: a page ends at `limit` events or
    /// at `--events-page-bytes` of them (always at least one), so a short page is not the end.
    /// Absent at the head.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub next: Option<u64>,
    /// A session's page read with `before`: the `before` of the next older page, when older events
    /// of the session are kept. Absent at the session's first kept event.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub prev: Option<u64>,
}

/// An [`EventList`] as the routes write it: the events' stored JSON as it is, never parsed.
#[derive(Debug, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct RawEventList {
    pub data: Vec<Box<serde_json::value::RawValue>>,
    pub head_seq: u64,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub next: Option<u64>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub prev: Option<u64>,
}

#[derive(Debug, Deserialize, IntoParams)]
#[serde(rename_all = "camelCase")]
#[into_params(parameter_in = Query)]
pub struct EventsQuery {
    /// Return events with `seq` greater than this (default 0).
    #[param(maximum = 9_223_372_036_854_775_807_u64)]
    pub after: Option<u64>,
    /// At most this many events (default 100, at most 1000), and no more than `--events-page-bytes`
    /// of them (a larger event alone).
    #[param(minimum = 1, maximum = 1000)]
    pub limit: Option<u32>,
}

/// A page of one session's events: forwards from `after` (the default, from 0) or backwards
/// from `before` (its tail: `before` past the room's head), never both.
#[derive(Debug, Deserialize, IntoParams)]
#[serde(rename_all = "camelCase")]
#[into_params(parameter_in = Query)]
pub struct SessionEventsQuery {
    /// Return the session's oldest events with `seq` greater than this (default 0).
    #[param(maximum = 9_223_372_036_854_775_807_u64)]
    pub after: Option<u64>,
    /// Return the session's newest events with `seq` less than this: its tail (any `before` past
    /// the room's head), then older pages with each page's `prev`. Not with `after`.
    #[param(minimum = 1, maximum = 9_223_372_036_854_775_807_u64)]
    pub before: Option<u64>,
    /// At most this many events (default 100, at most 1000), and no more than `--events-page-bytes`
    /// of them (a larger event alone).
    #[param(minimum = 1, maximum = 1000)]
    pub limit: Option<u32>,
}

/// What `GET …/sessions/{id}?wait=` waits for.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Deserialize, ToSchema)]
#[serde(rename_all = "snake_case")]
pub enum SessionWait {
    /// No turn runs: the status is `ready`, `disconnected`, `failed` or `completed`.
    Idle,
    /// Idle, or the running turn waits on an answer (status `waiting`, see `…/interactions`).
    Input,
}

#[derive(Debug, Deserialize, IntoParams)]
#[serde(rename_all = "camelCase")]
#[into_params(parameter_in = Query)]
pub struct SessionQuery {
    /// Answer only once the session is in this state (or when `timeoutSecs` passes: then the
    /// session as it is, its status says which).
    #[param(inline)]
    pub wait: Option<SessionWait>,
    /// How long `wait` may wait (default 30; at most 90% of the server's request timeout).
    #[param(minimum = 0, maximum = 86400)]
    pub timeout_secs: Option<u32>,
}

#[derive(Debug, Deserialize, IntoParams)]
#[serde(rename_all = "camelCase")]
#[into_params(parameter_in = Query)]
pub struct WsQuery {
    /// Replay events with `seq` greater than this, then go live (default: the head, live only).
    #[param(maximum = 9_223_372_036_854_775_807_u64)]
    pub after: Option<u64>,
}

/// `POST .../sides`.
#[derive(Debug, Deserialize, ToSchema)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct OpenSideRequest {
    /// Idempotency key of the open: the same again returns the same side.
    #[schema(pattern = "^[A-Za-z0-9._~:-]*[A-Za-z0-9_~:-][A-Za-z0-9._~:-]*$", min_length = 1, max_length = 128)]
    pub request_id: String,
    /// The side's session id; generated when absent.
    #[serde(default)]
    #[schema(pattern = "^[A-Za-z0-9._~:-]*[A-Za-z0-9_~:-][A-Za-z0-9._~:-]*$", min_length = 1, max_length = 128)]
    pub side_session_id: Option<String>,
}

#[derive(Debug, Serialize, ToSchema)]
#[serde(rename_all = "camelCase")]
pub struct SideOpened {
    pub session: Session,
    pub capabilities: SideCapabilities,
}

/// `PUT .../goal`.
#[derive(Debug, Deserialize, ToSchema)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct SetGoalRequest {
    /// What the agent pursues (not blank; at most `--max-input-bytes` bytes).
    #[schema(pattern = r"\S")]
    pub objective: String,
    /// Idempotency key of the operation (the same value again is the same operation).
    #[schema(pattern = "^[A-Za-z0-9._~:-]*[A-Za-z0-9_~:-][A-Za-z0-9._~:-]*$", min_length = 1, max_length = 128)]
    pub client_submit_id: String,
    #[serde(default)]
    pub token_budget: Option<i64>,
}

#[derive(Debug, Deserialize, IntoParams)]
#[serde(rename_all = "camelCase")]
#[into_params(parameter_in = Query)]
pub struct GoalOperationQuery {
    /// Idempotency key of the operation (the same value again is the same operation).
    #[param(pattern = "^[A-Za-z0-9._~:-]*[A-Za-z0-9_~:-][A-Za-z0-9._~:-]*$", min_length = 1, max_length = 128)]
    pub client_submit_id: Option<String>,
}

#[derive(Debug, Serialize, ToSchema)]
#[serde(rename_all = "camelCase")]
pub struct Health {
    /// `ok`; `/readyz` also says `draining` while shutting down, `database_unavailable` while the
    /// store's database does not answer, `storage_full` (its disk is full) or `store_unwritable`
    /// while its last commit failed, and `nats_unavailable` while a host of several cannot reach
    /// NATS.
    pub status: String,
    /// `/readyz` with the bearer token only: the store's engine, `sqlite` or `postgres`.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub database: Option<String>,
    /// `/readyz` with the bearer token and several hosts (`--nats-url`): this host's id.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub host_id: Option<String>,
    /// `/readyz` with the bearer token and several hosts: `connected`, or `disconnected` (then the
    /// status is `nats_unavailable`).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub nats: Option<String>,
}

/// Frames the server sends on a room WebSocket.
#[derive(Debug, Serialize, ToSchema)]
#[serde(tag = "type", rename_all = "snake_case")]
pub enum ServerFrame {
    /// First frame: the room's head, its sessions and its open side conversations. Bounded by
    /// `--max-event-bytes` like every frame: what does not fit is left out and `sessionsTruncated`
    /// is true (read the lists over REST then).
    #[serde(rename_all = "camelCase")]
    Hello {
        room_id: String,
        head_seq: u64,
        /// The room's canonical sessions, oldest first.
        sessions: Vec<Session>,
        /// The room's open side conversations (each with its `sourceSessionId`), oldest first.
        sides: Vec<Session>,
        /// Not every session or side fit the frame.
        sessions_truncated: bool,
        /// The role of the token the socket was opened with: what this client may do.
        role: crate::access::Role,
    },
    /// A durable room event.
    Event {
        event: Event,
    },
    /// An event of a side conversation (its `seq` counts within the side).
    SideEvent {
        event: Event,
    },
    /// History the client asked for is gone, or it fell too far behind: reload over REST and
    /// reconnect. The connection closes after this frame.
    #[serde(rename_all = "camelCase")]
    Resync {
        reason: String,
        head_seq: u64,
    },
    Pong,
    /// The client sent something the server does not understand.
    Error {
        code: String,
        message: String,
    },
}

/// Frames a client may send on a room WebSocket.
#[derive(Debug, Deserialize, ToSchema)]
#[serde(tag = "type", rename_all = "snake_case")]
pub enum ClientFrame {
    Ping,
}

/// `GET /v1/rooms/{roomId}/worktrees`.
#[derive(Debug, Serialize, ToSchema)]
pub struct LeftWorktreeList {
    pub data: Vec<ensemble_core::workspace::LeftWorktree>,
}
