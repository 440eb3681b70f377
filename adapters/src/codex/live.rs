//! One codex thread's live session (a session's own thread, or a side conversation's fork): its
//! turn state, the notifications and server requests the router hands it, and the turn operations
//! (start, cancel, steer, answer).

use std::collections::HashMap;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex};
use std::time::Duration;

use ensemble_core::adapter::Prompt;
use ensemble_core::adapter::{AdapterError, EventSink, Fact, ProviderState, TurnRequest};
use ensemble_core::clock::new_id;
use ensemble_core::event::{
    Decision, EventBody, InteractionResolvedPayload, ResolvedBy, TurnCanceledPayload, TurnCompletedPayload,
    TurnFailedPayload,
};
use ensemble_core::goal::GoalFact;
use ensemble_core::model::{Session, SessionKey, SessionPatch};
use serde_json::Value;
use tokio::sync::Notify;

use super::config::{CodexConfig, THREAD_USED, turn_key};
use super::conn::{Conn, Routed};
use super::translate::{self, Translator};
use super::wire::{
    CollaborationMode, CollaborationSettings, ModeKind, Scope, ServerNotification, ServerRequest, ThreadIdParams,
    ThreadResponse, ThreadUnsubscribe, TurnInterrupt, TurnInterruptParams, TurnNotification, TurnStart,
    TurnStartParams, TurnStatus, TurnSteer, TurnSteerParams, UserInput,
};
use crate::kit::goals::GoalEngine;
use crate::kit::jsonrpc::{self, Incoming, RpcClient, RpcError};
use crate::kit::typed;

/// The process connection a thread lives on.
pub(super) type LiveConn = Conn<Live>;

/// One codex thread: a session's own, or a side conversation's fork.
pub(super) struct Live {
    pub(super) key: SessionKey,
    pub(super) sink: EventSink,
    /// Durable per-session state: whether the thread has run a turn ([`THREAD_USED`]).
    pub(super) provider_state: ProviderState,
    /// [`THREAD_USED`] is recorded for this process's thread.
    thread_used: AtomicBool,
    pub(super) conn: Arc<LiveConn>,
    thread_id: Mutex<Option<String>>,
    /// The thread's model as codex reports it (collaboration modes need it).
    model: Mutex<Option<String>>,
    /// Codex's models (`model/list`): the choices of the session's config options.
    models: Mutex<Vec<super::wire::Model>>,
    /// A side conversation's fork (it shares its source's process).
    pub(super) side: bool,
    /// No longer routed (a closed side): its process may live on for others.
    detached: AtomicBool,
    state: Mutex<TurnState>,
    /// The goal state machine of this thread.
    pub(super) goals: Arc<GoalEngine>,
    /// Serialises emitting with the release of an attributed turn's buffer.
    emit_gate: tokio::sync::Mutex<()>,
    /// How long a turn codex starts by itself waits for evidence of its goal operation.
    goal_grace: Duration,
}

#[derive(Default)]
pub(super) struct TurnState {
    pub(super) active: Option<ActiveTurn>,
    /// Turns codex started by itself that wait to learn which goal operation they belong to: their
    /// events wait here (even past the turn's end) so that `turn.started`, with its origin, is first.
    attributing: HashMap<String, Vec<EventBody>>,
    translator: Translator,
    pub(super) pending: HashMap<String, PendingRequest>,
}

pub(super) struct ActiveTurn {
    /// Ensemble's turn id.
    ours: String,
    /// Codex's turn id, once known.
    provider: Option<String>,
    /// Codex announced the turn (`turn/started`): only from then on does it accept
    /// `turn/interrupt` (before, it answers "no active turn to interrupt").
    started: bool,
    /// Cancel was asked before codex announced the turn.
    interrupt_queued: bool,
    ended: Arc<Notify>,
}

pub(super) struct PendingRequest {
    rpc_id: Value,
    request: ServerRequest,
}

