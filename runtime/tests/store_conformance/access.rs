//! The conformance cases of access tokens and the audit trail (see the suite's module
//! documentation): every field read back, conflicts, revocations (with what a token made),
//! touches, prunes, and the audit trail's gap-free seqs, also with two PostgreSQL stores.

use ensemble_runtime::store::{AuditRecord, StoreError, TokenRecord};

use super::*;

pub(super) fn token(id: &str, created_at_ms: i64, rooms: &[&str]) -> TokenRecord {
    TokenRecord {
        id: id.into(),
        name: format!("name of {id}"),
        role: "operator".into(),
        rooms: rooms.iter().map(|r| (*r).to_owned()).collect(),
        secret_hash: format!("{:0>64}", id.bytes().map(|b| format!("{b:02x}")).collect::<String>()),
        created_at_ms,
        created_by: "admin".into(),
        created_by_id: Some("admin".into()),
        expires_at_ms: None,
        revoked_at_ms: None,
        last_used_at_ms: None,
    }
}

/// An audit record as the server would append it (`seq` is the store's to assign).
pub(super) fn audit(at_ms: i64, i: usize) -> AuditRecord {
    let odd = i % 2 == 1;
    AuditRecord {
        seq: 999,
        at_ms,
        token_id: (!odd).then(|| format!("tok_{i}")),
        actor_name: (!odd).then(|| format!("actor \"{i}\" é")),
        method: if odd { "DELETE".into() } else { "POST".into() },
        route: "/v1/rooms/{roomId}/sessions".into(),
        room_id: odd.then(|| format!("room-{i}")),
        session_id: i.is_multiple_of(3).then(|| format!("s{i}")),
        status: if odd { 401 } else { 201 + i as u16 },
        code: odd.then(|| "unauthorized".into()),
    }
}

/// What `audit_after` must return for `records` given seqs from `first`.
pub(super) fn with_seqs(records: &[AuditRecord], first: u64) -> Vec<AuditRecord> {
    records.iter().zip(first..).map(|(r, seq)| AuditRecord { seq, ..r.clone() }).collect()
}

/// Every field of a token reads back as inserted (rooms with several ids, with "*", with none;
/// options set and unset), in the order of creation time and then id by bytes ("tok_B" before
/// "tok_a", whatever PostgreSQL's collation says), before and after a reopen.
pub(super) async fn tokens_read_back_exactly_in_creation_order(engine: Engine) {
    let Some(place) = Place::new(engine).await else { return };
    let store = place.open(place.config(), Arc::new(Collect::default())).await;
    assert_eq!(store.tokens().await.unwrap(), vec![]);
    let mut full = token("tok_a", 2_000, &["room-1", "room \"2\" é", "r,3", "[4]"]);
    full.role = "admin".into();
    full.expires_at_ms = Some(9_000_000_000_000);
    full.revoked_at_ms = Some(3_000);
    full.last_used_at_ms = Some(2_500);
    full.created_by_id = Some("tok_B".into());
    let mut tokens = vec![
        full,
        // Made before the maker's id was recorded.
        TokenRecord { created_by_id: None, ..token("tok_B", 2_000, &["*"]) },
        token("tok_0", 1_000, &[]),
        TokenRecord { role: "viewer".into(), ..token("tok_c", -5, &["only"]) },
        TokenRecord { expires_at_ms: Some(0), ..token("tok_aa", 2_000, &["*", "x"]) },
    ];
    for t in &tokens {
        store.token_insert(t.clone()).await.unwrap();
    }
    tokens.sort_by(|a, b| (a.created_at_ms, &a.id).cmp(&(b.created_at_ms, &b.id)));
    let ids: Vec<&str> = tokens.iter().map(|t| t.id.as_str()).collect();
    assert_eq!(ids, ["tok_c", "tok_0", "tok_B", "tok_a", "tok_aa"], "the order the store must give");
    assert_eq!(store.tokens().await.unwrap(), tokens, "{engine:?}");
    store.close().await;
    drop(store);
    let store = place.open(place.config(), Arc::new(Collect::default())).await;
    assert_eq!(store.tokens().await.unwrap(), tokens, "{engine:?}: after a reopen");
}

