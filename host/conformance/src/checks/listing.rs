//! The listing family: `loads`, `deterministic`, `names`, `descriptions`
//! and `schemas`. The component is loaded through the runtime's
//! [`ComponentProbe`], so that its tool list is seen as the component gave
//! it (the host would refuse a bad one outright) and can be asked for again
//! in fresh instances.

use std::sync::{Arc, Mutex, PoisonError};

use serde_json::Value;
use toolhost_core::error::{Error, ErrorCode};
use toolhost_core::registry::names::{
    MAX_TOOL_NAME_LEN, Reserved, is_name_byte, is_valid_tool_name, reserved,
};
use toolhost_runtime::capabilities::Declared;
use toolhost_runtime::component::{ListedTool, Sandboxed};
use toolhost_runtime::{Engine, LoadOptions, LoadedComponent};

use super::CheckId;
use crate::report::{CheckReport, Problem, count};

/// One fresh instance's answers to `list-tools` (and `declare`).
pub(crate) type Listing = Sandboxed<toolhost_runtime::component::Listing>;

/// What loading the component gave.
pub(crate) struct Loaded {
    /// The `loads` check.
    pub report: CheckReport,
    /// Each `list-tools` answer, each from a fresh instance (none if the
    /// component could not be probed).
    pub listings: Vec<Listing>,
    /// The component as the host serves it, if it loaded.
    pub component: Option<Arc<LoadedComponent>>,
}

impl Loaded {
    /// The first listing's tools, if it succeeded.
    pub fn tools(&self) -> Option<&[ListedTool]> {
        Some(&self.listings.first()?.result.as_ref().ok()?.tools)
    }

    /// What the first instance's `declare` answered (0.2.0 and later).
    pub fn declare_answer(&self) -> Option<&Declared> {
        self.listings.first()?.result.as_ref().ok()?.declared.as_ref()
    }
}

/// `loads`: the host loads the component. Lists its tools `listings` times
/// (at least once) on the way, for the checks of the list.
pub(crate) async fn loads(
    engine: &Engine,
    bytes: Vec<u8>,
    options: LoadOptions,
    setting: &str,
    listings: usize,
) -> Loaded {
    let tried = format!(
        "compiled and linked it {setting}, called list-tools (and declare, from 0.2.0; list-prompts, list-resources and list-templates, from 0.3.0) in {} fresh instances, and checked the answers as the host does",
        listings.max(1)
    );
    let fail = |e: &Error, listings: Vec<Listing>| Loaded {
        report: CheckReport::ran(CheckId::Loads, tried.clone(), vec![load_problem(e)]),
        listings,
        component: None,
    };
    let probe = match engine.probe(bytes, options).await {
        Ok(probe) => probe,
        Err(e) => return fail(&e, Vec::new()),
    };
    let mut answers = Vec::with_capacity(listings.max(1));
    for _ in 0..listings.max(1) {
        answers.push(probe.list_tools().await);
    }
    match probe.load().await {
        Ok(component) => Loaded {
            report: CheckReport::ran(CheckId::Loads, tried, Vec::new()),
            listings: answers,
            component: Some(component),
        },
        Err(e) => fail(&e, answers),
    }
}

/// The host's refusal as a problem, with the fix for its kind.
fn load_problem(e: &Error) -> Problem {
    let fix = match e.code() {
        ErrorCode::CapabilityNotGranted => {
            "it imports an interface that needs a grant to load: run the suite with the grant (`--http URL`, or Suite::grants), or remove the import"
        }
        ErrorCode::Config => "the limits or grants given to the suite are out of range; see the message",
        ErrorCode::OutOfFuel
        | ErrorCode::Timeout
        | ErrorCode::MemoryLimit
        | ErrorCode::StackOverflow
        | ErrorCode::Trap => {
            "list-tools must be cheap and must not fail: build the list from constants, without I/O or heavy start-up work (or raise the limit if it really needs more)"
        }
        ErrorCode::InvalidComponent | ErrorCode::UnsupportedWorld | ErrorCode::MissingImports => {
            "fix what the message names; the other checks of this report say more"
        }
        _ => "fix what the message names",
    };
    Problem::component(format!("the host refuses it: {}", e.message()), fix)
}

