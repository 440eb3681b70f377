//! The wire types held against codex's own description of its protocol, and against what a real
//! codex sent.
//!
//! `adapters/tests/codex-protocol/schema.json` is the JSON Schema that `codex app-server
//! generate-json-schema --experimental` (0.171.0) writes, cut down to what these tests need: every
//! method of the protocol with its params (and result) definition, and the definitions the wire
//! types reach, without descriptions. To rewrite it from a full bundle (after adding a type or a
//! field), run this test with `ENSEMBLE_CODEX_SCHEMA=<dir>/codex_app_server_protocol.schemas.json`.
//!
//! The check derives each wire type's schema (schemars, following the serde attributes) and walks
//! it beside codex's definition. What Ensemble reads must accept everything codex may send there:
//! every field it reads exists in codex's definition, with a compatible type, and is required only
//! where codex requires it; every variant codex may send is handled (or falls to a catch-all).
//! What Ensemble sends must be something codex accepts: every field exists, every field codex
//! requires is always sent, and enums stay within codex's values. A free-form `Value` is not
//! looked into.

#![allow(clippy::unwrap_used, clippy::expect_used, reason = "tests fail loudly")]

use std::collections::{BTreeMap, BTreeSet};
use std::path::{Path, PathBuf};

use schemars::JsonSchema;
use schemars::generate::SchemaSettings;
use serde::de::DeserializeOwned;
use serde_json::{Map, Value, json};

use super::{ClientRequest, Initialized, Notification, ResponseItem, ServerNotification, ServerRequest};

/// Where the wire is known to part from codex's schema, on purpose.
const KNOWN_DEVIATIONS: &[(&str, &str)] = &[(
    "turn/start params.collaborationMode.settings.model",
    "Ensemble sends `null` when it knows no model for the thread (codex answers thread/start and \
     thread/resume with one, so in practice it always knows)",
)];

/// Which way a type goes.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Dir {
    /// Codex sends it, Ensemble reads it.
    Read,
    /// Ensemble sends it, codex reads it.
    Send,
}

/// A wire type's schema (in one direction).
type SchemaOf = fn(Dir) -> Value;
/// Reads JSON as a wire type.
type Reader = fn(Value) -> Result<(), serde_json::Error>;

/// One method of a table: its name, and its params and result as Ensemble has them.
pub(super) struct Row {
    method: &'static str,
    params: SchemaOf,
    read_params: Reader,
    result: Option<(SchemaOf, Reader)>,
}

impl Row {
    pub(super) fn of<P: JsonSchema + DeserializeOwned, R: JsonSchema + DeserializeOwned>(method: &'static str) -> Self {
        Self { method, params: schema::<P>, read_params: read::<P>, result: Some((schema::<R>, read::<R>)) }
    }

    pub(super) fn notification<P: JsonSchema + DeserializeOwned>(method: &'static str) -> Self {
        Self { method, params: schema::<P>, read_params: read::<P>, result: None }
    }
}

fn schema<T: JsonSchema>(dir: Dir) -> Value {
    let settings = match dir {
        Dir::Read => SchemaSettings::draft07().for_deserialize(),
        Dir::Send => SchemaSettings::draft07().for_serialize(),
    };
    serde_json::to_value(settings.into_generator().into_root_schema_for::<T>()).unwrap()
}

fn read<T: DeserializeOwned>(v: Value) -> Result<(), serde_json::Error> {
    serde_json::from_value::<T>(v).map(drop)
}

fn protocol_dir() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/codex-protocol")
}

// ---------------------------------------------------------------------------------------------
// Codex's schema.

/// The tables of a schema bundle: direction → method → `{params, response?}` definition names.
type Methods = BTreeMap<String, BTreeMap<String, Value>>;

const CLIENT_REQUEST: &str = "clientRequest";
const CLIENT_NOTIFICATION: &str = "clientNotification";
const SERVER_NOTIFICATION: &str = "serverNotification";
const SERVER_REQUEST: &str = "serverRequest";