/// A token whose id or secret hash is taken is refused with a conflict (code `conflict`) and
/// writes nothing; in one group with other writes, only it is refused.
pub(super) async fn a_token_with_a_taken_id_or_secret_hash_is_refused_alone(engine: Engine) {
    let Some(place) = Place::new(engine).await else { return };
    let mut cfg = place.config();
    cfg.linger = Duration::from_millis(200);
    cfg.linger_when_idle = true;
    let store = place.open(cfg, Arc::new(Collect::default())).await;
    let first = token("tok_1", 1, &["*"]);
    store.token_insert(first.clone()).await.unwrap();
    let same_id = TokenRecord { secret_hash: "f".repeat(64), name: "other".into(), ..first.clone() };
    let same_hash = TokenRecord { id: "tok_2".into(), ..first.clone() };
    for dup in [same_id.clone(), same_hash.clone()] {
        let err = store.token_insert(dup).await.expect_err("refused");
        assert!(matches!(err, StoreError::Conflict(_)), "{engine:?}: {err:?}");
        assert_eq!(err.code(), "conflict");
    }
    assert!(store.token_insert(same_id).await.err().unwrap().to_string().contains("id `tok_1`"), "{engine:?}");
    assert_eq!(store.tokens().await.unwrap(), vec![first.clone()], "{engine:?}: nothing of the refused ones");

    // One group: the refused insert between two writes that commit.
    let commits = store.stats().commits.load(Ordering::Relaxed);
    let second = token("tok_3", 2, &["r"]);
    let (dup, good, trail) = tokio::join!(
        store.token_insert(same_hash),
        store.token_insert(second.clone()),
        store.audit_append(vec![audit(1, 0), audit(2, 1)]),
    );
    assert!(matches!(dup, Err(StoreError::Conflict(_))), "{engine:?}: {dup:?}");
    good.unwrap();
    assert_eq!(trail.unwrap(), 2);
    assert_eq!(store.stats().commits.load(Ordering::Relaxed), commits + 1, "{engine:?}: the three were one group");
    assert_eq!(store.tokens().await.unwrap(), vec![first, second], "{engine:?}");
    assert_eq!(store.audit_after(0, 10).await.unwrap(), with_seqs(&[audit(1, 0), audit(2, 1)], 1));
}

/// A revocation answers true once, then false (its time stays the first one's); an unknown id
/// answers false. Revocations and touches are durable: they read back after a reopen.
pub(super) async fn a_token_is_revoked_once_and_revocations_and_touches_survive_a_reopen(engine: Engine) {
    let Some(place) = Place::new(engine).await else { return };
    let store = place.open(place.config(), Arc::new(Collect::default())).await;
    let (a, b) = (token("tok_a", 1, &["*"]), token("tok_b", 2, &["r1", "r2"]));
    store.token_insert(a.clone()).await.unwrap();
    store.token_insert(b.clone()).await.unwrap();
    assert!(store.token_revoke("tok_a", 100).await.unwrap(), "{engine:?}");
    assert!(!store.token_revoke("tok_a", 200).await.unwrap(), "{engine:?}: revoked already");
    assert!(!store.token_revoke("tok_nope", 100).await.unwrap(), "{engine:?}: unknown");
    store.token_touch(vec![("tok_b".into(), 150), ("tok_a".into(), 90)]).await.unwrap();
    let want = vec![
        TokenRecord { revoked_at_ms: Some(100), last_used_at_ms: Some(90), ..a },
        TokenRecord { last_used_at_ms: Some(150), ..b },
    ];
    assert_eq!(store.tokens().await.unwrap(), want, "{engine:?}");
    store.close().await;
    drop(store);
    let store = place.open(place.config(), Arc::new(Collect::default())).await;
    assert_eq!(store.tokens().await.unwrap(), want, "{engine:?}: after a reopen");
    assert!(!store.token_revoke("tok_a", 300).await.unwrap(), "{engine:?}: still revoked after a reopen");
    assert!(store.token_revoke("tok_b", 300).await.unwrap());
    assert_eq!(store.tokens().await.unwrap()[1].revoked_at_ms, Some(300));
}

