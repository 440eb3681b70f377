//! The items a turn has open: messages and reasoning being streamed (with their text so far) and
//! calls started but not completed. When the controller ends a turn itself (the process was lost,
//! a forced cancel, a disconnect, a restart) it closes them first — `message.completed` with the
//! text so far, `call.completed` `interrupted` — the same invariant adapters keep on cancel, so a
//! reader never sees an item that stays open for ever.

use ensemble_core::event::{CallCompletedPayload, CallStatus, EventBody, TextCompletedPayload};

/// Most text kept per open item; what streams beyond it is not repeated at the close (the deltas
/// are in the log).
const MAX_TEXT: usize = 256 * 1024;

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum TextKind {
    Message,
    Reasoning,
}

#[derive(Debug, Default)]
pub(super) struct OpenItems {
    /// Open text items, in the order they opened.
    texts: Vec<(TextKind, String, String)>,
    /// Open calls, in the order they started.
    calls: Vec<String>,
}

impl OpenItems {
    /// Follows one event of the session.
    pub(super) fn observe(&mut self, body: &EventBody) {
        match body {
            EventBody::MessageDelta(d) => self.delta(TextKind::Message, &d.item_id, &d.text),
            EventBody::ReasoningDelta(d) => self.delta(TextKind::Reasoning, &d.item_id, &d.text),
            EventBody::MessageCompleted(c) => {
                self.texts.retain(|(k, id, _)| !(*k == TextKind::Message && *id == c.item_id))
            }
            EventBody::ReasoningCompleted(c) => {
                self.texts.retain(|(k, id, _)| !(*k == TextKind::Reasoning && *id == c.item_id))
            }
            EventBody::CallStarted(c) if !self.calls.contains(&c.call_id) => self.calls.push(c.call_id.clone()),
            EventBody::CallCompleted(c) => self.calls.retain(|id| *id != c.call_id),
            // Whatever ended the turn, nothing of it stays open afterwards.
            b if b.is_turn_terminal() => *self = Self::default(),
            _ => {}
        }
    }

    fn delta(&mut self, kind: TextKind, item_id: &str, text: &str) {
        match self.texts.iter_mut().find(|(k, id, _)| *k == kind && id == item_id) {
            Some((_, _, so_far)) => {
                if so_far.len() < MAX_TEXT {
                    let room = MAX_TEXT - so_far.len();
                    let mut cut = text.len().min(room);
                    while !text.is_char_boundary(cut) {
                        cut -= 1;
                    }
                    so_far.push_str(&text[..cut]);
                }
            }
            None => {
                self.texts.push((kind, item_id.to_owned(), String::new()));
                self.delta(kind, item_id, text);
            }
        }
    }

    /// The open texts with their text so far, oldest first (a session's present).
    pub(super) fn texts(&self, turn_id: Option<&str>) -> Vec<ensemble_core::present::OpenText> {
        use ensemble_core::present::{OpenText, OpenTextKind};
        self.texts
            .iter()
            .map(|(kind, item_id, text)| OpenText {
                kind: match kind {
                    TextKind::Message => OpenTextKind::Message,
                    TextKind::Reasoning => OpenTextKind::Reasoning,
                },
                item_id: item_id.clone(),
                turn_id: turn_id.map(str::to_owned),
                text: text.clone(),
            })
            .collect()
    }

    /// The events that close everything open, oldest first; afterwards nothing is open.
    pub(super) fn close_all(&mut self) -> Vec<EventBody> {
        let texts = std::mem::take(&mut self.texts).into_iter().map(|(kind, item_id, text)| {
            let done = TextCompletedPayload { item_id, text };
            match kind {
                TextKind::Message => EventBody::MessageCompleted(done),
                TextKind::Reasoning => EventBody::ReasoningCompleted(done),
            }
        });
        let calls = std::mem::take(&mut self.calls).into_iter().map(|call_id| {
            EventBody::CallCompleted(CallCompletedPayload {
                call_id,
                status: CallStatus::Interrupted,
                output: None,
                exit_code: None,
                changes: Vec::new(),
            })
        });
        texts.chain(calls).collect()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use ensemble_core::event::{CallKind, CallStartedPayload, TextDeltaPayload, TurnCompletedPayload};

    fn delta(id: &str, text: &str) -> EventBody {
        EventBody::MessageDelta(TextDeltaPayload { item_id: id.into(), text: text.into() })
    }

    #[test]
    fn open_items_close_with_their_text_and_calls_as_interrupted() {
        let mut open = OpenItems::default();
        open.observe(&delta("m1", "hello "));
        open.observe(&delta("m1", "world"));
        open.observe(&delta("m2", "done"));
        open.observe(&EventBody::MessageCompleted(TextCompletedPayload { item_id: "m2".into(), text: "done".into() }));
        let call = CallStartedPayload {
            call_id: "c1".into(),
            kind: CallKind::Command,
            name: "ls".into(),
            command: None,
            cwd: None,
            input: None,
            changes: vec![],
        };
        open.observe(&EventBody::CallStarted(call));
        let closed = open.close_all();
        assert_eq!(closed.len(), 2);
        assert!(matches!(&closed[0], EventBody::MessageCompleted(c) if c.item_id == "m1" && c.text == "hello world"));
        assert!(
            matches!(&closed[1], EventBody::CallCompleted(c) if c.call_id == "c1" && c.status == CallStatus::Interrupted)
        );
        assert!(open.close_all().is_empty(), "nothing is open twice");
    }

    #[test]
    fn a_turns_end_closes_nothing_later_and_text_is_capped() {
        let mut open = OpenItems::default();
        open.observe(&delta("m", "x"));
        open.observe(&EventBody::TurnCompleted(TurnCompletedPayload { turn_id: "t".into() }));
        assert!(open.close_all().is_empty());
        open.observe(&delta("big", &"é".repeat(MAX_TEXT)));
        let closed = open.close_all();
        assert!(matches!(&closed[0], EventBody::MessageCompleted(c) if c.text.len() <= MAX_TEXT && !c.text.is_empty()));
    }
}
