//! `docs/config.md` is the reference of `toolhost.toml`: every key the
//! config types accept is in it, and every key in it is one the types
//! accept. The keys of the types are found by deserializing
//! [`toolhost::Config`] from a tracer that records every field it is asked
//! for; the reference's, from its tables.
//!
//! Key paths are dotted: a field of a table is `section.key`, an array of
//! tables is written as its name (`plugins.path` for `[[plugins]] path`),
//! and a table of named entries takes `<name>` (`toolsets.<name>.includes`).

use std::cell::RefCell;
use std::collections::BTreeSet;
use std::fmt;

use serde::de::{self, DeserializeSeed, Deserializer, MapAccess, SeqAccess, Visitor};

use crate::support;

/// The state of a trace: the key paths seen, and the fields whose values
/// the tracer could not make (a string a type parses, say), skipped in
/// the next run so that the fields after them are reached.
#[derive(Default)]
struct Trace {
    keys: BTreeSet<String>,
    skipped: BTreeSet<String>,
    failed_at: Option<String>,
}

#[derive(Debug)]
struct Stop(String);

impl fmt::Display for Stop {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.0)
    }
}

impl std::error::Error for Stop {}

impl de::Error for Stop {
    fn custom<T: fmt::Display>(msg: T) -> Self {
        Stop(msg.to_string())
    }
}

/// Deserializes whatever is asked of it, recording the fields of structs.
#[derive(Clone, Copy)]
struct Tracer<'t> {
    path: &'t str,
    trace: &'t RefCell<Trace>,
}

fn join(path: &str, key: &str) -> String {
    if path.is_empty() {
        key.to_string()
    } else {
        format!("{path}.{key}")
    }
}