/// `deterministic`: every listing equals the first.
pub(crate) fn deterministic(listings: &[Listing]) -> CheckReport {
    let Some(Ok(first)) = listings.first().map(|l| l.result.as_ref()) else {
        return CheckReport::skipped(
            CheckId::Deterministic,
            "list-tools did not run to the end (see `loads`)",
        );
    };
    let tried = format!(
        "compared the answers of list-tools (and declare, from 0.2.0; list-prompts, list-resources and list-templates, from 0.3.0) in {} fresh instances",
        listings.len()
    );
    let mut problems = Vec::new();
    for (i, listing) in listings.iter().enumerate().skip(1) {
        let instance = i + 1;
        match &listing.result {
            Err(e) => problems.push(Problem::component(
                format!("list-tools failed in fresh instance #{instance} after succeeding in the first: {e}"),
                "make list-tools depend on nothing but the component's own code",
            )),
            Ok(other) => {
                problems.extend(differences(&first.tools, &other.tools, instance));
                if first.declared != other.declared {
                    problems.push(Problem::component(
                        format!("declare answered differently in fresh instance #{instance}"),
                        "return the declaration from constants: no clock, randomness or environment in it",
                    ));
                }
                if first.catalog != other.catalog {
                    problems.push(Problem::component(
                        format!(
                            "list-prompts, list-resources or list-templates answered differently in fresh instance #{instance}"
                        ),
                        "build the lists from constants: no clock, randomness or environment in them",
                    ));
                }
            }
        }
    }
    CheckReport::ran(CheckId::Deterministic, tried, problems)
}

fn differences(first: &[ListedTool], other: &[ListedTool], instance: usize) -> Vec<Problem> {
    const FIX: &str =
        "build the tool list from constants: no clock, randomness, environment or hash-map order in it";
    if first.len() != other.len() {
        return vec![Problem::component(
            format!(
                "list-tools gave {} tools in the first instance and {} in fresh instance #{instance}",
                first.len(),
                other.len()
            ),
            FIX,
        )];
    }
    let mut problems = Vec::new();
    for (a, b) in first.iter().zip(other) {
        let mut changed = Vec::new();
        if a.name != b.name {
            changed.push(format!("name (then `{}`)", b.name));
        }
        if a.description != b.description {
            changed.push("description".to_string());
        }
        if a.parameters != b.parameters {
            changed.push("parameter schema".to_string());
        }
        if a.output_schema != b.output_schema {
            changed.push("output schema".to_string());
        }
        if a.hints != b.hints {
            changed.push("hints".to_string());
        }
        if !changed.is_empty() {
            problems.push(Problem::tool(
                &a.name,
                format!(
                    "fresh instance #{instance} listed it with a different {}",
                    changed.join(", ")
                ),
                FIX,
            ));
        }
    }
    problems
}

