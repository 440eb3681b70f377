//! What both engines' writers share: gathering a group of operations from the queue, and after
//! the group's commit (or its failure) fanning out its events and answering its waiters.

use std::sync::Arc;
use std::sync::atomic::Ordering;
use std::time::Duration;

use tokio::sync::{Notify, mpsc, oneshot};

use super::health::Loss;
use super::health::StoreStats;
use super::types::{AppendBatch, CommitListener, CommittedEvent, Queued, StoreConfig, StoreError, Value, WriteOp};
use ensemble_core::budget::ByteBudget;

/// The writer's end of the queue: the operations, the budget it gives their bytes back to, and
/// the bell its senders ring once they have queued ([`super::types::Rung`]).
pub(super) struct Inbox {
    pub(super) rx: mpsc::Receiver<Queued>,
    pub(super) budget: Arc<ByteBudget>,
    pub(super) bell: Arc<Notify>,
}

/// The next queued operation; `None` once every sender is gone. The writer waits on the bell, not
/// on the channel: a channel wakes its receiver inside `send`, and the controller sends while it
/// holds its state lock (so that the log order is the fold order) — a sleeping writer's wake-up is
/// a system call, and the other request threads waited for the lock through it. The bell rings
/// when the sender's `Rung` drops, after the lock. `notify_one` keeps a ring that finds no one
/// waiting, so a ring between `try_recv` and the wait is not lost.
async fn recv(inbox: &mut Inbox) -> Option<Queued> {
    loop {
        match inbox.rx.try_recv() {
            Ok(q) => return Some(q),
            Err(mpsc::error::TryRecvError::Disconnected) => return None,
            Err(mpsc::error::TryRecvError::Empty) => inbox.bell.notified().await,
        }
    }
}

/// The next group: the first operation queued and whatever follows it (see the linger rule), and
/// whether a `Shutdown` ended it. `None` once the queue is closed or a `Shutdown` comes first.
/// The group's bytes leave the queue's budget as it is taken.
pub(super) async fn next_group(inbox: &mut Inbox, config: &StoreConfig) -> Option<(Vec<WriteOp>, bool)> {
    let mut bytes = 0;
    let group = gather(inbox, config, &mut bytes).await;
    inbox.budget.release(bytes);
    group
}

async fn gather(inbox: &mut Inbox, config: &StoreConfig, bytes: &mut usize) -> Option<(Vec<WriteOp>, bool)> {
    let first = recv(inbox).await?;
    *bytes += first.bytes;
    if matches!(first.op, WriteOp::Shutdown) {
        return None;
    }
    let mut batch = vec![first.op];
    let mut events = batch_events(&batch);
    // Linger only under load: when more work was already queued behind this operation (it piled
    // up during the last commit), waiting `linger` for more keeps commits few. A lone operation
    // commits at once, with whatever queued up meanwhile. Judged by the queue, not by the last
    // group's size, which lingering itself would inflate.
    let burst = !inbox.rx.is_empty() || config.linger_when_idle;
    let linger = if burst { config.linger } else { Duration::ZERO };
    let deadline = tokio::time::Instant::now() + linger;
    while events < config.max_batch {
        let next = match inbox.rx.try_recv() {
            Ok(op) => Some(op),
            Err(mpsc::error::TryRecvError::Empty) if !linger.is_zero() => {
                // A lull ends the linger early: when nothing arrives for a quarter of it, whoever
                // sends next is waiting for this commit (a client awaiting its 201), not streaming
                // behind it.
                let lull = tokio::time::Instant::now() + linger / 4;
                tokio::time::timeout_at(lull.min(deadline), recv(inbox)).await.ok().flatten()
            }
            Err(_) => None,
        };
        let next = next.map(|q| {
            *bytes += q.bytes;
            q.op
        });
        match next {
            Some(WriteOp::Shutdown) => return Some((batch, true)),
            Some(op) => {
                events += batch_events(std::slice::from_ref(&op));
                batch.push(op);
            }
            None => break,
        }
    }
    Some((batch, false))
}

fn batch_events(ops: &[WriteOp]) -> usize {
    ops.iter()
        .map(|op| match op {
            WriteOp::Append(b) => b.events.len().max(1),
            _ => 1,
        })
        .sum()
}

/// A waiter of a non-append operation.
pub(super) enum Reply {
    Unit(oneshot::Sender<Result<(), StoreError>>),
    Value(oneshot::Sender<Result<Value, StoreError>>),
}

/// One operation's result inside a group, in the group's order; delivered after the commit.
pub(super) enum Done {
    Appended(Vec<CommittedEvent>, u64),
    /// The operation was undone alone (its savepoint); the rest of the group went on.
    Failed(StoreError),
    Value(Result<Value, StoreError>),
    Nothing,
}

fn answer(reply: Reply, result: Result<Value, StoreError>) {
    match reply {
        Reply::Unit(tx) => {
            let _ = tx.send(result.map(|_| ()));
        }
        Reply::Value(tx) => {
            let _ = tx.send(result);
        }
    }
}

