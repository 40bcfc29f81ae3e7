//! Arguments synthesized from a tool's parameter schema, for the
//! `arguments` check: valid ones, and the ways a model gets them wrong.
//!
//! Written here rather than taken from a crate: the JSON Schema instance
//! generators on crates.io (`json_schema_fuzz`, for one) produce random
//! *conforming* values, while this check needs deterministic, targeted
//! variants (each required field missing, each field of a wrong type, an
//! extra field, very long strings, unicode) so that a report can be
//! reproduced and names the case that broke a tool. Whether a case is valid
//! is not guessed: each is judged by compiling the schema with the
//! `jsonschema` crate, the validator the host itself uses.
//!
//! ```
//! use serde_json::json;
//! use toolhost_conformance::synth::{cases, Verdict};
//!
//! let schema = json!({
//!     "type": "object",
//!     "properties": { "name": { "type": "string" } },
//!     "required": ["name"],
//!     "additionalProperties": false
//! });
//! let cases = cases(&schema);
//! assert_eq!(cases[0].arguments, json!({ "name": "conformance" }));
//! assert!(matches!(cases[0].verdict, Verdict::Valid));
//! let wrong = cases.iter().find(|c| c.label == "field `name` given a number").unwrap();
//! assert_eq!(wrong.arguments, json!({ "name": 42 }));
//! assert!(matches!(wrong.verdict, Verdict::Invalid(_)));
//! ```

use serde_json::{Map, Value, json};

use crate::checks::listing::compile;

/// How long the "very long strings" case makes each string, in characters.
pub const LONG_STRING_CHARS: usize = 100_000;

/// The text of the "unicode" case: accents (precomposed and combining),
/// CJK, Arabic (right to left), an emoji, a character outside the Basic
/// Multilingual Plane, a right-to-left override and a NUL.
pub const UNICODE_SAMPLE: &str = "Ünïcødé e\u{301} 中文 العربية 🦀 𝄞 \u{202e}txt.exe \u{0}end";

/// The field the "extra field" case adds.
pub const EXTRA_FIELD: &str = "conformance_extra_field";

/// At most this many fields get a "missing" or "wrong type" case each.
const MAX_FIELDS: usize = 16;

/// Sub-schemas deeper than this are sampled as `null` (recursive `$ref`s).
const MAX_DEPTH: usize = 8;

/// What a typical string is.
const TYPICAL: &str = "conformance";

/// Whether the schema accepts a case.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Verdict {
    /// The arguments are valid for the schema.
    Valid,
    /// The schema forbids them, for this reason.
    Invalid(String),
    /// The schema could not be compiled, so nobody can tell.
    Unknown,
}

/// One set of arguments for a tool.
#[derive(Debug, Clone, PartialEq)]
pub struct Case {
    /// What the case is, e.g. ``required field `name` missing``.
    pub label: String,
    /// The arguments (always a JSON object).
    pub arguments: Value,
    /// Whether the schema accepts them.
    pub verdict: Verdict,
}

