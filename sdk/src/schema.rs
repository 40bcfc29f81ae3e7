//! Turning typed Rust functions into WIT tool specs and calls.

use schemars::JsonSchema;
use schemars::generate::SchemaSettings;
use serde::de::DeserializeOwned;
use serde_json::Value;

use crate::__private::{Hints, ToolSpec, WitToolError, WitToolOutput};
use crate::error::{Kind, ToolError};
use crate::output::IntoOutput;

/// The spec of tool `name`, implemented by `_f`, whose argument type is `A`
/// and whose result type `R` may state an output schema.
pub fn spec_of<A, R, F>(name: &str, _f: &F, (hints, title): (Hints, Option<String>)) -> ToolSpec
where
    A: JsonSchema,
    R: IntoOutput,
    F: Fn(A) -> Result<R, ToolError>,
{
    let (description, parameters) = parameters_of::<A>();
    ToolSpec {
        name: name.to_string(),
        title,
        description,
        parameters: parameters.to_string(),
        output_schema: R::output_schema(),
        hints,
    }
}

/// `T`'s JSON Schema as the host reads schemas: sub-schemas inlined (models
/// handle `$ref` poorly), without the `$schema` the generator adds or the
/// type's own title. A type that writes its schema by hand (a `JsonSchema`
/// impl returning, say, `schemars::json_schema!({...})`) and states its
/// dialect there keeps it, with whatever `$defs` and `$ref`s it wrote: the
/// schema is then listed as written.
pub(crate) fn schema_of<T: JsonSchema>() -> Value {
    let settings = SchemaSettings::draft2020_12().with(|s| s.inline_subschemas = true);
    let states_dialect = T::json_schema(&mut settings.clone().into_generator())
        .as_object()
        .is_some_and(|own| own.contains_key("$schema"));
    let mut schema = settings.into_generator().into_root_schema_for::<T>().to_value();
    if let Value::Object(map) = &mut schema {
        if !states_dialect {
            map.remove("$schema");
        }
        map.remove("title");
    }
    schema
}

/// The description (from `A`'s doc comment) and the parameter schema of `A`,
/// with sub-schemas inlined (models handle `$ref` poorly) and the schema's own
/// title, description and `$schema` removed.
pub(crate) fn parameters_of<A: JsonSchema>() -> (String, Value) {
    let mut schema = schema_of::<A>();
    let mut description = String::new();
    if let Value::Object(map) = &mut schema {
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

    /// Written by hand, dialect and `$defs` included.
    #[allow(dead_code, reason = "only the schema is used")]
    struct Raw;

    impl JsonSchema for Raw {
        fn schema_name() -> std::borrow::Cow<'static, str> {
            "Raw".into()
        }

        fn json_schema(_: &mut schemars::SchemaGenerator) -> schemars::Schema {
            schemars::json_schema!({
                "$schema": "https://json-schema.org/draft/2020-12/schema",
                "type": "object",
                "$defs": {"point": {"type": "object", "properties": {"x": {"type": "number"}}}},
                "properties": {"at": {"$ref": "#/$defs/point"}},
                "additionalProperties": false,
            })
        }
    }

    #[test]
    fn a_schema_written_by_hand_with_its_dialect_is_listed_as_written() {
        let (_, schema) = parameters_of::<Raw>();
        assert_eq!(schema["$schema"], "https://json-schema.org/draft/2020-12/schema");
        assert_eq!(schema["properties"]["at"]["$ref"], "#/$defs/point");
        assert_eq!(schema["$defs"]["point"]["properties"]["x"]["type"], "number");
        assert_eq!(schema["additionalProperties"], false);
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
        let text_of = |out: &WitToolOutput| -> Vec<String> {
            out.content
                .iter()
                .map(|b| match &b.content {
                    crate::__private::WitContent::Text(t) => t.clone(),
                    other => format!("{other:?}"),
                })
                .collect()
        };
        let plain = invoke("{\"a\": 1}", |a: Add| Ok::<_, ToolError>(format!("got {}", a.a))).unwrap();
        assert_eq!(
            (plain.structured.clone(), text_of(&plain)),
            (None, vec!["got 1".to_string()])
        );
        let list = invoke("{\"a\": 1}", |a: Add| Ok::<_, ToolError>(vec![a.a])).unwrap();
        assert_eq!(
            (list.structured.as_deref(), text_of(&list)),
            (Some(r#"{"result":[1]}"#), vec!["[1]".to_string()])
        );
        let object = invoke("{\"a\": 5}", |a: Add| {
            Ok::<_, ToolError>(serde_json::json!({"a": a.a}))
        })
        .unwrap();
        assert_eq!(
            (object.structured.as_deref(), object.content.len()),
            (Some(r#"{"a":5}"#), 0)
        );
        let rich = invoke("{\"a\": 2}", |a: Add| {
            Ok::<_, ToolError>(crate::Output::new(serde_json::json!({"a": a.a})).text("two"))
        })
        .unwrap();
        assert_eq!(rich.structured.as_deref(), Some(r#"{"a":2}"#));
        assert_eq!(text_of(&rich), ["two"]);
        let wrapped = invoke("{\"a\": 3}", |a: Add| Ok::<_, ToolError>(crate::Output::new(a.a))).unwrap();
        assert_eq!(wrapped.structured.as_deref(), Some(r#"{"result":3}"#));
        let media = invoke("{\"a\": 4}", |_: Add| {
            Ok::<_, ToolError>(
                crate::Output::default()
                    .image(vec![1u8, 2], "image/png")
                    .audio(vec![3u8], "audio/wav"),
            )
        })
        .unwrap();
        assert_eq!(media.structured, None);
        assert!(
            matches!(&media.content[0].content, crate::__private::WitContent::Image(m) if m.data == [1, 2] && m.mime_type == "image/png")
        );
        assert!(matches!(&media.content[1].content, crate::__private::WitContent::Audio(m) if m.data == [3]));
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
    fn a_structured_result_states_its_type_as_the_output_schema() {
        /// A count.
        #[derive(serde::Serialize, JsonSchema)]
        struct Count {
            /// How many.
            n: u32,
        }
        fn count(_: Add) -> Result<crate::Structured<Count>, ToolError> {
            Ok(crate::Structured::new(Count { n: 2 }))
        }
        let spec = spec_of(
            "count",
            &count,
            crate::__private::tool_options(&[("title", Some("Count"))]),
        );
        let schema: Value = serde_json::from_str(spec.output_schema.as_deref().unwrap()).unwrap();
        assert_eq!(schema["properties"]["n"]["description"], "How many.");
        assert_eq!(spec.title.as_deref(), Some("Count"));
        let out = invoke("{\"a\": 1}", count).unwrap();
        assert_eq!(out.structured.as_deref(), Some(r#"{"n":2}"#));
    }

    #[test]
    fn the_declaration_text_becomes_declare_answer() {
        let caps = crate::__private::declared(
            "dir /w\nenv TZ\nhttp *.example.com\nsecret GH\ntool greet\ntool relay\nclient elicitation\n",
        );
        assert!(caps.elicitation && !caps.sampling);
        assert_eq!(caps.dirs, ["/w"]);
        assert_eq!(caps.env, ["TZ"]);
        assert_eq!(caps.http, ["*.example.com"]);
        assert_eq!(caps.secrets, ["GH"]);
        assert_eq!(caps.tools, ["greet", "relay"]);
        assert!(crate::__private::declared("").tools.is_empty());
    }
}
