//! Turning typed Rust functions into WIT tool specs and calls.

use schemars::JsonSchema;
use schemars::generate::SchemaSettings;
use serde::de::DeserializeOwned;
use serde_json::Value;

use crate::__private::{Hints, ToolSpec, WitToolError, WitToolOutput};
use crate::error::{Kind, ToolError};
use crate::output::IntoOutput;

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
        output_schema: None,
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

/// Deserializes `arguments` into `A`, runs `f`, and turns its result into
/// the host's output.
pub fn invoke<A, R, F>(arguments: &str, f: F) -> Result<WitToolOutput, WitToolError>
where
    A: DeserializeOwned,
    R: IntoOutput,
    F: Fn(A) -> Result<R, ToolError>,
{
    let args: A =
        toolhost_json::from_str(arguments).map_err(|e| WitToolError::InvalidArguments(e.to_string()))?;
    f(args).and_then(R::into_output).map_err(|e| match e {
        ToolError {
            kind: Kind::InvalidArguments,
            message,
        } => WitToolError::InvalidArguments(message),
        ToolError {
            kind: Kind::Failed,
            message,
        } => WitToolError::Failed(message),
    })
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

    #[test]
    fn results_are_json_with_the_text_an_output_adds() {
        let plain = invoke("{\"a\": 1}", |a: Add| Ok::<_, ToolError>(format!("got {}", a.a))).unwrap();
        assert_eq!((plain.json.as_str(), plain.text), (r#""got 1""#, None));
        let rich = invoke("{\"a\": 2}", |a: Add| {
            Ok::<_, ToolError>(crate::Output::new(serde_json::json!({"a": a.a})).text("two"))
        })
        .unwrap();
        assert_eq!(rich.json, r#"{"a":2}"#);
        assert_eq!(rich.text.as_deref(), Some("two"));
        let failed = invoke("{\"a\": 3}", |_: Add| {
            Ok::<_, ToolError>(std::collections::HashMap::from([((1, 2), 3)]))
        })
        .unwrap_err();
        assert!(
            matches!(&failed, WitToolError::Failed(m) if m.contains("could not be serialized")),
            "{failed:?}"
        );
    }

    #[test]
    fn the_declaration_text_becomes_declare_answer() {
        let caps = crate::__private::declared(
            "dir /w\nenv TZ\nhttp *.example.com\nsecret GH\ntool greet\ntool relay\n",
        );
        assert_eq!(caps.dirs, ["/w"]);
        assert_eq!(caps.env, ["TZ"]);
        assert_eq!(caps.http, ["*.example.com"]);
        assert_eq!(caps.secrets, ["GH"]);
        assert_eq!(caps.tools, ["greet", "relay"]);
        assert!(crate::__private::declared("").tools.is_empty());
    }
}
