//! An agent's `elicitation/create` as a question for the user, and the user's answer as the
//! elicitation's response. A form becomes one question per field of its schema (a choice's
//! values as the question's options, a yes/no field as `yes`/`no`); a URL becomes one question
//! whose text is the URL to open, answered by accepting once done.

use ensemble_core::event::{Decision, Question, QuestionOption};
use serde_json::Value;

use super::wire as acp;

/// What a field's answer must be turned into.
#[derive(Clone, Debug, PartialEq)]
pub(super) enum FieldKind {
    Text,
    Integer,
    Number,
    Boolean,
    /// One of these values (by the label shown, or the value itself).
    Choice(Vec<(String, String)>),
    /// Several of these values.
    Choices(Vec<(String, String)>),
}

/// One field of a form, as asked.
#[derive(Clone, Debug, PartialEq)]
pub(super) struct Field {
    pub id: String,
    pub kind: FieldKind,
    pub required: bool,
}

/// A request as the user is asked it.
pub(super) struct Asked {
    pub title: String,
    pub questions: Vec<Question>,
    pub fields: Vec<Field>,
}

fn question(id: &str, header: Option<&str>, text: String, options: Vec<QuestionOption>, is_other: bool) -> Question {
    Question {
        id: id.to_owned(),
        header: header.map(str::to_owned),
        question: text,
        options,
        is_other,
        is_secret: false,
    }
}

fn labels(choices: &[(String, String)]) -> Vec<QuestionOption> {
    choices.iter().map(|(_, label)| QuestionOption { label: label.clone(), description: None }).collect()
}

/// The session the request is for, when it names one.
pub(super) fn session_of(request: &acp::CreateElicitationRequest) -> Option<String> {
    match request.scope() {
        acp::ElicitationScope::Session(s) => Some(s.session_id.0.to_string()),
        _ => None,
    }
}

/// The questions of a request; `None` for a mode Ensemble does not know.
pub(super) fn ask(request: &acp::CreateElicitationRequest) -> Option<Asked> {
    let title = ensemble_core::limits::clip(&request.message);
    match &request.mode {
        acp::ElicitationMode::Form(form) => {
            let required = form.requested_schema.required.clone().unwrap_or_default();
            let mut questions = Vec::new();
            let mut fields = Vec::new();
            for (id, schema) in &form.requested_schema.properties {
                use acp::ElicitationPropertySchema as P;
                let (header, description, kind) = match schema {
                    P::String(s) => {
                        let choices: Option<Vec<(String, String)>> = s
                            .one_of
                            .as_ref()
                            .map(|o| o.iter().map(|e| (e.value.clone(), e.title.clone())).collect())
                            .or_else(|| {
                                s.enum_values.as_ref().map(|v| v.iter().map(|x| (x.clone(), x.clone())).collect())
                            });
                        let kind = choices.map_or(FieldKind::Text, FieldKind::Choice);
                        (s.title.clone(), s.description.clone(), kind)
                    }
                    P::Number(n) => (n.title.clone(), n.description.clone(), FieldKind::Number),
                    P::Integer(n) => (n.title.clone(), n.description.clone(), FieldKind::Integer),
                    P::Boolean(b) => (b.title.clone(), b.description.clone(), FieldKind::Boolean),
                    P::Array(a) => {
                        let choices = serde_json::to_value(&a.items)
                            .ok()
                            .map(|items| {
                                let values = items.get("enum").and_then(Value::as_array).cloned().unwrap_or_default();
                                let titled = items.get("anyOf").and_then(Value::as_array).cloned().unwrap_or_default();
                                let mut out: Vec<(String, String)> = values
                                    .iter()
                                    .filter_map(Value::as_str)
                                    .map(|v| (v.to_owned(), v.to_owned()))
                                    .collect();
                                out.extend(titled.iter().filter_map(|t| {
                                    let v = t.get("const")?.as_str()?.to_owned();
                                    let l =
                                        t.get("title").and_then(Value::as_str).map_or_else(|| v.clone(), str::to_owned);
                                    Some((v, l))
                                }));
                                out
                            })
                            .unwrap_or_default();
                        (a.title.clone(), a.description.clone(), FieldKind::Choices(choices))
                    }
                    _ => (None, None, FieldKind::Text),
                };
                let header = header.as_deref().map(ensemble_core::limits::clip);
                let text = description
                    .as_deref()
                    .or(header.as_deref())
                    .map_or_else(|| id.clone(), ensemble_core::limits::clip);
                let (options, is_other) = match &kind {
                    FieldKind::Choice(c) | FieldKind::Choices(c) => (labels(c), false),
                    FieldKind::Boolean => (
                        vec![
                            QuestionOption { label: "yes".into(), description: None },
                            QuestionOption { label: "no".into(), description: None },
                        ],
                        false,
                    ),
                    _ => (Vec::new(), true),
                };
                questions.push(question(id, header.as_deref(), text, options, is_other));
                fields.push(Field { id: id.clone(), kind, required: required.contains(id) });
            }
            Some(Asked { title, questions, fields })
        }
        acp::ElicitationMode::Url(url) => {
            let text = format!("Open {} and finish there, then accept.", url.url);
            Some(Asked {
                title,
                questions: vec![question("url", Some("Open a page"), text, Vec::new(), false)],
                fields: Vec::new(),
            })
        }
        _ => None,
    }
}

