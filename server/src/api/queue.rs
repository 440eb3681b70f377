//! Wire types: Turns queued behind the running one.

use serde::{Deserialize, Serialize};
use utoipa::ToSchema;

use ensemble_core::model::{InputItem, QueuedTurn};

/// A session's queue, first to start first.
#[derive(Debug, Serialize, ToSchema)]
pub struct QueueList {
    pub data: Vec<QueuedTurn>,
}

/// `PUT …/queue`: the queue's new order.
#[derive(Debug, Deserialize, ToSchema)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct QueueOrder {
    /// Every queued turn's id, once, in the order they are to start.
    pub order: Vec<String>,
}

/// `PATCH …/queue/{turnId}`: a queued turn's new input.
#[derive(Debug, Deserialize, ToSchema)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct QueuedEdit {
    #[schema(min_items = 1)]
    pub input: Vec<InputItem>,
}
