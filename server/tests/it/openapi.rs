//! The committed OpenAPI document is what the server generates.

use std::collections::BTreeSet;

#[test]
fn committed_openapi_matches_the_generated_one() {
    let generated = ensemble_server::openapi::pretty(&ensemble_server::router::openapi());
    let path = concat!(env!("CARGO_MANIFEST_DIR"), "/../openapi/openapi.json");
    let committed = std::fs::read_to_string(path).unwrap_or_default();
    if committed != generated {
        let first = committed
            .lines()
            .zip(generated.lines())
            .position(|(a, b)| a != b)
            .unwrap_or(committed.lines().count().min(generated.lines().count()));
        panic!(
            "openapi/openapi.json is out of date (first difference at line {}).\n\
             Regenerate it with: cargo run -q -p ensemble-server -- openapi > openapi/openapi.json",
            first + 1
        );
    }
}

#[test]
fn every_event_type_and_contract_route_is_documented() {
    let doc: serde_json::Value =
        serde_json::from_str(&ensemble_server::openapi::pretty(&ensemble_server::router::openapi())).unwrap();
    let paths: BTreeSet<&str> = doc["paths"].as_object().unwrap().keys().map(String::as_str).collect();
    for p in [
        "/v1/providers",
        "/v1/rooms",
        "/v1/rooms/{roomId}/sessions",
        "/v1/rooms/{roomId}/sessions/{sessionId}",
        "/v1/rooms/{roomId}/sessions/{sessionId}/turns",
        "/v1/rooms/{roomId}/sessions/{sessionId}/cancel",
        "/v1/rooms/{roomId}/sessions/{sessionId}/resume",
        "/v1/rooms/{roomId}/sessions/{sessionId}/release",
        "/v1/rooms/{roomId}/sessions/{sessionId}/disconnect",
        "/v1/rooms/{roomId}/sessions/{sessionId}/interactions",
        "/v1/rooms/{roomId}/sessions/{sessionId}/interactions/{requestId}",
        "/v1/rooms/{roomId}/sessions/{sessionId}/side-capabilities",
        "/v1/rooms/{roomId}/sessions/{sessionId}/sides",
        "/v1/rooms/{roomId}/sessions/{sessionId}/goal",
        "/v1/rooms/{roomId}/sessions/{sessionId}/goal/pause",
        "/v1/rooms/{roomId}/sessions/{sessionId}/goal/resume",
        "/v1/rooms/{roomId}/events",
        "/v1/rooms/{roomId}/ws",
        "/healthz",
        "/readyz",
        "/metrics",
        "/openapi.json",
    ] {
        assert!(paths.contains(p), "{p} is not documented");
    }
    let schemas = &doc["components"]["schemas"];
    let mapping = doc["components"]["schemas"]["Event"]["discriminator"]["mapping"].as_object().unwrap();
    let types: BTreeSet<&str> = mapping.keys().map(String::as_str).collect();
    for t in [
        "session.started",
        "session.updated",
        "session.completed",
        "session.failed",
        "turn.started",
        "turn.completed",
        "turn.failed",
        "turn.canceled",
        "message.delta",
        "message.completed",
        "reasoning.delta",
        "call.started",
        "call.updated",
        "call.completed",
        "interaction.requested",
        "interaction.resolved",
        "usage.updated",
        "commands.updated",
        "goal.updated",
        "goal.cleared",
    ] {
        assert!(types.contains(t), "event type {t} has no schema");
    }
    // The event table is the one list: the document has exactly its types.
    let table: BTreeSet<&str> = ensemble_core::event::EventBody::TYPE_NAMES.iter().copied().collect();
    assert_eq!(types, table);
    let envelope = ["seq", "roomId", "eventId", "sessionId", "scope", "occurredAtMs", "type", "payload"];
    for (t, target) in mapping {
        let name = target.as_str().unwrap().trim_start_matches("#/components/schemas/");
        let v = &schemas[name];
        assert_eq!(v["properties"]["type"]["enum"], serde_json::json!([t]), "{name} is the `{t}` variant");
        assert!(v["properties"]["payload"]["$ref"].is_string(), "every payload has a schema: {v}");
        for field in envelope {
            assert!(v["required"].as_array().unwrap().iter().any(|r| r == field), "{name} requires {field}");
        }
    }
}

/// The four unions are `oneOf`s of named object schemas with a discriminator whose mapping names
/// every variant; nothing is an `allOf` around a `oneOf`; every response has a description.
#[test]
fn unions_are_named_and_discriminated_and_responses_described() {
    let doc: serde_json::Value =
        serde_json::from_str(&ensemble_server::openapi::pretty(&ensemble_server::router::openapi())).unwrap();
    let schemas = doc["components"]["schemas"].as_object().unwrap();
    for union in ["Event", "ServerFrame", "ClientFrame", "InputItem"] {
        let u = &schemas[union];
        let refs: BTreeSet<&str> = u["oneOf"].as_array().unwrap().iter().map(|r| r["$ref"].as_str().unwrap()).collect();
        assert_eq!(u["discriminator"]["propertyName"], "type", "{union}");
        let mapped: BTreeSet<&str> =
            u["discriminator"]["mapping"].as_object().unwrap().values().map(|v| v.as_str().unwrap()).collect();
        assert_eq!(refs, mapped, "{union}: the mapping names every variant");
        for r in refs {
            let v = &schemas[r.trim_start_matches("#/components/schemas/")];
            assert_eq!(v["type"], "object", "{r}");
            assert_eq!(v["properties"]["type"]["enum"].as_array().unwrap().len(), 1, "{r}");
        }
    }
    assert!(!schemas.contains_key("EventBody"));
    // An allOf may merge objects (`Interaction`), never wrap a union.
    for (name, schema) in schemas {
        for part in schema["allOf"].as_array().into_iter().flatten() {
            let target = part["$ref"].as_str().unwrap_or_default().trim_start_matches("#/components/schemas/");
            assert!(
                part.get("oneOf").is_none() && schemas.get(target).is_none_or(|t| t.get("oneOf").is_none()),
                "{name}"
            );
        }
    }
    for (path, item) in doc["paths"].as_object().unwrap() {
        for (method, op) in item.as_object().unwrap() {
            for (status, r) in op["responses"].as_object().unwrap() {
                assert!(r["description"].as_str().is_some_and(|d| !d.is_empty()), "{method} {path} {status}");
            }
        }
    }
}

/// Every id the document constrains states the server's id rule (`limits::ID_PATTERN`, 1–128).
#[test]
fn ids_are_documented_with_the_servers_rule() {
    let doc = ensemble_server::openapi::pretty(&ensemble_server::router::openapi());
    let pattern_json = serde_json::to_string(ensemble_core::limits::ID_PATTERN).unwrap();
    let uses = doc.matches(&format!("\"pattern\": {pattern_json}")).count();
    // roomId and sessionId in paths, requestId, clientSubmitId (turns, goals, goal queries),
    // sessionId, sideSessionId and the side's requestId in bodies.
    assert!(uses >= 9, "the id pattern is stated {uses} times");
    let any_other_id_pattern = doc.lines().filter(|l| l.contains("\"pattern\"") && l.contains("A-Za-z0-9")).count();
    assert_eq!(any_other_id_pattern, uses, "every id pattern is the server's");
}
