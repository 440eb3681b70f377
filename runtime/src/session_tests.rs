//! Tests of `session`.

use super::*;
use ensemble_core::event::*;

pub(crate) fn session() -> Session {
    Session {
        title: "t".into(),
        submit_availability: SubmitAvailability::available(),
        ..Session::new_canonical("r", "s", "scripted", "/", 0)
    }
}

fn request(id: &str) -> EventBody {
    EventBody::InteractionRequested(InteractionRequestedPayload {
        request_id: id.into(),
        kind: InteractionKind::CommandApproval,
        title: "run".into(),
        detail: None,
        command: Some("ls".into()),
        cwd: None,
        diff: None,
        questions: vec![],
        options: vec![Decision::Accept, Decision::Decline],
        call_id: None,
        agent_options: vec![],
    })
}

fn resolved(id: &str) -> EventBody {
    EventBody::InteractionResolved(InteractionResolvedPayload {
        request_id: id.into(),
        decision: Decision::Accept,
        resolved_by: ResolvedBy::Client,
        answers: None,
    })
}

#[test]
fn status_follows_phase_turn_and_interactions() {
    let mut r = SessionRecord::new(session(), Phase::Starting);
    assert_eq!(r.session.status, SessionStatus::Starting);
    assert_eq!(r.session.submit_availability, SubmitAvailability::blocked("starting"));
    r.transition(Phase::Live, 1).unwrap();
    assert_eq!(r.session.status, SessionStatus::Ready);
    assert!(r.session.live);
    r.begin_turn("t1", Some("c1"), 2);
    assert_eq!(r.session.status, SessionStatus::Working);
    assert_eq!(r.session.submit_availability, SubmitAvailability::blocked("active_turn"));
    assert!(r.apply(Some("t1"), &request("q1"), 3).publish);
    assert_eq!(r.session.status, SessionStatus::Waiting);
    assert!(r.apply(Some("t1"), &resolved("q1"), 4).publish);
    assert_eq!(r.session.status, SessionStatus::Working);
    let done = EventBody::TurnCompleted(TurnCompletedPayload { turn_id: "t1".into() });
    assert!(r.apply(Some("t1"), &done, 5).publish);
    assert_eq!(r.session.status, SessionStatus::Ready);
    assert_eq!(r.submitted_turn("c1"), Some("t1"));
    r.transition(Phase::Disconnected, 6).unwrap();
    assert_eq!(r.session.status, SessionStatus::Disconnected);
    assert!(!r.session.live);
    assert_eq!(r.session.submit_availability, SubmitAvailability::available());
    r.transition(Phase::Completed, 7).unwrap();
    assert_eq!(r.session.submit_availability, SubmitAvailability::blocked("closed"));
    assert!(r.transition(Phase::Live, 8).is_err(), "completed is terminal");
}

#[test]
fn a_turn_ends_once_and_settles_its_interactions() {
    let mut r = SessionRecord::new(session(), Phase::Live);
    r.begin_turn("t1", None, 1);
    r.apply(Some("t1"), &request("q1"), 2);
    let canceled = EventBody::TurnCanceled(TurnCanceledPayload { turn_id: "t1".into(), reason: "x".into() });
    let f = r.apply(Some("t1"), &canceled, 3);
    assert!(f.publish);
    assert_eq!(f.follow_up.len(), 1, "the pending request is settled");
    assert!(r.pending.is_empty());
    assert!(r.was_resolved("q1"));
    // A second terminal for the same turn is dropped.
    let done = EventBody::TurnCompleted(TurnCompletedPayload { turn_id: "t1".into() });
    assert!(!r.apply(Some("t1"), &done, 4).publish);
    // So is a late resolution of the settled request.
    assert!(!r.apply(Some("t1"), &resolved("q1"), 5).publish);
}

#[test]
fn duplicate_interaction_requests_are_dropped() {
    let mut r = SessionRecord::new(session(), Phase::Live);
    assert!(r.apply(None, &request("q"), 1).publish);
    assert!(!r.apply(None, &request("q"), 2).publish);
    assert_eq!(r.pending.len(), 1);
}

#[test]
fn only_listed_edges_are_allowed() {
    use Phase::*;
    let all = [Starting, Live, Disconnected, Failed, Completed];
    for from in all {
        for to in all {
            let allowed = from.can_become(to);
            if from == Completed {
                assert!(!allowed, "{from:?} -> {to:?}");
            }
            if from == to {
                assert!(!allowed, "self loop {from:?}");
            }
        }
    }
    assert!(Disconnected.can_become(Starting));
    assert!(!Disconnected.can_become(Live), "resume passes through starting");
}

