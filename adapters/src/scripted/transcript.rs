//! The scripted agent's conversation, kept in the store's provider state so `/history` works
//! after a restart.

use ensemble_core::adapter::{ProviderState, StateError};
use serde::{Deserialize, Serialize};

/// How many turns of the transcript are kept.
const TRANSCRIPT_TURNS: usize = 200;
/// Its provider-state key.
const TRANSCRIPT_KEY: &str = "transcript";

#[derive(Clone, Debug, Default, Serialize, Deserialize)]
pub(super) struct Transcript {
    pub(super) turns: Vec<TranscriptTurn>,
    /// What the session has spent so far (reported cumulatively, as real agents do).
    #[serde(default)]
    pub(super) spent: Spent,
}

/// The scripted agent's token counts: a word is a token; `/spend` adds more.
#[derive(Clone, Debug, Default, Serialize, Deserialize)]
pub(super) struct Spent {
    pub(super) input_tokens: i64,
    pub(super) output_tokens: i64,
    /// In USD, once a `/spend` gave a cost.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub(super) cost: Option<f64>,
}

#[derive(Clone, Debug, Serialize, Deserialize)]
pub(super) struct TranscriptTurn {
    pub(super) input: String,
    pub(super) reply: String,
    /// The turn it was (absent in transcripts written before forks existed).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub(super) turn_id: Option<String>,
}

impl Transcript {
    /// The transcript kept for a session (empty for a new one).
    pub(super) async fn load(state: &ProviderState) -> Result<Self, StateError> {
        match state.get(TRANSCRIPT_KEY).await? {
            Some(json) => Ok(serde_json::from_str(&json).unwrap_or_default()),
            None => Ok(Self::default()),
        }
    }

    /// Adds a turn, forgetting the oldest beyond [`TRANSCRIPT_TURNS`].
    pub(super) fn push(&mut self, turn_id: &str, input: &str, reply: &str) {
        self.turns.push(TranscriptTurn {
            input: input.to_owned(),
            reply: reply.to_owned(),
            turn_id: Some(turn_id.to_owned()),
        });
        let excess = self.turns.len().saturating_sub(TRANSCRIPT_TURNS);
        self.turns.drain(..excess);
    }

    /// The transcript through `turn_id` (its turns up to and including that one), or `None` when
    /// it no longer holds that turn.
    pub(super) fn through(&self, turn_id: &str) -> Option<Self> {
        let at = self.turns.iter().position(|t| t.turn_id.as_deref() == Some(turn_id))?;
        // A fork's spending starts from nothing: what led up to it was the parent's.
        Some(Self { turns: self.turns[..=at].to_vec(), spent: Spent::default() })
    }

    /// Keeps it in the store (durable once this returns).
    pub(super) async fn save(&self, state: &ProviderState) {
        match serde_json::to_string(self) {
            Ok(json) => {
                if let Err(e) = state.set(TRANSCRIPT_KEY, json).await {
                    tracing::warn!(error = %e, "could not save the scripted transcript");
                }
            }
            Err(e) => tracing::warn!(error = %e, "could not encode the scripted transcript"),
        }
    }
}
