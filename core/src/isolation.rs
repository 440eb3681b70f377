//! What confines a session's agent: the isolation a provider runs its sessions in, and the one a
//! session got (a provider's, narrowed by the start). The mechanism (bubblewrap, the egress
//! proxy, control groups) is `ensemble-isolation`'s; this is what the contract says of it.

use std::fmt;

use serde::{Deserialize, Serialize};

/// Whether a provider's sessions are confined.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(feature = "schema", derive(utoipa::ToSchema))]
#[serde(rename_all = "snake_case")]
pub enum IsolationMode {
    /// In a box Ensemble builds (the default).
    #[default]
    On,
    /// Not confined: the agent can do what the server's user can (an explicit choice, shown as
    /// a warning).
    Off,
}

/// The network a confined agent may reach: nothing directly; through Ensemble's egress proxy,
/// the listed endpoints, or everything (`"all"`).
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(feature = "schema", derive(utoipa::ToSchema))]
#[serde(untagged)]
pub enum NetworkAccess {
    /// `"all"`: any host but the server itself.
    All(AllHosts),
    /// `host:port` endpoints (`api.anthropic.com:443`, `127.0.0.1:8089`); a loopback one is
    /// reachable at the same address inside.
    Endpoints(Vec<String>),
}

/// The word `all`.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(feature = "schema", derive(utoipa::ToSchema))]
#[serde(rename_all = "snake_case")]
pub enum AllHosts {
    All,
}

impl Default for NetworkAccess {
    fn default() -> Self {
        Self::Endpoints(Vec::new())
    }
}

impl NetworkAccess {
    /// Whether `other` allows nothing this does not.
    pub fn covers(&self, other: &NetworkAccess) -> bool {
        match (self, other) {
            (Self::All(_), _) => true,
            (Self::Endpoints(_), Self::All(_)) => false,
            (Self::Endpoints(mine), Self::Endpoints(theirs)) => {
                theirs.iter().all(|t| mine.iter().any(|m| m.eq_ignore_ascii_case(t)))
            }
        }
    }
}

/// How a session's memory and process limits are enforced on this machine.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(feature = "schema", derive(utoipa::ToSchema))]
#[serde(rename_all = "snake_case")]
pub enum LimitsEnforcement {
    /// A control group of its own per session (cgroup v2, delegated to the server).
    CgroupV2,
    /// A control group of its own per session in the memory and pids hierarchies (cgroup v1).
    CgroupV1,
    /// Not enforced: no control group the server may write (the limits are only recorded).
    #[default]
    Unenforced,
}

/// The isolation of a provider's sessions, or of one session.
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(feature = "schema", derive(utoipa::ToSchema))]
#[serde(rename_all = "camelCase")]
pub struct Isolation {
    pub mode: IsolationMode,
    /// What the agent may reach through the egress proxy.
    #[serde(default)]
    pub network: NetworkAccess,
    /// The paths of the real home the agent sees (its own configuration and login), as written
    /// (`~/.claude`).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub home: Vec<String>,
    /// The most memory the session's processes may use together, in MiB.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub memory_mb: Option<u64>,
    /// The most processes (and threads) the session may have at once.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub max_processes: Option<u64>,
    /// How the limits are enforced here.
    #[serde(default)]
    pub limits: LimitsEnforcement,
}

/// A provider's isolation as `GET /v1/providers` shows it, and what the controller checks a
/// start against.
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(feature = "schema", derive(utoipa::ToSchema))]
#[serde(rename_all = "camelCase")]
pub struct ProviderIsolation {
    #[serde(flatten)]
    pub isolation: Isolation,
    /// Why this machine cannot box the provider's sessions (bubblewrap missing, no user
    /// namespaces), with what to do: a start that would run a process is refused with 503
    /// `isolation_unavailable`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub unavailable: Option<String>,
    /// Its sessions start a process when they start (an agent), so a start needs the box; the
    /// scripted provider's only process is what `/run` runs, which is refused then instead.
    #[serde(default)]
    pub at_start: bool,
    /// Said when isolation is off: the agent can read and do what the server's user can.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub warning: Option<String>,
}

/// The warning a provider running with isolation off carries.
pub const OFF_WARNING: &str = "isolation is off: this provider's agents can read and do whatever the server's user can (its token, other rooms' work, your keys) and reach any network";

/// What a session start may ask of its isolation: only narrower than its provider's.
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(feature = "schema", derive(utoipa::ToSchema))]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct IsolationRequest {
    /// Fewer endpoints than the provider allows (a subset of its list).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub network: Option<Vec<String>>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub memory_mb: Option<u64>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub max_processes: Option<u64>,
}

