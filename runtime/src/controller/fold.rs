//! The fold: a session's entry in the registry and the [`Batch`] that folds events into it.
//! Every change of session state happens through a `Batch`, inside `Controller::publish_with`.

use std::collections::{HashMap, VecDeque};
use std::sync::Arc;
use std::sync::atomic::{AtomicU64, Ordering};

use bytes::Bytes;
use tokio::sync::{Notify, oneshot};

use super::error::{ControllerError, Result};
use super::open_items::OpenItems;
use crate::session::{Phase, SessionRecord};
use crate::store::StoreError;
use ensemble_core::adapter::Fact;
use ensemble_core::clock::new_id;
use ensemble_core::event::{
    ErrorInfo, EventBody, NewEvent, NoticeLevel, NoticePayload, ResolvedBy, SessionCompletedPayload,
    SessionUpdatedPayload, TurnFailedPayload,
};
use ensemble_core::model::{Scope, Session, SessionKey};

/// Durability of a publication: resolves once its events are committed.
pub struct Published(pub(super) Option<oneshot::Receiver<Result<u64, StoreError>>>);

impl Published {
    pub async fn durable(self) -> Result<()> {
        match self.0 {
            None => Ok(()),
            Some(rx) => match rx.await {
                Ok(r) => r.map(|_| ()).map_err(Into::into),
                Err(_) => Err(StoreError::Closed.into()),
            },
        }
    }
}

/// Whether clients may see a session: a start or side open in flight reserves its key first and
/// announces it only once the provider succeeded.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(super) enum Visibility {
    Reserved,
    Announced,
}

pub(super) struct Entry {
    pub(super) rec: SessionRecord,
    /// Identifies the current live provider session; facts of older ones are dropped.
    pub(super) generation: u64,
    /// While the provider side starts or resumes, its facts wait here until the controller has
    /// announced the session, so nothing overtakes `session.started`/`session.updated`.
    pub(super) buffer: Option<EarlyFacts>,
    /// False until `session.started` is published: such a session is invisible and leaves no
    /// residue if its start fails.
    pub(super) announced: bool,
    pub(super) turn_ended: Arc<Notify>,
    /// Side conversations only: their events, kept in memory (never in the room log).
    pub(super) side_log: Option<SideLog>,
    /// When the session last published anything (clock ms): idle release measures from here.
    pub(super) last_active_ms: i64,
    /// What the current turn has open, closed by the controller when it ends the turn itself.
    pub(super) open: OpenItems,
    /// The agent's latest plan and commands (memory only: a session's present, not its record).
    pub(super) plan: Option<Box<ensemble_core::present::CurrentPlan>>,
    pub(super) commands: ensemble_core::shared_list::SharedList<ensemble_core::event::CommandInfo>,
    /// The turn a request asked the agent to cancel, and who asked: the agent's `turn.canceled`
    /// comes later, outside that request, and is theirs.
    pub(super) cancel_asked: Option<(String, Arc<crate::actor::Actor>)>,
    /// How [`State::counts`] counts this entry now.
    counted: Class,
}

impl Entry {
    pub(super) fn new(rec: SessionRecord, generation: u64, buffer: Option<EarlyFacts>, visibility: Visibility) -> Self {
        let side_log = (rec.session.scope == Scope::Side).then(SideLog::default);
        let last_active_ms = rec.session.updated_at_ms;
        Self {
            rec,
            generation,
            buffer,
            announced: visibility == Visibility::Announced,
            turn_ended: Arc::new(Notify::new()),
            side_log,
            last_active_ms,
            open: OpenItems::default(),
            plan: None,
            commands: Default::default(),
            cancel_asked: None,
            counted: Class::default(),
        }
    }
}

/// What an agent sends while its session starts, resumes or opens, held for the announcement.
/// Bounded by bytes (`start_buffer_bytes`): nothing reads an agent's output back while it waits
/// here, and the adapter cannot be held back (its start's own answer comes through the same
/// reader), so events beyond the bound are dropped and a warning says how many.
#[derive(Default)]
pub(super) struct EarlyFacts {
    facts: Vec<Fact>,
    bytes: usize,
    dropped: usize,
}