/// Revoking a token revokes the tokens it made, the ones those made and so on, at the same time;
/// one revoked already keeps its time, and the maker's maker, a sibling and the token file's
/// other tokens stay valid. Revoking one made token leaves its maker alone.
pub(super) async fn a_revocation_takes_every_token_its_token_made_and_nothing_else(engine: Engine) {
    let Some(place) = Place::new(engine).await else { return };
    let store = place.open(place.config(), Arc::new(Collect::default())).await;
    let made_by = |id: &str, maker: &str| TokenRecord { created_by_id: Some(maker.into()), ..token(id, 1, &["r"]) };
    // admin ─ root ─ mid ─ leaf ─ leaf2
    //              │     └ done (revoked before)
    //              └ side
    // admin ─ other;  legacy (no maker recorded)
    let tokens = [
        made_by("tok_root", "admin"),
        made_by("tok_mid", "tok_root"),
        made_by("tok_side", "tok_root"),
        made_by("tok_leaf", "tok_mid"),
        made_by("tok_leaf2", "tok_leaf"),
        made_by("tok_done", "tok_mid"),
        made_by("tok_other", "admin"),
        TokenRecord { created_by_id: None, ..token("tok_legacy", 1, &["r"]) },
    ];
    for t in &tokens {
        store.token_insert(t.clone()).await.unwrap();
    }
    let revoked = async |store: &Store| -> Vec<(String, Option<i64>)> {
        store.tokens().await.unwrap().into_iter().map(|t| (t.id, t.revoked_at_ms)).collect()
    };
    assert!(store.token_revoke("tok_done", 50).await.unwrap());
    assert!(store.token_revoke("tok_leaf2", 60).await.unwrap(), "{engine:?}: a made token alone");
    assert!(store.token_revoke("tok_mid", 100).await.unwrap(), "{engine:?}");
    let want = |id: &str| -> Option<i64> {
        match id {
            "tok_done" => Some(50),
            "tok_leaf2" => Some(60),
            "tok_mid" | "tok_leaf" => Some(100),
            _ => None,
        }
    };
    let expected: Vec<(String, Option<i64>)> =
        revoked(&store).await.iter().map(|(id, _)| (id.clone(), want(id))).collect();
    assert_eq!(revoked(&store).await, expected, "{engine:?}");
    store.close().await;
    drop(store);
    let store = place.open(place.config(), Arc::new(Collect::default())).await;
    assert_eq!(revoked(&store).await, expected, "{engine:?}: after a reopen");
    // Revoked already, it still takes what it made with it (a token made before the cascade).
    store.token_insert(made_by("tok_late", "tok_mid")).await.unwrap();
    assert!(!store.token_revoke("tok_mid", 200).await.unwrap(), "{engine:?}: revoked already");
    let late = store.tokens().await.unwrap().into_iter().find(|t| t.id == "tok_late").unwrap();
    assert_eq!(late.revoked_at_ms, Some(200), "{engine:?}");
    assert!(store.token_revoke("tok_root", 300).await.unwrap());
    let after: Vec<(String, Option<i64>)> = revoked(&store).await;
    for (id, at) in &after {
        let expect = match id.as_str() {
            "tok_other" | "tok_legacy" => None,
            "tok_root" | "tok_side" => Some(300),
            "tok_late" => Some(200),
            other => want(other),
        };
        assert_eq!(*at, expect, "{engine:?}: {id}");
    }
}

/// A prune removes the tokens revoked or expired before its time, and no other: not a valid one,
/// not one revoked or expiring at or after that time.
pub(super) async fn a_token_prune_removes_only_tokens_revoked_or_expired_before_its_time(engine: Engine) {
    let Some(place) = Place::new(engine).await else { return };
    let store = place.open(place.config(), Arc::new(Collect::default())).await;
    let expiring = |id: &str, at: i64| TokenRecord { expires_at_ms: Some(at), ..token(id, 1, &["*"]) };
    for t in [token("tok_valid", 1, &["*"]), token("tok_old", 2, &["*"]), token("tok_new", 3, &["*"])] {
        store.token_insert(t).await.unwrap();
    }
    store.token_insert(expiring("tok_expired", 40)).await.unwrap();
    store.token_insert(expiring("tok_expiring", 60)).await.unwrap();
    store.token_revoke("tok_old", 30).await.unwrap();
    store.token_revoke("tok_new", 50).await.unwrap();
    assert_eq!(store.token_prune(10).await.unwrap(), 0, "{engine:?}: nothing ended that early");
    assert_eq!(store.token_prune(50).await.unwrap(), 2, "{engine:?}");
    let ids: Vec<String> = store.tokens().await.unwrap().into_iter().map(|t| t.id).collect();
    assert_eq!(ids, ["tok_expiring", "tok_valid", "tok_new"], "{engine:?}");
}

