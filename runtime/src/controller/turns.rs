//! Turns: submit (and steer), cancel, and answers to interactions.

use std::time::Duration;

use serde_json::Value;

use super::Controller;
use super::error::{ControllerError, Result};
use super::publish::Persist;
use super::requests::{SubmitTurn, TurnAccepted};
use ensemble_core::adapter::{AdapterError, TurnRequest};
use ensemble_core::clock::new_id;
use ensemble_core::event::{
    Decision, ErrorInfo, EventBody, InteractionKind, InteractionResolvedPayload, ResolvedBy, TurnCanceledPayload,
    TurnFailedPayload, TurnStartedPayload, TurnSteeredPayload,
};
use ensemble_core::limits::{FieldError, check_bytes, check_id};
use ensemble_core::model::{InputItem, SessionKey};

impl Controller {
    /// Submits a turn (or steers the active one), apart from the caller ([`Self::detached`]).
    pub async fn submit_turn(&self, key: &SessionKey, req: SubmitTurn) -> Result<TurnAccepted> {
        let (this, key) = (self.clone(), key.clone());
        self.detached(async move { this.submit_turn_here(&key, req).await }).await
    }

    async fn submit_turn_here(&self, key: &SessionKey, req: SubmitTurn) -> Result<TurnAccepted> {
        self.check_accepting()?;
        super::input::check(&req.input, self.inner.config.max_input_bytes)?;
        let client_submit_id = req.client_submit_id.clone();
        if let Some(c) = &client_submit_id {
            check_id("clientSubmitId", c).map_err(FieldError::in_body)?;
        }
        let _guard = self.lock(key).await?;
        // What decides the route, read in one look (the whole session is copied only where an
        // adapter needs it: a copy per submit was a sixteenth of the request threads' time).
        let (provider, active, waiting) = {
            let st = self.state();
            let e = st.announced(key)?;
            if let Some(csid) = &client_submit_id
                && let Some(turn) = e.rec.submitted_turn(csid)
            {
                let queued = e.rec.queue.iter().any(|q| q.turn_id == turn);
                return Ok(TurnAccepted { turn_id: turn.to_owned(), duplicate: true, steered: false, queued });
            }
            // Refused at once: the agent would only retry its model API for a long while.
            if e.rec.session.auth_state == Some(ensemble_core::model::AuthState::AuthRequired) {
                let message = e.rec.session.auth_message.clone().unwrap_or_else(|| {
                    format!("provider `{}` needs a login before it can run a turn", e.rec.session.provider)
                });
                return Err(ControllerError::AuthRequired(message));
            }
            (e.rec.session.provider.clone(), e.rec.session.active_turn_id.clone(), !e.rec.queue.is_empty())
        };
        let adapter = self.adapter(&provider)?;
        // Behind the running turn, or behind others already waiting (their order is kept), or
        // until a reached budget is raised.
        if req.queue && (active.is_some() || waiting || self.check_budget(key).is_err()) {
            return self.enqueue(key, &adapter, req.input, client_submit_id).await;
        }
        if let Some(active) = active {
            if !(req.steer && adapter.capabilities().steer) {
                return Err(ControllerError::TurnActive(active));
            }
            let current = self.snapshot(key)?;
            let resolved = self.resolve_input(&adapter, &current, req.input)?;
            adapter.steer(&current, &active, resolved.prompt).await?;
            let input = resolved.stored;
            self.publish_with(key, Persist::Always, |b| {
                if let Some(csid) = &client_submit_id {
                    b.entry.rec.remember_submit(csid, &active);
                }
                b.emit(
                    Some(active.clone()),
                    EventBody::TurnSteered(TurnSteeredPayload {
                        turn_id: active.clone(),
                        input,
                        client_submit_id: client_submit_id.clone(),
                    }),
                );
                Ok(())
            })
            .await?
            .durable()
            .await?;
            return Ok(TurnAccepted { turn_id: active, duplicate: false, steered: true, queued: false });
        }
        self.check_budget(key)?;
        let session = self.ensure_live_locked(key, &adapter).await?;
        // Once live: an agent may say which input it takes only in its handshake.
        let resolved = self.resolve_input(&adapter, &session, req.input)?;
        self.begin_locked(key, &adapter, &session, new_id(), resolved, client_submit_id, None).await
    }

