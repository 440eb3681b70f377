//! Answers to the questions of a `userInput` interaction: a map from question id to the answer.

use std::collections::BTreeMap;

use serde::{Deserialize, Deserializer, Serialize};
use serde_json::Value;

/// One question's answer: its text, or the options chosen (codex's form, `{"answers": [...]}`).
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
#[cfg_attr(feature = "schema", derive(utoipa::ToSchema))]
#[serde(untagged)]
pub enum QuestionAnswer {
    Text(String),
    Choices(AnswerChoices),
}

/// The options chosen for a question.
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
#[cfg_attr(feature = "schema", derive(utoipa::ToSchema))]
#[serde(deny_unknown_fields)] // (for the schema: additionalProperties false; reading is by hand below)
pub struct AnswerChoices {
    pub answers: Vec<String>,
}

/// Answers keyed by question id.
pub type Answers = BTreeMap<String, QuestionAnswer>;

/// Exactly the two documented shapes: a string, or an object whose only field is `answers`, an
/// array of strings (serde's derived forms would also take arrays for structs).
impl<'de> Deserialize<'de> for QuestionAnswer {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        use serde::de::Error;
        match Value::deserialize(d)? {
            Value::String(s) => Ok(Self::Text(s)),
            Value::Object(mut o) if o.len() == 1 => match o.remove("answers") {
                Some(Value::Array(items)) => items
                    .into_iter()
                    .map(|i| match i {
                        Value::String(s) => Ok(s),
                        _ => Err(D::Error::custom("`answers` must hold strings")),
                    })
                    .collect::<Result<Vec<_>, _>>()
                    .map(|answers| Self::Choices(AnswerChoices { answers })),
                _ => Err(D::Error::custom("an answer object holds only `answers`, an array of strings")),
            },
            _ => Err(D::Error::custom("an answer is a string or {\"answers\": [strings]}")),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn only_the_documented_shapes_are_answers() {
        let a: Answers = serde_json::from_str(r#"{"q1":"blue","q2":{"answers":["a","b"]}}"#).unwrap();
        assert_eq!(a["q1"], QuestionAnswer::Text("blue".into()));
        assert_eq!(a["q2"], QuestionAnswer::Choices(AnswerChoices { answers: vec!["a".into(), "b".into()] }));
        assert_eq!(serde_json::to_string(&a).unwrap(), r#"{"q1":"blue","q2":{"answers":["a","b"]}}"#);
        for bad in [r#"{"q":1}"#, r#"{"q":[["x"]]}"#, r#"{"q":{"answers":[1]}}"#, r#"{"q":{"answers":[],"x":1}}"#, "[]"]
        {
            assert!(serde_json::from_str::<Answers>(bad).is_err(), "{bad}");
        }
    }
}