/// A token's last use only moves forward: an older touch, in a later write or in the same one
/// (the same id twice), leaves the newer one; unknown ids are ignored, an untouched token keeps
/// none.
pub(super) async fn a_touch_never_moves_a_tokens_last_use_backwards(engine: Engine) {
    let Some(place) = Place::new(engine).await else { return };
    let store = place.open(place.config(), Arc::new(Collect::default())).await;
    for id in ["tok_a", "tok_b", "tok_c"] {
        store.token_insert(token(id, 1, &["*"])).await.unwrap();
    }
    let last_used = async |store: &Store| -> Vec<Option<i64>> {
        store.tokens().await.unwrap().into_iter().map(|t| t.last_used_at_ms).collect()
    };
    store.token_touch(vec![("tok_a".into(), 100), ("tok_nope".into(), 500)]).await.unwrap();
    assert_eq!(last_used(&store).await, [Some(100), None, None], "{engine:?}");
    store.token_touch(vec![("tok_a".into(), 50)]).await.unwrap();
    assert_eq!(last_used(&store).await, [Some(100), None, None], "{engine:?}: not back to 50");
    store.token_touch(vec![("tok_a".into(), 100)]).await.unwrap();
    assert_eq!(last_used(&store).await, [Some(100), None, None]);
    store
        .token_touch(vec![("tok_b".into(), 300), ("tok_a".into(), 120), ("tok_b".into(), 200), ("tok_a".into(), 110)])
        .await
        .unwrap();
    assert_eq!(last_used(&store).await, [Some(120), Some(300), None], "{engine:?}: the latest of each");
    store.token_touch(vec![]).await.unwrap();
    store.close().await;
    drop(store);
    let store = place.open(place.config(), Arc::new(Collect::default())).await;
    store.token_touch(vec![("tok_b".into(), 250), ("tok_c".into(), 7)]).await.unwrap();
    assert_eq!(last_used(&store).await, [Some(120), Some(300), Some(7)], "{engine:?}: after a reopen");
}

/// Audit seqs start at 1 and are gap-free and increasing across appends of several sizes (an
/// empty one answers the head) and a reopen; `audit_after` returns exactly the records after its
/// seq, at most `limit`, with every field as appended.
pub(super) async fn audit_seqs_are_gap_free_across_appends_and_a_reopen_and_page_exactly(engine: Engine) {
    let Some(place) = Place::new(engine).await else { return };
    let store = place.open(place.config(), Arc::new(Collect::default())).await;
    assert_eq!(store.audit_append(vec![]).await.unwrap(), 0, "{engine:?}: an empty trail's head");
    assert_eq!(store.audit_after(0, 10).await.unwrap(), vec![]);
    let records: Vec<AuditRecord> = (0..12).map(|i| audit(1_000 + i as i64, i)).collect();
    assert_eq!(store.audit_append(records[..3].to_vec()).await.unwrap(), 3, "{engine:?}");
    assert_eq!(store.audit_append(records[3..4].to_vec()).await.unwrap(), 4);
    assert_eq!(store.audit_append(vec![]).await.unwrap(), 4, "{engine:?}: nothing assigned");
    assert_eq!(store.audit_append(records[4..9].to_vec()).await.unwrap(), 9);
    store.close().await;
    drop(store);
    let store = place.open(place.config(), Arc::new(Collect::default())).await;
    assert_eq!(store.audit_append(records[9..].to_vec()).await.unwrap(), 12, "{engine:?}: after a reopen");
    let all = with_seqs(&records, 1);
    assert_eq!(store.audit_after(0, 100).await.unwrap(), all, "{engine:?}");
    for (after, limit) in [(0, 1), (3, 4), (4, 5), (10, 5), (11, 1), (12, 10), (13, 10), (u64::MAX, 10), (5, 0)] {
        let from = (after as usize).min(all.len());
        let want = &all[from..(from + limit).min(all.len())];
        assert_eq!(store.audit_after(after, limit).await.unwrap(), want, "{engine:?}: {limit} after {after}");
    }
    let mut paged = Vec::new();
    loop {
        let page = store.audit_after(paged.last().map_or(0, |r: &AuditRecord| r.seq), 5).await.unwrap();
        if page.is_empty() {
            break;
        }
        assert!(page.len() <= 5);
        paged.extend(page);
    }
    assert_eq!(paged, all, "{engine:?}: read in pages of 5");
    assert_eq!(store.audit_after(0, usize::MAX).await.unwrap().len(), 12, "{engine:?}: no limit");
}

