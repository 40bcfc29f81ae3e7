//! The tool the suite's SEP-2243 scenario looks for: a string parameter
//! marked `x-mcp-header`, so that a client sends it as an `Mcp-Param-*`
//! header too and the server checks the two agree (rmcp's HTTP layer does,
//! with the schema toolhost gives it).

use schemars::{JsonSchema, Schema, SchemaGenerator, json_schema};
use serde::Deserialize;
use toolhost_sdk::{Output, ToolError};

/// Echoes the region it was given (also sent as the `Mcp-Param-Region` header)
#[derive(Deserialize)]
pub struct HeaderEcho {
    region: String,
}

impl JsonSchema for HeaderEcho {
    fn schema_name() -> std::borrow::Cow<'static, str> {
        "HeaderEcho".into()
    }

    fn json_schema(_: &mut SchemaGenerator) -> Schema {
        json_schema!({
            "description": "Echoes the region it was given (also sent as the Mcp-Param-Region header)",
            "type": "object",
            "properties": {
                "region": {"type": "string", "x-mcp-header": "Region"},
            },
            "required": ["region"],
        })
    }
}

/// Answers `region: REGION`.
pub fn test_header_echo(args: HeaderEcho) -> Result<Output, ToolError> {
    Ok(Output::default().text(format!("region: {}", args.region)))
}