/// The cases for a tool whose parameters are `schema`, valid ones first:
/// the required fields only, every field, an empty object, each required
/// field missing, each field of a wrong type, an extra field, every string
/// [`LONG_STRING_CHARS`] long, every string [`UNICODE_SAMPLE`]. Cases that
/// come out the same are given once. Deterministic: the same schema always
/// gives the same cases.
pub fn cases(schema: &Value) -> Vec<Case> {
    let synth = Synth { root: schema };
    let minimal = synth.object(schema, false, 0);
    let full = synth.object(schema, true, 0);
    let mut planned: Vec<(String, Value)> = vec![
        ("valid: the required fields only".into(), minimal),
        ("valid: every field".into(), full.clone()),
        ("an empty object".into(), json!({})),
    ];
    let root = synth.resolve(schema, 0);
    for field in required(root).into_iter().take(MAX_FIELDS) {
        let mut args = full.clone();
        if let Some(map) = args.as_object_mut() {
            map.remove(&field);
        }
        planned.push((format!("required field `{field}` missing"), args));
    }
    if let Some(properties) = root.get("properties").and_then(Value::as_object) {
        for (field, property) in properties.iter().take(MAX_FIELDS) {
            if let Some((kind, wrong)) = synth.wrong_value(property) {
                let mut args = full.clone();
                if let Some(map) = args.as_object_mut() {
                    map.insert(field.clone(), wrong);
                }
                planned.push((format!("field `{field}` given {kind}"), args));
            }
        }
    }
    let mut extra = full.clone();
    if let Some(map) = extra.as_object_mut() {
        map.insert(EXTRA_FIELD.into(), json!(TYPICAL));
    }
    planned.push((format!("an extra field `{EXTRA_FIELD}`"), extra));
    if has_strings(&full) {
        let long = "x".repeat(LONG_STRING_CHARS);
        planned.push((
            format!("every string {LONG_STRING_CHARS} characters long"),
            map_strings(&full, &long),
        ));
        planned.push((
            "every string unicode text".into(),
            map_strings(&full, UNICODE_SAMPLE),
        ));
    }
    let validator = compile(schema).ok();
    let mut seen = std::collections::HashSet::new();
    planned
        .into_iter()
        .filter(|(_, args)| seen.insert(args.to_string()))
        .map(|(label, arguments)| {
            let verdict = match &validator {
                None => Verdict::Unknown,
                Some(v) => match v.validate(&arguments) {
                    Ok(()) => Verdict::Valid,
                    Err(e) => Verdict::Invalid(why_invalid(&e)),
                },
            };
            Case {
                label,
                arguments,
                verdict,
            }
        })
        .collect()
}

/// A validation error in a few words: the value abbreviated, where it is.
fn why_invalid(error: &jsonschema::ValidationError) -> String {
    let text = error.to_string();
    let value = error.instance().to_string();
    let shown = match text.strip_prefix(&value) {
        Some(rest) => format!("{}{rest}", abbreviate(error.instance())),
        None => text,
    };
    let at = error.instance_path().to_string();
    let shown = crate::report::clip(&shown, 200);
    if at.is_empty() {
        shown
    } else {
        format!("{shown}, at {at}")
    }
}

/// The arguments as a report shows them: strings over 40 characters cut,
/// with their length, and the whole cut to about 300 characters.
pub fn abbreviate(arguments: &Value) -> String {
    fn cut(value: &Value) -> Value {
        match value {
            Value::String(s) if s.chars().count() > 40 => {
                let head: String = s.chars().take(20).collect();
                Value::String(format!("{head}… ({} characters)", s.chars().count()))
            }
            Value::Array(items) => Value::Array(items.iter().map(cut).collect()),
            Value::Object(map) => Value::Object(map.iter().map(|(k, v)| (k.clone(), cut(v))).collect()),
            other => other.clone(),
        }
    }
    crate::report::clip(&cut(arguments).to_string(), 300)
}

struct Synth<'a> {
    root: &'a Value,
}

