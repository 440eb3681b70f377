//! The passes that turn what utoipa derives into the document generators understand (OpenAPI 3.1,
//! no warnings from `openapi-spec-validator`, `openapi-python-client` or `openapi-typescript`):
//!
//! - **Named unions.** `Event`, `ServerFrame`, `ClientFrame`, `InputItem` and `WorkspaceSpec` (tagged
//!   by `kind`) become `oneOf`s of named
//!   object schemas (`MessageDeltaEvent`, `HelloFrame`, `PingFrame`, `TextInput`, …), each with its
//!   `type` as a single-value enum, and a `discriminator` on `type` with an explicit mapping. An
//!   event's envelope (`seq`, `roomId`, …) is written into every event variant, never as an `allOf`
//!   around a `oneOf`. The wire JSON is the same; only its description changes.
//! - **Every response described**: the shared `4XX` and `5XX` error responses get one description.
//! - **Free-form objects say so**: a bare `{"type": "object"}` gets `additionalProperties: true`.
//!
//! The passes work on the document as JSON and fail loudly (in the test that diffs the committed
//! document) rather than quietly when utoipa's output changes shape.

use serde_json::{Map, Value, json};

/// What the shared error responses say.
const CLIENT_ERROR: &str =
    "Refused: the error's `code` says why (bad input, no or a wrong token, not found, conflict, unsupported, …)";
const SERVER_ERROR: &str = "The server or the agent failed, or is at capacity (then with `Retry-After`); the error's \
     `code` says why";

/// Why a pass could not run: utoipa's output no longer has the shape it expects.
#[derive(Debug, thiserror::Error)]
#[error("the OpenAPI document's {0} has an unexpected shape")]
pub struct Unexpected(pub String);

/// Runs every pass over the document.
pub fn finish(doc: &mut Value) -> Result<(), Unexpected> {
    describe_responses(doc);
    roles(doc);
    open_free_objects(doc);
    let schemas = doc
        .pointer_mut("/components/schemas")
        .and_then(Value::as_object_mut)
        .ok_or_else(|| Unexpected("components".into()))?;
    events(schemas)?;
    webhook_events(schemas)?;
    union(schemas, "ServerFrame", "type", |t| format!("{}Frame", pascal(t)))?;
    union(schemas, "ClientFrame", "type", |t| format!("{}Frame", pascal(t)))?;
    union(schemas, "InputItem", "type", |t| format!("{}Input", pascal(t)))?;
    union(schemas, "WorkspaceSpec", "kind", |t| format!("{}Workspace", pascal(t)))?;
    Ok(())
}

/// A new webhook's `events` lists the names it may take, from the table of event types (its
/// webhook column), so the list is written once.
fn webhook_events(schemas: &mut Map<String, Value>) -> Result<(), Unexpected> {
    let names: Vec<String> = ensemble_core::event::EventBody::WEBHOOK_NAMES.iter().map(|n| format!("`{n}`")).collect();
    let events = schemas
        .get_mut("CreateWebhook")
        .and_then(|s| s.pointer_mut("/properties/events"))
        .and_then(Value::as_object_mut)
        .ok_or_else(|| Unexpected("CreateWebhook.events".into()))?;
    events.insert("description".into(), Value::String(format!("The event types it gets: {}.", names.join(", "))));
    Ok(())
}

/// `message.delta` → `MessageDelta`, `side_event` → `SideEvent`.
pub fn pascal(tag: &str) -> String {
    tag.split(['.', '_', '-'])
        .filter(|w| !w.is_empty())
        .map(|w| {
            let mut c = w.chars();
            c.next().map(|f| f.to_ascii_uppercase().to_string() + c.as_str()).unwrap_or_default()
        })
        .collect()
}

/// Each operation's security requirement, from its access declaration (`x-ensemble-access`,
/// written in its `#[utoipa::path]`; see `access::table`): `[{"bearer": [ROLE]}]` (OpenAPI 3.1
/// lets a non-OAuth scheme list the roles an operation needs), or `[{}]` for the tokenless.
fn roles(doc: &mut Value) {
    let Some(paths) = doc.get_mut("paths").and_then(Value::as_object_mut) else { return };
    for op in paths.values_mut().filter_map(Value::as_object_mut).flat_map(|p| p.values_mut()) {
        let Some(op) = op.as_object_mut() else { continue };
        let Some(access) = op.get(crate::access::table::EXTENSION) else { continue };
        let security = match access.get("role") {
            Some(role) => json!([{ "bearer": [role] }]),
            None => json!([{}]),
        };
        op.insert("security".into(), security);
    }
}

fn describe_responses(doc: &mut Value) {
    let Some(paths) = doc.get_mut("paths").and_then(Value::as_object_mut) else { return };
    for op in paths.values_mut().filter_map(Value::as_object_mut).flat_map(|p| p.values_mut()) {
        let Some(responses) = op.get_mut("responses").and_then(Value::as_object_mut) else { continue };
        for (status, response) in responses.iter_mut() {
            let Some(r) = response.as_object_mut() else { continue };
            if r.get("description").and_then(Value::as_str).is_some_and(|d| !d.is_empty()) {
                continue;
            }
            let text = match status.as_str() {
                "4XX" => CLIENT_ERROR,
                "5XX" => SERVER_ERROR,
                _ => "OK",
            };
            r.insert("description".into(), Value::String(text.into()));
        }
    }
}

/// A bare `{"type": "object"}` (no properties) is any object: say so (`additionalProperties: true`),
/// or TypeScript generators read it as an object with no fields (`Record<string, never>`).
fn open_free_objects(v: &mut Value) {
    match v {
        Value::Object(o) => {
            let bare = o.get("type").and_then(Value::as_str) == Some("object")
                && !o.contains_key("properties")
                && !o.contains_key("additionalProperties");
            if bare {
                o.insert("additionalProperties".into(), Value::Bool(true));
            }
            o.values_mut().for_each(open_free_objects);
        }
        Value::Array(a) => a.iter_mut().for_each(open_free_objects),
        _ => {}
    }
}