/// `names`: valid, unique, not reserved.
pub(crate) fn names(tools: Option<&[ListedTool]>) -> CheckReport {
    let Some(tools) = tools else {
        return CheckReport::skipped(CheckId::Names, "the tools could not be listed (see `loads`)");
    };
    let tried = format!(
        "checked the names of {} against ^[A-Za-z0-9_-]{{1,{MAX_TOOL_NAME_LEN}}}$, against each other and against the reserved names",
        count(tools.len(), "tool")
    );
    let mut problems = Vec::new();
    let mut seen = std::collections::HashSet::new();
    if tools.is_empty() {
        problems.push(Problem::component(
            "it lists no tools; the host refuses a component without tools",
            "export at least one tool",
        ));
    }
    for tool in tools {
        let name = &tool.name;
        if !is_valid_tool_name(name) {
            problems.push(Problem::tool(shown(name), name_problem(name), name_fix(name)));
        }
        if !seen.insert(name.as_str()) {
            problems.push(Problem::tool(
                shown(name),
                "the name is listed more than once; names must be unique within a component",
                "give each tool its own name",
            ));
        }
        match reserved(name) {
            Some(Reserved::Dispatcher) => problems.push(Problem::tool(
                name,
                "the name is reserved for the dispatcher's own tool search; the registry refuses it from any source",
                "rename the tool",
            )),
            Some(Reserved::Builtin) => problems.push(Problem::tool(
                name,
                "the name is reserved for a toolhost built-in (exec, process, toolhost__*); the registry refuses it from a plugin",
                "rename the tool",
            )),
            None => {}
        }
    }
    CheckReport::ran(CheckId::Names, tried, problems)
}

/// A name as shown in a report: cut to 80 characters.
fn shown(name: &str) -> &str {
    match name.char_indices().nth(80) {
        Some((i, _)) => &name[..i],
        None => name,
    }
}

fn name_problem(name: &str) -> String {
    if name.is_empty() {
        return "the name is empty".into();
    }
    if name.len() > MAX_TOOL_NAME_LEN {
        return format!(
            "the name is {} bytes long; the most is {MAX_TOOL_NAME_LEN}",
            name.len()
        );
    }
    let bad: String = name
        .chars()
        .filter(|c| !c.is_ascii() || !is_name_byte(*c as u8))
        .collect::<std::collections::BTreeSet<char>>()
        .into_iter()
        .map(|c| format!("{c:?}"))
        .collect::<Vec<_>>()
        .join(", ");
    format!("the name has characters outside A-Z a-z 0-9 _ -: {bad}")
}

fn name_fix(name: &str) -> String {
    let suggestion: String = name
        .chars()
        .map(|c| {
            if c.is_ascii() && is_name_byte(c as u8) {
                c
            } else {
                '_'
            }
        })
        .take(MAX_TOOL_NAME_LEN)
        .collect();
    if suggestion.is_empty() || suggestion.chars().all(|c| c == '_') {
        "name the tool with 1 to 64 characters from A-Z a-z 0-9 _ -".into()
    } else {
        format!("name it with 1 to 64 characters from A-Z a-z 0-9 _ -, e.g. `{suggestion}`")
    }
}

/// `descriptions`: every description has text.
pub(crate) fn descriptions(tools: Option<&[ListedTool]>) -> CheckReport {
    let Some(tools) = tools else {
        return CheckReport::skipped(
            CheckId::Descriptions,
            "the tools could not be listed (see `loads`)",
        );
    };
    let tried = format!("read the descriptions of {}", count(tools.len(), "tool"));
    let problems = tools
        .iter()
        .filter(|t| t.description.trim().is_empty())
        .map(|t| {
            Problem::tool(
                shown(&t.name),
                "the description is empty, so a model cannot know when to call the tool",
                "describe what the tool does and when to use it (Rust: a doc comment on the argument struct)",
            )
        })
        .collect();
    CheckReport::ran(CheckId::Descriptions, tried, problems)
}

/// `schemas`: JSON, valid against the 2020-12 meta-schema, local, an
/// object.
pub(crate) fn schemas(tools: Option<&[ListedTool]>) -> CheckReport {
    let Some(tools) = tools else {
        return CheckReport::skipped(CheckId::Schemas, "the tools could not be listed (see `loads`)");
    };
    let outputs = tools.iter().filter(|t| t.output_schema.is_some()).count();
    let tried = format!(
        "parsed the parameter schemas of {} and {}, validated each against the JSON Schema draft 2020-12 meta-schema and compiled it with remote references refused",
        count(tools.len(), "tool"),
        count(outputs, "output schema")
    );
    let mut problems = Vec::new();
    for tool in tools {
        let name = shown(&tool.name);
        let schemas = std::iter::once(("parameter schema", &tool.parameters))
            .chain(tool.output_schema.iter().map(|s| ("output schema", s)));
        for (which, text) in schemas {
            problems.extend(
                schema_problems(which, text)
                    .into_iter()
                    .map(|(message, fix)| Problem::tool(name, message, fix)),
            );
        }
    }
    CheckReport::ran(CheckId::Schemas, tried, problems)
}

