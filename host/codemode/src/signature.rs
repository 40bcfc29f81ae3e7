//! # Signatures
//!
//! What `run_tools_script`'s description tells the model about each tool a
//! script may call: its Python name ([`python_name`]: every character not
//! valid in an identifier becomes `_`) and a one-line signature generated
//! from its JSON Schema ([`signature`]), the list capped at about
//! [`SIGNATURES_CAP`] characters ([`signature_list`]).
//!
//! ```
//! use serde_json::json;
//! use toolhost_codemode::signature::{python_name, signature};
//! use toolhost_core::registry::ToolSpec;
//!
//! assert_eq!(python_name("my-tool.v2"), "my_tool_v2");
//! let spec = ToolSpec::new("memory_search", "Searches notes. Case-insensitive.", json!({
//!     "type": "object",
//!     "required": ["query"],
//!     "properties": {
//!         "query": {"type": "string"},
//!         "limit": {"type": "integer", "default": 10},
//!         "kind": {"enum": ["note", "todo"]},
//!     }
//! }));
//! assert_eq!(
//!     signature("memory_search", &spec),
//!     "tools.memory_search(query: str, kind: Literal['note', 'todo'] = None, limit: int = 10)  # Searches notes."
//! );
//! ```

use serde_json::Value;
use toolhost_core::registry::ToolSpec;

/// Roughly how many characters the signature list may take; tools past it
/// are left out of the description (and said to be).
pub const SIGNATURES_CAP: usize = 6000;

/// Python's keywords: a tool named like one gets a `_` appended.
const KEYWORDS: &[&str] = &[
    "False", "None", "True", "and", "as", "assert", "async", "await", "break", "class", "continue", "def",
    "del", "elif", "else", "except", "finally", "for", "from", "global", "if", "import", "in", "is",
    "lambda", "nonlocal", "not", "or", "pass", "raise", "return", "try", "while", "with", "yield",
];

/// The name a script calls tool `name` by: every character that is not an
/// ASCII letter, digit or `_` becomes `_`; a leading digit gets a `_` in
/// front and a Python keyword a `_` behind.
pub fn python_name(name: &str) -> String {
    let mut out: String = name
        .chars()
        .map(|c| {
            if c.is_ascii_alphanumeric() || c == '_' {
                c
            } else {
                '_'
            }
        })
        .collect();
    if out.is_empty() || out.starts_with(|c: char| c.is_ascii_digit()) {
        out.insert(0, '_');
    }
    if KEYWORDS.contains(&out.as_str()) {
        out.push('_');
    }
    out
}

/// One line for `spec`, called as `tools.PY_NAME`: its parameters (required
/// ones first, each with its Python type; optional ones with their default
/// or `None`) and the first sentence of its description.
pub fn signature(py_name: &str, spec: &ToolSpec) -> String {
    let properties = spec.parameters.get("properties").and_then(Value::as_object);
    let required: Vec<&str> = spec
        .parameters
        .get("required")
        .and_then(Value::as_array)
        .map(|r| r.iter().filter_map(Value::as_str).collect())
        .unwrap_or_default();
    let mut params = Vec::new();
    if let Some(properties) = properties {
        let mut names: Vec<&String> = properties.keys().collect();
        // Required first, each group in name order.
        names.sort_by_key(|n| (!required.contains(&n.as_str()), n.as_str()));
        for name in names {
            let schema = &properties[name.as_str()];
            let mut param = format!("{}: {}", python_name(name), py_type(schema, 0));
            if !required.contains(&name.as_str()) {
                let default = schema.get("default").map_or("None".to_string(), py_literal);
                param.push_str(&format!(" = {default}"));
            }
            params.push(param);
        }
    }
    let mut line = format!("tools.{py_name}({})", params.join(", "));
    let summary = first_sentence(&spec.description);
    if !summary.is_empty() {
        line.push_str("  # ");
        line.push_str(&summary);
    }
    line
}

/// The signature lines of `tools` (Python name, spec), in order, until about
/// [`SIGNATURES_CAP`] characters; a last line says how many were left out.
pub fn signature_list(tools: &[(String, &ToolSpec)]) -> String {
    let mut out = String::new();
    for (listed, (py_name, spec)) in tools.iter().enumerate() {
        let line = signature(py_name, spec);
        if out.len() + line.len() + 1 > SIGNATURES_CAP {
            let left = tools.len() - listed;
            out.push_str(&format!(
                "… and {left} more tool{} not listed here (the list is capped); they are callable by name too.\n",
                if left == 1 { "" } else { "s" }
            ));
            break;
        }
        out.push_str(&line);
        out.push('\n');
    }
    out
}

