//! # Schema output
//!
//! Two views of the registry:
//!
//! - [`Registry::list_schemas`], for UIs and diagnostics: every tool with
//!   its source metadata (`source`, `mcpServer`, `componentHash`,
//!   `audience`);
//! - [`Registry::definitions`], for the model: OpenAI function definitions
//!   built from the schema alone, after the audience filter, the optional
//!   tool-name selection (resolved toolsets) and the availability checks,
//!   with the schemas that list other tools patched to name only the tools
//!   that passed.

use std::collections::BTreeSet;

use serde_json::{Value, json};

use super::Registry;
use super::availability::CheckCache;
use super::entry::{ToolAudience, ToolEntry, ToolSource};
use super::tool::ToolSpec;

/// The OpenAI function-calling definition of `spec`:
/// `{"type": "function", "function": {"name", "description", "parameters"}}`.
/// Built from the schema alone; registry metadata never leaks into it.
pub fn openai_definition(spec: &ToolSpec) -> Value {
    json!({
        "type": "function",
        "function": {
            "name": spec.name,
            "description": spec.description,
            "parameters": spec.parameters,
        }
    })
}

impl Registry {
    /// Every tool's schema with its source metadata, in name order.
    pub fn list_schemas(&self) -> Vec<Value> {
        self.entries().map(|e| schema_with_source(e)).collect()
    }

    /// Every registered prompt, resource and resource template, unfiltered,
    /// each as MCP describes it plus where it comes from (`source`,
    /// `audience`, `toolset`, and `mcpServer` or `componentHash`, as
    /// [`Registry::list_schemas`] gives them for tools):
    /// `{"prompts": [...], "resources": [...], "templates": [...]}`.
    pub fn list_catalog(&self) -> Value {
        fn with_source(spec: impl serde::Serialize, provenance: &super::Provenance) -> Value {
            let mut value = serde_json::to_value(spec).unwrap_or(Value::Null);
            if let Value::Object(map) = &mut value {
                map.extend(source_fields(
                    &provenance.source,
                    provenance.audience,
                    &provenance.toolset,
                ));
            }
            value
        }
        json!({
            "prompts": self.prompts().map(|e| with_source(e.spec(), e.provenance())).collect::<Vec<_>>(),
            "resources": self.resources().map(|e| with_source(e.spec(), e.provenance())).collect::<Vec<_>>(),
            "templates": self
                .resource_templates()
                .map(|e| with_source(e.spec(), e.provenance()))
                .collect::<Vec<_>>(),
        })
    }

    /// The entries a turn of `audience` would be offered, restricted to
    /// `selection` when given, whose availability check passes (each
    /// distinct check runs once).
    pub fn available_entries(
        &self,
        audience: ToolAudience,
        selection: Option<&BTreeSet<String>>,
    ) -> Vec<&std::sync::Arc<ToolEntry>> {
        let mut cache = CheckCache::new();
        self.entries()
            .filter(|e| audience.may_use(e.audience))
            .filter(|e| selection.is_none_or(|s| s.contains(&e.name)))
            .filter(|e| cache.passes(e.check()))
            .collect()
    }

    /// The definitions the model sees (OpenAI format), in name order: see
    /// the module documentation for the filters applied.
    pub fn definitions(&self, audience: ToolAudience, selection: Option<&BTreeSet<String>>) -> Vec<Value> {
        self.visible_specs(audience, selection)
            .iter()
            .map(openai_definition)
            .collect()
    }

    /// The specs behind [`Registry::definitions`], in the same order and
    /// after the same filters and patches, hints included (for MCP, whose
    /// tool list carries them as annotations).
    pub fn visible_specs(
        &self,
        audience: ToolAudience,
        selection: Option<&BTreeSet<String>>,
    ) -> Vec<ToolSpec> {
        let entries = self.available_entries(audience, selection);
        let visible: Vec<&ToolSpec> = entries.iter().map(|e| e.spec()).collect();
        entries.iter().map(|e| e.patched_spec(&visible)).collect()
    }
}

fn schema_with_source(entry: &ToolEntry) -> Value {
    let spec = entry.spec();
    let mut schema = json!({
        "name": spec.name,
        "description": spec.description,
        "parameters": spec.parameters,
    });
    if let Value::Object(map) = &mut schema {
        map.extend(source_fields(&entry.source, entry.audience, &entry.toolset));
    }
    if let Some(output) = &spec.output_schema {
        schema["outputSchema"] = output.clone();
    }
    if !spec.hints.is_empty() {
        schema["annotations"] = json!(spec.hints);
    }
    if let Some(emoji) = entry.emoji() {
        schema["emoji"] = json!(emoji);
    }
    if !entry.requires_env().is_empty() {
        schema["requiresEnv"] = json!(entry.requires_env());
    }
    schema
}

/// Where a registered item comes from, as the listings say it: `source`,
/// `audience`, `toolset`, and `mcpServer` or `componentHash`.
fn source_fields(
    source: &ToolSource,
    audience: ToolAudience,
    toolset: &str,
) -> serde_json::Map<String, Value> {
    let mut fields = serde_json::Map::new();
    fields.insert("source".into(), json!(source.kind()));
    fields.insert("audience".into(), json!(audience.as_str()));
    fields.insert("toolset".into(), json!(toolset));
    match source {
        ToolSource::Builtin => {}
        ToolSource::Mcp { server } => {
            fields.insert("mcpServer".into(), json!(server));
        }
        ToolSource::Wasm { component_hash } => {
            fields.insert("componentHash".into(), json!(component_hash.to_string()));
        }
    }
    fields
}