impl Live {
    /// A thread's live session on `conn`; a side's fork comes with its thread (`side`).
    pub(super) fn new(
        key: SessionKey,
        sink: EventSink,
        provider_state: ProviderState,
        goals: Arc<GoalEngine>,
        conn: Arc<LiveConn>,
        side: Option<&str>,
        goal_grace: Duration,
    ) -> Arc<Self> {
        Arc::new(Self {
            key,
            sink,
            provider_state,
            // An ephemeral fork has no rollout to protect.
            thread_used: AtomicBool::new(side.is_some()),
            conn,
            thread_id: Mutex::new(side.map(str::to_owned)),
            model: Mutex::new(None),
            models: Mutex::new(Vec::new()),
            side: side.is_some(),
            detached: AtomicBool::new(false),
            state: Mutex::new(TurnState::default()),
            goals,
            emit_gate: tokio::sync::Mutex::new(()),
            goal_grace,
        })
    }
    pub(super) fn state(&self) -> std::sync::MutexGuard<'_, TurnState> {
        self.state.lock().unwrap_or_else(|e| e.into_inner())
    }

    pub(super) fn thread(&self) -> Option<String> {
        self.thread_id.lock().ok().and_then(|t| t.clone())
    }

    /// Binds this session to a thread and routes the thread's messages to it.
    pub(super) fn set_thread(self: &Arc<Self>, id: &str) {
        if let Ok(mut t) = self.thread_id.lock() {
            *t = Some(id.to_owned());
        }
        self.goals.set_thread(id);
        self.conn.register(id, self);
    }

    /// Asks codex for its models (the choices of the session's options); failure leaves none.
    pub(super) async fn list_models(&self, timeout: Duration) {
        match crate::kit::typed::call::<super::wire::ModelList>(self.rpc(), &Default::default(), timeout).await {
            Ok(list) => {
                if let Ok(mut m) = self.models.lock() {
                    *m = list.data;
                }
            }
            Err(e) => tracing::debug!(session = %self.key, error = %e, "model/list failed"),
        }
    }

    pub(super) fn models(&self) -> Vec<super::wire::Model> {
        self.models.lock().map(|m| m.clone()).unwrap_or_default()
    }

    /// The model codex runs the thread with, as its thread/start or resume said.
    pub(super) fn thread_model(&self) -> Option<String> {
        self.model.lock().ok().and_then(|m| m.clone())
    }

    pub(super) fn remember_model(&self, thread_response: &ThreadResponse) {
        if let Some(m) = &thread_response.model
            && let Ok(mut model) = self.model.lock()
        {
            *model = Some(m.clone());
        }
    }

    pub(super) fn rpc(&self) -> &RpcClient {
        &self.conn.rpc
    }

    /// Whether this thread can take requests.
    pub(super) fn is_live(&self) -> bool {
        !self.detached.load(Ordering::SeqCst) && !self.conn.rpc.is_closed()
    }

    /// Answers every pending request negatively (close, disconnect, replacement).
    pub(super) async fn reject_pending(&self) {
        let pending: Vec<PendingRequest> = self.state().pending.drain().map(|(_, p)| p).collect();
        for p in pending {
            let result = translate::answer(&p.request, Decision::Cancel, None);
            let _ = typed::respond(self.rpc(), p.rpc_id, &result).await;
        }
    }

    /// Ends this thread's live side: a side unsubscribes its fork and leaves the shared process
    /// running; the owner stops the process.
    pub(super) async fn stop(&self, config: &CodexConfig) {
        self.detached.store(true, Ordering::SeqCst);
        let thread = self.thread();
        if self.side {
            if let Some(t) = &thread {
                self.conn.deregister(t);
                let params = ThreadIdParams { thread_id: t.clone() };
                if !self.conn.rpc.is_closed()
                    && let Err(e) =
                        typed::call_discarding::<ThreadUnsubscribe>(self.rpc(), &params, config.call_timeout).await
                {
                    tracing::debug!(session = %self.key, error = %e, "thread/unsubscribe failed");
                }
            }
            self.wake_waiters();
        } else {
            self.conn.stop(config).await;
        }
    }

    /// Closes what the active turn has open (messages with their text so far, calls as
    /// interrupted): codex will never complete them once its process is gone.
    pub(super) fn close_open_items(&self) -> Vec<Fact> {
        let mut st = self.state();
        let turn = st.active.as_ref().map(|a| a.ours.clone());
        st.translator.close_open_items().into_iter().map(|body| Fact::Event { turn_id: turn.clone(), body }).collect()
    }

    pub(super) async fn emit(&self, turn: Option<String>, events: Vec<EventBody>) {
        if events.is_empty() {
            return;
        }
        let _gate = self.emit_gate.lock().await;
        {
            let mut st = self.state();
            if let Some(buffer) = turn.as_ref().and_then(|t| st.attributing.get_mut(t)) {
                buffer.extend(events);
                return;
            }
        }
        self.sink.emit_many(events.into_iter().map(|e| (turn.clone(), e)).collect()).await;
    }

    /// Decides which goal operation a turn codex started by itself belongs to, then announces it
    /// (`turn.started` with its origin) and releases what the turn produced meanwhile.
    async fn attribute(self: Arc<Self>, ours: String, provider_turn: String) {
        let identity = self.goals.attribute(&provider_turn, self.goal_grace).await;
        let _gate = self.emit_gate.lock().await;
        let buffered = self.state().attributing.remove(&ours).unwrap_or_default();
        let started = ensemble_core::goal::provider_turn_started(&ours, identity.as_ref());
        let mut facts = vec![Fact::Event { turn_id: Some(ours.clone()), body: EventBody::TurnStarted(started) }];
        if identity.is_none() {
            facts.push(Fact::Goal(GoalFact::ReconcileRequired {
                reason: "unproven_continuation".into(),
                provider_turn_id: Some(provider_turn),
            }));
        }
        facts.extend(buffered.into_iter().map(|body| Fact::Event { turn_id: Some(ours.clone()), body }));
        self.sink.send(facts).await;
    }

    /// Sends `turn/interrupt` for a provider turn (in the background: the caller holds no lock).
    pub(super) fn send_interrupt(self: &Arc<Self>, provider_turn: String, timeout: Duration) {
        let me = self.clone();
        tokio::spawn(async move {
            let Some(thread_id) = me.thread() else { return };
            let params = TurnInterruptParams { thread_id, turn_id: provider_turn };
            if let Err(e) = typed::call_discarding::<TurnInterrupt>(me.rpc(), &params, timeout).await {
                tracing::warn!(session = %me.key, error = %e, "turn/interrupt failed");
            }
        });
    }

    /// Our turn id for a provider turn id, binding an unbound active turn on first sight.
    pub(super) fn our_turn(self: &Arc<Self>, provider: Option<&str>) -> Option<String> {
        let provider = provider?;
        let mut st = self.state();
        let a = st.active.as_mut()?;
        match &a.provider {
            Some(p) if p == provider => Some(a.ours.clone()),
            Some(_) => None,
            None => {
                a.provider = Some(provider.to_owned());
                Some(a.ours.clone())
            }
        }
    }

    /// `turn/started` for our active turn: it can be interrupted now; send a queued interrupt.
    fn turn_announced(self: &Arc<Self>, provider: &str, timeout: Duration) -> Option<String> {
        let ours = self.our_turn(Some(provider))?;
        let queued = {
            let mut st = self.state();
            let Some(a) = st.active.as_mut() else { return Some(ours) };
            a.started = true;
            std::mem::take(&mut a.interrupt_queued)
        };
        if queued {
            self.send_interrupt(provider.to_owned(), timeout);
        }
        Some(ours)
    }

    async fn on_notification(self: &Arc<Self>, method: &str, params: Value, timeout: Duration) {
        let scope = Scope::of(&params);
        if let (Some(ours), Some(theirs)) = (self.thread(), scope.thread_id)
            && ours != theirs
        {
            return;
        }
        let turn_scoped = scope.turn_id.map(str::to_owned);
        let note = ServerNotification::parse(method, params).unwrap_or_else(|e| {
            tracing::debug!(session = %self.key, method, error = %jsonrpc::redacted(&e), "unreadable notification");
            None
        });
        match note {
            Some(ServerNotification::TurnStarted(n)) => self.turn_started(n, timeout),
            Some(ServerNotification::TurnCompleted(n)) => self.turn_completed(n).await,
            Some(ServerNotification::ServerRequestResolved(n)) => {
                let resolved = {
                    let mut st = self.state();
                    let key = st.pending.iter().find(|(_, r)| n.request_id.is(&r.rpc_id)).map(|(k, _)| k.clone());
                    key.and_then(|k| st.pending.remove(&k).map(|_| k))
                };
                if let Some(request_id) = resolved {
                    let turn = self.state().active.as_ref().map(|a| a.ours.clone());
                    let body = EventBody::InteractionResolved(InteractionResolvedPayload {
                        request_id,
                        decision: Decision::Cancel,
                        resolved_by: ResolvedBy::Provider,
                        answers: None,
                    });
                    self.emit(turn, vec![body]).await;
                }
            }
            Some(ServerNotification::ThreadGoalUpdated(n)) => {
                let Some(goal) = n.goal else { return };
                self.goals.observed(translate::provider_goal(goal), n.turn_id.as_deref()).await;
            }
            Some(ServerNotification::ThreadGoalCleared(_)) => self.goals.cleared().await,
            Some(ServerNotification::ThreadNameUpdated(n)) => {
                if let Some(name) = n.thread_name.filter(|n| !n.is_empty()) {
                    self.sink.update(SessionPatch { title: Some(name), ..Default::default() }).await;
                }
            }
            other => {
                let ours = self.our_turn(turn_scoped.as_deref());
                if turn_scoped.is_some() && ours.is_none() && method.starts_with("item/") {
                    tracing::debug!(session = %self.key, method, "dropping an item of a turn that is not ours");
                    return;
                }
                let Some(note) = other else { return };
                let events = self.state().translator.notification(note);
                self.emit(ours, events).await;
            }
        }
    }

    /// `turn/started`: our turn is announced, or codex started one by itself.
    fn turn_started(self: &Arc<Self>, n: TurnNotification, timeout: Duration) {
        let id = n.turn.id;
        if self.turn_announced(&id, timeout).is_some() {
            return;
        }
        let started = {
            let mut st = self.state();
            if st.active.is_some() {
                None
            } else {
                let ours = new_id();
                st.translator.reset();
                st.active = Some(ActiveTurn {
                    ours: ours.clone(),
                    provider: Some(id.clone()),
                    started: true,
                    interrupt_queued: false,
                    ended: Arc::new(Notify::new()),
                });
                st.attributing.insert(ours.clone(), Vec::new());
                Some(ours)
            }
        };
        if let Some(ours) = started {
            // A turn codex started by itself (e.g. continuing a goal): which operation it
            // serves is decided off the read loop, with a bounded wait for evidence.
            tokio::spawn(self.clone().attribute(ours, id));
        }
    }

    /// `turn/completed`: closes what the turn left open and ends it, once.
    async fn turn_completed(&self, n: TurnNotification) {
        let turn = n.turn;
        let ended = {
            let mut st = self.state();
            let matches = st.active.as_ref().is_some_and(|a| a.provider.as_deref().is_none_or(|p| p == turn.id));
            if matches {
                let a = st.active.take();
                let mut events = st.translator.close_open_items();
                a.map(|a| {
                    let turn_id = a.ours.clone();
                    let terminal = match turn.status {
                        Some(TurnStatus::Interrupted) => {
                            EventBody::TurnCanceled(TurnCanceledPayload { turn_id, reason: "interrupted".into() })
                        }
                        Some(TurnStatus::Failed) => EventBody::TurnFailed(TurnFailedPayload {
                            turn_id,
                            error: translate::turn_error(turn.error.as_ref()),
                        }),
                        _ => EventBody::TurnCompleted(TurnCompletedPayload { turn_id }),
                    };
                    events.push(terminal);
                    (a, events)
                })
            } else {
                None
            }
        };
        if let Some((a, events)) = ended {
            self.emit(Some(a.ours.clone()), events).await;
            a.ended.notify_waiters();
        }
    }

    async fn on_request(self: &Arc<Self>, id: Value, method: &str, params: Value) {
        let request = match ServerRequest::parse(method, params) {
            Ok(Some(request)) => request,
            unknown => {
                let (code, message) = match unknown {
                    Err(e) => (-32602, format!("Ensemble cannot read `{method}`: {e}")),
                    _ => (-32601, format!("Ensemble does not handle `{method}`")),
                };
                if let Err(e) = self.rpc().respond_error(id, code, &message).await {
                    tracing::debug!(session = %self.key, error = %e, "could not answer a server request");
                }
                return;
            }
        };
        let request_id = crate::kit::ids::request_id(&self.conn.nonce, &id);
        let (payload, turn) = {
            let st = self.state();
            let payload = translate::interaction(&request, &request_id, &st.translator);
            (payload, st.active.as_ref().map(|a| a.ours.clone()))
        };
        match payload {
            Some(payload) => {
                self.state().pending.insert(request_id, PendingRequest { rpc_id: id, request });
                self.emit(turn, vec![EventBody::InteractionRequested(payload)]).await;
            }
            None => {
                // Requests Ensemble has no client for are declined at once, so codex never waits.
                let answer = translate::answer(&request, Decision::Decline, None);
                if let Err(e) = typed::respond(self.rpc(), id, &answer).await {
                    tracing::debug!(session = %self.key, error = %e, "could not answer a server request");
                }
            }
        }
    }

    /// Starts a turn (`turn/start`).
    pub(super) async fn start_turn(
        self: &Arc<Self>,
        session: &Session,
        turn: TurnRequest,
        timeout: Duration,
    ) -> Result<(), AdapterError> {
        let thread = self.thread().ok_or(AdapterError::NotLive)?;
        {
            let mut st = self.state();
            if let Some(a) = &st.active {
                return Err(AdapterError::Busy(format!("turn {} is running", a.ours)));
            }
            st.translator.reset();
            st.active = Some(ActiveTurn {
                ours: turn.turn_id.clone(),
                provider: None,
                started: false,
                interrupt_queued: false,
                ended: Arc::new(Notify::new()),
            });
        }
        // What the client picked (`PATCH …/config`), else what the session started with. Questions
        // to the user (`request_user_input`) only reach us in plan mode.
        let choice = super::modes::for_turn(session);
        let collaboration_mode = choice.plan.map(|plan| CollaborationMode {
            mode: if plan { ModeKind::Plan } else { ModeKind::Default },
            settings: CollaborationSettings {
                model: choice.model.clone().or_else(|| self.thread_model()),
                reasoning_effort: choice.effort.clone(),
                developer_instructions: None,
            },
        });
        let params = TurnStartParams {
            thread_id: thread.clone(),
            input: input_items(&turn.input),
            collaboration_mode,
            model: choice.model,
            effort: choice.effort,
        };
        match self.conn.call::<TurnStart>(&params, timeout).await {
            Ok(response) => {
                if let Some(started) = response.turn {
                    self.our_turn(Some(&started.id));
                    // A durable fork through this turn names it to codex by codex's id.
                    if let Err(e) = self.provider_state.set(&turn_key(&turn.turn_id), started.id).await {
                        tracing::warn!(session = %session.key(), error = %e, "cannot record codex's turn id");
                    }
                }
                // From now on codex has a rollout for the thread, and a resume must find it.
                if !self.thread_used.swap(true, Ordering::SeqCst)
                    && let Err(e) = self.provider_state.set(THREAD_USED, thread.clone()).await
                {
                    tracing::warn!(session = %session.key(), error = %e, "cannot record that the thread has turns");
                }
                Ok(())
            }
            Err(e) => {
                let mut st = self.state();
                if st.active.as_ref().is_some_and(|a| a.ours == turn.turn_id) {
                    st.active = None;
                }
                Err(e)
            }
        }
    }

    /// Interrupts our turn `turn_id`: now if codex has announced it, else as soon as it does.
    pub(super) fn cancel(self: &Arc<Self>, turn_id: &str, timeout: Duration) {
        let provider = {
            let mut st = self.state();
            match st.active.as_mut() {
                Some(a) if a.ours == turn_id => match &a.provider {
                    Some(p) if a.started => Some(p.clone()),
                    _ => {
                        // Codex has not announced the turn yet (`turn/started`) and would answer
                        // "no active turn to interrupt": interrupt as soon as it does.
                        a.interrupt_queued = true;
                        None
                    }
                },
                // Already over on codex's side; its terminal event is on its way.
                _ => return,
            }
        };
        if let Some(p) = provider {
            // In the background: a codex that never answers must not hold the caller (and the
            // session's lock) for the call timeout. The turn's end comes as `turn/completed`, or
            // from close, which forces it after its grace.
            self.send_interrupt(p, timeout);
        }
    }

    /// Adds input to our running turn `turn_id` (`turn/steer`).
    pub(super) async fn steer(&self, turn_id: &str, input: &[Prompt], timeout: Duration) -> Result<(), AdapterError> {
        let provider = {
            let st = self.state();
            match st.active.as_ref() {
                Some(a) if a.ours == turn_id => a.provider.clone(),
                _ => return Err(AdapterError::Invalid("that turn is not running".into())),
            }
        };
        let Some(provider) = provider else {
            return Err(AdapterError::Busy("codex has not started the turn yet; retry the steer".into()));
        };
        let thread_id = self.thread().ok_or(AdapterError::NotLive)?;
        let params = TurnSteerParams { thread_id, expected_turn_id: provider, input: input_items(input) };
        typed::call_discarding::<TurnSteer>(self.rpc(), &params, timeout).await.map_err(|e| match e {
            RpcError::Server { error, .. } => {
                AdapterError::Invalid(format!("codex refused the steer: {}", error.message))
            }
            other => AdapterError::failed("provider_error", other.to_string()),
        })
    }

    /// Answers the pending server request `request_id` with the client's decision.
    pub(super) async fn respond(
        &self,
        request_id: &str,
        decision: Decision,
        answers: Option<&Value>,
    ) -> Result<(), AdapterError> {
        let pending = self
            .state()
            .pending
            .remove(request_id)
            .ok_or_else(|| AdapterError::UnknownInteraction(request_id.to_owned()))?;
        let result = translate::answer(&pending.request, decision, answers);
        typed::respond(self.rpc(), pending.rpc_id, &result)
            .await
            .map_err(|e| AdapterError::failed("provider_error", e.to_string()))
    }

    /// Whether a turn or an interaction is pending.
    pub(super) fn busy(&self) -> bool {
        let st = self.state();
        st.active.is_some() || !st.pending.is_empty()
    }

    /// Our running turn, and what is notified when it ends.
    pub(super) fn active_turn(&self) -> Option<(String, Arc<Notify>)> {
        self.state().active.as_ref().map(|a| (a.ours.clone(), a.ended.clone()))
    }
}

