//! The tracker's classifier and race table, route for route.

use ensemble_core::goal::{ProviderGoal, fingerprint, lineage};

use super::*;

fn goal(objective: &str, created: i64, updated: i64, status: &str) -> ProviderGoal {
    ProviderGoal {
        thread_id: "thread-1".into(),
        objective: objective.into(),
        status: status.into(),
        token_budget: None,
        tokens_used: None,
        created_at: created,
        updated_at: updated,
    }
}

fn id(op: &str, rev: i64) -> GoalIdentity {
    GoalIdentity::new(op, rev, 0)
}

/// A tracker with a user goal set and bound (the state after a successful set).
fn after_set() -> (GoalTracker, ProviderGoal) {
    let mut t = GoalTracker::default();
    let g = goal("ship it", 100, 100, "active");
    t.current = id("op-1", 1);
    t.bind(&fingerprint(&g).unwrap(), lineage(&g).as_deref(), &id("op-1", 1));
    (t, g)
}

#[test]
fn route_known_current_when_bound_to_the_current_identity() {
    let (t, g) = after_set();
    assert_eq!(t.classify(&fingerprint(&g).unwrap(), lineage(&g).as_deref()), Route::KnownCurrent);
}

#[test]
fn route_known_current_after_pause_advanced_the_identity() {
    let (mut t, g) = after_set();
    // Pause: a new operation identity, no rebind of the set-time generation.
    t.current = id("op-2", 2);
    assert_eq!(t.classify(&fingerprint(&g).unwrap(), lineage(&g).as_deref()), Route::KnownCurrent);
    // But once cleared, the old generation is stale.
    t.cleared();
    assert_eq!(t.classify(&fingerprint(&g).unwrap(), lineage(&g).as_deref()), Route::Stale);
}

#[test]
fn pause_and_resume_keep_applying_progress_so_complete_is_not_revived() {
    let (mut t, _g) = after_set();
    t.current = id("op-2", 2); // pause
    t.current = id("op-3", 3); // resume
    // The provider reports completion of the same goal: new updatedAt, same lineage.
    let done = goal("ship it", 100, 300, "complete");
    let fp = fingerprint(&done).unwrap();
    let l = lineage(&done);
    assert_eq!(t.classify(&fp, l.as_deref()), Route::Stale, "lineage matches, identity moved on");
    assert!(!t.superseded(&fp, l.as_deref()), "progress of the current lineage still applies");
    // Once the goal is cleared, the same update is dropped.
    t.cleared();
    assert!(t.superseded(&fp, l.as_deref()));
    // A stale generation of another lineage is dropped even while a goal is present.
    let mut t2 = GoalTracker { current: id("op-3", 3), goal_present: true, ..GoalTracker::default() };
    t2.remember("fp-old", Binding { identity: id("op-0", 1), ambiguous: false });
    assert!(t2.superseded("fp-old", Some("lineage-old")));
}

#[test]
fn route_pending_local_while_a_set_is_in_flight() {
    let mut t = GoalTracker { current: id("op-1", 1), ..GoalTracker::default() };
    t.prepare_claim(&id("op-1", 1));
    let g = goal("new", 5, 5, "active");
    assert_eq!(t.classify(&fingerprint(&g).unwrap(), lineage(&g).as_deref()), Route::PendingLocal);
    t.arm_claim(&id("op-1", 1), true);
    assert_eq!(t.classify(&fingerprint(&g).unwrap(), lineage(&g).as_deref()), Route::Adopt, "armed: no longer pending");
}

#[test]
fn route_bind_current_for_a_new_snapshot_of_the_current_lineage() {
    let (t, _g) = after_set();
    let later = goal("ship it", 100, 150, "active");
    assert_eq!(t.classify(&fingerprint(&later).unwrap(), lineage(&later).as_deref()), Route::BindCurrent);
    // Same lineage, but the current identity is not the one the generation was bound to.
    let mut t2 = GoalTracker { current: id("op-9", 9), ..GoalTracker::default() };
    t2.current_lineage = lineage(&later);
    t2.current_generation_identity = id("op-1", 1);
    assert_eq!(t2.classify(&fingerprint(&later).unwrap(), lineage(&later).as_deref()), Route::Stale);
    // Or no valid current identity at all.
    let t3 = GoalTracker { current_lineage: lineage(&later), ..GoalTracker::default() };
    assert_eq!(t3.classify(&fingerprint(&later).unwrap(), lineage(&later).as_deref()), Route::Stale);
}

#[test]
fn route_adopt_for_a_generation_nobody_owns() {
    let (t, _g) = after_set();
    let created = goal("the model's own goal", 200, 200, "active");
    assert_eq!(t.classify(&fingerprint(&created).unwrap(), lineage(&created).as_deref()), Route::Adopt);
}

