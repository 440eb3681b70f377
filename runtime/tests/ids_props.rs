//! The id rule the server enforces (`limits::check_id`) and the pattern the OpenAPI document states
//! (`limits::ID_PATTERN`, with `maxLength` 128) accept exactly the same strings.

#![allow(clippy::unwrap_used, clippy::expect_used, reason = "tests fail loudly")]

use ensemble_core::limits::{ID_PATTERN, MAX_ID_BYTES, check_id};
use proptest::prelude::*;

fn documented(id: &str) -> bool {
    let pattern = regex::Regex::new(ID_PATTERN).expect("the documented pattern compiles");
    // JSON Schema's maxLength counts characters; an id's are ASCII, so bytes.
    pattern.is_match(id) && !id.is_empty() && id.chars().count() <= MAX_ID_BYTES
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(512))]

    #[test]
    fn the_document_and_the_server_agree_on_ids(id in "[A-Za-z0-9._~:/ %é-]{0,140}") {
        prop_assert_eq!(documented(&id), check_id("id", &id).is_ok(), "{:?}", id);
    }

    #[test]
    fn dots_alone_are_never_ids(n in 1usize..140) {
        prop_assert!(check_id("id", &".".repeat(n)).is_err());
    }

    #[test]
    fn any_string_is_judged_without_panicking(id in any::<String>()) {
        let _ = check_id("id", &id);
    }
}
