//! Ids Ensemble hands out for what an agent asks (interaction request ids), built from the agent's
//! own JSON-RPC ids. Clients send them back in URLs, so they follow the id rules of
//! `ensemble_core::limits` whatever the agent used: a string id with other characters is
//! escaped (`~` and two hex digits per byte, so two different ids never collide), and one too long
//! is replaced by its digest.

use ensemble_core::limits::MAX_ID_BYTES;
use serde_json::Value;
use sha2::{Digest, Sha256};

/// `<prefix>-<the agent's id>`, safe as an Ensemble id.
pub fn request_id(prefix: &str, rpc_id: &Value) -> String {
    let raw = match rpc_id {
        Value::String(s) => s.clone(),
        other => other.to_string(),
    };
    let mut escaped = String::with_capacity(raw.len());
    for b in raw.bytes() {
        if b.is_ascii_alphanumeric() || matches!(b, b'.' | b'_' | b':' | b'-') {
            escaped.push(b as char);
        } else {
            escaped.push_str(&format!("~{b:02x}"));
        }
    }
    let id = format!("{prefix}-{escaped}");
    if id.len() <= MAX_ID_BYTES {
        return id;
    }
    let digest: String = Sha256::digest(raw.as_bytes()).iter().take(16).map(|b| format!("{b:02x}")).collect();
    format!("{prefix}-h{digest}")
}

#[cfg(test)]
mod tests {
    use ensemble_core::limits::check_id;
    use serde_json::json;

    use super::*;

    #[test]
    fn agent_ids_become_valid_distinct_ids() {
        let cases =
            [json!(0), json!(17), json!("abc"), json!("a b/c"), json!("a~20b"), json!("é"), json!("x".repeat(300))];
        let ids: Vec<String> = cases.iter().map(|c| request_id("n0nce", c)).collect();
        for id in &ids {
            assert!(check_id("requestId", id).is_ok(), "{id}");
        }
        let unique: std::collections::BTreeSet<&String> = ids.iter().collect();
        assert_eq!(unique.len(), ids.len(), "{ids:?}");
        assert_eq!(ids[1], "n0nce-17");
        assert_eq!(ids[3], "n0nce-a~20b~2fc");
    }
}