impl Routed for Live {
    fn thread_id(&self) -> Option<String> {
        self.thread()
    }

    async fn handle(self: Arc<Self>, msg: Incoming, timeout: Duration) {
        match msg {
            Incoming::Notification { method, params } => self.on_notification(&method, params, timeout).await,
            Incoming::Request { id, method, params } => self.on_request(id, &method, params).await,
            Incoming::Response { .. } => {}
        }
    }

    async fn process_ended(self: Arc<Self>, lost: Option<String>) {
        if let Some(reason) = lost
            && !self.detached.swap(true, Ordering::SeqCst)
        {
            tracing::warn!(session = %self.key, %reason, "codex process lost");
            let mut facts = self.close_open_items();
            facts.push(Fact::Lost { reason });
            self.sink.send(facts).await;
        }
        self.wake_waiters();
    }

    fn wake_waiters(&self) {
        let ended = self.state().active.as_ref().map(|a| a.ended.clone());
        if let Some(n) = ended {
            n.notify_waiters();
        }
    }
}

/// A turn's input as codex takes it: an image as `localImage` (codex reads it: from the
/// workspace, or where the server keeps the images it was sent); a file as a mention of its path
/// in the text (codex reads the workspace itself).
fn input_items(input: &[Prompt]) -> Vec<UserInput> {
    input
        .iter()
        .map(|i| match i {
            Prompt::Text(t) => UserInput::text(t.as_str()),
            // A file of the workspace is read by codex there; the server's own copy is not in
            // codex's box, so it goes as a `data:` URL.
            Prompt::Image(image) => match &image.path {
                Some(p) => UserInput::LocalImage { path: p.to_string_lossy().into_owned() },
                None => UserInput::Image { url: data_url(&image.mime_type, &image.data) },
            },
            Prompt::File(f) => UserInput::text(format!("(attached file: {})", f.path.display())),
        })
        .collect()
}

/// `data:<mime>;base64,<data>`.
fn data_url(mime: &str, data: &[u8]) -> String {
    use base64::Engine;
    format!("data:{mime};base64,{}", base64::engine::general_purpose::STANDARD.encode(data))
}

impl crate::kit::sessions::Liveness for Live {
    fn is_live(&self) -> bool {
        Live::is_live(self)
    }
}
