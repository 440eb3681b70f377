//! What each route needs of the caller, read from the route's one declaration.
//!
//! A documented route declares everything about itself in its handler's `#[utoipa::path]`: the
//! method, the path and, as the extension `x-ensemble-access`, what it needs —
//! `{"role": R, "allRooms"?: true, "subprotocolToken"?: true}`, or `{"token": false, "anyHost"?:
//! true}` for the few that need no token. The router reads this table from the OpenAPI document
//! it serves, so the document, the router and the guard cannot disagree. The routes outside the
//! contract (the console page, the test hooks) declare theirs where the router adds them.
//!
//! A route without a declaration is refused (403) for every token: fail closed. A test walks every
//! operation of the document against a token of each role.

use std::collections::HashMap;

use axum::http::Method;
use serde::Deserialize;

use super::Role;

/// What a route needs of the caller's token.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Need {
    pub role: Role,
    /// The route reads across rooms (metrics): only a token for every room may.
    pub all_rooms: bool,
}

/// How a request reaches a route.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Rule {
    /// A token with at least this.
    Token(Need),
    /// No token; Host and Origin still apply (the console page, the OpenAPI document: no data).
    Public,
    /// No token and any Host: a probe from an orchestrator, which names the host by address.
    Probe,
}

/// The extension's JSON, as written in a `#[utoipa::path]`.
#[derive(Deserialize)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
struct Declared {
    role: Option<Role>,
    #[serde(default)]
    all_rooms: bool,
    #[serde(default)]
    subprotocol_token: bool,
    token: Option<bool>,
    #[serde(default)]
    any_host: bool,
}

impl Declared {
    fn rule(&self) -> Result<Rule, String> {
        match (self.token, self.role) {
            (Some(false), None) if !self.all_rooms && !self.subprotocol_token => {
                Ok(if self.any_host { Rule::Probe } else { Rule::Public })
            }
            (None | Some(true), Some(role)) if !self.any_host => {
                Ok(Rule::Token(Need { role, all_rooms: self.all_rooms }))
            }
            _ => Err(
                "declare either {\"role\", \"allRooms\"?, \"subprotocolToken\"?} or {\"token\": false, \"anyHost\"?}"
                    .into(),
            ),
        }
    }
}

/// The name of the extension that declares a route's access.
pub const EXTENSION: &str = "x-ensemble-access";

const METHODS: [Method; 5] = [Method::GET, Method::POST, Method::PUT, Method::PATCH, Method::DELETE];

#[derive(Clone, Debug, Default)]
struct Entry {
    /// Per method of `METHODS`, its rule.
    rules: [Option<Rule>; 5],
    /// The route takes the token as a WebSocket subprotocol (browsers cannot set headers there).
    subprotocol_token: bool,
}

/// Every route's rule, by its template as axum's `MatchedPath` names it.
#[derive(Clone, Debug, Default)]
pub struct RouteTable {
    routes: HashMap<String, Entry>,
}

impl RouteTable {
    /// The table of a complete OpenAPI document (as JSON), with what is wrong with it: an
    /// operation without a declaration, or one that cannot be read. The server leaves those out
    /// (refused to everyone) and logs them; a test keeps the list empty.
    pub fn from_openapi(doc: &serde_json::Value) -> (Self, Vec<String>) {
        let mut table = Self::default();
        let mut problems = Vec::new();
        let paths = doc.get("paths").and_then(serde_json::Value::as_object);
        for (path, item) in paths.into_iter().flatten() {
            for method in &METHODS {
                let key = method.as_str().to_ascii_lowercase();
                let Some(op) = item.get(&key) else { continue };
                let declared = op
                    .get(EXTENSION)
                    .ok_or_else(|| format!("no `{EXTENSION}`"))
                    .and_then(|v| Declared::deserialize(v).map_err(|e| e.to_string()))
                    .and_then(|d| Ok((d.rule()?, d.subprotocol_token)));
                match declared {
                    Ok((rule, subprotocol)) => table.declare(method, path, rule, subprotocol),
                    Err(e) => problems.push(format!("{method} {path}: {e}")),
                }
            }
        }
        (table, problems)
    }

    /// Declares a route outside the document.
    pub fn declare(&mut self, method: &Method, route: &str, rule: Rule, subprotocol_token: bool) {
        let entry = self.routes.entry(route.to_owned()).or_default();
        if let Some(i) = METHODS.iter().position(|m| m == method) {
            entry.rules[i] = Some(rule);
        }
        entry.subprotocol_token |= subprotocol_token;
    }

    /// What `method` on the route template `route` needs. A method the route does not serve
    /// (axum answers 405) needs what its other methods need when they are all tokenless, and
    /// admin otherwise, so only a declaration opens a route to anyone else. `None`: no such
    /// route in the table.
    pub fn rule(&self, method: &Method, route: &str) -> Option<Rule> {
        let entry = self.routes.get(route)?;
        if let Some(rule) = METHODS.iter().position(|m| m == method).and_then(|i| entry.rules[i]) {
            return Some(rule);
        }
        let mut declared = entry.rules.iter().flatten();
        let first = *declared.next()?;
        let tokenless = !matches!(first, Rule::Token(_)) && declared.all(|r| *r == first);
        Some(if tokenless { first } else { Rule::Token(Need { role: Role::Admin, all_rooms: false }) })
    }

    /// [`Self::rule`], and whether the route takes the token as a WebSocket subprotocol: the
    /// guard's one lookup per request.
    pub fn lookup(&self, method: &Method, route: &str) -> Option<(Rule, bool)> {
        let subprotocol = self.routes.get(route)?.subprotocol_token;
        Some((self.rule(method, route)?, subprotocol))
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn doc(access: serde_json::Value) -> serde_json::Value {
        json!({"paths": {"/a": {"get": {EXTENSION: access}, "post": {}}}})
    }

    #[test]
    fn declarations_are_read_and_undeclared_operations_reported() {
        let (t, problems) = RouteTable::from_openapi(&doc(json!({"role": "viewer", "allRooms": true})));
        assert_eq!(t.rule(&Method::GET, "/a"), Some(Rule::Token(Need { role: Role::Viewer, all_rooms: true })));
        assert_eq!(problems, ["POST /a: no `x-ensemble-access`"]);
        // The undeclared method is admin's (it is answered 405), an unknown route nobody's.
        assert_eq!(t.rule(&Method::PUT, "/a"), Some(Rule::Token(Need { role: Role::Admin, all_rooms: false })));
        assert_eq!(t.rule(&Method::GET, "/b"), None);
    }

    #[test]
    fn tokenless_routes_stay_tokenless_for_every_method() {
        let (t, _) = RouteTable::from_openapi(&doc(json!({"token": false, "anyHost": true})));
        assert_eq!(t.rule(&Method::GET, "/a"), Some(Rule::Probe));
        assert_eq!(t.rule(&Method::DELETE, "/a"), Some(Rule::Probe));
    }

    #[test]
    fn a_contradictory_or_unknown_declaration_is_a_problem() {
        for bad in [
            json!({"token": false, "role": "viewer"}),
            json!({"role": "viewer", "anyHost": true}),
            json!({"role": "owner"}),
            json!({"role": "viewer", "rooms": "all"}),
            json!({}),
        ] {
            let (t, problems) = RouteTable::from_openapi(&doc(bad.clone()));
            assert_eq!(problems.len(), 2, "{bad}: {problems:?}");
            assert_eq!(t.rule(&Method::GET, "/a"), None, "{bad}");
        }
    }
}
