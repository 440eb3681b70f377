//! The provider-side goal state machine of one live session (ported from the Go daemon's codex
//! adapter): it classifies every provider goal update as known-current, pending-local, stale,
//! bind-current or adopt, keeps at most one adoption per fingerprint in flight, decides whether an
//! adopted identity lost a race, and holds the single-use continuation claim. It is pure: the
//! [`super::engine::GoalEngine`] feeds it and acts on its answers.

use std::collections::{HashMap, HashSet, VecDeque};

use ensemble_core::goal::{Binding, GoalIdentity};

/// How many generation bindings and turn evidences a session keeps in memory.
pub const MAX_BINDINGS: usize = 256;
/// How many fingerprints a single turn may show before its evidence counts as ambiguous.
pub const MAX_FINGERPRINTS_PER_TURN: usize = 8;

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Route {
    /// Already bound to the current identity: apply it.
    KnownCurrent,
    /// A local set is still in flight: its own path binds it.
    PendingLocal,
    /// Belongs to an older or ambiguous generation: drop (unless it is progress of the current lineage).
    Stale,
    /// A new snapshot of the current lineage: bind it to the current identity (no host call).
    BindCurrent,
    /// A generation nobody owns (the provider created it): adopt it.
    Adopt,
}

/// What an adopted identity does when it comes back.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Install {
    /// Installed; `arm` says whether the continuation claim should be armed.
    Installed { arm: bool },
    /// A newer identity arrived meanwhile: the adoption lost the race and is dropped.
    Superseded,
    /// The tracker no longer accepts adoptions (degraded or wrong thread).
    Refused,
}

/// The single-use continuation claim: lets the next provider-started turn inherit `identity` when
/// the provider's goal updates carry no turn id.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Claim {
    pub identity: GoalIdentity,
    pub ready: bool,
}

/// The provider-side goal state of one live session.
#[derive(Debug, Default)]
pub struct GoalTracker {
    /// The current durable desired identity; it gates future scheduling.
    pub current: GoalIdentity,
    bindings: HashMap<String, Binding>,
    order: VecDeque<String>,
    /// The generation last bound or adopted as current.
    pub current_fingerprint: Option<String>,
    pub current_lineage: Option<String>,
    pub current_generation_identity: GoalIdentity,
    /// A goal is present (not cleared).
    pub goal_present: bool,
    /// The provider's goal is active (continuations may follow).
    pub goal_active: bool,
    pub claim: Option<Claim>,
    in_flight: HashSet<String>,
    /// Turn-scoped evidence: provider turn id → fingerprints seen for it.
    evidence: HashMap<String, Vec<String>>,
    evidence_order: VecDeque<String>,
    /// Fail closed for good (capacity exceeded, ledger failure): nothing is adopted or credited.
    pub degraded: bool,
}

impl GoalTracker {
    /// A tracker whose current durable identity is `current` (the controller's).
    pub fn new(current: GoalIdentity) -> Self {
        Self { current, ..Self::default() }
    }

    pub fn binding(&self, fingerprint: &str) -> Option<&Binding> {
        self.bindings.get(fingerprint)
    }

    /// Classifies a provider goal update (the seed's classifier, route for route).
    pub fn classify(&self, fingerprint: &str, lineage: Option<&str>) -> Route {
        if let Some(b) = self.bindings.get(fingerprint) {
            if b.ambiguous {
                return Route::Stale;
            }
            if b.identity == self.current {
                return Route::KnownCurrent;
            }
            // Pause/resume advance the live identity without rebinding the set-time generation:
            // progress (even `complete`) of that still-current generation must not be dropped, or
            // a later nudge would revive a finished goal. A cleared goal stays stale.
            if self.goal_present
                && self.current_fingerprint.as_deref() == Some(fingerprint)
                && self.current_generation_identity == b.identity
            {
                return Route::KnownCurrent;
            }
            return Route::Stale;
        }
        if let Some(c) = &self.claim
            && !c.ready
            && c.identity == self.current
        {
            return Route::PendingLocal;
        }
        if let Some(l) = lineage
            && self.current_lineage.as_deref() == Some(l)
        {
            if !self.current.valid() || self.current_generation_identity != self.current {
                return Route::Stale;
            }
            return Route::BindCurrent;
        }
        Route::Adopt
    }

    /// Whether an update must be dropped. Stale updates of the current lineage are still applied
    /// while a goal is present: fingerprints include `updatedAt`, so pause/resume/complete snapshots
    /// miss the set-time binding.
    pub fn superseded(&self, fingerprint: &str, lineage: Option<&str>) -> bool {
        if self.classify(fingerprint, lineage) != Route::Stale {
            return false;
        }
        !(self.goal_present
            && lineage.is_some()
            && lineage == self.current_lineage.as_deref()
            && self.current_generation_identity.valid())
    }

    /// Marks an adoption of `fingerprint` in flight; false if one already is (dedupe).
    pub fn begin_adoption(&mut self, fingerprint: &str) -> bool {
        !self.degraded && self.in_flight.insert(fingerprint.to_owned())
    }

