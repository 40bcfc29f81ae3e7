//! Turning typed Rust functions into WIT tool specs and calls.

use schemars::JsonSchema;
use schemars::generate::SchemaSettings;
use serde::Serialize;
use serde::de::DeserializeOwned;
use serde_json::Value;

use crate::__private::{Hints, ToolSpec, WitToolError};
use crate::error::{Kind, ToolError};

/// The spec of tool `name`, implemented by `_f`, whose argument type is `A`.
pub fn spec_of<A, R, F>(name: &str, _f: &F, hints: Hints) -> ToolSpec
where
    A: JsonSchema,
    F: Fn(A) -> Result<R, ToolError>,
{
    let (description, parameters) = parameters_of::<A>();
    ToolSpec {
        name: name.to_string(),
        description,
        parameters: parameters.to_string(),
        hints,
    }
}

/// The description (from `A`'s doc comment) and the parameter schema of `A`,
/// with sub-schemas inlined (models handle `$ref` poorly) and the schema's own
/// title, description and `$schema` removed.
pub(crate) fn parameters_of<A: JsonSchema>() -> (String, Value) {
    let generator = SchemaSettings::draft2020_12()
        .with(|s| s.inline_subschemas = true)
        .into_generator();
    let mut schema = generator.into_root_schema_for::<A>().to_value();
    let mut description = String::new();
    if let Value::Object(map) = &mut schema {
        map.remove("$schema");
        map.remove("title");
        if let Some(Value::String(text)) = map.remove("description") {
            description = text;
        }
        map.entry("type")
            .or_insert_with(|| Value::String("object".into()));
        map.entry("properties")
            .or_insert_with(|| Value::Object(Default::default()));
    }
    (description, schema)
}

/// Deserializes `arguments` into `A`, runs `f`, and serializes its result.
pub fn invoke<A, R, F>(arguments: &str, f: F) -> Result<String, WitToolError>
where
    A: DeserializeOwned,
    R: Serialize,
    F: Fn(A) -> Result<R, ToolError>,
{
    let args: A =
        serde_json::from_str(arguments).map_err(|e| WitToolError::InvalidArguments(e.to_string()))?;
    match f(args) {
        Ok(value) => serde_json::to_string(&value)
            .map_err(|e| WitToolError::Failed(format!("the result could not be serialized: {e}"))),
        Err(ToolError {
            kind: Kind::InvalidArguments,
            message,
        }) => Err(WitToolError::InvalidArguments(message)),
        Err(ToolError {
            kind: Kind::Failed,
            message,
        }) => Err(WitToolError::Failed(message)),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde::Deserialize;

    /// Adds two numbers.
    #[derive(Deserialize, JsonSchema)]
    #[allow(dead_code, reason = "only the schema is used")]
    struct Add {
        /// The first.
        a: i64,
        /// The second.
        b: Option<i64>,
    }

    #[test]
    fn description_and_schema_come_from_the_type() {
        let (description, schema) = parameters_of::<Add>();
        assert_eq!(description, "Adds two numbers.");
        assert_eq!(schema["type"], "object");
        assert_eq!(schema["properties"]["a"]["description"], "The first.");
        assert_eq!(schema["required"], serde_json::json!(["a"]));
        assert!(schema.get("title").is_none() && schema.get("$schema").is_none());
    }

    #[test]
    fn bad_arguments_are_invalid_arguments_with_serdes_message() {
        let err = invoke("{\"a\": \"x\"}", |a: Add| Ok::<_, ToolError>(a.a)).unwrap_err();
        match err {
            WitToolError::InvalidArguments(msg) => assert!(msg.contains("invalid type"), "{msg}"),
            WitToolError::Failed(msg) => panic!("expected invalid arguments, got failed: {msg}"),
        }
    }
}