impl EarlyFacts {
    /// Holds `facts` (whose events weigh `bytes`), or, past `cap`, only those that are not events.
    /// Once one batch is dropped every later event is too, so what is kept is the start of what
    /// the agent said, without a hole in it.
    pub(super) fn hold(&mut self, facts: Vec<Fact>, bytes: usize, cap: usize) {
        if self.dropped == 0 && self.bytes + bytes <= cap {
            self.bytes += bytes;
            self.facts.extend(facts);
            return;
        }
        for fact in facts {
            match fact {
                Fact::Event { .. } => self.dropped += 1,
                other => self.facts.push(other),
            }
        }
    }

    /// The facts in order, and a warning after them if events were dropped.
    pub(super) fn into_facts(self) -> Vec<Fact> {
        let mut facts = self.facts;
        if self.dropped > 0 {
            let message = format!(
                "{} events the agent sent before its session was ready were dropped (beyond the {} bytes \
                 held until then)",
                self.dropped, self.bytes
            );
            facts.push(Fact::Event {
                turn_id: None,
                body: EventBody::Notice(NoticePayload { level: NoticeLevel::Warning, message }),
            });
        }
        facts
    }
}

/// The ephemeral event log of one side conversation: a per-side `seq` from 1, gap-free, bounded
/// by count and by bytes (the oldest go first).
#[derive(Default)]
pub(super) struct SideLog {
    pub(super) next_seq: u64,
    pub(super) events: VecDeque<(u64, Bytes)>,
    /// What `events` holds.
    pub(super) bytes: usize,
}

#[derive(Default)]
pub(super) struct State {
    /// Add and remove entries with [`State::insert`] / [`State::remove`], and after changing an
    /// entry's phase call [`State::recount`], so the counts stay true.
    ///
    /// Entries are boxed: an `Entry` is 912 bytes, and each time the map grew it moved every
    /// one of them (a tenth of the request threads' CPU in a profile of 40,000 session starts);
    /// boxed, the map's spare capacity costs a pointer per slot.
    pub(super) sessions: HashMap<SessionKey, Box<Entry>>,
    counts: Counts,
}

/// What the session limits count, kept as sessions come, go and change phase: a scan of every
/// session per start cost a start O(sessions) under the state lock, which dominated a profile of
/// starts with many sessions.
#[derive(Default, Debug, PartialEq)]
pub(super) struct Counts {
    pub(super) open: usize,
    pub(super) open_by_room: HashMap<String, usize>,
    pub(super) live: usize,
}

/// How one entry is counted.
#[derive(Clone, Copy, Default, PartialEq, Debug)]
pub(super) struct Class {
    open: bool,
    live: bool,
}

impl Class {
    fn of(e: &Entry) -> Self {
        Self {
            open: e.rec.phase != Phase::Completed,
            live: e.rec.session.scope == Scope::Canonical && matches!(e.rec.phase, Phase::Live | Phase::Starting),
        }
    }
}

impl Counts {
    /// Brings the counts up to date with an entry whose phase may have changed.
    pub(super) fn recount(&mut self, e: &mut Entry) {
        let now = Class::of(e);
        if now != e.counted {
            self.add(&e.rec.session.room_id, e.counted, -1);
            self.add(&e.rec.session.room_id, now, 1);
            e.counted = now;
        }
    }

    fn add(&mut self, room: &str, c: Class, sign: isize) {
        let bump = |n: &mut usize| *n = n.saturating_add_signed(sign);
        if c.open {
            bump(&mut self.open);
            match self.open_by_room.get_mut(room) {
                Some(n) => {
                    bump(n);
                    if *n == 0 {
                        self.open_by_room.remove(room);
                    }
                }
                None if sign > 0 => {
                    self.open_by_room.insert(room.to_owned(), 1);
                }
                None => {}
            }
        }
        if c.live {
            bump(&mut self.live);
        }
    }

