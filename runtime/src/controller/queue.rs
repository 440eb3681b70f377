//! A session's queue of follow-ups: input submitted with `queue: true` while a turn runs waits in
//! the session's record (durable: it survives a restart), and starts, as the turn id it was given
//! when queued, once the turn before it has ended — completed or canceled; after a failure only
//! when the session's `queueAfterFailure` says so. It can be listed, reordered, edited, removed,
//! and sent at once (steered into the running turn where the provider can, else the running turn
//! is canceled and it goes first). Every change is a `queue.updated` event, which shows each
//! queued turn's size and the beginning of its text, not its whole input (`GET …/queue` has it).
//! A queue is bounded by its turns (`--max-queued-turns`) and their bytes (`--max-queued-bytes`).

use std::sync::Arc;

use serde_json::json;

use super::Controller;
use super::config::ControllerConfig;
use super::error::{ControllerError, Result};
use super::fold::Batch;
use super::publish::Persist;
use super::requests::TurnAccepted;
use ensemble_core::adapter::Adapter;
use ensemble_core::clock::new_id;
use ensemble_core::event::{
    EventBody, NoticeLevel, NoticePayload, QueueUpdatedPayload, TurnSteeredPayload, input_bytes,
};
use ensemble_core::model::{InputItem, QueuedTurn, SessionKey};

fn not_queued(turn_id: &str) -> ControllerError {
    ControllerError::QueuedTurnNotFound(turn_id.to_owned())
}

/// Refuses a queue of `queue` (without the turn `instead`, if any) plus `input`, when it would hold
/// more turns or bytes than the limits.
fn check_room(c: &ControllerConfig, queue: &[QueuedTurn], instead: Option<&str>, input: &[InputItem]) -> Result<()> {
    let others = queue.iter().filter(|q| Some(q.turn_id.as_str()) != instead);
    let (turns, bytes) = others.fold((0, 0), |(n, b), q| (n + 1, b + input_bytes(&q.input)));
    if instead.is_none() && turns >= c.max_queued_turns {
        return Err(ControllerError::QueueFull {
            message: format!(
                "{turns} turns wait already (the limit, --max-queued-turns); wait for one to start, or remove one"
            ),
            details: json!({ "maxQueuedTurns": c.max_queued_turns, "queuedTurns": turns }),
        });
    }
    let size = input_bytes(input);
    if bytes + size > c.max_queued_bytes {
        return Err(ControllerError::QueueFull {
            message: format!(
                "the queue holds {bytes} bytes of input and this turn's is {size}: more than the limit of {} \
                 bytes (--max-queued-bytes); wait for a turn to start, or remove one",
                c.max_queued_bytes
            ),
            details: json!({ "maxQueuedBytes": c.max_queued_bytes, "queuedBytes": bytes, "inputBytes": size }),
        });
    }
    Ok(())
}

impl Batch<'_> {
    /// Announces the session's queue as it is now (`queue.updated`, with `reason`).
    pub(super) fn queue_updated(&mut self, reason: &str) {
        let payload = QueueUpdatedPayload::of(&self.entry.rec.queue, reason, self.queue_preview_bytes);
        self.emit(None, EventBody::QueueUpdated(payload));
    }
}

impl Controller {
    /// Queues `input` (the session's lock held): checked and read now (its images kept), started
    /// later.
    pub(super) async fn enqueue(
        &self,
        key: &SessionKey,
        adapter: &Arc<dyn Adapter>,
        input: Vec<InputItem>,
        client_submit_id: Option<String>,
    ) -> Result<TurnAccepted> {
        let session = self.snapshot(key)?;
        let resolved = self.resolve_input(adapter, &session, input)?;
        let turn_id = new_id();
        let queued = QueuedTurn {
            turn_id: turn_id.clone(),
            input: resolved.stored,
            client_submit_id: client_submit_id.clone(),
            queued_at_ms: self.inner.clock.now_ms(),
        };
        self.publish_with(key, Persist::Always, |b| {
            check_room(&self.inner.config, &b.entry.rec.queue, None, &queued.input)?;
            if let Some(csid) = &client_submit_id {
                b.entry.rec.remember_submit(csid, &turn_id);
            }
            b.entry.rec.queue.push(queued);
            b.queue_updated("queued");
            Ok(())
        })
        .await?
        .durable()
        .await?;
        Ok(TurnAccepted { turn_id, duplicate: false, steered: false, queued: true })
    }

