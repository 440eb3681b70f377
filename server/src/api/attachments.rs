//! Wire types: the images a session's turns carry.

/// An image's bytes (served with its own type, `image/png` and the like).
#[derive(utoipa::ToSchema)]
#[schema(value_type = String, format = Binary)]
pub struct ImageBytes(#[allow(dead_code)] Vec<u8>);