impl<'a> Synth<'a> {
    /// `schema`, with local `$ref`s (`#/$defs/...`) followed.
    fn resolve(&self, schema: &'a Value, depth: usize) -> &'a Value {
        let mut current = schema;
        for _ in depth..MAX_DEPTH {
            let Some(reference) = current.get("$ref").and_then(Value::as_str) else {
                break;
            };
            let Some(pointer) = reference.strip_prefix('#') else {
                break;
            };
            match self.root.pointer(pointer) {
                Some(target) => current = target,
                None => break,
            }
        }
        current
    }

    /// A valid-looking object for `schema`: its required fields, or every
    /// field when `full`.
    fn object(&self, schema: &'a Value, full: bool, depth: usize) -> Value {
        let schema = self.resolve(schema, depth);
        let mut map = Map::new();
        let required = required(schema);
        if let Some(properties) = schema.get("properties").and_then(Value::as_object) {
            for (name, property) in properties {
                if full || required.contains(name) {
                    map.insert(name.clone(), self.sample(property, full, depth + 1));
                }
            }
        }
        for name in required {
            map.entry(name).or_insert_with(|| json!(TYPICAL));
        }
        Value::Object(map)
    }

    /// A typical value for `schema`.
    fn sample(&self, schema: &'a Value, full: bool, depth: usize) -> Value {
        if depth > MAX_DEPTH {
            return Value::Null;
        }
        let schema = self.resolve(schema, depth);
        let Some(map) = schema.as_object() else {
            // `true` accepts anything; `false` nothing.
            return if schema == &Value::Bool(false) {
                Value::Null
            } else {
                json!(TYPICAL)
            };
        };
        if let Some(value) = map.get("const") {
            return value.clone();
        }
        for key in ["enum", "examples"] {
            if let Some(first) = map.get(key).and_then(Value::as_array).and_then(|a| a.first()) {
                return first.clone();
            }
        }
        if let Some(value) = map.get("default") {
            return value.clone();
        }
        for key in ["anyOf", "oneOf", "allOf"] {
            if let Some(branches) = map.get(key).and_then(Value::as_array) {
                let chosen = branches
                    .iter()
                    .find(|b| types(self.resolve(b, depth)) != ["null"])
                    .or(branches.first());
                if let Some(branch) = chosen {
                    return self.sample(branch, full, depth + 1);
                }
            }
        }
        match primary_type(map) {
            Some("object") => self.object(schema, full, depth),
            Some("array") => {
                let min = map.get("minItems").and_then(Value::as_u64).unwrap_or(0);
                let count = min.max(u64::from(full)).min(3);
                let item = map
                    .get("items")
                    .map_or(json!(TYPICAL), |items| self.sample(items, full, depth + 1));
                Value::Array((0..count).map(|_| item.clone()).collect())
            }
            Some("string") => {
                let min = map.get("minLength").and_then(Value::as_u64).unwrap_or(0) as usize;
                let max = map
                    .get("maxLength")
                    .and_then(Value::as_u64)
                    .map_or(usize::MAX, |m| m as usize);
                let mut text: String = TYPICAL.chars().take(max.max(1)).collect();
                while text.chars().count() < min {
                    text.push('x');
                }
                Value::String(text)
            }
            Some("integer") => json!(bounded(map)),
            Some("number") => json!(bounded(map)),
            Some("boolean") => json!(false),
            Some("null") => Value::Null,
            _ => json!(TYPICAL),
        }
    }

    /// A value of a type `schema` does not allow, and what it is.
    fn wrong_value(&self, schema: &'a Value) -> Option<(&'static str, Value)> {
        let allowed = types(self.resolve(schema, 0));
        if allowed.is_empty() {
            return None;
        }
        let candidates = [
            ("a number", json!(42), &["integer", "number"][..]),
            ("a string", json!("42"), &["string"][..]),
            ("a boolean", json!(true), &["boolean"][..]),
            ("an array", json!([42]), &["array"][..]),
            ("an object", json!({"unexpected": 42}), &["object"][..]),
        ];
        candidates
            .into_iter()
            .find(|(_, _, kinds)| !kinds.iter().any(|k| allowed.contains(k)))
            .map(|(kind, value, _)| (kind, value))
    }
}

/// The names in `schema`'s `required`.
fn required(schema: &Value) -> Vec<String> {
    schema
        .get("required")
        .and_then(Value::as_array)
        .map(|names| names.iter().filter_map(Value::as_str).map(String::from).collect())
        .unwrap_or_default()
}

/// The types `schema` names (`"type": "x"` or `"type": [...]`), or what its
/// keywords imply.
fn types(schema: &Value) -> Vec<&str> {
    match schema.get("type") {
        Some(Value::String(t)) => vec![t.as_str()],
        Some(Value::Array(ts)) => ts.iter().filter_map(Value::as_str).collect(),
        _ => match schema.as_object().and_then(implied_type) {
            Some(t) => vec![t],
            None => Vec::new(),
        },
    }
}

/// The type to sample: the first named that is not `null`, else `null`,
/// else what the keywords imply.
fn primary_type(map: &Map<String, Value>) -> Option<&str> {
    match map.get("type") {
        Some(Value::String(t)) => Some(t.as_str()),
        Some(Value::Array(ts)) => {
            let names: Vec<&str> = ts.iter().filter_map(Value::as_str).collect();
            names.iter().find(|t| **t != "null").or(names.first()).copied()
        }
        _ => implied_type(map),
    }
}

fn implied_type(map: &Map<String, Value>) -> Option<&'static str> {
    if map.contains_key("properties") || map.contains_key("required") {
        Some("object")
    } else if map.contains_key("items") || map.contains_key("prefixItems") {
        Some("array")
    } else {
        None
    }
}