/// The method tables of a full bundle (`codex_app_server_protocol.schemas.json`).
fn bundle_methods(bundle: &Value) -> Methods {
    let defs = &bundle["definitions"];
    let mut out = Methods::new();
    for (table, dir) in [
        ("ClientRequest", CLIENT_REQUEST),
        ("ClientNotification", CLIENT_NOTIFICATION),
        ("ServerNotification", SERVER_NOTIFICATION),
        ("ServerRequest", SERVER_REQUEST),
    ] {
        let rows = out.entry(dir.to_owned()).or_default();
        for row in defs[table]["oneOf"].as_array().expect("a method table") {
            let method = row["properties"]["method"]["enum"][0].as_str().expect("a method name").to_owned();
            let mut entry = Map::new();
            if let Some(params) = row["properties"]["params"]["$ref"].as_str() {
                let params = params.trim_start_matches("#/definitions/").to_owned();
                let response = params.strip_suffix("Params").map(|p| format!("{p}Response"));
                if let Some(response) = response.filter(|r| definition(defs, r).is_some()) {
                    entry.insert("response".into(), Value::String(response));
                }
                entry.insert("params".into(), Value::String(params));
            }
            rows.insert(method, Value::Object(entry));
        }
    }
    out
}

fn definition<'a>(defs: &'a Value, name: &str) -> Option<&'a Value> {
    name.split('/').try_fold(defs, |v, part| v.get(part))
}

/// Without the `description` annotations (a property of that name stays).
fn strip_descriptions(v: &Value) -> Value {
    match v {
        Value::Object(m) => Value::Object(
            m.iter()
                .filter(|(k, v)| !(k.as_str() == "description" && v.is_string()))
                .map(|(k, v)| (k.clone(), strip_descriptions(v)))
                .collect(),
        ),
        Value::Array(a) => Value::Array(a.iter().map(strip_descriptions).collect()),
        other => other.clone(),
    }
}

/// Codex's side: its definitions, and which of them a check looked at.
struct Theirs {
    /// The bundle's `definitions`, or the cut-down file's (keyed by `v2/Name` paths).
    defs: Value,
    flat: bool,
    seen: BTreeSet<String>,
}

impl Theirs {
    fn get(&mut self, name: &str) -> Value {
        self.seen.insert(name.to_owned());
        let found = if self.flat { self.defs.get(name) } else { definition(&self.defs, name) };
        found.cloned().unwrap_or_else(|| {
            panic!("`{name}` is not in the schema file: rewrite it with ENSEMBLE_CODEX_SCHEMA (see this module's docs)")
        })
    }
}

/// The cut-down schema as text: each method table row and each definition on a line of its own,
/// so that a change shows as the lines it changes.
fn one_entry_a_line(cut: &Value) -> String {
    let line = |v: &Value| serde_json::to_string(v).unwrap();
    let block = |entries: Vec<String>, indent: &str| format!("{{\n{}\n{indent}}}", entries.join(",\n"));
    let tables = cut["methods"].as_object().unwrap().iter().map(|(table, rows)| {
        let rows = rows.as_object().unwrap().iter().map(|(m, r)| format!("      {}: {}", line(&json!(m)), line(r)));
        format!("    {}: {}", line(&json!(table)), block(rows.collect(), "    "))
    });
    let defs =
        cut["definitions"].as_object().unwrap().iter().map(|(k, v)| format!("    {}: {}", line(&json!(k)), line(v)));
    let top = vec![
        format!("  \"source\": {}", line(&cut["source"])),
        format!("  \"methods\": {}", block(tables.collect(), "  ")),
        format!("  \"definitions\": {}", block(defs.collect(), "  ")),
    ];
    block(top, "") + "\n"
}

// ---------------------------------------------------------------------------------------------
// Comparing two schemas.

/// One alternative of a schema, reduced to what the comparison needs.
#[derive(Clone, Debug)]
enum Alt {
    Any,
    Null,
    Bool,
    Int,
    Num,
    /// A string, open or one of these values.
    Str(Option<BTreeSet<String>>),
    Array(Value),
    Object(Obj),
}

#[derive(Clone, Debug, Default)]
struct Obj {
    props: BTreeMap<String, Value>,
    required: BTreeSet<String>,
    /// The schema of other keys (a map).
    extra: Option<Value>,
}

