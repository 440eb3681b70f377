//! What `queue.updated` carries of a session's queue: per queued turn its id, place, size, a short
//! preview of its text and its images and files, never its whole input. (Each event carried every
//! queued input whole: a queue of large turns made each change as large as all of them, and the
//! room log grew with the square of the queue.) `GET …/queue` answers with the inputs.

use serde::{Deserialize, Serialize};

use super::clamp::json_size;
use crate::model::{InputItem, QueuedTurn};

#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(feature = "schema", derive(utoipa::ToSchema))]
#[serde(rename_all = "camelCase")]
pub struct QueueUpdatedPayload {
    /// The queue as it is now, first to start first: each queued turn's summary (its whole input
    /// is in `GET …/queue`).
    pub queue: Vec<QueuedTurnSummary>,
    /// `queued`, `edited`, `removed`, `reordered`, `started` (its first went), `sent` (one was
    /// steered into the running turn), `failed` (its first could not start).
    pub reason: String,
    /// The queue's size: its turns' `bytes` together (what `--max-queued-bytes` bounds).
    pub bytes: u64,
}

impl QueueUpdatedPayload {
    /// The payload of `queue` changed for `reason`, previews cut to `preview_bytes`.
    pub fn of(queue: &[QueuedTurn], reason: &str, preview_bytes: usize) -> Self {
        let queue: Vec<QueuedTurnSummary> =
            queue.iter().enumerate().map(|(i, q)| QueuedTurnSummary::of(q, i, preview_bytes)).collect();
        let bytes = queue.iter().map(|q| q.bytes).sum();
        Self { queue, reason: reason.to_owned(), bytes }
    }
}

/// A queued turn as `queue.updated` shows it: enough to draw the queue (its place, its text's
/// beginning, its images and files), not its whole input.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(feature = "schema", derive(utoipa::ToSchema))]
#[serde(rename_all = "camelCase")]
pub struct QueuedTurnSummary {
    /// The id the turn will have.
    pub turn_id: String,
    /// Its place in the queue, from 0 (the next to start).
    pub position: u32,
    /// Its input's size: the bytes of its JSON as the queue keeps it (images by their
    /// `attachment`), what `--max-queued-bytes` counts.
    pub bytes: u64,
    /// How many items its input has (texts, images and files).
    pub items: u32,
    /// The beginning of its text (its text items, a line each), at most `--queue-preview-bytes`
    /// bytes, cut at a character boundary.
    pub preview: String,
    /// The text is longer than `preview`: `GET …/queue` has all of it.
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub truncated: bool,
    /// Its images and files, as the turn will carry them (its text items left out).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub attachments: Vec<InputItem>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub client_submit_id: Option<String>,
    pub queued_at_ms: i64,
}

impl QueuedTurnSummary {
    /// The summary of `q`, at `position`, its preview cut to `preview_bytes`.
    pub fn of(q: &QueuedTurn, position: usize, preview_bytes: usize) -> Self {
        let (preview, truncated) = preview(&q.input, preview_bytes);
        Self {
            turn_id: q.turn_id.clone(),
            position: u32::try_from(position).unwrap_or(u32::MAX),
            bytes: input_bytes(&q.input) as u64,
            items: u32::try_from(q.input.len()).unwrap_or(u32::MAX),
            preview,
            truncated,
            attachments: q.input.iter().filter(|i| !matches!(i, InputItem::Text { .. })).cloned().collect(),
            client_submit_id: q.client_submit_id.clone(),
            queued_at_ms: q.queued_at_ms,
        }
    }
}

/// The size of a turn's input as a queue keeps it: the bytes of its JSON.
pub fn input_bytes(input: &[InputItem]) -> usize {
    json_size(input)
}

/// The text items of `input`, a line each, up to `max` bytes (cut at a character boundary), and
/// whether that left some out. Built up to the cut only: a queued text may be a MiB.
fn preview(input: &[InputItem], max: usize) -> (String, bool) {
    let mut out = String::new();
    for text in input.iter().filter_map(|i| match i {
        InputItem::Text { text } if !text.is_empty() => Some(text.as_str()),
        _ => None,
    }) {
        let sep = usize::from(!out.is_empty());
        if out.len() + sep + text.len() > max {
            if out.len() + sep < max {
                out.push_str(&"\n"[..sep]);
                let mut at = max - out.len();
                while !text.is_char_boundary(at) {
                    at -= 1;
                }
                out.push_str(&text[..at]);
            }
            return (out, true);
        }
        out.push_str(&"\n"[..sep]);
        out.push_str(text);
    }
    (out, false)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn text(t: &str) -> InputItem {
        InputItem::Text { text: t.into() }
    }

    #[test]
    fn a_preview_is_the_text_up_to_its_limit_cut_at_a_character() {
        assert_eq!(preview(&[text("ab"), text("cd")], 10), ("ab\ncd".into(), false));
        assert_eq!(preview(&[text("ab"), text("cd")], 5), ("ab\ncd".into(), false));
        assert_eq!(preview(&[text("ab"), text("cd")], 4), ("ab\nc".into(), true));
        assert_eq!(preview(&[text("ab"), text("cd")], 3), ("ab".into(), true));
        // "é" is two bytes: never half of one.
        assert_eq!(preview(&[text("éé")], 3), ("é".into(), true));
        assert_eq!(preview(&[text(&"é".repeat(1 << 20))], 256).0.len(), 256);
        let image = InputItem::Image {
            data: None,
            mime_type: Some("image/png".into()),
            path: None,
            name: Some("shot.png".into()),
            attachment: Some("a.png".into()),
            bytes: Some(3),
        };
        assert_eq!(preview(&[image], 10), (String::new(), false));
    }

    #[test]
    fn a_summary_has_the_turns_size_and_place_but_not_its_whole_text() {
        let big = "x".repeat(512 << 10);
        let image = InputItem::File { path: "src/a.rs".into(), bytes: Some(9), mime_type: Some("text/plain".into()) };
        let q = QueuedTurn {
            turn_id: "t1".into(),
            input: vec![text(&big), image.clone()],
            client_submit_id: Some("c".into()),
            queued_at_ms: 5,
        };
        let p = QueueUpdatedPayload::of(&[q.clone(), q], "queued", 256);
        assert_eq!(p.queue.len(), 2);
        assert_eq!((p.queue[1].position, p.queue[1].items), (1, 2));
        assert_eq!(p.queue[0].bytes as usize, input_bytes(&[text(&big), image.clone()]));
        assert_eq!(p.bytes, 2 * p.queue[0].bytes);
        assert_eq!((p.queue[0].preview.len(), p.queue[0].truncated), (256, true));
        assert_eq!(p.queue[0].attachments, vec![image]);
        assert!(json_size(&p) < 2048, "{} bytes", json_size(&p));
    }
}
