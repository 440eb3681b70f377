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
    let variants = doc["components"]["schemas"]["EventBody"]["oneOf"].as_array().unwrap();
    let types: BTreeSet<&str> = variants.iter().map(|v| v["properties"]["type"]["enum"][0].as_str().unwrap()).collect();
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
    for v in variants {
        assert!(v["properties"]["payload"]["$ref"].is_string(), "every payload has a schema: {v}");
    }
}
