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
    // Many small strings cannot be cut below the limit: the list loses its last elements.
    let plan = EventBody::PlanUpdated(PlanUpdatedPayload {
        explanation: None,
        steps: (0..2000).map(|i| PlanStep { step: format!("s{i}"), status: "pending".into() }).collect(),
    });
    let (n, was) = clamp_body(plan, 4096);
    assert!(was.is_some());
    let EventBody::PlanUpdated(p) = &n else { panic!("still a plan: {n:?}") };
    assert!(body_size(&n) <= 4096 && p.steps.len() > 50, "{} steps", p.steps.len());
    assert_eq!(p.steps[p.steps.len() - 1].step, format!("s{}", p.steps.len() - 1), "the first ones");
    // Only a limit below what an event's fixed fields take leaves a notice in its place.
    let turn = EventBody::TurnCanceled(TurnCanceledPayload { turn_id: "t".repeat(100), reason: "r".repeat(100) });
    let (n, was) = clamp_body(turn, 64);
    assert!(was.is_some());
    assert!(matches!(n, EventBody::Notice(ref p) if p.message.contains("turn.canceled")), "{n:?}");
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
        actor: None,
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
fn an_events_envelope_serialises_as_the_event_it_becomes() {
    let session = Session::new_canonical("room \"1\"", "s-é", "scripted", "/w/\\dir\n", 3);
    let bodies = [
        EventBody::MessageDelta(TextDeltaPayload { item_id: "i".into(), text: "a \"quoted\" é\n\u{1}".into() }),
        EventBody::Notice(NoticePayload { level: NoticeLevel::Warning, message: "m".into() }),
        EventBody::SessionStarted(SessionStartedPayload { session: session.clone().into(), ephemeral: true }),
        EventBody::SessionStarted(SessionStartedPayload { session: session.clone().into(), ephemeral: false }),
        EventBody::SessionUpdated(SessionUpdatedPayload { session, reason: "resumed".into() }),
        EventBody::CommandsUpdated(CommandsUpdatedPayload {
            commands: crate::shared_list::SharedList::new(vec![CommandInfo {
                name: "c".into(),
                description: "d".into(),
                input_hint: None,
            }]),
        }),
    ];
    assert_eq!(bodies.len(), 6, "one seq and one time below for each body");
    let ids = [("r", "e", "s"), ("room \"é\"\t", "e\\v\u{7f}", "s\u{2028}")];
    for scope in [Scope::Canonical, Scope::Side] {
        for turn_id in [None, Some("t1".to_owned()), Some("t\"2".to_owned())] {
            for (room, id, session) in ids {
                for (body, seq, at) in bodies
                    .iter()
                    .zip([1, 7, u64::MAX, 1 << 53, 0, 9])
                    .zip([42, -1, i64::MIN, 0, i64::MAX, 5])
                    .map(|((b, s), a)| (b, s, a))
                {
                    let ev = NewEvent {
                        room_id: room.into(),
                        event_id: id.into(),
                        session_id: session.into(),
                        scope,
                        turn_id: turn_id.clone(),
                        occurred_at_ms: at,
                        actor: None,
                        body: body.clone(),
                    };
                    let written = serde_json::to_string(&ev.sequenced(seq)).unwrap();
                    let expected = serde_json::to_string(&ev.clone().with_seq(seq)).unwrap();
                    assert_eq!(written, expected);
                    let back: Event = serde_json::from_str(&written).unwrap();
                    assert_eq!(back, ev.clone().with_seq(seq));
                }
            }
        }
    }
}

#[test]
fn deltas_kept_unserialised_by_the_size_check_are_within_the_limit() {
    let max = 4096;
    // The worst case for the bound: every byte escaped as `\u00XX`.
    let fits = (max - 64) / 6 - 1;
    for text in ["\u{1}".repeat(fits), "\"".repeat(fits), "é".repeat(fits / 2)] {
        for body in [
            EventBody::MessageDelta(TextDeltaPayload { item_id: "i".into(), text: text.clone() }),
            EventBody::ReasoningDelta(TextDeltaPayload { item_id: "i".into(), text: text.clone() }),
        ] {
            assert!(body_size(&body) <= max, "{} bytes", body_size(&body));
            assert_eq!(clamp_body(body.clone(), max), (body, None));
        }
    }
    let big = EventBody::MessageDelta(TextDeltaPayload { item_id: "i".into(), text: "\u{1}".repeat(max) });
    let (cut, was) = clamp_body(big, max);
    assert!(was.is_some() && body_size(&cut) <= max, "a delta over the limit is still cut");
}

#[test]
fn the_size_hint_covers_a_started_session_and_a_command_list() {
    let session = Session::new_canonical("room-1", "session-1", "scripted", "/work/a/fairly/long/path", 1);
    let started = EventBody::SessionStarted(SessionStartedPayload { session: session.into(), ephemeral: false });
    let command = |i: usize| CommandInfo {
        name: format!("command-{i}"),
        description: "what the command does, in a sentence of usual length".into(),
        input_hint: Some("an argument".into()),
    };
    let commands = EventBody::CommandsUpdated(CommandsUpdatedPayload {
        commands: crate::shared_list::SharedList::new((0..40).map(command).collect()),
    });
    for body in [started, commands] {
        let event = NewEvent {
            room_id: "room-1".into(),
            event_id: "0197a0c2-0000-7000-8000-000000000000".into(),
            session_id: "session-1".into(),
            scope: Scope::Canonical,
            turn_id: None,
            occurred_at_ms: 1_750_000_000_000,
            actor: None,
            body,
        };
        let json = serde_json::to_vec(&event.sequenced(1_000_000)).unwrap();
        // The frame adds its prefix and a brace around the event.
        assert!(json.len() + 64 <= event.body.json_size_hint(), "{} > {}", json.len(), event.body.json_size_hint());
    }
}

#[test]
fn the_size_a_clamp_reports_is_what_the_kept_event_carries() {
    let delta = EventBody::MessageDelta(TextDeltaPayload { item_id: "i".into(), text: "x".repeat(32 * 1024) });
    let (_, cut, size) = clamp_body_sized(delta, 1 << 20);
    assert_eq!(cut, None);
    assert!((32 * 1024..33 * 1024).contains(&size), "a delta weighs its text: {size}");
    let notice = EventBody::Notice(NoticePayload { level: NoticeLevel::Warning, message: "y".repeat(10_000) });
    let whole = body_size(&notice);
    assert_eq!(clamp_body_sized(notice.clone(), 1 << 20).2, whole, "others weigh their serialised size");
    let (kept, cut, size) = clamp_body_sized(notice, 4096);
    assert_eq!(cut, Some(whole));
    assert_eq!(size, body_size(&kept), "a cut event weighs what is left of it");
}