    /// The counts from scratch (test builds compare them with the kept ones).
    #[cfg(debug_assertions)]
    pub(super) fn scan(sessions: &HashMap<SessionKey, Box<Entry>>) -> Self {
        let mut c = Self::default();
        for e in sessions.values() {
            c.add(&e.rec.session.room_id, Class::of(e), 1);
        }
        c
    }
}

impl State {
    /// Empty, its table made ready for `max_sessions` ([`ensemble_core::model::session_table`]).
    pub(super) fn with_capacity(max_sessions: usize) -> Self {
        Self { sessions: ensemble_core::model::session_table(max_sessions), counts: Counts::default() }
    }

    pub(super) fn insert(&mut self, key: SessionKey, mut entry: Entry) {
        entry.counted = Class::of(&entry);
        self.counts.add(&entry.rec.session.room_id, entry.counted, 1);
        if let Some(old) = self.sessions.insert(key, Box::new(entry)) {
            self.counts.add(&old.rec.session.room_id, old.counted, -1);
        }
    }

    pub(super) fn remove(&mut self, key: &SessionKey) -> Option<Entry> {
        let old = self.sessions.remove(key)?;
        self.counts.add(&old.rec.session.room_id, old.counted, -1);
        Some(*old)
    }

    /// Brings the counts up to date with an entry whose phase may have changed.
    pub(super) fn recount(&mut self, key: &SessionKey) {
        if let Some((e, counts)) = self.counted_mut(key) {
            counts.recount(e);
        }
    }

    /// An entry and the counts, to change its phase and then [`Counts::recount`] it without a
    /// second lookup.
    pub(super) fn counted_mut(&mut self, key: &SessionKey) -> Option<(&mut Entry, &mut Counts)> {
        let Self { sessions, counts } = self;
        sessions.get_mut(key).map(|e| (&mut **e, counts))
    }

    pub(super) fn counts(&self) -> &Counts {
        // Test runs check the kept counts against a scan (bounded: some tests hold 10,000s).
        #[cfg(debug_assertions)]
        if self.sessions.len() <= 2_000 {
            assert_eq!(self.counts, Counts::scan(&self.sessions), "session counts drifted");
        }
        &self.counts
    }

    /// A session clients may see: reserved-but-unannounced ones (a start or side open in flight)
    /// are not found.
    pub(super) fn announced(&self, key: &SessionKey) -> Result<&Entry> {
        self.sessions
            .get(key)
            .map(|e| &**e)
            .filter(|e| e.announced)
            .ok_or_else(|| ControllerError::SessionNotFound(key.session_id.clone()))
    }
}

/// Collects the events of one publication, folding each into the session as it goes.
pub(super) struct Batch<'a> {
    pub(super) entry: &'a mut Entry,
    pub(super) now: i64,
    pub(super) events: Vec<NewEvent>,
    pub(super) persist: bool,
    /// No event the controller publishes is larger (see [`Batch::push`]).
    pub(super) max_event_bytes: usize,
    /// How much of a queued turn's text `queue.updated` shows.
    pub(super) queue_preview_bytes: usize,
}