/// Why a start's isolation request was refused.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct WiderThanProvider(pub String);

impl fmt::Display for WiderThanProvider {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.0)
    }
}

impl Isolation {
    /// This isolation narrowed by `req`; `Err` when `req` would widen it (an endpoint the
    /// provider does not allow, a higher limit), or asks for limits with isolation off.
    pub fn narrowed(&self, req: &IsolationRequest) -> Result<Isolation, WiderThanProvider> {
        let mut out = self.clone();
        if self.mode == IsolationMode::Off {
            if req != &IsolationRequest::default() {
                return Err(WiderThanProvider("the provider runs with isolation off: nothing to narrow".into()));
            }
            return Ok(out);
        }
        if let Some(list) = &req.network {
            let asked = NetworkAccess::Endpoints(list.clone());
            if !self.network.covers(&asked) {
                let allowed = match &self.network {
                    NetworkAccess::All(_) => "all".to_owned(),
                    NetworkAccess::Endpoints(e) if e.is_empty() => "none".to_owned(),
                    NetworkAccess::Endpoints(e) => e.join(", "),
                };
                return Err(WiderThanProvider(format!("isolation.network may only narrow the provider's ({allowed})")));
            }
            out.network = asked;
        }
        for (name, asked, limit, slot) in [
            ("memoryMb", req.memory_mb, self.memory_mb, &mut out.memory_mb),
            ("maxProcesses", req.max_processes, self.max_processes, &mut out.max_processes),
        ] {
            let Some(asked) = asked else { continue };
            if asked == 0 {
                return Err(WiderThanProvider(format!("isolation.{name} must be at least 1")));
            }
            if limit.is_some_and(|l| asked > l) {
                return Err(WiderThanProvider(format!(
                    "isolation.{name} may only lower the provider's ({})",
                    limit.unwrap_or_default()
                )));
            }
            *slot = Some(asked);
        }
        Ok(out)
    }
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used, reason = "tests fail loudly")]
    use super::*;

    fn provider() -> Isolation {
        Isolation {
            mode: IsolationMode::On,
            network: NetworkAccess::Endpoints(vec!["api.example.com:443".into(), "127.0.0.1:8089".into()]),
            home: vec!["~/.agent".into()],
            memory_mb: Some(2048),
            max_processes: Some(256),
            limits: LimitsEnforcement::CgroupV1,
        }
    }

    #[test]
    fn a_start_narrows_and_never_widens() {
        let p = provider();
        let n = p
            .narrowed(&IsolationRequest {
                network: Some(vec!["127.0.0.1:8089".into()]),
                memory_mb: Some(512),
                max_processes: None,
            })
            .unwrap();
        assert_eq!(n.network, NetworkAccess::Endpoints(vec!["127.0.0.1:8089".into()]));
        assert_eq!((n.memory_mb, n.max_processes), (Some(512), Some(256)));
        for wide in [
            IsolationRequest { network: Some(vec!["evil.example:443".into()]), ..Default::default() },
            IsolationRequest { memory_mb: Some(4096), ..Default::default() },
            IsolationRequest { max_processes: Some(257), ..Default::default() },
            IsolationRequest { max_processes: Some(0), ..Default::default() },
        ] {
            assert!(p.narrowed(&wide).is_err(), "{wide:?}");
        }
        let all = Isolation { network: NetworkAccess::All(AllHosts::All), ..provider() };
        assert!(
            all.narrowed(&IsolationRequest { network: Some(vec!["x.example:1".into()]), ..Default::default() }).is_ok()
        );
        let off = Isolation { mode: IsolationMode::Off, ..provider() };
        assert!(off.narrowed(&IsolationRequest::default()).is_ok());
        assert!(off.narrowed(&IsolationRequest { memory_mb: Some(1), ..Default::default() }).is_err());
    }

    #[test]
    fn network_reads_as_a_list_or_all() {
        let all: Isolation = serde_json::from_str(r#"{"mode":"on","network":"all"}"#).unwrap();
        assert_eq!(all.network, NetworkAccess::All(AllHosts::All));
        let list: Isolation = serde_json::from_str(r#"{"mode":"on","network":["a:1"]}"#).unwrap();
        assert_eq!(list.network, NetworkAccess::Endpoints(vec!["a:1".into()]));
        assert_eq!(serde_json::to_value(&all).unwrap()["network"], "all");
        assert!(serde_json::from_str::<Isolation>(r#"{"mode":"on","network":"some"}"#).is_err());
    }
}