/// Values of a catch-all variant (`#[serde(other)] Unknown`).
const CATCH_ALL: &str = "unknown";

impl Alt {
    fn kind(&self) -> &'static str {
        match self {
            Alt::Any => "anything",
            Alt::Null => "null",
            Alt::Bool => "a boolean",
            Alt::Int => "an integer",
            Alt::Num => "a number",
            Alt::Str(_) => "a string",
            Alt::Array(_) => "an array",
            Alt::Object(_) => "an object",
        }
    }
}

/// Resolves references of either side.
trait Defs {
    fn resolve(&mut self, reference: &str) -> Value;
}

impl Defs for Theirs {
    fn resolve(&mut self, reference: &str) -> Value {
        self.get(reference.trim_start_matches("#/definitions/"))
    }
}

struct Ours<'a>(&'a Value);

impl Defs for Ours<'_> {
    fn resolve(&mut self, reference: &str) -> Value {
        let name = reference.rsplit('/').next().unwrap_or_default();
        self.0.get(name).cloned().unwrap_or_else(|| panic!("our schema has no `{name}`"))
    }
}

fn alts(defs: &mut dyn Defs, node: &Value, out: &mut Vec<Alt>) {
    let node = match node.get("$ref").and_then(Value::as_str) {
        Some(r) => defs.resolve(r),
        None => node.clone(),
    };
    let Value::Object(m) = &node else {
        if node == Value::Bool(true) {
            out.push(Alt::Any);
        }
        return;
    };
    if let Some(all) = m.get("allOf").and_then(Value::as_array) {
        assert_eq!(all.len(), 1, "allOf of several schemas: {node}");
        return alts(defs, &all[0], out);
    }
    if let Some(union) = m.get("anyOf").or_else(|| m.get("oneOf")).and_then(Value::as_array) {
        // Properties beside a union (codex's ThreadItem) belong to every member.
        let base = object(&node);
        for member in union {
            let mut inner = Vec::new();
            alts(defs, member, &mut inner);
            for alt in inner {
                out.push(match (alt, &base) {
                    (Alt::Object(mut o), Some(b)) => {
                        for (k, v) in &b.props {
                            o.props.entry(k.clone()).or_insert_with(|| v.clone());
                        }
                        o.required.extend(b.required.iter().cloned());
                        Alt::Object(o)
                    }
                    (alt, _) => alt,
                });
            }
        }
        return;
    }
    let values = m.get("enum").and_then(Value::as_array).cloned().or_else(|| m.get("const").map(|c| vec![c.clone()]));
    if let Some(values) = values {
        let strings: BTreeSet<String> = values.iter().filter_map(Value::as_str).map(str::to_owned).collect();
        if !strings.is_empty() {
            out.push(Alt::Str(Some(strings)));
        }
        if values.iter().any(Value::is_null) {
            out.push(Alt::Null);
        }
        return;
    }
    let types: Vec<&str> = match m.get("type") {
        Some(Value::String(t)) => vec![t.as_str()],
        Some(Value::Array(ts)) => ts.iter().filter_map(Value::as_str).collect(),
        _ if m.contains_key("properties") => vec!["object"],
        _ => {
            out.push(Alt::Any);
            return;
        }
    };
    for t in types {
        out.push(match t {
            "null" => Alt::Null,
            "boolean" => Alt::Bool,
            "integer" => Alt::Int,
            "number" => Alt::Num,
            "string" => Alt::Str(None),
            "array" => Alt::Array(m.get("items").cloned().unwrap_or(Value::Bool(true))),
            _ => Alt::Object(object(&node).unwrap_or_default()),
        });
    }
}

fn object(node: &Value) -> Option<Obj> {
    let mut props: BTreeMap<String, Value> = node.get("properties")?.as_object()?.clone().into_iter().collect();
    // An object whose `anyOf` alternatives add fields (an image by `url` or by `fileId`): each
    // alternative's fields are fields of it, none of them required.
    for alt in node.get("anyOf").and_then(Value::as_array).into_iter().flatten() {
        for (k, v) in alt.get("properties").and_then(Value::as_object).into_iter().flatten() {
            props.entry(k.clone()).or_insert_with(|| v.clone());
        }
    }
    let required = node
        .get("required")
        .and_then(Value::as_array)
        .map(|r| r.iter().filter_map(Value::as_str).map(str::to_owned).collect())
        .unwrap_or_default();
    let extra = node.get("additionalProperties").filter(|a| a.is_object() || **a == Value::Bool(true)).cloned();
    Some(Obj { props, required, extra })
}