impl Batch<'_> {
    pub(super) fn session(&self) -> Session {
        self.entry.rec.session.clone()
    }

    pub(super) fn emit(&mut self, turn_id: Option<String>, body: EventBody) {
        self.fold_in(turn_id, body, Clamped::No);
    }

    /// Folds `body` and publishes it (if the fold says so) with what the fold adds; `clamped`: an
    /// agent's event, already cut to the limit in `on_facts` (outside the state lock).
    fn fold_in(&mut self, turn_id: Option<String>, body: EventBody, clamped: Clamped) {
        let folded = self.entry.rec.apply(turn_id.as_deref(), &body, self.now);
        self.persist |= folded.persist;
        if !folded.publish {
            return;
        }
        self.entry.open.observe(&body);
        match &body {
            EventBody::PlanUpdated(p) => {
                self.entry.plan = Some(Box::new(ensemble_core::present::CurrentPlan {
                    turn_id: turn_id.clone(),
                    explanation: p.explanation.clone(),
                    steps: p.steps.clone(),
                }))
            }
            EventBody::CommandsUpdated(c) => self.entry.commands = c.commands.clone(),
            _ => {}
        }
        let ended = body.is_turn_terminal();
        if ended {
            self.entry.turn_ended.notify_waiters();
        }
        self.push_clamped(turn_id, body, clamped);
        if ended {
            self.entry.cancel_asked = None;
        }
        for (t, b) in folded.follow_up {
            self.push(t, b);
        }
    }

    /// Publishes `body`, cut to the event size limit: every event the controller publishes comes
    /// through here (a client's text, a session, a queue can be as large as an agent's output).
    pub(super) fn push(&mut self, turn_id: Option<String>, body: EventBody) {
        self.push_clamped(turn_id, body, Clamped::No);
    }

    fn push_clamped(&mut self, turn_id: Option<String>, body: EventBody, clamped: Clamped) {
        let body = match clamped {
            Clamped::Yes => body,
            Clamped::No => clamp(body, self.max_event_bytes, &self.entry.rec.session),
        };
        let actor = crate::actor::current().or_else(|| match (&body, &self.entry.cancel_asked) {
            (EventBody::TurnCanceled(p), Some((turn, by))) if *turn == p.turn_id => Some(by.clone()),
            _ => None,
        });
        let s = &self.entry.rec.session;
        self.events.push(NewEvent {
            room_id: s.room_id.clone(),
            event_id: new_id(),
            session_id: s.session_id.clone(),
            scope: s.scope,
            turn_id,
            occurred_at_ms: self.now,
            actor,
            body,
        });
    }

    pub(super) fn transition(&mut self, to: Phase) -> Result<()> {
        self.entry.rec.transition(to, self.now).map_err(|e| ControllerError::InvalidInput(e.to_string()))?;
        self.persist = true;
        Ok(())
    }

    pub(super) fn updated(&mut self, reason: &str) {
        self.updated_by(None, reason);
    }

    /// `session.updated` caused by a turn (its title taken from the turn's words): it carries the
    /// turn's id, as the turn's other events do.
    pub(super) fn updated_by(&mut self, turn_id: Option<String>, reason: &str) {
        let session = self.session();
        self.emit(turn_id, EventBody::SessionUpdated(SessionUpdatedPayload { session, reason: reason.into() }));
    }

    /// Ends the active turn from the controller's side (the provider cannot anymore).
    pub(super) fn fail_active_turn(&mut self, code: &str, message: &str) {
        if let Some(turn) = self.entry.rec.session.active_turn_id.clone() {
            let failed = TurnFailedPayload { turn_id: turn.clone(), error: ErrorInfo::new(code, message) };
            self.end_turn(&turn, EventBody::TurnFailed(failed));
        }
    }

    /// Ends a turn from the controller's side: what it left open is closed first (messages with
    /// their text so far, calls as interrupted), then the terminal event.
    pub(super) fn end_turn(&mut self, turn: &str, terminal: EventBody) {
        for body in self.entry.open.close_all() {
            self.emit(Some(turn.to_owned()), body);
        }
        self.emit(Some(turn.to_owned()), terminal);
    }

    pub(super) fn settle_pending(&mut self, by: ResolvedBy) {
        for (turn, body) in self.entry.rec.settle_all_pending(by) {
            self.emit(turn, body);
        }
    }

    /// Ends a side conversation for good (`session.completed`).
    pub(super) fn expire(&mut self, reason: &str) -> Result<()> {
        if self.entry.rec.phase == Phase::Completed {
            return Ok(());
        }
        self.settle_pending(ResolvedBy::Close);
        self.fail_active_turn("side_expired", "the side conversation expired");
        self.transition(Phase::Completed)?;
        self.entry.rec.session.resumable = false;
        self.entry.rec.refresh();
        let session = self.session();
        self.emit(None, EventBody::SessionCompleted(SessionCompletedPayload { session, reason: reason.into() }));
        Ok(())
    }

    /// Marks the live side gone: later facts of it are dropped.
    pub(super) fn detach(&mut self, generation: u64) {
        self.entry.generation = generation;
        self.entry.buffer = None;
    }

    pub(super) fn apply_facts(&mut self, facts: Vec<Fact>, next_generation: &AtomicU64) {
        for fact in facts {
            match fact {
                // Already clamped to `max_event_bytes` in `on_facts`, the only way facts arrive.
                Fact::Event { turn_id, body } => self.fold_in(turn_id, body, Clamped::Yes),
                Fact::Update(patch) => {
                    self.entry.rec.apply_patch(patch, self.now);
                    self.persist = true;
                    self.updated("provider_update");
                }
                Fact::Goal(fact) => self.goal_fact(fact),
                Fact::Lost { reason } => {
                    if self.entry.rec.phase != Phase::Live {
                        continue;
                    }
                    self.settle_pending(ResolvedBy::Provider);
                    self.fail_active_turn("provider_exited", &reason);
                    self.entry.rec.session.last_error = Some(ensemble_core::limits::clip(&reason));
                    self.detach(next_generation.fetch_add(1, Ordering::Relaxed) + 1);
                    if self.entry.rec.session.scope == Scope::Side {
                        // A side never resumes: losing its live context ends it.
                        let _ = self.expire("side_expired");
                    } else if self.transition(Phase::Disconnected).is_ok() {
                        self.updated("provider_exited");
                    }
                }
            }
        }
    }
}