impl<'de> Deserializer<'de> for Tracer<'_> {
    type Error = Stop;

    fn deserialize_any<V: Visitor<'de>>(self, visitor: V) -> Result<V::Value, Stop> {
        visitor.visit_str("x")
    }
    fn deserialize_bool<V: Visitor<'de>>(self, visitor: V) -> Result<V::Value, Stop> {
        visitor.visit_bool(false)
    }
    fn deserialize_i8<V: Visitor<'de>>(self, visitor: V) -> Result<V::Value, Stop> {
        visitor.visit_i64(1)
    }
    fn deserialize_i16<V: Visitor<'de>>(self, visitor: V) -> Result<V::Value, Stop> {
        visitor.visit_i64(1)
    }
    fn deserialize_i32<V: Visitor<'de>>(self, visitor: V) -> Result<V::Value, Stop> {
        visitor.visit_i64(1)
    }
    fn deserialize_i64<V: Visitor<'de>>(self, visitor: V) -> Result<V::Value, Stop> {
        visitor.visit_i64(1)
    }
    fn deserialize_u8<V: Visitor<'de>>(self, visitor: V) -> Result<V::Value, Stop> {
        visitor.visit_u64(1)
    }
    fn deserialize_u16<V: Visitor<'de>>(self, visitor: V) -> Result<V::Value, Stop> {
        visitor.visit_u64(1)
    }
    fn deserialize_u32<V: Visitor<'de>>(self, visitor: V) -> Result<V::Value, Stop> {
        visitor.visit_u64(1)
    }
    fn deserialize_u64<V: Visitor<'de>>(self, visitor: V) -> Result<V::Value, Stop> {
        visitor.visit_u64(1)
    }
    fn deserialize_f32<V: Visitor<'de>>(self, visitor: V) -> Result<V::Value, Stop> {
        visitor.visit_f64(1.0)
    }
    fn deserialize_f64<V: Visitor<'de>>(self, visitor: V) -> Result<V::Value, Stop> {
        visitor.visit_f64(1.0)
    }
    fn deserialize_char<V: Visitor<'de>>(self, visitor: V) -> Result<V::Value, Stop> {
        visitor.visit_char('x')
    }
    fn deserialize_str<V: Visitor<'de>>(self, visitor: V) -> Result<V::Value, Stop> {
        visitor.visit_str("x")
    }
    fn deserialize_string<V: Visitor<'de>>(self, visitor: V) -> Result<V::Value, Stop> {
        visitor.visit_string("x".into())
    }
    fn deserialize_bytes<V: Visitor<'de>>(self, visitor: V) -> Result<V::Value, Stop> {
        visitor.visit_bytes(b"x")
    }
    fn deserialize_byte_buf<V: Visitor<'de>>(self, visitor: V) -> Result<V::Value, Stop> {
        visitor.visit_byte_buf(b"x".to_vec())
    }
    fn deserialize_option<V: Visitor<'de>>(self, visitor: V) -> Result<V::Value, Stop> {
        visitor.visit_some(self)
    }
    fn deserialize_unit<V: Visitor<'de>>(self, visitor: V) -> Result<V::Value, Stop> {
        visitor.visit_unit()
    }
    fn deserialize_unit_struct<V: Visitor<'de>>(self, _: &'static str, visitor: V) -> Result<V::Value, Stop> {
        visitor.visit_unit()
    }
    fn deserialize_newtype_struct<V: Visitor<'de>>(
        self,
        _: &'static str,
        visitor: V,
    ) -> Result<V::Value, Stop> {
        visitor.visit_newtype_struct(self)
    }
    fn deserialize_seq<V: Visitor<'de>>(self, visitor: V) -> Result<V::Value, Stop> {
        visitor.visit_seq(One { tracer: Some(self) })
    }
    fn deserialize_tuple<V: Visitor<'de>>(self, _: usize, visitor: V) -> Result<V::Value, Stop> {
        self.deserialize_seq(visitor)
    }
    fn deserialize_tuple_struct<V: Visitor<'de>>(
        self,
        _: &'static str,
        _: usize,
        visitor: V,
    ) -> Result<V::Value, Stop> {
        self.deserialize_seq(visitor)
    }
    fn deserialize_map<V: Visitor<'de>>(self, visitor: V) -> Result<V::Value, Stop> {
        // A table of named entries: one entry, named `<name>`.
        visitor.visit_map(Fields {
            tracer: self,
            keys: vec!["<name>".into()],
            next: 0,
            named: true,
        })
    }
    fn deserialize_struct<V: Visitor<'de>>(
        self,
        _: &'static str,
        fields: &'static [&'static str],
        visitor: V,
    ) -> Result<V::Value, Stop> {
        let mut trace = self.trace.borrow_mut();
        let mut keys = Vec::new();
        for field in fields {
            let path = join(self.path, field);
            trace.keys.insert(path.clone());
            if !trace.skipped.contains(&path) {
                keys.push((*field).to_string());
            }
        }
        drop(trace);
        visitor.visit_map(Fields {
            tracer: self,
            keys,
            next: 0,
            named: false,
        })
    }
    fn deserialize_enum<V: Visitor<'de>>(
        self,
        _: &'static str,
        variants: &'static [&'static str],
        visitor: V,
    ) -> Result<V::Value, Stop> {
        visitor.visit_enum(de::value::StrDeserializer::<Stop>::new(variants[0]))
    }
    fn deserialize_identifier<V: Visitor<'de>>(self, visitor: V) -> Result<V::Value, Stop> {
        visitor.visit_str("x")
    }
    fn deserialize_ignored_any<V: Visitor<'de>>(self, visitor: V) -> Result<V::Value, Stop> {
        visitor.visit_unit()
    }
}

/// A sequence of one element.
struct One<'t> {
    tracer: Option<Tracer<'t>>,
}

impl<'de> SeqAccess<'de> for One<'_> {
    type Error = Stop;
    fn next_element_seed<T: DeserializeSeed<'de>>(&mut self, seed: T) -> Result<Option<T::Value>, Stop> {
        match self.tracer.take() {
            Some(tracer) => seed.deserialize(tracer).map(Some),
            None => Ok(None),
        }
    }
}

/// The entries of a struct (its fields) or of a table (one `<name>`).
struct Fields<'t> {
    tracer: Tracer<'t>,
    keys: Vec<String>,
    next: usize,
    named: bool,
}

impl<'de> MapAccess<'de> for Fields<'_> {
    type Error = Stop;
    fn next_key_seed<K: DeserializeSeed<'de>>(&mut self, seed: K) -> Result<Option<K::Value>, Stop> {
        let Some(key) = self.keys.get(self.next) else {
            return Ok(None);
        };
        seed.deserialize(de::value::StrDeserializer::<Stop>::new(key))
            .map(Some)
    }
    fn next_value_seed<V: DeserializeSeed<'de>>(&mut self, seed: V) -> Result<V::Value, Stop> {
        let key = &self.keys[self.next];
        self.next += 1;
        let path = join(self.tracer.path, key);
        let child = Tracer {
            path: &path,
            trace: self.tracer.trace,
        };
        let value = seed.deserialize(child);
        if value.is_err() && !self.named {
            let mut trace = self.tracer.trace.borrow_mut();
            // The innermost field that failed is the one to skip.
            if trace.failed_at.is_none() {
                trace.failed_at = Some(path);
            }
        }
        value
    }
}