/// The tag of an object of a tagged union: a property with one possible string.
fn tag(defs: &mut dyn Defs, o: &Obj) -> Option<(String, String)> {
    ["type", "method", "mode"].into_iter().find_map(|k| {
        let mut a = Vec::new();
        alts(defs, o.props.get(k)?, &mut a);
        match &a[..] {
            [Alt::Str(Some(v))] if v.len() == 1 => v.first().map(|v| (k.to_owned(), v.clone())),
            _ => None,
        }
    })
}

struct Check<'a> {
    ours: Ours<'a>,
    theirs: &'a mut Theirs,
    errors: Vec<String>,
}

impl Check<'_> {
    /// Compares our schema `o` with codex's `t` at `path`.
    fn compare(&mut self, o: &Value, t: &Value, dir: Dir, path: &str) {
        self.compare_field(o, t, dir, path, false);
    }

    /// `left_out_when_none`: a field Ensemble leaves out rather than send `null`.
    fn compare_field(&mut self, o: &Value, t: &Value, dir: Dir, path: &str, left_out_when_none: bool) {
        let mut ours = Vec::new();
        alts(&mut self.ours, o, &mut ours);
        if left_out_when_none {
            ours.retain(|a| !matches!(a, Alt::Null));
        }
        let mut theirs = Vec::new();
        alts(self.theirs, t, &mut theirs);
        if ours.iter().any(|a| matches!(a, Alt::Any)) {
            return; // free-form on our side: not looked into
        }
        if dir == Dir::Send {
            // A catch-all reads what is unknown; it is never sent.
            ours.retain_mut(|a| match a {
                Alt::Object(o) => tag(&mut self.ours, o).is_none_or(|(_, v)| v != CATCH_ALL),
                Alt::Str(Some(values)) => {
                    values.remove(CATCH_ALL);
                    !values.is_empty()
                }
                _ => true,
            });
        }
        let (must, may) = match dir {
            Dir::Read => (&theirs, &ours),
            Dir::Send => (&ours, &theirs),
        };
        if may.iter().any(|a| matches!(a, Alt::Any)) {
            if dir == Dir::Read {
                self.errors.push(format!("{path}: codex may send anything there, Ensemble reads {}", ours[0].kind()));
            }
            return;
        }
        for a in must.clone() {
            self.cover(&a, may, dir, path);
        }
    }

    /// Checks that `a` (what may come) is covered by one of `options` (what is accepted).
    fn cover(&mut self, a: &Alt, options: &[Alt], dir: Dir, path: &str) {
        let who = match dir {
            Dir::Read => "codex may send",
            Dir::Send => "Ensemble may send",
        };
        match a {
            Alt::Object(obj) => {
                let objects: Vec<&Obj> = options
                    .iter()
                    .filter_map(|o| match o {
                        Alt::Object(o) => Some(o),
                        _ => None,
                    })
                    .collect();
                let Some(other) = self.counterpart(obj, &objects, dir) else {
                    return self.errors.push(format!("{path}: {who} an object no variant of the other side takes"));
                };
                let (ours, theirs) = match dir {
                    Dir::Read => (other, obj.clone()),
                    Dir::Send => (obj.clone(), other),
                };
                self.fields(&ours, &theirs, dir, path);
            }
            Alt::Array(items) => {
                match options.iter().find_map(|o| if let Alt::Array(i) = o { Some(i) } else { None }) {
                    Some(other) => {
                        let (o, t) = match dir {
                            Dir::Read => (other.clone(), items.clone()),
                            Dir::Send => (items.clone(), other.clone()),
                        };
                        self.compare(&o, &t, dir, &format!("{path}[]"));
                    }
                    None => self.errors.push(format!("{path}: {who} an array")),
                }
            }
            Alt::Str(values) => {
                let open = options.iter().any(|o| matches!(o, Alt::Str(None)));
                let accepted: BTreeSet<&String> = options
                    .iter()
                    .filter_map(|o| if let Alt::Str(Some(v)) = o { Some(v) } else { None })
                    .flatten()
                    .collect();
                let catch_all = dir == Dir::Read && accepted.iter().any(|v| *v == CATCH_ALL);
                let covered = open
                    || catch_all
                    || values.as_ref().is_some_and(|values| values.iter().all(|v| accepted.contains(v)));
                if !covered {
                    self.errors
                        .push(format!("{path}: {who} the string(s) {values:?}, which the other side does not take"));
                }
            }
            Alt::Int => {
                if !options.iter().any(|o| matches!(o, Alt::Int | Alt::Num)) {
                    self.errors.push(format!("{path}: {who} an integer"));
                }
            }
            other => {
                if !options.iter().any(|o| std::mem::discriminant(o) == std::mem::discriminant(other)) {
                    self.errors.push(format!("{path}: {who} {}", other.kind()));
                }
            }
        }
    }

    /// The object of the other side that takes `obj`: the one with the same tag, the catch-all of a
    /// reading union, or the only untagged one.
    fn counterpart(&mut self, obj: &Obj, others: &[&Obj], dir: Dir) -> Option<Obj> {
        let my_tag = match dir {
            Dir::Read => tag(self.theirs, obj),
            Dir::Send => tag(&mut self.ours, obj),
        };
        let mut untagged = Vec::new();
        let mut catch_all = false;
        for o in others {
            let their_tag = match dir {
                Dir::Read => tag(&mut self.ours, o),
                Dir::Send => tag(self.theirs, o),
            };
            match (&my_tag, their_tag) {
                (Some(mine), Some(theirs)) if *mine == theirs => return Some((*o).clone()),
                (Some((k, _)), Some((tk, v))) if dir == Dir::Read && *k == tk && v == CATCH_ALL => catch_all = true,
                (_, None) => untagged.push(*o),
                _ => {}
            }
        }
        match &untagged[..] {
            [only] => Some((*only).clone()),
            // Read by the catch-all variant, which reads nothing else.
            _ if catch_all => Some(Obj::default()),
            _ => None,
        }
    }

    fn fields(&mut self, ours: &Obj, theirs: &Obj, dir: Dir, path: &str) {
        for (name, schema) in &ours.props {
            let p = format!("{path}.{name}");
            // In what is sent, an optional field is one left out when it is `None`.
            let left_out_when_none = dir == Dir::Send && !ours.required.contains(name);
            match theirs.props.get(name).or(theirs.extra.as_ref()) {
                Some(t) => self.compare_field(schema, &t.clone(), dir, &p, left_out_when_none),
                None => self.errors.push(format!("{p}: not in codex's schema")),
            }
        }
        if let Some(extra) = &ours.extra {
            let other_keys = theirs.extra.iter().map(|e| ("*", e));
            for (name, t) in theirs.props.iter().map(|(k, v)| (k.as_str(), v)).chain(other_keys) {
                self.compare(extra, &t.clone(), dir, &format!("{path}.{name}"));
            }
        }
        match dir {
            Dir::Read => {
                for name in ours.required.difference(&theirs.required) {
                    if theirs.props.contains_key(name) {
                        self.errors.push(format!("{path}.{name}: Ensemble requires it, codex may leave it out"));
                    }
                }
            }
            Dir::Send => {
                for name in theirs.required.difference(&ours.required) {
                    self.errors.push(format!("{path}.{name}: codex requires it, Ensemble may leave it out"));
                }
            }
        }
    }
}