/// A prune deletes exactly the records older than its time (one at that time stays) and says how
/// many; later appends go on from the last seq assigned, also once every record is gone and
/// after a reopen.
pub(super) async fn an_audit_prune_removes_only_older_records_and_seqs_go_on(engine: Engine) {
    let Some(place) = Place::new(engine).await else { return };
    let store = place.open(place.config(), Arc::new(Collect::default())).await;
    // The cut is the first record (by seq) at or after the time: everything before it goes, and a
    // straggler after it (a clock step back, 25) waits for a later prune; nothing newer ever goes.
    let records: Vec<AuditRecord> = [10, 20, 30, 25, 40].iter().enumerate().map(|(i, at)| audit(*at, i)).collect();
    assert_eq!(store.audit_append(records.clone()).await.unwrap(), 5);
    assert_eq!(store.audit_prune(5).await.unwrap(), 0, "{engine:?}: nothing that old");
    assert_eq!(store.audit_prune(30).await.unwrap(), 2, "{engine:?}");
    let all = with_seqs(&records, 1);
    let kept = vec![all[2].clone(), all[3].clone(), all[4].clone()];
    assert_eq!(store.audit_after(0, 10).await.unwrap(), kept, "{engine:?}: from the first at 30 on, all stay");
    assert_eq!(store.audit_after(3, 10).await.unwrap(), kept[1..], "{engine:?}: paging from a kept seq");
    assert_eq!(store.audit_prune(30).await.unwrap(), 0);
    assert_eq!(store.audit_append(vec![audit(50, 5)]).await.unwrap(), 6, "{engine:?}: the seq goes on");
    assert_eq!(store.audit_prune(i64::MAX).await.unwrap(), 4, "{engine:?}: every record");
    assert_eq!(store.audit_after(0, 10).await.unwrap(), vec![]);
    assert_eq!(store.audit_append(vec![]).await.unwrap(), 6, "{engine:?}: the head outlives the records");
    assert_eq!(store.audit_append(vec![audit(60, 6)]).await.unwrap(), 7, "{engine:?}: not back to 1");
    store.close().await;
    drop(store);
    let store = place.open(place.config(), Arc::new(Collect::default())).await;
    assert_eq!(store.audit_append(vec![audit(70, 7), audit(80, 8)]).await.unwrap(), 9, "{engine:?}: after a reopen");
    let want = with_seqs(&[audit(60, 6), audit(70, 7), audit(80, 8)], 7);
    assert_eq!(store.audit_after(0, 10).await.unwrap(), want, "{engine:?}");
}

/// Two hosts on one PostgreSQL database append audit records and touch the same tokens (in
/// opposite orders) at once: every seq from 1 is used exactly once, each append's records hold
/// consecutive seqs, and each token's last use is the latest either host recorded.
#[tokio::test]
pub(super) async fn two_postgres_stores_share_one_gap_free_audit_trail() {
    let Some(place) = Place::new(Engine::Postgres).await else { return };
    let shared = || StoreConfig { exclusive: false, ..place.config() };
    let a = place.open(shared(), Arc::new(Collect::default())).await;
    let b = place.open(shared(), Arc::new(Collect::default())).await;
    for id in ["tok_x", "tok_y"] {
        a.token_insert(token(id, 1, &["*"])).await.unwrap();
    }
    let run = |store: Store, host: i64| {
        tokio::spawn(async move {
            let mut acks = Vec::new();
            for i in 0..100 {
                let n = 1 + i % 3;
                let records: Vec<AuditRecord> = (0..n).map(|k| audit(host * 1_000 + i as i64, k)).collect();
                let (store, touch_store) = (store.clone(), store.clone());
                let at = host * 1_000 + i as i64;
                let used: Vec<(String, i64)> = if host == 1 {
                    vec![("tok_x".into(), at), ("tok_y".into(), at)]
                } else {
                    vec![("tok_y".into(), at), ("tok_x".into(), at)]
                };
                acks.push(tokio::spawn(async move { (n, store.audit_append(records).await.unwrap()) }));
                acks.push(tokio::spawn(async move {
                    touch_store.token_touch(used).await.unwrap();
                    (0, 0)
                }));
            }
            let mut out = Vec::new();
            for ack in acks {
                out.push(ack.await.unwrap());
            }
            out
        })
    };
    let (x, y) = (run(a.clone(), 1), run(b.clone(), 2));
    let (x, y) = (x.await.unwrap(), y.await.unwrap());
    let total: usize = (0..100).map(|i| 1 + i % 3).sum::<usize>() * 2;
    let trail = a.audit_after(0, 10_000).await.unwrap();
    let seqs: Vec<u64> = trail.iter().map(|r| r.seq).collect();
    assert_eq!(seqs, (1..=total as u64).collect::<Vec<_>>(), "one gap-free trail");
    for answers in [&x, &y] {
        // Each append's records hold the seqs up to the one it was answered.
        for (n, last) in answers.iter().filter(|(n, _)| *n > 0) {
            let first = (*last as usize + 1 - n) as u64;
            let host_of = |seq: u64| trail[seq as usize - 1].at_ms / 1_000;
            assert!((first..=*last).all(|s| host_of(s) == host_of(*last)), "an append's seqs are consecutive");
        }
    }
    let last_used: Vec<Option<i64>> = b.tokens().await.unwrap().into_iter().map(|t| t.last_used_at_ms).collect();
    assert_eq!(last_used, [Some(2_099), Some(2_099)], "the latest touch of either host");
}