/// The sessions an append would have written, and how many events of each (a record without an
/// event counts: the session's durable record is behind its memory too).
fn losses(b: &AppendBatch) -> Vec<Loss> {
    let mut out: Vec<Loss> = Vec::new();
    for ev in &b.events {
        match out.last_mut() {
            Some(l) if l.session_id == ev.session_id => l.events += 1,
            _ => out.push(Loss { room_id: b.room_id.clone(), session_id: ev.session_id.clone(), events: 1 }),
        }
    }
    for r in &b.records {
        if !out.iter().any(|l| l.session_id == r.session_id) {
            out.push(Loss { room_id: b.room_id.clone(), session_id: r.session_id.clone(), events: 0 });
        }
    }
    out
}

/// After a group (`dones`: a result per operation of `batch`, in order; fewer when the group
/// failed as a whole). On success its events reach the listener (in order, every operation's
/// before any is acknowledged) and then every waiter its result; on failure every waiter hears the
/// error and nothing is fanned out. Either way the store's health learns what was lost. Returns
/// the number of events committed.
pub(super) fn deliver(
    listener: &Arc<dyn CommitListener>,
    stats: &StoreStats,
    batch: Vec<WriteOp>,
    mut dones: Vec<Done>,
    result: Result<(), StoreError>,
) -> usize {
    if let Err(error) = result {
        // Nothing of this group is durable: every waiter hears.
        tracing::error!(error = %error, "group commit failed");
        metrics::counter!("ensemble_store_commit_failures_total").increment(1);
        let lost = batch.iter().filter_map(|op| match op {
            WriteOp::Append(b) => Some(losses(b)),
            _ => None,
        });
        stats.health.failed(&error, lost.flatten());
        let msg = error.to_string();
        let err = || match &error {
            StoreError::Unavailable(_) => StoreError::Unavailable(msg.clone()),
            e if e.is_full() => StoreError::Full(msg.clone()),
            _ => StoreError::Other(msg.clone()),
        };
        for op in batch {
            match op {
                WriteOp::Append(AppendBatch { ack: Some(ack), .. }) => {
                    let _ = ack.send(Err(err()));
                }
                op => {
                    if let Some(reply) = reply_of(op) {
                        answer(reply, Err(err()));
                    }
                }
            }
        }
        return 0;
    }
    let mut fanout: Vec<(String, Vec<CommittedEvent>)> = Vec::new();
    let mut event_count = 0usize;
    for (op, done) in batch.iter().zip(dones.iter_mut()) {
        if let (WriteOp::Append(b), Done::Appended(events, _)) = (op, done) {
            event_count += events.len();
            if events.is_empty() {
                continue;
            }
            let events = std::mem::take(events);
            match fanout.last_mut() {
                Some((room, evs)) if *room == b.room_id => evs.extend(events),
                _ => fanout.push((b.room_id.clone(), events)),
            }
        }
    }
    metrics::histogram!("ensemble_store_batch_events").record(event_count as f64);
    metrics::counter!("ensemble_events_appended_total").increment(event_count as u64);
    stats.commits.fetch_add(1, Ordering::Relaxed);
    stats.events.fetch_add(event_count as u64, Ordering::Relaxed);
    for (room_id, events) in &fanout {
        listener.committed(room_id, events);
    }
    let mut dones = dones.into_iter();
    for op in batch {
        let done = dones.next().unwrap_or(Done::Nothing);
        match (op, done) {
            (WriteOp::Append(b), Done::Failed(error)) => {
                stats.health.op_failed(&error, losses(&b));
                if let Some(ack) = b.ack {
                    let _ = ack.send(Err(error));
                }
            }
            (WriteOp::Probe { ack }, done) => {
                let result = match done {
                    Done::Value(r) => r.map(|_| ()),
                    Done::Failed(e) => Err(e),
                    Done::Appended(..) | Done::Nothing => Ok(()),
                };
                match &result {
                    Ok(()) => stats.health.recovered(),
                    Err(e) => stats.health.failed(e, []),
                }
                let _ = ack.send(result);
            }
            (WriteOp::Append(b), done) => {
                if let Some(ack) = b.ack {
                    let last = match done {
                        Done::Appended(_, last) => last,
                        _ => 0,
                    };
                    let _ = ack.send(Ok(last));
                }
            }
            (op, done) => {
                if let Some(reply) = reply_of(op) {
                    let result = match done {
                        Done::Value(r) => r,
                        Done::Failed(e) => Err(e),
                        Done::Appended(..) | Done::Nothing => Ok(Value::Unit),
                    };
                    answer(reply, result);
                }
            }
        }
    }
    event_count
}

