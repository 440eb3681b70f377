//! [`SharedList`]: a list a provider offers every session it starts (its modes, a config option's
//! choices, its commands), shared between them and serialised once.

use std::fmt;
use std::ops::Deref;
use std::sync::Arc;

use serde::{Deserialize, Deserializer, Serialize, Serializer};
use serde_json::value::RawValue;

/// A read-only list shared by reference count, carrying its JSON when a provider built it.
///
/// Why: a session start serialised the same provider lists three times (the session record, the
/// `session.started` and `commands.updated` events, the REST answer) — about a sixteenth of the
/// server's CPU per start. Built once per provider, the JSON is written as it is.
///
/// A list read back from the store carries no JSON and serialises its items: restored sessions
/// keep only what they kept before (their own copies), not a second one in JSON.
pub struct SharedList<T>(Arc<Inner<T>>);

struct Inner<T> {
    items: Box<[T]>,
    json: Option<Box<RawValue>>,
}

impl<T: Serialize> SharedList<T> {
    /// A list with its JSON made now (what providers build once and hand to every session).
    pub fn new(items: Vec<T>) -> Self {
        let items = items.into_boxed_slice();
        // A list that cannot be serialised here fails again (and is reported) wherever it is
        // serialised, as it would without the copy.
        let json = serde_json::value::to_raw_value(&items).ok();
        SharedList(Arc::new(Inner { items, json }))
    }
}

impl<T> SharedList<T> {
    /// A list without its JSON (what the store reads back).
    fn plain(items: Vec<T>) -> Self {
        SharedList(Arc::new(Inner { items: items.into_boxed_slice(), json: None }))
    }

    /// Whether it has no items (for `skip_serializing_if`, which cannot reach the slice's).
    pub fn is_empty(&self) -> bool {
        self.0.items.is_empty()
    }

    /// The length of its JSON, when it carries it.
    pub fn json_len(&self) -> Option<usize> {
        self.0.json.as_ref().map(|j| j.get().len())
    }

    /// Whether both are the same shared list (not just equal).
    #[cfg(test)]
    fn ptr_eq(a: &Self, b: &Self) -> bool {
        Arc::ptr_eq(&a.0, &b.0)
    }
}

impl<T> Clone for SharedList<T> {
    fn clone(&self) -> Self {
        SharedList(self.0.clone())
    }
}

impl<T> Deref for SharedList<T> {
    type Target = [T];
    fn deref(&self) -> &[T] {
        &self.0.items
    }
}

impl<T: Serialize> From<Vec<T>> for SharedList<T> {
    fn from(items: Vec<T>) -> Self {
        SharedList::new(items)
    }
}

impl<T: Serialize, const N: usize> From<[T; N]> for SharedList<T> {
    fn from(items: [T; N]) -> Self {
        SharedList::new(items.into())
    }
}

impl<T: Serialize> FromIterator<T> for SharedList<T> {
    fn from_iter<I: IntoIterator<Item = T>>(iter: I) -> Self {
        SharedList::new(iter.into_iter().collect())
    }
}

impl<T: Serialize> Default for SharedList<T> {
    /// Empty, without JSON: every new session starts with one, so it costs no serialising.
    fn default() -> Self {
        SharedList::plain(Vec::new())
    }
}

impl<T: PartialEq> PartialEq for SharedList<T> {
    fn eq(&self, other: &Self) -> bool {
        // The same list (the usual case: copies of a session) is equal without a look.
        Arc::ptr_eq(&self.0, &other.0) || self.0.items == other.0.items
    }
}

impl<T: Eq> Eq for SharedList<T> {}

impl<T: fmt::Debug> fmt::Debug for SharedList<T> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        self.0.items.fmt(f)
    }
}

impl<T: Serialize> Serialize for SharedList<T> {
    fn serialize<S: Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        // `RawValue` is written verbatim by serde_json's serialisers (text and `Value`), the
        // only ones these types meet.
        match &self.0.json {
            Some(json) => json.serialize(serializer),
            None => self.0.items.serialize(serializer),
        }
    }
}

impl<'de, T: Deserialize<'de>> Deserialize<'de> for SharedList<T> {
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        Vec::<T>::deserialize(deserializer).map(SharedList::plain)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
    struct Item {
        id: String,
        #[serde(skip_serializing_if = "Option::is_none")]
        note: Option<String>,
    }

    fn items() -> Vec<Item> {
        vec![Item { id: "a\"b".into(), note: None }, Item { id: "c".into(), note: Some("é\n".into()) }]
    }

    #[derive(Serialize, Deserialize)]
    struct Holder {
        list: SharedList<Item>,
        n: u8,
    }

    #[test]
    fn a_built_list_serialises_as_its_items_would_in_every_serde_json_form() {
        let holder = Holder { list: SharedList::new(items()), n: 1 };
        let plain = serde_json::json!({ "list": items(), "n": 1 });
        assert_eq!(serde_json::to_string(&holder).unwrap(), plain.to_string());
        assert_eq!(serde_json::to_vec(&holder).unwrap(), plain.to_string().into_bytes());
        assert_eq!(serde_json::to_value(&holder).unwrap(), plain);
        let pretty: serde_json::Value = serde_json::from_str(&serde_json::to_string_pretty(&holder).unwrap()).unwrap();
        assert_eq!(pretty, plain);
    }

    #[test]
    fn a_list_read_back_equals_the_built_one_and_serialises_the_same() {
        let built = SharedList::new(items());
        let text = serde_json::to_string(&Holder { list: built.clone(), n: 2 }).unwrap();
        let back: Holder = serde_json::from_str(&text).unwrap();
        assert_eq!(back.list, built);
        assert!(back.list.0.json.is_none(), "a list read back keeps no second copy in JSON");
        assert_eq!(serde_json::to_string(&back).unwrap(), text);
    }

    #[test]
    fn clones_share_one_list() {
        let a: SharedList<Item> = items().into_iter().collect();
        let b = a.clone();
        assert!(SharedList::ptr_eq(&a, &b));
        assert!(!SharedList::ptr_eq(&a, &SharedList::new(items())));
        assert_eq!(a.len(), 2);
        assert_eq!(a[0].id, "a\"b");
    }
}