    /// Starts turn `turn_id` with `resolved` input, the session's lock held and the session live.
    /// `dequeued`: the queued turn it is (taken off the queue in the same fold).
    #[expect(clippy::too_many_arguments, reason = "one call site each; a struct would only rename them")]
    pub(super) async fn begin_locked(
        &self,
        key: &SessionKey,
        adapter: &std::sync::Arc<dyn ensemble_core::adapter::Adapter>,
        session: &ensemble_core::model::Session,
        turn_id: String,
        resolved: super::input::Resolved,
        client_submit_id: Option<String>,
        dequeued: Option<&str>,
    ) -> Result<TurnAccepted> {
        let input = resolved.stored;
        self.publish_with(key, Persist::Always, |b| {
            if let Some(active) = &b.entry.rec.session.active_turn_id {
                return Err(ControllerError::TurnActive(active.clone()));
            }
            if let Some(q) = dequeued {
                b.entry.rec.queue.retain(|t| t.turn_id != q);
                b.queue_updated("started");
            }
            b.entry.rec.begin_turn(&turn_id, client_submit_id.as_deref(), b.now);
            // A session started without a title is named by its first turn's words.
            let untitled = matches!(b.entry.rec.session.title.trim(), "" | ensemble_core::model::DEFAULT_TITLE);
            let title = untitled.then(|| super::config_ops::title_from(&input)).flatten();
            b.emit(
                Some(turn_id.clone()),
                EventBody::TurnStarted(TurnStartedPayload::user(&turn_id, input, client_submit_id.clone())),
            );
            if let Some(title) = title {
                b.entry.rec.session.title = title;
                b.updated_by(Some(turn_id.clone()), "titled");
            }
            Ok(())
        })
        .await?
        .durable()
        .await?;
        // Before the agent starts: what the turn changes is measured from here.
        // Boxed: see `prepare_workspace`'s call.
        Box::pin(self.checkpoint_before(key, session, &turn_id)).await;
        let request = TurnRequest { turn_id: turn_id.clone(), input: resolved.prompt, client_submit_id };
        if let Err(err) = adapter.start_turn(session, request).await {
            let (code, message) = (err.code().to_owned(), err.to_string());
            self.publish_with(key, Persist::IfChanged, |b| {
                if b.entry.rec.session.active_turn_id.as_deref() == Some(turn_id.as_str()) {
                    b.emit(
                        Some(turn_id.clone()),
                        EventBody::TurnFailed(TurnFailedPayload {
                            turn_id: turn_id.clone(),
                            error: ErrorInfo::new(&code, message),
                        }),
                    );
                }
                Ok(())
            })
            .await?
            .durable()
            .await?;
            return Err(err.into());
        }
        Ok(TurnAccepted { turn_id, duplicate: false, steered: false, queued: false })
    }

    /// A turn's input checked against what the session's provider takes, its images and files
    /// read (see [`super::input`]).
    pub(super) fn resolve_input(
        &self,
        adapter: &std::sync::Arc<dyn ensemble_core::adapter::Adapter>,
        session: &ensemble_core::model::Session,
        input: Vec<InputItem>,
    ) -> Result<super::input::Resolved> {
        if input.iter().all(|i| matches!(i, InputItem::Text { .. })) {
            let prompt = input.iter().map(|i| ensemble_core::adapter::Prompt::Text(i.text().to_owned())).collect();
            return Ok(super::input::Resolved { stored: input, prompt });
        }
        let kinds = adapter.input_kinds(session);
        super::input::resolve(&self.inner.config.attachments, session, &kinds, input)
    }

    /// Interrupts the active turn. Returns its id.
    pub async fn cancel(&self, key: &SessionKey) -> Result<String> {
        let _guard = self.lock(key).await?;
        let session = self.snapshot(key)?;
        let turn = session.active_turn_id.clone().ok_or(ControllerError::NoActiveTurn)?;
        let adapter = self.adapter(&session.provider)?;
        let live = session.live && adapter.is_live(&session);
        // Before the agent is asked: its `turn.canceled` may come before the answer does.
        let asked_by = crate::actor::current();
        let remember = |asked: Option<(String, std::sync::Arc<crate::actor::Actor>)>| {
            if let Some(e) = self.state().sessions.get_mut(key) {
                e.cancel_asked = asked;
            }
        };
        if live && let Some(by) = &asked_by {
            remember(Some((turn.clone(), by.clone())));
        }
        let reach = if live { adapter.cancel(&session, &turn).await } else { Err(AdapterError::NotLive) };
        if live && asked_by.is_some() && reach.is_err() {
            remember(None);
        }
        match reach {
            Ok(()) => Ok(turn),
            Err(AdapterError::NotLive) => {
                // Nobody can end this turn but us.
                self.cancel_turn_here(key, &turn, "canceled").await?;
                Ok(turn)
            }
            Err(e) => Err(e.into()),
        }
    }