#[test]
fn submit_memory_is_bounded() {
    let mut r = SessionRecord::new(session(), Phase::Live);
    for i in 0..(SUBMIT_MEMORY + 10) {
        r.begin_turn(&format!("t{i}"), Some(&format!("c{i}")), 1);
        r.session.active_turn_id = None;
    }
    assert_eq!(r.submits.len(), SUBMIT_MEMORY);
    assert!(r.submitted_turn("c0").is_none());
    assert!(r.submitted_turn(&format!("c{}", SUBMIT_MEMORY + 9)).is_some());
}

#[test]
fn stored_json_leaves_out_empty_members_and_reads_them_back() {
    let fresh = SessionRecord::new(session(), Phase::Live);
    let json = serde_json::to_value(&fresh).unwrap();
    for member in ["pending", "resolved", "submits", "goal"] {
        assert!(json.get(member).is_none(), "{member} written while empty: {json}");
    }
    assert_eq!(serde_json::from_value::<SessionRecord>(json).unwrap(), fresh);

    // A record written before (every member present, empty) still reads.
    let mut old = serde_json::to_value(&fresh).unwrap();
    let members = old.as_object_mut().unwrap();
    members.insert("pending".into(), serde_json::json!([]));
    members.insert("resolved".into(), serde_json::json!([]));
    members.insert("submits".into(), serde_json::json!([]));
    members.insert("goal".into(), serde_json::json!({"goal": null, "lineage": null, "revision": 0, "operations": []}));
    assert_eq!(serde_json::from_value::<SessionRecord>(old).unwrap(), fresh);

    // Members that hold something are written and read back.
    let mut busy = SessionRecord::new(session(), Phase::Live);
    busy.begin_turn("t1", Some("c1"), 1);
    assert!(busy.apply(Some("t1"), &request("q1"), 2).publish);
    assert!(busy.apply(Some("t1"), &request("q2"), 2).publish);
    assert!(busy.apply(Some("t1"), &resolved("q1"), 3).publish);
    busy.goal.revision = 3;
    let json = serde_json::to_value(&busy).unwrap();
    for member in ["pending", "resolved", "submits", "goal"] {
        assert!(json.get(member).is_some(), "{member} left out while it holds something: {json}");
    }
    assert_eq!(serde_json::from_value::<SessionRecord>(json).unwrap(), busy);
}

#[test]
fn a_record_is_as_started_only_when_it_is_that_session_live_with_nothing_else() {
    let rec = SessionRecord::new(session(), Phase::Live);
    assert!(rec.is_as_started(&rec.session));
    assert_eq!(SessionRecord::new(rec.session.clone(), Phase::Live), rec, "it reads back as itself");
    let mut other = rec.session.clone();
    other.title = "other".into();
    assert!(!rec.is_as_started(&other), "another session");
    let mut turn = rec.clone();
    turn.begin_turn("t1", None, 1);
    assert!(!turn.is_as_started(&turn.session), "a turn");
    let mut goal = rec.clone();
    goal.goal.revision = 1;
    assert!(!goal.is_as_started(&goal.session), "goal state");
    let starting = SessionRecord::new(session(), Phase::Starting);
    assert!(!starting.is_as_started(&starting.session), "not live");
    let mut submitted = rec;
    submitted.submits.push_back(("c".into(), "t".into()));
    assert!(!submitted.is_as_started(&submitted.session), "a remembered submit");
}

#[test]
fn a_record_written_by_hand_is_byte_for_byte_what_serde_makes_of_it() {
    let fresh = SessionRecord::new(session(), Phase::Live);
    let mut full = fresh.clone();
    let EventBody::InteractionRequested(request) = request("q \"1\"") else { unreachable!() };
    full.pending.push(PendingInteraction { turn_id: Some("t".into()), requested_at_ms: -3, request });
    full.resolved.push_back("q0".into());
    full.submits.push_back(("c \"1\"".into(), "t".into()));
    full.goal.revision = 4;
    full.goal.lineage = Some("l".into());
    let mut goal_only = fresh.clone();
    goal_only.goal.revision = 1;
    for rec in [fresh, full, goal_only] {
        let json = serde_json::to_string(&rec).unwrap();
        assert_eq!(serde_json::from_str::<SessionRecord>(&json).unwrap(), rec, "{json}");
    }
}
