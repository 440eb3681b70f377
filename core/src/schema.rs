//! Schemas the derive cannot say by itself (feature `schema`): free-form objects, and the answers
//! map. Referenced from `#[schema(schema_with = …)]` attributes.

use utoipa::openapi::schema::{AdditionalProperties, Object, ObjectBuilder, Ref, Type};

/// An object with any fields (`additionalProperties: true`).
pub fn free_object() -> Object {
    ObjectBuilder::new()
        .schema_type(Type::Object)
        .additional_properties(Some(AdditionalProperties::FreeForm(true)))
        .build()
}

/// Answers keyed by question id: an object whose values are `QuestionAnswer`s.
pub fn answers() -> Object {
    ObjectBuilder::new()
        .schema_type(Type::Object)
        .description(Some("Answers keyed by question id."))
        .additional_properties(Some(Ref::from_schema_name("QuestionAnswer")))
        .build()
}