    pub fn finish_adoption(&mut self, fingerprint: &str) {
        self.in_flight.remove(fingerprint);
    }

    pub fn adoption_in_flight(&self) -> bool {
        !self.in_flight.is_empty()
    }

    /// Installs an identity the host gave an adopted generation.
    pub fn install_adopted(&mut self, fingerprint: &str, identity: &GoalIdentity) -> Install {
        if self.degraded || !identity.valid() {
            return Install::Refused;
        }
        if *identity == self.current {
            return Install::Installed { arm: self.current_fingerprint.as_deref() != Some(fingerprint) };
        }
        if self.current.valid() && identity.revision <= self.current.revision {
            return Install::Superseded;
        }
        self.current = identity.clone();
        Install::Installed { arm: true }
    }

    /// Binds a generation in memory (first bind wins; a conflicting bind makes it ambiguous).
    /// Returns the resulting binding.
    pub fn bind(&mut self, fingerprint: &str, lineage: Option<&str>, identity: &GoalIdentity) -> Binding {
        let binding = match self.bindings.get_mut(fingerprint) {
            Some(b) => {
                if b.identity != *identity {
                    b.ambiguous = true;
                }
                b.clone()
            }
            None => {
                let b = Binding { identity: identity.clone(), ambiguous: false };
                self.bindings.insert(fingerprint.to_owned(), b.clone());
                self.order.push_back(fingerprint.to_owned());
                while self.order.len() > MAX_BINDINGS {
                    if let Some(old) = self.order.pop_front() {
                        self.bindings.remove(&old);
                    }
                }
                b
            }
        };
        if !binding.ambiguous {
            self.current_fingerprint = Some(fingerprint.to_owned());
            self.current_lineage = lineage.map(str::to_owned);
            self.current_generation_identity = identity.clone();
            self.goal_present = true;
        }
        binding
    }

    /// Installs a binding read from the durable ledger (no conflict check: the ledger decided).
    pub fn remember(&mut self, fingerprint: &str, binding: Binding) {
        if !self.bindings.contains_key(fingerprint) {
            self.order.push_back(fingerprint.to_owned());
        }
        self.bindings.insert(fingerprint.to_owned(), binding);
    }

    /// A local set or resume is about to be sent: its continuation claim is prepared, not ready.
    pub fn prepare_claim(&mut self, identity: &GoalIdentity) {
        self.claim = Some(Claim { identity: identity.clone(), ready: false });
    }

    /// The goal is in place: the claim becomes usable, but only if the identity is still current and
    /// the goal is active.
    pub fn arm_claim(&mut self, identity: &GoalIdentity, goal_active: bool) {
        if *identity == self.current && goal_active {
            self.claim = Some(Claim { identity: identity.clone(), ready: true });
        } else if self.claim.as_ref().is_some_and(|c| c.identity == *identity) {
            self.claim = None;
        }
    }

    /// Consumes a ready claim for the current identity (the compatibility attribution path).
    pub fn take_claim(&mut self) -> Option<GoalIdentity> {
        match &self.claim {
            Some(c) if c.ready && c.identity == self.current && !self.degraded => self.claim.take().map(|c| c.identity),
            _ => None,
        }
    }

    /// Records that a provider turn showed a generation (exact, turn-scoped evidence).
    pub fn note_evidence(&mut self, provider_turn_id: &str, fingerprint: &str) {
        let list = self.evidence.entry(provider_turn_id.to_owned()).or_insert_with(|| {
            self.evidence_order.push_back(provider_turn_id.to_owned());
            Vec::new()
        });
        if !list.iter().any(|f| f == fingerprint) {
            list.push(fingerprint.to_owned());
        }
        while self.evidence_order.len() > MAX_BINDINGS {
            if let Some(old) = self.evidence_order.pop_front() {
                self.evidence.remove(&old);
            }
        }
    }

    /// The identity a provider turn's evidence proves: exactly one bound, unambiguous fingerprint.
    pub fn evidence_identity(&self, provider_turn_id: &str) -> Option<GoalIdentity> {
        let fps = self.evidence.get(provider_turn_id)?;
        if fps.len() > MAX_FINGERPRINTS_PER_TURN || self.degraded {
            return None;
        }
        let mut found: Option<&GoalIdentity> = None;
        for fp in fps {
            let b = self.bindings.get(fp)?;
            if b.ambiguous {
                return None;
            }
            match found {
                Some(i) if *i != b.identity => return None,
                _ => found = Some(&b.identity),
            }
        }
        found.cloned()
    }

    /// Fingerprints a provider turn showed.
    pub fn evidence_fingerprints(&self, provider_turn_id: &str) -> Vec<String> {
        self.evidence.get(provider_turn_id).cloned().unwrap_or_default()
    }

    /// The goal was cleared.
    pub fn cleared(&mut self) {
        self.goal_present = false;
        self.goal_active = false;
        self.claim = None;
    }
}

#[cfg(test)]
#[path = "tracker_tests.rs"]
mod tests;