    /// The session's queue, first to start first.
    pub fn queue(&self, key: &SessionKey) -> Result<Vec<QueuedTurn>> {
        let st = self.state();
        Ok(st.announced(key)?.rec.queue.clone())
    }

    /// Changes the queue with `f` (under the session's lock) and announces it with `reason`.
    async fn change_queue<T>(
        &self,
        key: &SessionKey,
        reason: &str,
        f: impl FnOnce(&mut Vec<QueuedTurn>) -> Result<T>,
    ) -> Result<T> {
        let _guard = self.lock(key).await?;
        let mut out = None;
        self.publish_with(key, Persist::Always, |b| {
            out = Some(f(&mut b.entry.rec.queue)?);
            b.queue_updated(reason);
            Ok(())
        })
        .await?
        .durable()
        .await?;
        out.ok_or_else(|| ControllerError::InvalidInput("the queue did not change".into()))
    }

    /// Puts the queue in `order` (every queued turn id once).
    pub async fn reorder_queue(&self, key: &SessionKey, order: Vec<String>) -> Result<Vec<QueuedTurn>> {
        self.change_queue(key, "reordered", |queue| {
            let mut sorted: Vec<&str> = order.iter().map(String::as_str).collect();
            sorted.sort_unstable();
            let mut have: Vec<&str> = queue.iter().map(|q| q.turn_id.as_str()).collect();
            have.sort_unstable();
            if sorted != have {
                return Err(ControllerError::InvalidInput(
                    "`order` must name every queued turn once (GET …/queue lists them)".into(),
                ));
            }
            let mut rest = std::mem::take(queue);
            for id in &order {
                if let Some(i) = rest.iter().position(|q| q.turn_id == *id) {
                    queue.push(rest.remove(i));
                }
            }
            Ok(queue.clone())
        })
        .await
    }

    /// Replaces a queued turn's input.
    pub async fn edit_queued(&self, key: &SessionKey, turn_id: &str, input: Vec<InputItem>) -> Result<QueuedTurn> {
        super::input::check(&input, self.inner.config.max_input_bytes)?;
        let session = self.snapshot(key)?;
        let adapter = self.adapter(&session.provider)?;
        let resolved = self.resolve_input(&adapter, &session, input)?;
        self.change_queue(key, "edited", |queue| {
            if queue.iter().any(|q| q.turn_id == turn_id) {
                check_room(&self.inner.config, queue, Some(turn_id), &resolved.stored)?;
            }
            let q = queue.iter_mut().find(|q| q.turn_id == turn_id).ok_or_else(|| not_queued(turn_id))?;
            q.input = resolved.stored;
            Ok(q.clone())
        })
        .await
    }

    /// Takes a turn off the queue.
    pub async fn remove_queued(&self, key: &SessionKey, turn_id: &str) -> Result<()> {
        self.change_queue(key, "removed", |queue| {
            let i = queue.iter().position(|q| q.turn_id == turn_id).ok_or_else(|| not_queued(turn_id))?;
            queue.remove(i);
            Ok(())
        })
        .await
    }