/// 1, moved into the schema's bounds.
fn bounded(map: &Map<String, Value>) -> i64 {
    let get = |k: &str| map.get(k).and_then(Value::as_f64);
    let mut v: f64 = 1.0;
    if let Some(min) = get("minimum") {
        v = v.max(min.ceil());
    }
    if let Some(min) = get("exclusiveMinimum")
        && v <= min
    {
        v = min.floor() + 1.0;
    }
    if let Some(max) = get("maximum") {
        v = v.min(max.floor());
    }
    if let Some(max) = get("exclusiveMaximum")
        && v >= max
    {
        v = max.ceil() - 1.0;
    }
    v as i64
}

fn has_strings(value: &Value) -> bool {
    match value {
        Value::String(_) => true,
        Value::Array(items) => items.iter().any(has_strings),
        Value::Object(map) => map.values().any(has_strings),
        _ => false,
    }
}

/// `value` with every string replaced by `text`.
fn map_strings(value: &Value, text: &str) -> Value {
    match value {
        Value::String(_) => Value::String(text.to_string()),
        Value::Array(items) => Value::Array(items.iter().map(|v| map_strings(v, text)).collect()),
        Value::Object(map) => Value::Object(
            map.iter()
                .map(|(k, v)| (k.clone(), map_strings(v, text)))
                .collect(),
        ),
        other => other.clone(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn schema() -> Value {
        json!({
            "type": "object",
            "properties": {
                "name": { "type": "string", "maxLength": 5 },
                "count": { "type": ["integer", "null"], "minimum": 3, "maximum": 9 },
                "mode": { "enum": ["fast", "slow"] },
                "inner": { "$ref": "#/$defs/Inner" }
            },
            "required": ["name", "inner"],
            "additionalProperties": false,
            "$defs": { "Inner": { "type": "object", "properties": { "on": { "type": "boolean" } }, "required": ["on"] } }
        })
    }

    #[test]
    fn valid_cases_respect_bounds_enums_and_refs() {
        let cases = cases(&schema());
        assert_eq!(
            cases[0].arguments,
            json!({"name": "confo", "inner": {"on": false}})
        );
        assert_eq!(cases[0].verdict, Verdict::Valid);
        assert_eq!(
            cases[1].arguments,
            json!({"name": "confo", "count": 3, "mode": "fast", "inner": {"on": false}})
        );
        assert_eq!(cases[1].verdict, Verdict::Valid);
    }

    #[test]
    fn invalid_cases_are_judged_by_the_schema() {
        let cases = cases(&schema());
        let verdict = |label: &str| {
            cases
                .iter()
                .find(|c| c.label == label)
                .unwrap_or_else(|| panic!("no case {label}: {cases:#?}"))
                .verdict
                .clone()
        };
        for label in [
            "an empty object",
            "required field `name` missing",
            "field `name` given a number",
            "field `count` given a string",
            "an extra field `conformance_extra_field`",
            "every string 100000 characters long",
        ] {
            assert!(matches!(verdict(label), Verdict::Invalid(_)), "{label}");
        }
        // `mode` has no type, so no wrong type can be chosen for it.
        assert!(cases.iter().all(|c| !c.label.contains("`mode` given")));
    }

    #[test]
    fn a_schema_without_strings_has_no_string_cases_and_duplicates_go() {
        let cases = cases(&json!({"type": "object", "properties": {}}));
        let labels: Vec<&str> = cases.iter().map(|c| c.label.as_str()).collect();
        // The required-only, full and empty cases are all `{}`: given once.
        assert_eq!(
            labels,
            [
                "valid: the required fields only",
                "an extra field `conformance_extra_field`"
            ]
        );
    }

    #[test]
    fn a_remote_reference_leaves_the_verdict_unknown() {
        let cases = cases(
            &json!({"type": "object", "properties": {"x": {"$ref": "https://example.invalid/x.json"}}}),
        );
        assert!(cases.iter().all(|c| c.verdict == Verdict::Unknown));
    }

    #[test]
    fn arguments_are_abbreviated_for_reports() {
        let shown = abbreviate(&json!({"path": "x".repeat(1000)}));
        assert_eq!(shown, r#"{"path":"xxxxxxxxxxxxxxxxxxxx… (1000 characters)"}"#);
    }
}