    pub(super) async fn cancel_turn_here(&self, key: &SessionKey, turn: &str, reason: &str) -> Result<()> {
        self.publish_with(key, Persist::IfChanged, |b| {
            if b.entry.rec.session.active_turn_id.as_deref() == Some(turn) {
                let canceled = TurnCanceledPayload { turn_id: turn.to_owned(), reason: reason.into() };
                b.end_turn(turn, EventBody::TurnCanceled(canceled));
            }
            Ok(())
        })
        .await?
        .durable()
        .await
    }

    pub(super) fn active_turn(&self, key: &SessionKey) -> Option<String> {
        self.state().sessions.get(key).and_then(|e| e.rec.session.active_turn_id.clone())
    }

    /// Waits up to `grace` for the session's active turn to end.
    pub(super) async fn wait_turn_end(&self, key: &SessionKey, grace: Duration) -> bool {
        let deadline = tokio::time::Instant::now() + grace;
        loop {
            let Some(notify) = self.state().sessions.get(key).map(|e| e.turn_ended.clone()) else {
                return true;
            };
            let notified = notify.notified();
            tokio::pin!(notified);
            notified.as_mut().enable();
            if self.active_turn(key).is_none() {
                return true;
            }
            if tokio::time::timeout_at(deadline, notified).await.is_err() {
                return self.active_turn(key).is_none();
            }
        }
    }

    /// Answers a pending interaction.
    pub async fn answer(
        &self,
        key: &SessionKey,
        request_id: &str,
        decision: Decision,
        answers: Option<Value>,
        option_id: Option<String>,
    ) -> Result<()> {
        check_id("requestId", request_id)?;
        if let Some(o) = &option_id {
            check_id("optionId", o)?;
        }
        if let Some(a) = &answers {
            check_bytes("answers", a.to_string().len(), self.inner.config.max_input_bytes)?;
        }
        let session = self.snapshot(key)?;
        let adapter = self.adapter(&session.provider)?;
        if !adapter.capabilities().interactive {
            return Err(ControllerError::InteractionNotFound(request_id.to_owned()));
        }
        adapter.check_answer(&session, request_id, decision, answers.as_ref())?;
        let rid = request_id.to_owned();
        let ans = answers.clone();
        // Resolve first, under the state lock: a second answer (even a concurrent one) sees the
        // request resolved and gets 409, and `interaction.resolved` precedes whatever the answer
        // causes the provider to do.
        self.publish_with(key, Persist::IfChanged, |b| {
            let Some(pending) = b.entry.rec.pending_interaction(&rid) else {
                return Err(if b.entry.rec.was_resolved(&rid) {
                    ControllerError::InteractionResolved(rid.clone())
                } else {
                    ControllerError::InteractionNotFound(rid.clone())
                });
            };
            if !pending.request.options.contains(&decision) {
                let allowed: Vec<&str> = pending.request.options.iter().map(|d| d.as_str()).collect();
                return Err(ControllerError::InvalidDecision(format!(
                    "decision `{}` is not one of {}",
                    decision.as_str(),
                    allowed.join(", ")
                )));
            }
            if let Some(id) = &option_id {
                let Some(option) = pending.request.agent_options.iter().find(|o| o.option_id == *id) else {
                    return Err(ControllerError::InvalidDecision(format!("the request offers no option `{id}`")));
                };
                if option.decision != decision {
                    return Err(ControllerError::InvalidDecision(format!(
                        "option `{id}` is a `{}` decision, not `{}`",
                        option.decision.as_str(),
                        decision.as_str()
                    )));
                }
            }
            if pending.request.kind == InteractionKind::UserInput && decision.accepts() && ans.is_none() {
                return Err(ControllerError::InvalidDecision("a userInput request needs `answers`".into()));
            }
            let turn = pending.turn_id.clone();
            b.emit(
                turn,
                EventBody::InteractionResolved(InteractionResolvedPayload {
                    request_id: rid.clone(),
                    decision,
                    resolved_by: ResolvedBy::Client,
                    answers: ans,
                }),
            );
            Ok(())
        })
        .await?;
        adapter.respond(&session, request_id, decision, answers, option_id.as_deref()).await?;
        Ok(())
    }
}