/// Every row of the wire's tables, with its direction in the schema's tables.
fn tables() -> Vec<(&'static str, Dir, Dir, Vec<Row>)> {
    vec![
        (CLIENT_REQUEST, Dir::Send, Dir::Read, ClientRequest::rows()),
        (SERVER_NOTIFICATION, Dir::Read, Dir::Send, ServerNotification::rows()),
        (SERVER_REQUEST, Dir::Read, Dir::Send, ServerRequest::rows()),
    ]
}

/// Checks every table against `theirs`; returns the errors.
fn check_all(methods: &Methods, theirs: &mut Theirs) -> Vec<String> {
    let mut errors = Vec::new();
    let mut pairs: Vec<(String, Value, Value, Dir)> = Vec::new();
    for (table, params_dir, result_dir, rows) in tables() {
        for row in rows {
            let Some(entry) = methods.get(table).and_then(|t| t.get(row.method)) else {
                errors.push(format!("`{}` is no {table} method of codex's", row.method));
                continue;
            };
            let Some(params) = entry["params"].as_str() else {
                errors.push(format!("`{}` has no params in codex's schema", row.method));
                continue;
            };
            pairs.push((format!("{} params", row.method), (row.params)(params_dir), theirs.get(params), params_dir));
            if let Some((result, _)) = row.result {
                match entry.get("response").and_then(Value::as_str) {
                    Some(r) => {
                        pairs.push((format!("{} result", row.method), result(result_dir), theirs.get(r), result_dir))
                    }
                    None => errors.push(format!("`{}` has no result in codex's schema", row.method)),
                }
            }
        }
    }
    if methods.get(CLIENT_NOTIFICATION).and_then(|t| t.get(Initialized::METHOD)).is_none() {
        errors.push(format!("`{}` is no client notification of codex's", Initialized::METHOD));
    }
    // Sent inside `thread/inject_items`, whose items codex leaves open.
    pairs.push((
        "inject_items item".into(),
        schema::<ResponseItem>(Dir::Send),
        theirs.get("v2/ResponseItem"),
        Dir::Send,
    ));
    for (path, ours, t, dir) in pairs {
        let defs = ours.get("definitions").cloned().unwrap_or(json!({}));
        let mut check = Check { ours: Ours(&defs), theirs, errors: Vec::new() };
        check.compare(&ours, &t, dir, &path);
        errors.extend(check.errors);
    }
    errors
}

