//! Tests of `event`.

use super::*;

#[test]
fn oversized_events_are_cut_or_replaced() {
    let small = EventBody::MessageDelta(TextDeltaPayload { item_id: "i".into(), text: "hi".into() });
    assert_eq!(clamp_body(small.clone(), 1024), (small, None));
    let big = EventBody::MessageCompleted(TextCompletedPayload { item_id: "i".into(), text: "é".repeat(100_000) });
    let (cut, was) = clamp_body(big, 4096);
    assert_eq!(
        was,
        Some(
            200_000
                + body_size(&EventBody::MessageCompleted(TextCompletedPayload {
                    item_id: "i".into(),
                    text: String::new()
                }))
        )
    );
    assert!(body_size(&cut) <= 4096, "{}", body_size(&cut));
    let EventBody::MessageCompleted(p) = cut else { panic!("still a message") };
    assert!(p.text.ends_with(TRUNCATED_MARK));
    // Many small strings cannot be cut below the limit: a notice says what was dropped.
    let plan = EventBody::PlanUpdated(PlanUpdatedPayload {
        explanation: None,
        steps: (0..2000).map(|i| PlanStep { step: format!("s{i}"), status: "pending".into() }).collect(),
    });
    let (n, was) = clamp_body(plan, 4096);
    assert!(was.is_some());
    assert!(matches!(n, EventBody::Notice(ref p) if p.message.contains("plan.updated")), "{n:?}");
}

#[test]
fn envelope_has_type_and_payload_at_top_level() {
    let ev = Event {
        seq: 7,
        room_id: "r".into(),
        event_id: "e".into(),
        session_id: "s".into(),
        scope: Scope::Canonical,
        turn_id: Some("t".into()),
        occurred_at_ms: 1,
        body: EventBody::MessageDelta(TextDeltaPayload { item_id: "i".into(), text: "hi".into() }),
    };
    let v = serde_json::to_value(&ev).unwrap();
    assert_eq!(v["type"], "message.delta");
    assert_eq!(v["payload"]["itemId"], "i");
    assert_eq!(v["seq"], 7);
    assert_eq!(v["turnId"], "t");
    let back: Event = serde_json::from_value(v).unwrap();
    assert_eq!(back, ev);
}

#[test]
fn a_borrowed_event_serialises_exactly_as_the_event() {
    let bodies = [
        EventBody::MessageDelta(TextDeltaPayload { item_id: "i".into(), text: "a \"quoted\" é\n".into() }),
        EventBody::Notice(NoticePayload { level: NoticeLevel::Warning, message: "m".into() }),
    ];
    for turn_id in [None, Some("t1".to_owned())] {
        for body in &bodies {
            let ev = NewEvent {
                room_id: "r".into(),
                event_id: "e".into(),
                session_id: "s".into(),
                scope: Scope::Side,
                turn_id: turn_id.clone(),
                occurred_at_ms: 42,
                body: body.clone(),
            };
            let borrowed = serde_json::to_string(&ev.with_seq_ref(7)).unwrap();
            assert_eq!(borrowed, serde_json::to_string(&ev.clone().with_seq(7)).unwrap());
        }
    }
}
