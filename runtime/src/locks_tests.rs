//! Tests of `locks`.

use super::*;

fn key(s: &str) -> SessionKey {
    SessionKey::new("r", s)
}

#[tokio::test(start_paused = true)]
async fn a_held_lock_times_out_with_a_clear_error() {
    let t = LockTable::new();
    let _g = t.acquire(&key("a"), Duration::from_secs(1)).await.unwrap();
    let err = t.acquire(&key("a"), Duration::from_millis(200)).await.err().unwrap();
    assert_eq!(err.waited, Duration::from_millis(200));
    assert!(err.to_string().contains("r/a"));
    // Other keys are independent.
    let _b = t.acquire(&key("b"), Duration::from_millis(200)).await.unwrap();
}

#[tokio::test]
async fn entries_disappear_when_unused() {
    let t = LockTable::new();
    {
        let _g = t.acquire(&key("a"), Duration::from_secs(1)).await.unwrap();
        assert_eq!(t.len(), 1);
    }
    assert!(t.is_empty());
}

#[tokio::test(start_paused = true)]
async fn pairs_lock_in_sorted_order_so_opposite_orders_do_not_deadlock() {
    let t = LockTable::new();
    let mut tasks = Vec::new();
    for i in 0..50 {
        let t = t.clone();
        tasks.push(tokio::spawn(async move {
            let (a, b) = if i % 2 == 0 { (key("x"), key("y")) } else { (key("y"), key("x")) };
            let (ga, gb) = t.acquire_pair(&a, &b, Duration::from_secs(5)).await.unwrap();
            assert_eq!(*ga.key, a);
            assert_eq!(*gb.key, b);
            tokio::task::yield_now().await;
        }));
    }
    for task in tasks {
        task.await.unwrap();
    }
    assert!(t.is_empty());
}

#[tokio::test(start_paused = true)]
async fn an_abandoned_wait_leaves_no_residue() {
    let t = LockTable::new();
    let g = t.acquire(&key("a"), Duration::from_secs(1)).await.unwrap();
    let waiter = {
        let t = t.clone();
        tokio::spawn(async move { t.acquire(&key("a"), Duration::from_secs(60)).await.map(|_| ()) })
    };
    tokio::task::yield_now().await;
    waiter.abort();
    let _ = waiter.await;
    drop(g);
    assert!(t.is_empty());
}

#[tokio::test]
async fn a_released_lock_goes_to_its_waiter_not_to_a_later_caller() {
    let t = LockTable::new();
    let k = key("a");
    let first = t.acquire(&k, Duration::from_secs(5)).await.unwrap();
    let order = Arc::new(Mutex::new(Vec::new()));
    let (t2, k2, o2) = (t.clone(), k.clone(), order.clone());
    let waiter = tokio::spawn(async move {
        let _g = t2.acquire(&k2, Duration::from_secs(5)).await.unwrap();
        o2.lock().unwrap().push("waiter");
    });
    // One thread: the waiter runs until it queues on the held lock.
    tokio::task::yield_now().await;
    drop(first);
    // The uncontended fast path must not take the lock the waiter was handed.
    let late = t.acquire(&k, Duration::from_secs(5)).await.unwrap();
    order.lock().unwrap().push("late");
    drop(late);
    waiter.await.unwrap();
    assert_eq!(*order.lock().unwrap(), ["waiter", "late"]);
    assert!(t.is_empty());
}