#[test]
fn the_wire_types_agree_with_codexs_schema() {
    let file = protocol_dir().join("schema.json");
    if let Some(bundle) = std::env::var_os("ENSEMBLE_CODEX_SCHEMA") {
        let bundle: Value = serde_json::from_slice(&std::fs::read(bundle).unwrap()).unwrap();
        let methods = bundle_methods(&bundle);
        let mut theirs = Theirs { defs: bundle["definitions"].clone(), flat: false, seen: BTreeSet::new() };
        check_all(&methods, &mut theirs);
        let definitions: Map<String, Value> = theirs
            .seen
            .iter()
            .map(|name| (name.clone(), strip_descriptions(definition(&theirs.defs, name).unwrap())))
            .collect();
        let cut = json!({
            "source": "codex app-server generate-json-schema --experimental (codex-cli 0.171.0): every method, and the definitions the wire types reach",
            "methods": methods,
            "definitions": definitions,
        });
        std::fs::write(&file, one_entry_a_line(&cut)).unwrap();
    }
    let cut: Value = serde_json::from_slice(&std::fs::read(&file).unwrap()).unwrap();
    let methods: Methods = serde_json::from_value(cut["methods"].clone()).unwrap();
    let mut theirs = Theirs { defs: cut["definitions"].clone(), flat: true, seen: BTreeSet::new() };
    let errors = check_all(&methods, &mut theirs);
    let (known, unexpected): (Vec<_>, Vec<_>) =
        errors.iter().partition(|e| KNOWN_DEVIATIONS.iter().any(|(p, _)| e.starts_with(&format!("{p}:"))));
    assert!(
        unexpected.is_empty(),
        "the wire parts from codex's schema:\n{}",
        unexpected.iter().map(|e| format!("  {e}\n")).collect::<String>()
    );
    for (path, why) in KNOWN_DEVIATIONS {
        assert!(
            known.iter().any(|e| e.starts_with(&format!("{path}:"))),
            "`{path}` no longer deviates ({why}): drop it"
        );
    }
}