/// The Python type a JSON Schema describes, as short as is still useful.
fn py_type(schema: &Value, depth: usize) -> String {
    if depth > 3 {
        return "Any".into();
    }
    if let Some(values) = schema.get("enum").and_then(Value::as_array) {
        let literals: Vec<String> = values.iter().take(8).map(py_literal).collect();
        return format!("Literal[{}]", literals.join(", "));
    }
    if let Some(value) = schema.get("const") {
        return format!("Literal[{}]", py_literal(value));
    }
    for key in ["anyOf", "oneOf"] {
        if let Some(options) = schema.get(key).and_then(Value::as_array) {
            return union(options.iter().map(|o| py_type(o, depth + 1)));
        }
    }
    match schema.get("type") {
        Some(Value::String(t)) => simple_type(t, schema, depth),
        Some(Value::Array(types)) => union(
            types
                .iter()
                .filter_map(Value::as_str)
                .map(|t| simple_type(t, schema, depth)),
        ),
        _ => "Any".into(),
    }
}

fn simple_type(name: &str, schema: &Value, depth: usize) -> String {
    match name {
        "string" => "str".into(),
        "integer" => "int".into(),
        "number" => "float".into(),
        "boolean" => "bool".into(),
        "null" => "None".into(),
        "object" => "dict".into(),
        "array" => match schema.get("items") {
            Some(items) if items.is_object() => format!("list[{}]", py_type(items, depth + 1)),
            _ => "list".into(),
        },
        _ => "Any".into(),
    }
}

fn union(parts: impl Iterator<Item = String>) -> String {
    let mut seen: Vec<String> = Vec::new();
    for part in parts {
        if !seen.contains(&part) {
            seen.push(part);
        }
    }
    if seen.is_empty() {
        "Any".into()
    } else {
        seen.join(" | ")
    }
}

/// A JSON value as a short Python literal.
fn py_literal(value: &Value) -> String {
    match value {
        Value::Null => "None".into(),
        Value::Bool(true) => "True".into(),
        Value::Bool(false) => "False".into(),
        Value::String(s) => {
            let short: String = s.chars().take(40).collect();
            format!("'{}'", short.replace('\\', "\\\\").replace('\'', "\\'"))
        }
        Value::Number(n) => n.to_string(),
        Value::Array(_) => "[...]".into(),
        Value::Object(_) => "{...}".into(),
    }
}

/// The description's first sentence (or line), at most 120 characters.
fn first_sentence(description: &str) -> String {
    let line = description
        .lines()
        .map(str::trim)
        .find(|l| !l.is_empty())
        .unwrap_or("");
    let end = line
        .char_indices()
        .find(|&(i, c)| c == '.' && line[i + 1..].starts_with(' '))
        .map_or(line.len(), |(i, _)| i + 1);
    let sentence = &line[..end];
    if sentence.chars().count() > 120 {
        let cut: String = sentence.chars().take(119).collect();
        format!("{cut}…")
    } else {
        sentence.to_string()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn names_become_identifiers() {
        assert_eq!(python_name("mcp_exa__web_search"), "mcp_exa__web_search");
        assert_eq!(python_name("my-tool.v2"), "my_tool_v2");
        assert_eq!(python_name("3d"), "_3d");
        assert_eq!(python_name("import"), "import_");
        assert_eq!(python_name(""), "_");
    }

    #[test]
    fn types_from_schemas() {
        let spec = ToolSpec::new(
            "t",
            "Does things.\nMore text.",
            json!({"type": "object", "properties": {
                "a": {"type": ["string", "null"]},
                "b": {"type": "array", "items": {"type": "integer"}},
                "c": {"anyOf": [{"type": "number"}, {"type": "boolean"}]},
                "d": {"type": "object"},
                "e-f": {"const": "x"},
            }}),
        );
        assert_eq!(
            signature("t", &spec),
            "tools.t(a: str | None = None, b: list[int] = None, c: float | bool = None, d: dict = None, e_f: Literal['x'] = None)  # Does things."
        );
        let bare = ToolSpec::new("now", "", json!({"type": "object"}));
        assert_eq!(signature("now", &bare), "tools.now()");
    }

    #[test]
    fn the_list_is_capped() {
        let long = "x".repeat(500);
        let specs: Vec<ToolSpec> = (0..80)
            .map(|i| ToolSpec::new(format!("t{i}"), long.clone(), json!({"type": "object"})))
            .collect();
        let tools: Vec<(String, &ToolSpec)> = specs.iter().map(|s| (s.name.clone(), s)).collect();
        let list = signature_list(&tools);
        assert!(list.len() <= SIGNATURES_CAP + 200, "{}", list.len());
        assert!(
            list.ends_with(
                "more tools not listed here (the list is capped); they are callable by name too.\n"
            )
        );
        assert!(list.starts_with("tools.t0()  # xxx"));
    }
}