/// Every key path the config types accept: the leaves (a table's own
/// name is its section, not a key).
fn type_keys() -> BTreeSet<String> {
    let all = every_type_key();
    all.iter()
        .filter(|k| !all.iter().any(|other| other.starts_with(&format!("{k}."))))
        .cloned()
        .collect()
}

/// Every key path the tracer met, tables included.
fn every_type_key() -> BTreeSet<String> {
    let trace = RefCell::new(Trace::default());
    for _ in 0..1000 {
        let tracer = Tracer {
            path: "",
            trace: &trace,
        };
        let _ = <toolhost::Config as serde::Deserialize>::deserialize(tracer);
        let mut t = trace.borrow_mut();
        match t.failed_at.take() {
            Some(path) if !t.skipped.contains(&path) => {
                t.skipped.insert(path);
            }
            _ => break,
        }
    }
    trace.into_inner().keys
}

/// Every key path the reference documents: the first cell of each table
/// row, below a heading naming its sections (`` ## `[exec]` ``,
/// `` ## `[plugins.limits]`, `[plugins_dir.limits]` ``, or `## Top level`).
fn reference_keys(text: &str) -> BTreeSet<String> {
    let mut keys = BTreeSet::new();
    let mut sections: Vec<String> = Vec::new();
    for line in text.lines() {
        if let Some(heading) = line.strip_prefix("## ") {
            sections = if heading.trim() == "Top level" {
                vec![String::new()]
            } else {
                heading
                    .split('`')
                    .skip(1)
                    .step_by(2)
                    .map(|s| s.trim_matches(|c| c == '[' || c == ']').to_string())
                    .collect()
            };
            continue;
        }
        let Some(row) = line.strip_prefix("| `") else {
            continue;
        };
        if let Some((key, _)) = row.split_once('`') {
            for section in &sections {
                keys.insert(join(section, key));
            }
        }
    }
    keys
}

/// Keys of a table form the tracer cannot reach (an untagged enum is read
/// from whatever the tracer offers first, a string), each proven by a
/// config that uses it and one that misspells it.
const TABLE_FORMS: &[(&str, &str)] = &[(
    "grants.http",
    "[[plugins]]\npath = \"x.wasm\"\n[plugins.grants]\nhttp = [{ url = \"https://a.example\", allow_private = false, ca_file = \"ca.pem\" }]\n",
)];

fn table_form_keys() -> BTreeSet<String> {
    let mut keys = BTreeSet::new();
    for (table, config) in TABLE_FORMS {
        let parsed = toolhost::Config::from_toml(config);
        assert!(parsed.is_ok(), "{config}: {:?}", parsed.err());
        let misspelt = config.replace("allow_private", "alow_private");
        assert!(
            toolhost::Config::from_toml(&misspelt).is_err(),
            "a misspelt key of {table} is accepted"
        );
        for key in ["url", "allow_private", "ca_file"] {
            keys.insert(format!("plugins.{table}.{key}"));
            keys.insert(format!(
                "plugins_dir.grants.<name>.{}.{key}",
                &table["grants.".len()..]
            ));
        }
    }
    keys
}

#[test]
fn the_config_reference_documents_every_key_and_no_other() {
    let reference = std::fs::read_to_string(support::workspace_root().join("docs/config.md")).unwrap();
    let documented = reference_keys(&reference);
    let mut accepted = type_keys();
    accepted.extend(table_form_keys());
    let missing: Vec<_> = accepted.difference(&documented).collect();
    let unknown: Vec<_> = documented.difference(&accepted).collect();
    assert!(
        missing.is_empty() && unknown.is_empty(),
        "keys the config accepts but docs/config.md does not document: {missing:#?}\nkeys docs/config.md documents but the config does not accept: {unknown:#?}"
    );
}

/// The tracer finds what it must: a top-level key, a nested table's key,
/// a key of an array of tables, a key under a table of named entries.
#[test]
fn the_tracer_reaches_nested_arrays_and_named_tables() {
    let keys = every_type_key();
    for key in [
        "require_approval",
        "tools.codemode.max_tool_calls",
        "plugins.grants.dirs.mode",
        "plugins.limits.fuel",
        "toolsets.<name>.includes",
        "plugins_dir.grants.<name>.env",
        "mcp.servers.timeout_ms",
        "exec.ssh.known_hosts",
    ] {
        assert!(keys.contains(key), "{key} not found in {keys:#?}");
    }
}