/// What is wrong with the schema `text` (`which`: `parameter schema` or
/// `output schema`), with fixes.
fn schema_problems(which: &str, text: &str) -> Vec<(String, String)> {
    let schema: Value = match serde_json::from_str(text) {
        Ok(schema) => schema,
        Err(e) => {
            return vec![(
                format!("the {which} is not JSON: {e}"),
                "return the schema as JSON text".into(),
            )];
        }
    };
    let mut problems = Vec::new();
    let meta = jsonschema::draft202012::meta::validator();
    let errors: Vec<String> = meta
        .iter_errors(&schema)
        .take(3)
        .map(|e| {
            let at = e.instance_path().to_string();
            if at.is_empty() {
                e.to_string()
            } else {
                format!("{e} (at {at})")
            }
        })
        .collect();
    if !errors.is_empty() {
        problems.push((
            format!(
                "the {which} is not valid JSON Schema 2020-12: {}",
                errors.join("; ")
            ),
            "correct the schema where the message points (a keyword with the wrong kind of value, a misspelled type)".into(),
        ));
    }
    if schema.get("type").and_then(Value::as_str) != Some("object") {
        problems.push((
            format!(
                "the {which} does not describe an object: its \"type\" is {}",
                schema.get("type").map_or("missing".to_string(), Value::to_string)
            ),
            "make it a JSON object schema: {\"type\": \"object\", \"properties\": {...}} (a model always sends an object of named arguments; a structured result is an object too)".into(),
        ));
    }
    if errors.is_empty()
        && let Err(e) = compile(&schema)
    {
        problems.push(match e {
            CompileError::Remote(uris) => (
                format!(
                    "the {which} refers to {}, outside itself; the host never fetches remote references",
                    uris.join(", ")
                ),
                "put the referenced definitions in the schema's own \"$defs\" and refer to them as \"#/$defs/NAME\"".into(),
            ),
            CompileError::Invalid(message) => (
                format!("the {which} cannot be compiled: {message}"),
                "correct the schema where the message points".into(),
            ),
        });
    }
    problems
}

/// Why a schema could not be compiled into a validator.
#[derive(Debug)]
pub(crate) enum CompileError {
    /// It refers to resources outside itself (their URIs).
    Remote(Vec<String>),
    /// Another reason.
    Invalid(String),
}

/// Compiles `schema` as draft 2020-12, refusing every remote reference.
pub(crate) fn compile(schema: &Value) -> Result<jsonschema::Validator, CompileError> {
    let asked = Arc::new(Mutex::new(Vec::new()));
    let result = jsonschema::draft202012::options()
        .with_retriever(NoRemote(Arc::clone(&asked)))
        .build(schema);
    let asked = std::mem::take(&mut *asked.lock().unwrap_or_else(PoisonError::into_inner));
    match result {
        Ok(validator) => Ok(validator),
        Err(_) if !asked.is_empty() => Err(CompileError::Remote(asked)),
        Err(e) => Err(CompileError::Invalid(e.to_string())),
    }
}

/// A retriever that fetches nothing and records what was asked for.
struct NoRemote(Arc<Mutex<Vec<String>>>);

impl jsonschema::Retrieve for NoRemote {
    fn retrieve(
        &self,
        uri: &jsonschema::Uri<String>,
    ) -> Result<Value, Box<dyn std::error::Error + Send + Sync>> {
        self.0
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .push(uri.to_string());
        Err(format!("{uri} is remote, and remote references are refused").into())
    }
}