/// The single value of an inline variant's tag property (`type`, or `kind`).
fn tag_of(variant: &Value, tag: &str) -> Option<String> {
    let values = variant.pointer(&format!("/properties/{tag}/enum"))?.as_array()?;
    match values.as_slice() {
        [Value::String(t)] => Some(t.clone()),
        _ => None,
    }
}

fn reference(name: &str) -> String {
    format!("#/components/schemas/{name}")
}

/// Moves the inline object variants of a `oneOf` into named schemas (with `name(tag)`), and makes
/// the union a `oneOf` of references with a discriminator. `extend` adds to each variant.
fn name_variants(
    schemas: &mut Map<String, Value>,
    union_name: &str,
    tag_property: &str,
    variants: Vec<Value>,
    name: impl Fn(&str) -> String,
    extend: impl Fn(&mut Map<String, Value>),
) -> Result<(Vec<Value>, Map<String, Value>), Unexpected> {
    let mut refs = Vec::new();
    let mut mapping = Map::new();
    for variant in variants {
        let tag = tag_of(&variant, tag_property).ok_or_else(|| Unexpected(format!("{union_name} variant")))?;
        let Value::Object(mut object) = variant else { return Err(Unexpected(format!("{union_name} variant"))) };
        extend(&mut object);
        let variant_name = name(&tag);
        if schemas.insert(variant_name.clone(), Value::Object(object)).is_some() {
            return Err(Unexpected(format!("{union_name} variant name {variant_name} (taken)")));
        }
        refs.push(json!({ "$ref": reference(&variant_name) }));
        mapping.insert(tag, Value::String(reference(&variant_name)));
    }
    Ok((refs, mapping))
}

/// A tagged union whose variants utoipa wrote inline.
fn union(
    schemas: &mut Map<String, Value>,
    union_name: &str,
    tag_property: &str,
    name: impl Fn(&str) -> String,
) -> Result<(), Unexpected> {
    let mut schema = schemas.remove(union_name).ok_or_else(|| Unexpected(union_name.into()))?;
    let variants = match schema.get_mut("oneOf").map(Value::take) {
        Some(Value::Array(v)) => v,
        _ => return Err(Unexpected(union_name.into())),
    };
    let (refs, mapping) = name_variants(schemas, union_name, tag_property, variants, name, |_| {})?;
    let obj = schema.as_object_mut().ok_or_else(|| Unexpected(union_name.into()))?;
    obj.insert("oneOf".into(), Value::Array(refs));
    obj.insert("discriminator".into(), json!({ "propertyName": tag_property, "mapping": mapping }));
    schemas.insert(union_name.into(), schema);
    Ok(())
}

/// `Event` is utoipa's `allOf` of `EventBody` (the 25-way `oneOf` of `type` and `payload`) and the
/// envelope: every variant gets the envelope's fields, and `EventBody` goes.
fn events(schemas: &mut Map<String, Value>) -> Result<(), Unexpected> {
    let bad = || Unexpected("Event".into());
    let event = schemas.remove("Event").ok_or_else(bad)?;
    let body = schemas.remove("EventBody").ok_or_else(bad)?;
    let envelope = event
        .get("allOf")
        .and_then(Value::as_array)
        .and_then(|parts| parts.iter().find(|p| p.get("properties").is_some()))
        .cloned()
        .ok_or_else(bad)?;
    let env_props = envelope.get("properties").and_then(Value::as_object).cloned().ok_or_else(bad)?;
    let env_required = envelope.get("required").and_then(Value::as_array).cloned().unwrap_or_default();
    let variants = body.get("oneOf").and_then(Value::as_array).cloned().ok_or_else(bad)?;
    let (refs, mapping) = name_variants(
        schemas,
        "Event",
        "type",
        variants,
        |t| format!("{}Event", pascal(t)),
        |variant| {
            let tag = tag_of(&Value::Object(variant.clone()), "type").unwrap_or_default();
            let own = variant.remove("properties").and_then(|p| p.as_object().cloned()).unwrap_or_default();
            let own_required = variant.remove("required").and_then(|r| r.as_array().cloned()).unwrap_or_default();
            let mut props = env_props.clone();
            props.extend(own);
            let mut required = env_required.clone();
            required.extend(own_required.into_iter().filter(|r| !env_required.contains(r)));
            variant.insert("type".into(), Value::String("object".into()));
            if !variant.contains_key("description") {
                variant.insert("description".into(), Value::String(format!("A `{tag}` event.")));
            }
            variant.insert("required".into(), Value::Array(required));
            variant.insert("properties".into(), Value::Object(props));
        },
    )?;
    let mut union = Map::new();
    if let Some(d) = event.get("description") {
        union.insert("description".into(), d.clone());
    }
    union.insert("oneOf".into(), Value::Array(refs));
    union.insert("discriminator".into(), json!({ "propertyName": "type", "mapping": mapping }));
    schemas.insert("Event".into(), Value::Object(union));
    if serde_json::to_string(&*schemas).is_ok_and(|s| s.contains(&reference("EventBody"))) {
        return Err(Unexpected("EventBody (still referenced)".into()));
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn tags_become_names() {
        assert_eq!(pascal("message.delta"), "MessageDelta");
        assert_eq!(pascal("goal.reconcile_required"), "GoalReconcileRequired");
        assert_eq!(pascal("side_event"), "SideEvent");
        assert_eq!(pascal("text"), "Text");
    }
}