/// Whether an event was already cut to the event size limit.
#[derive(Clone, Copy, PartialEq, Eq)]
enum Clamped {
    Yes,
    No,
}

/// `body` cut to `max` bytes (see `ensemble_core::event::clamp_body_sized`), counted and logged
/// when it was too large.
fn clamp(body: EventBody, max: usize, session: &Session) -> EventBody {
    let kind = body.type_name();
    let (body, cut, _) = ensemble_core::event::clamp_body_sized(body, max);
    if let Some(size) = cut {
        metrics::counter!("ensemble_events_clamped_total").increment(1);
        tracing::warn!(session = %session.key(), size, kind, "an oversized event was cut");
    }
    body
}

#[cfg(test)]
mod early_facts_tests {
    use super::*;
    use ensemble_core::event::TextDeltaPayload;

    fn delta(text: &str) -> Fact {
        Fact::Event {
            turn_id: None,
            body: EventBody::MessageDelta(TextDeltaPayload { item_id: "m".into(), text: text.into() }),
        }
    }

    fn texts(facts: &[Fact]) -> Vec<String> {
        facts
            .iter()
            .map(|f| match f {
                Fact::Event { body: EventBody::MessageDelta(p), .. } => p.text.clone(),
                Fact::Event { body: EventBody::Notice(p), .. } => format!("notice: {}", p.message),
                _ => "other".into(),
            })
            .collect()
    }

    #[test]
    fn what_is_held_is_a_prefix_of_what_the_agent_said_and_the_rest_is_counted() {
        let mut early = EarlyFacts::default();
        early.hold(vec![delta("a")], 60, 100);
        early.hold(vec![delta("b")], 60, 100); // over the cap: dropped
        early.hold(vec![delta("c")], 10, 100); // would fit, but after a hole: dropped too
        early.hold(vec![Fact::Lost { reason: "gone".into() }], 0, 100); // not an event: kept
        let held = texts(&early.into_facts());
        assert_eq!(held[..2], ["a", "other"]);
        assert!(held[2].starts_with("notice: 2 events"), "{held:?}");
        assert_eq!(held.len(), 3);
    }
}