    /// Sends a queued turn now: into the running turn when the provider can steer (it is then
    /// not a turn of its own), else it goes first and the running turn is canceled (it starts as
    /// soon as that one has ended); with no turn running it starts at once.
    pub async fn send_queued_now(&self, key: &SessionKey, turn_id: &str) -> Result<TurnAccepted> {
        let guard = self.lock(key).await?;
        let (item, active, provider) = {
            let st = self.state();
            let e = st.announced(key)?;
            let item = e.rec.queue.iter().find(|q| q.turn_id == turn_id).cloned().ok_or_else(|| not_queued(turn_id))?;
            (item, e.rec.session.active_turn_id.clone(), e.rec.session.provider.clone())
        };
        let adapter = self.adapter(&provider)?;
        match active {
            Some(active) if adapter.capabilities().steer => {
                let session = self.snapshot(key)?;
                let prompt = super::input::reprompt(&self.inner.config.attachments, &session, &item.input)?;
                adapter.steer(&session, &active, prompt).await?;
                self.publish_with(key, Persist::Always, |b| {
                    b.entry.rec.queue.retain(|q| q.turn_id != turn_id);
                    b.emit(
                        Some(active.clone()),
                        EventBody::TurnSteered(TurnSteeredPayload {
                            turn_id: active.clone(),
                            input: item.input.clone(),
                            client_submit_id: item.client_submit_id.clone(),
                        }),
                    );
                    b.queue_updated("sent");
                    Ok(())
                })
                .await?
                .durable()
                .await?;
                Ok(TurnAccepted { turn_id: active, duplicate: false, steered: true, queued: false })
            }
            Some(_) => {
                self.publish_with(key, Persist::Always, |b| {
                    let queue = &mut b.entry.rec.queue;
                    if let Some(i) = queue.iter().position(|q| q.turn_id == turn_id) {
                        let first = queue.remove(i);
                        queue.insert(0, first);
                    }
                    b.queue_updated("reordered");
                    Ok(())
                })
                .await?
                .durable()
                .await?;
                drop(guard);
                // Its end starts the queue (a canceled turn lets it go on).
                self.cancel(key).await?;
                Ok(TurnAccepted { turn_id: turn_id.to_owned(), duplicate: false, steered: false, queued: true })
            }
            None => {
                drop(guard);
                self.start_queued(key, Some(turn_id)).await?;
                Ok(TurnAccepted { turn_id: turn_id.to_owned(), duplicate: false, steered: false, queued: false })
            }
        }
    }

    /// In the background: the queue's first turn starts (its session's turn just ended).
    pub(super) fn spawn_drain(&self, key: &SessionKey) {
        let this = self.clone();
        let key = key.clone();
        tokio::spawn(async move {
            if let Err(e) = this.start_queued(&key, None).await {
                tracing::debug!(session = %key, error = %e, "the queue did not go on");
            }
        });
    }

    /// Starts queued turn `which` (the first when `None`) if no turn runs. A turn that cannot
    /// start (its files gone, the agent refusing) leaves the queue, said in a notice.
    async fn start_queued(&self, key: &SessionKey, which: Option<&str>) -> Result<()> {
        let _guard = self.lock(key).await?;
        let (item, provider) = {
            let st = self.state();
            let e = st.announced(key)?;
            if e.rec.session.active_turn_id.is_some() {
                return Ok(());
            }
            let item = match which {
                Some(id) => e.rec.queue.iter().find(|q| q.turn_id == id).cloned().ok_or_else(|| not_queued(id))?,
                None => match e.rec.queue.first() {
                    Some(q) => q.clone(),
                    None => return Ok(()),
                },
            };
            (item, e.rec.session.provider.clone())
        };
        let adapter = self.adapter(&provider)?;
        // A reached budget holds the queue (it goes on once the budget is raised and a turn ends,
        // or a queued turn is sent by hand).
        self.check_budget(key)?;
        let started = async {
            let session = self.ensure_live_locked(key, &adapter).await?;
            let prompt = super::input::reprompt(&self.inner.config.attachments, &session, &item.input)?;
            let resolved = super::input::Resolved { stored: item.input.clone(), prompt };
            self.begin_locked(
                key,
                &adapter,
                &session,
                item.turn_id.clone(),
                resolved,
                item.client_submit_id.clone(),
                Some(&item.turn_id),
            )
            .await
        }
        .await;
        if let Err(e) = &started
            && self.queue(key).is_ok_and(|q| q.iter().any(|q| q.turn_id == item.turn_id))
        {
            // Not started: it leaves the queue (else it would block every turn behind it).
            let message = format!("queued turn {} could not start: {e}", item.turn_id);
            let _ = self
                .publish_with(key, Persist::Always, |b| {
                    b.entry.rec.queue.retain(|q| q.turn_id != item.turn_id);
                    b.queue_updated("failed");
                    b.emit(None, EventBody::Notice(NoticePayload { level: NoticeLevel::Warning, message }));
                    Ok(())
                })
                .await;
        }
        started.map(drop)
    }
}