#[test]
fn route_stale_for_a_binding_of_another_identity_and_for_ambiguity() {
    let mut t = GoalTracker { current: id("op-2", 2), ..GoalTracker::default() };
    t.remember("fp", Binding { identity: id("op-1", 1), ambiguous: false });
    assert_eq!(t.classify("fp", None), Route::Stale);
    t.remember("amb", Binding { identity: id("op-2", 2), ambiguous: true });
    assert_eq!(t.classify("amb", None), Route::Stale, "ambiguous generations are never current");
}

#[test]
fn the_first_bind_wins_and_a_conflicting_rebind_is_ambiguous_for_good() {
    let mut t = GoalTracker::default();
    assert!(!t.bind("fp", None, &id("a", 1)).ambiguous);
    assert!(!t.bind("fp", None, &id("a", 1)).ambiguous, "the same identity again is fine");
    assert!(t.bind("fp", None, &id("b", 2)).ambiguous);
    assert!(t.bind("fp", None, &id("a", 1)).ambiguous, "and stays so");
    assert_eq!(t.binding("fp").unwrap().identity, id("a", 1), "the first identity is kept");
}

#[test]
fn at_most_one_adoption_per_fingerprint_is_in_flight() {
    let mut t = GoalTracker::default();
    assert!(t.begin_adoption("fp"));
    assert!(!t.begin_adoption("fp"), "deduplicated");
    assert!(t.begin_adoption("other"), "other fingerprints are independent");
    t.finish_adoption("fp");
    assert!(t.begin_adoption("fp"));
    t.degraded = true;
    assert!(!t.begin_adoption("new"), "degraded trackers adopt nothing");
}

#[test]
fn an_adoption_that_lost_the_race_is_dropped() {
    let mut t = GoalTracker { current: id("user-op", 5), ..GoalTracker::default() };
    assert_eq!(t.install_adopted("fp", &id("adopt-op", 4)), Install::Superseded);
    assert_eq!(t.install_adopted("fp", &id("adopt-op", 5)), Install::Superseded, "equal revision loses too");
    assert_eq!(t.current, id("user-op", 5), "the current identity is untouched");
    assert_eq!(t.install_adopted("fp", &id("adopt-op", 6)), Install::Installed { arm: true });
    assert_eq!(t.current, id("adopt-op", 6));
    // The same identity again arms only if the generation is not already the current one.
    t.current_fingerprint = Some("fp".into());
    assert_eq!(t.install_adopted("fp", &id("adopt-op", 6)), Install::Installed { arm: false });
}

#[test]
fn adoption_fails_closed() {
    let mut t = GoalTracker::default();
    assert_eq!(t.install_adopted("fp", &GoalIdentity::default()), Install::Refused, "invalid identity");
    t.degraded = true;
    assert_eq!(t.install_adopted("fp", &id("op", 1)), Install::Refused, "degraded");
}

#[test]
fn the_claim_is_single_use_and_needs_the_current_identity() {
    let mut t = GoalTracker { current: id("op-1", 1), ..GoalTracker::default() };
    t.prepare_claim(&id("op-1", 1));
    assert_eq!(t.take_claim(), None, "not ready while the set is in flight");
    t.arm_claim(&id("op-1", 1), true);
    assert_eq!(t.take_claim(), Some(id("op-1", 1)));
    assert_eq!(t.take_claim(), None, "single use");
    t.prepare_claim(&id("op-1", 1));
    t.arm_claim(&id("op-1", 1), false);
    assert_eq!(t.take_claim(), None, "an inactive goal arms nothing");
    t.prepare_claim(&id("op-1", 1));
    t.arm_claim(&id("op-1", 1), true);
    t.current = id("op-2", 2);
    assert_eq!(t.take_claim(), None, "a claim of a superseded identity is worthless");
}

#[test]
fn turn_evidence_must_be_bound_unambiguous_and_agree() {
    let (mut t, g) = after_set();
    let fp = fingerprint(&g).unwrap();
    t.note_evidence("turn-1", &fp);
    assert_eq!(t.evidence_identity("turn-1"), Some(id("op-1", 1)));
    t.note_evidence("turn-2", "unbound");
    assert_eq!(t.evidence_identity("turn-2"), None, "unbound evidence proves nothing");
    t.remember("other", Binding { identity: id("op-9", 9), ambiguous: false });
    t.note_evidence("turn-3", &fp);
    t.note_evidence("turn-3", "other");
    assert_eq!(t.evidence_identity("turn-3"), None, "two identities: ambiguous");
    assert_eq!(t.evidence_identity("never"), None);
}