#[test]
fn every_method_name_is_one_of_codexs() {
    let cut: Value = serde_json::from_slice(&std::fs::read(protocol_dir().join("schema.json")).unwrap()).unwrap();
    let has = |table: &str, m: &str| cut["methods"][table].get(m).is_some();
    for m in ClientRequest::METHODS {
        assert!(has(CLIENT_REQUEST, m), "{m}");
    }
    for m in ServerNotification::METHODS {
        assert!(has(SERVER_NOTIFICATION, m), "{m}");
    }
    for m in ServerRequest::METHODS {
        assert!(has(SERVER_REQUEST, m), "{m}");
    }
    assert!(has(CLIENT_NOTIFICATION, Initialized::METHOD));
}

// ---------------------------------------------------------------------------------------------
// Recorded transcripts.

/// Reads every message of a kind Ensemble uses, in every recorded transcript, with the wire types.
#[test]
fn recorded_transcripts_read_without_a_failure() {
    let rows: BTreeMap<&str, Row> =
        tables().into_iter().flat_map(|(_, _, _, rows)| rows).map(|r| (r.method, r)).collect();
    let mut read: BTreeMap<String, usize> = BTreeMap::new();
    let mut failures = Vec::new();
    let dir = protocol_dir().join("transcripts");
    let mut files: Vec<PathBuf> = std::fs::read_dir(&dir).unwrap().map(|e| e.unwrap().path()).collect();
    files.sort();
    assert!(!files.is_empty());
    for file in files {
        let name = file.file_name().unwrap().to_string_lossy().into_owned();
        // Ids are per process and per direction: a process's start resets them. A client's request
        // is read once codex has accepted it (some transcripts send bad params on purpose).
        let mut client_calls: BTreeMap<String, (String, Value)> = BTreeMap::new();
        let mut server_calls: BTreeMap<String, (String, Value)> = BTreeMap::new();
        for (n, line) in std::fs::read_to_string(&file).unwrap().lines().enumerate() {
            let record: Value = serde_json::from_str(line).unwrap();
            let (dir, msg) = (record["dir"].as_str().unwrap_or_default(), &record["msg"]);
            if dir == "meta" {
                client_calls.clear();
                server_calls.clear();
                continue;
            }
            let id = msg.get("id").map(Value::to_string);
            let method = msg.get("method").and_then(Value::as_str);
            let params = msg.get("params").cloned().unwrap_or(Value::Null);
            let mut outcomes = Vec::new();
            match (dir, method, id) {
                ("client->server", Some(m), Some(id)) => {
                    client_calls.insert(id, (m.to_owned(), params));
                }
                ("server->client", Some(m), Some(id)) => {
                    server_calls.insert(id, (m.to_owned(), params.clone()));
                    outcomes.push((m.to_owned(), "params", rows.get(m).map(|r| (r.read_params)(params))));
                }
                ("server->client", Some(m), None) => {
                    outcomes.push((m.to_owned(), "params", rows.get(m).map(|r| (r.read_params)(params))));
                }
                (d, None, Some(id)) if msg.get("result").is_some() => {
                    let calls = if d == "server->client" { &mut client_calls } else { &mut server_calls };
                    let Some((m, params)) = calls.remove(&id) else { continue };
                    let Some(row) = rows.get(m.as_str()) else { continue };
                    if d == "server->client" {
                        outcomes.push((m.clone(), "params", Some((row.read_params)(params))));
                    }
                    let result = row.result.map(|(_, read)| read(msg["result"].clone()));
                    outcomes.push((m, "result", result));
                }
                _ => continue,
            }
            for (method, kind, outcome) in outcomes {
                match outcome {
                    Some(Ok(())) => *read.entry(format!("{method} {kind}")).or_default() += 1,
                    Some(Err(e)) => failures.push(format!("{name}:{}: {method} {kind}: {e}", n + 1)),
                    None => {}
                }
            }
        }
    }
    assert!(failures.is_empty(), "unreadable:\n{}", failures.join("\n"));
    let total: usize = read.values().sum();
    assert!(total > 300, "{read:#?}");
    for seen in [
        "item/started params",
        "turn/completed params",
        "item/commandExecution/requestApproval params",
        "thread/fork result",
    ] {
        assert!(read.contains_key(seen), "no {seen} in the transcripts: {read:#?}");
    }
}