/// The answer's text(s) for question `id`: a string, or `{"answers": [...]}`.
fn texts(answers: Option<&Value>, id: &str) -> Vec<String> {
    match answers.and_then(|a| a.get(id)) {
        Some(Value::String(s)) => vec![s.clone()],
        Some(Value::Object(o)) => o
            .get("answers")
            .and_then(Value::as_array)
            .map(|a| a.iter().filter_map(Value::as_str).map(str::to_owned).collect())
            .unwrap_or_default(),
        _ => Vec::new(),
    }
}

fn pick(choices: &[(String, String)], text: &str) -> Option<String> {
    choices.iter().find(|(v, l)| l == text || v == text).map(|(v, _)| v.clone())
}

/// The elicitation's response to the user's answer. An accept whose answers do not fit the form
/// is the caller's mistake, said in the error.
pub(super) fn respond(
    decision: Decision,
    answers: Option<&Value>,
    fields: &[Field],
) -> Result<acp::CreateElicitationResponse, String> {
    if !decision.accepts() {
        let action = if decision == Decision::Decline {
            acp::ElicitationAction::Decline
        } else {
            acp::ElicitationAction::Cancel
        };
        return Ok(acp::CreateElicitationResponse::new(action));
    }
    let mut content = std::collections::BTreeMap::new();
    for f in fields {
        let given = texts(answers, &f.id);
        let Some(first) = given.first() else {
            if f.required {
                return Err(format!("the question `{}` needs an answer", f.id));
            }
            continue;
        };
        let bad = || format!("`{first}` is not an answer to `{}`", f.id);
        let value = match &f.kind {
            FieldKind::Text => acp::ElicitationContentValue::String(first.clone()),
            FieldKind::Integer => acp::ElicitationContentValue::Integer(first.trim().parse().map_err(|_| bad())?),
            FieldKind::Number => {
                let n: f64 = first.trim().parse().map_err(|_| bad())?;
                if !n.is_finite() {
                    return Err(bad());
                }
                acp::ElicitationContentValue::Number(n)
            }
            FieldKind::Boolean => acp::ElicitationContentValue::Boolean(match first.trim() {
                "yes" | "true" => true,
                "no" | "false" => false,
                _ => return Err(bad()),
            }),
            FieldKind::Choice(c) => acp::ElicitationContentValue::String(pick(c, first).ok_or_else(bad)?),
            FieldKind::Choices(c) => acp::ElicitationContentValue::StringArray(
                given
                    .iter()
                    .map(|t| pick(c, t).ok_or_else(|| format!("`{t}` is not an answer to `{}`", f.id)))
                    .collect::<Result<_, _>>()?,
            ),
        };
        content.insert(f.id.clone(), value);
    }
    let accept = acp::ElicitationAcceptAction::new().content(if content.is_empty() { None } else { Some(content) });
    Ok(acp::CreateElicitationResponse::new(acp::ElicitationAction::Accept(accept)))
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;

    fn form() -> acp::CreateElicitationRequest {
        serde_json::from_value(json!({
            "mode": "form",
            "sessionId": "s1",
            "message": "A few details",
            "requestedSchema": {
                "type": "object",
                "properties": {
                    "color": {"type": "string", "title": "Color", "oneOf": [{"const": "r", "title": "Red"}, {"const": "b", "title": "Blue"}]},
                    "count": {"type": "integer", "description": "How many?"},
                    "sure": {"type": "boolean"},
                    "note": {"type": "string"}
                },
                "required": ["color", "sure"]
            }
        }))
        .unwrap()
    }

    #[test]
    fn a_form_is_a_question_per_field_and_the_answers_are_typed_back() {
        let req = form();
        assert_eq!(session_of(&req).as_deref(), Some("s1"));
        let asked = ask(&req).unwrap();
        assert_eq!(asked.title, "A few details");
        let color = asked.questions.iter().find(|q| q.id == "color").unwrap();
        assert_eq!(color.options.iter().map(|o| o.label.as_str()).collect::<Vec<_>>(), ["Red", "Blue"]);
        assert!(!color.is_other);
        let count = asked.questions.iter().find(|q| q.id == "count").unwrap();
        assert_eq!(count.question, "How many?");
        assert!(count.is_other);
        let answers = json!({"color": "Blue", "count": "3", "sure": {"answers": ["yes"]}});
        let response = respond(Decision::Accept, Some(&answers), &asked.fields).unwrap();
        let sent = serde_json::to_value(&response).unwrap();
        assert_eq!(sent, json!({"action": "accept", "content": {"color": "b", "count": 3, "sure": true}}));
    }

    #[test]
    fn wrong_or_missing_answers_are_refused_and_a_decline_is_a_decline() {
        let asked = ask(&form()).unwrap();
        let missing = respond(Decision::Accept, Some(&json!({"color": "Red"})), &asked.fields).unwrap_err();
        assert!(missing.contains("`sure`"), "{missing}");
        let wrong =
            respond(Decision::Accept, Some(&json!({"color": "Green", "sure": "yes"})), &asked.fields).unwrap_err();
        assert!(wrong.contains("Green"), "{wrong}");
        let nan = respond(Decision::Accept, Some(&json!({"color": "Red", "sure": "no", "count": "x"})), &asked.fields);
        assert!(nan.is_err());
        let declined = serde_json::to_value(respond(Decision::Decline, None, &asked.fields).unwrap()).unwrap();
        assert_eq!(declined["action"], "decline");
        let cancelled = serde_json::to_value(respond(Decision::Cancel, None, &asked.fields).unwrap()).unwrap();
        assert_eq!(cancelled["action"], "cancel");
    }

    #[test]
    fn a_url_is_one_question_to_accept_once_done() {
        let req: acp::CreateElicitationRequest = serde_json::from_value(json!({
            "mode": "url", "sessionId": "s1", "elicitationId": "e1", "url": "https://example.com/login", "message": "Log in"
        }))
        .unwrap();
        let asked = ask(&req).unwrap();
        assert!(asked.questions[0].question.contains("https://example.com/login"));
        let sent = serde_json::to_value(respond(Decision::Accept, None, &asked.fields).unwrap()).unwrap();
        assert_eq!(sent, json!({"action": "accept"}));
    }
}