/// Splits a non-append operation into its waiter, or `None` for those without one.
pub(super) fn reply_of(op: WriteOp) -> Option<Reply> {
    match op {
        WriteOp::Flush { ack } | WriteOp::Probe { ack } | WriteOp::Exec { ack, .. } => Some(Reply::Unit(ack)),
        WriteOp::Durable(d) => Some(Reply::Value(d.ack)),
        WriteOp::Append(_) | WriteOp::DeleteSession { .. } | WriteOp::Shutdown => None,
    }
}

/// What precedes an event in its wire frame (`{"type":"event","event":…}`).
pub(super) const FRAME_PREFIX: &str = "{\"type\":\"event\",\"event\":";

/// An event serialised once, from the borrowed event, straight into its wire frame; the log stores
/// the `event` part of it ([`event_json`]).
pub(super) fn frame(ev: &ensemble_core::event::NewEvent, seq: u64) -> Result<Vec<u8>, StoreError> {
    let mut frame = Vec::with_capacity(ev.body.json_size_hint());
    frame.extend_from_slice(FRAME_PREFIX.as_bytes());
    serde_json::to_writer(&mut frame, &ev.sequenced(seq))?;
    frame.push(b'}');
    Ok(frame)
}

/// The event's JSON inside a frame made by [`frame`].
pub(super) fn event_json(frame: &[u8]) -> Result<&str, StoreError> {
    std::str::from_utf8(&frame[FRAME_PREFIX.len()..frame.len() - 1])
        .map_err(|e| StoreError::Other(format!("event json is not utf-8: {e}")))
}

/// The delivery of an event just appended, for one webhook.
pub(super) fn outbox_item(
    room_id: &str,
    out: &super::webhooks::Outbound,
    ev: &ensemble_core::event::NewEvent,
    committed: &CommittedEvent,
) -> Result<super::webhooks::NewOutboxItem, StoreError> {
    Ok(super::webhooks::NewOutboxItem {
        webhook_id: out.webhook_id.clone(),
        event_id: ev.event_id.clone(),
        kind: out.kind.clone(),
        room_id: Some(room_id.to_owned()),
        session_id: Some(ev.session_id.clone()),
        event_json: event_json(&committed.frame)?.to_owned(),
        created_at_ms: ev.occurred_at_ms,
    })
}

#[cfg(test)]
mod tests {
    use std::task::Poll;

    use super::*;
    use crate::store::types::{Charge, QueueTx, WritePermit};
    use crate::test_util::poll_once;

    fn flush() -> (WriteOp, oneshot::Receiver<Result<(), StoreError>>) {
        let (ack, rx) = oneshot::channel();
        (WriteOp::Flush { ack }, rx)
    }

    /// A place in the queue, as `Store::reserve` hands it out.
    async fn permit<'a>(tx: &'a QueueTx, budget: &'a ByteBudget) -> WritePermit<'a> {
        WritePermit { slot: tx.tx.reserve().await.unwrap(), charge: Charge::new(budget, 0), bell: &tx.bell.0 }
    }

    #[tokio::test]
    async fn the_writer_is_woken_when_the_senders_rung_drops_not_inside_send() {
        let (tx, mut inbox) = super::super::queue(&StoreConfig::new("unused"));
        let budget = ByteBudget::new(1 << 20);
        let mut waiting = std::pin::pin!(recv(&mut inbox));
        assert!(poll_once(waiting.as_mut()).is_pending(), "an empty queue");

        let rung = permit(&tx, &budget).await.send(flush().0);
        assert!(
            poll_once(waiting.as_mut()).is_pending(),
            "queued, but the bell has not rung: the sender holds its lock"
        );
        drop(rung);
        assert!(matches!(poll_once(waiting.as_mut()), Poll::Ready(Some(_))), "the rung dropped: the writer takes it");
    }

    #[tokio::test]
    async fn a_ring_that_finds_no_writer_waiting_is_kept_for_its_next_wait() {
        // `recv` looks at the queue, then waits: a sender that queues and rings between the two
        // must still wake it (`notify_one` keeps the ring; `notify_waiters` would lose it).
        let (tx, mut inbox) = super::super::queue(&StoreConfig::new("unused"));
        let budget = ByteBudget::new(1 << 20);
        drop(permit(&tx, &budget).await.send(flush().0));
        let bell = inbox.bell.clone();
        assert!(poll_once(std::pin::pin!(bell.notified())).is_ready(), "the ring was kept");
        assert!(matches!(poll_once(std::pin::pin!(recv(&mut inbox))), Poll::Ready(Some(_))));
    }

    #[tokio::test]
    async fn a_writer_waiting_on_the_bell_sees_the_queue_closed_when_the_last_sender_goes() {
        let (tx, mut inbox) = super::super::queue(&StoreConfig::new("unused"));
        let other = tx.clone();
        let mut waiting = std::pin::pin!(recv(&mut inbox));
        assert!(poll_once(waiting.as_mut()).is_pending());
        drop(tx);
        assert!(poll_once(waiting.as_mut()).is_pending(), "one sender left");
        drop(other);
        assert!(matches!(poll_once(waiting.as_mut()), Poll::Ready(None)), "no sender left: the writer ends");
    }
}
