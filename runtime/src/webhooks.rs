//! Which events webhooks get. The server keeps the webhooks; the controller, when it appends
//! events, asks [`Subscriptions`] which of them a webhook wants, and the store writes those
//! deliveries in the same transaction as the events (the outbox), so an event is durable if and
//! only if its deliveries are. Delivering them is the server's.

use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, RwLock};

use tokio::sync::Notify;

use crate::store::Outbound;
use ensemble_core::event::NewEvent;

/// A webhook as the matcher sees it.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Subscription {
    pub id: String,
    /// Webhook event types (see [`ensemble_core::event::EventBody::WEBHOOK_NAMES`]).
    pub events: Vec<String>,
    /// Room ids; empty: every room.
    pub rooms: Vec<String>,
}

impl Subscription {
    fn wants(&self, room: &str, kind: &str) -> bool {
        self.events.iter().any(|e| e == kind) && (self.rooms.is_empty() || self.rooms.iter().any(|r| r == room))
    }
}

/// The enabled webhooks, shared by the controller (which matches) and the server (which sets them
/// and delivers). With none, matching is one atomic load.
#[derive(Default)]
pub struct Subscriptions {
    any: AtomicBool,
    subs: RwLock<Arc<Vec<Subscription>>>,
    /// Woken when deliveries were enqueued (their append is ahead of any later claim in the
    /// writer's queue, so a claim made after the wake-up sees them).
    enqueued: Notify,
}

impl Subscriptions {
    pub fn set(&self, subs: Vec<Subscription>) {
        self.any.store(!subs.is_empty(), Ordering::Release);
        *self.subs.write().unwrap_or_else(|e| e.into_inner()) = Arc::new(subs);
    }

    /// The deliveries of an append of `events` to `room`.
    pub fn outbound(&self, room: &str, events: &[NewEvent]) -> Vec<Outbound> {
        if !self.any.load(Ordering::Acquire) {
            return Vec::new();
        }
        let subs = self.subs.read().unwrap_or_else(|e| e.into_inner()).clone();
        let mut out = Vec::new();
        for (i, ev) in events.iter().enumerate() {
            let Some(kind) = ev.body.webhook_name() else { continue };
            for s in subs.iter().filter(|s| s.wants(room, kind)) {
                out.push(Outbound { event: i, webhook_id: s.id.clone(), kind: kind.to_owned() });
            }
        }
        out
    }

    pub fn wake(&self) {
        self.enqueued.notify_waiters();
    }

    /// The next [`Self::wake`]: `enable` it before claiming, so a wake-up between the claim and
    /// the wait is not lost.
    pub fn notified(&self) -> tokio::sync::futures::Notified<'_> {
        self.enqueued.notified()
    }
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used, reason = "tests fail loudly")]
    use super::*;
    use ensemble_core::event::{EventBody, TextDeltaPayload, TurnCompletedPayload};
    use ensemble_core::model::Scope;

    fn ev(body: EventBody) -> NewEvent {
        NewEvent {
            room_id: "r".into(),
            event_id: "e".into(),
            session_id: "s".into(),
            scope: Scope::Canonical,
            turn_id: Some("t".into()),
            occurred_at_ms: 0,
            actor: None,
            body,
        }
    }

    #[test]
    fn events_go_to_the_webhooks_that_ask_for_their_type_and_room() {
        let subs = Subscriptions::default();
        let events = [
            ev(EventBody::MessageDelta(TextDeltaPayload { item_id: "i".into(), text: "x".into() })),
            ev(EventBody::TurnCompleted(TurnCompletedPayload { turn_id: "t".into() })),
        ];
        assert!(subs.outbound("r", &events).is_empty(), "none without webhooks");
        subs.set(vec![
            Subscription { id: "all".into(), events: vec!["turn.completed".into()], rooms: vec![] },
            Subscription { id: "r-only".into(), events: vec!["turn.completed".into()], rooms: vec!["r".into()] },
            Subscription { id: "failed".into(), events: vec!["turn.failed".into()], rooms: vec![] },
        ]);
        let got: Vec<(usize, String)> =
            subs.outbound("r", &events).into_iter().map(|o| (o.event, o.webhook_id)).collect();
        assert_eq!(got, [(1, "all".to_owned()), (1, "r-only".to_owned())]);
        let got: Vec<String> = subs.outbound("q", &events).into_iter().map(|o| o.webhook_id).collect();
        assert_eq!(got, ["all"]);
        subs.set(vec![]);
        assert!(subs.outbound("r", &events).is_empty());
        // The table's webhook column: the log's names but for a closed session.
        assert_eq!(
            EventBody::WEBHOOK_NAMES,
            [
                "session.closed",
                "session.failed",
                "turn.completed",
                "turn.failed",
                "turn.canceled",
                "interaction.requested",
                "interaction.resolved",
                "session.needs_attention",
                "budget.exhausted"
            ]
        );
    }
}
