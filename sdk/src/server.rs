//! # Prompts and resources: everything else an MCP server offers
//!
//! Besides tools, a plugin may offer its clients **prompts** (message
//! templates a client shows its user, rendered with arguments) and
//! **resources** (data a client reads by URI: fixed URIs, or families of
//! them described by a URI template), with **completions** for prompt
//! arguments and template variables. A [`Server`] lists them, and
//! [`plugin!`](crate::plugin) exports it beside the tools:
//!
//! ```ignore
//! use schemars::JsonSchema;
//! use serde::Deserialize;
//! use toolhost_sdk::server::{Completion, Context, Prompt, PromptMessage, ReadError, Resource, ResourceTemplate, Server};
//! use toolhost_sdk::ToolError;
//!
//! /// Asks for a review of some code.
//! #[derive(Deserialize, JsonSchema)]
//! struct Review {
//!     /// The language the code is in.
//!     language: String,
//!     /// The code.
//!     code: String,
//! }
//!
//! fn review(args: Review) -> Result<Vec<PromptMessage>, ToolError> {
//!     Ok(vec![PromptMessage::user(format!("Review this {} code:\n{}", args.language, args.code))])
//! }
//!
//! fn languages(value: &str, _: &Context) -> Completion {
//!     Completion::matching(["go", "python", "rust"], value)
//! }
//!
//! fn readme() -> Result<String, ReadError> {
//!     Ok("# Notes\n".into())
//! }
//!
//! /// The variables of `notes://{id}`.
//! #[derive(Deserialize)]
//! struct Note {
//!     id: String,
//! }
//!
//! fn note(args: Note) -> Result<String, ReadError> {
//!     match args.id.as_str() {
//!         "1" => Ok("the first note".into()),
//!         other => Err(ReadError::not_found(format!("no note {other}"))),
//!     }
//! }
//!
//! fn server() -> Server {
//!     Server::new()
//!         .prompt(Prompt::new("code_review", review).title("Code review").complete("language", languages))
//!         .resource(Resource::new("notes://readme", "readme", readme).mime_type("text/markdown"))
//!         .template(
//!             ResourceTemplate::new("notes://{id}", "note", note)
//!                 .mime_type("text/plain")
//!                 .complete("id", |value, _| Completion::matching(["1", "2"], value)),
//!         )
//! }
//!
//! toolhost_sdk::plugin! {
//!     tools: [greet(read_only)],
//!     server: server,
//! }
//! ```
//!
//! What the SDK guarantees:
//!
//! - a prompt's arguments are its argument struct's fields (each field's doc
//!   comment is the argument's description; `Option` fields are not
//!   required), and its description is the struct's doc comment, as for a
//!   tool; argument values are strings, so the fields are `String`s;
//! - arguments that do not deserialize, and variables of a template URI
//!   that do not, are reported as `invalid_arguments` and `not_found`, never
//!   as a trap;
//! - a read returning text or bytes gets the URI it was asked for and the
//!   resource's MIME type;
//! - every request runs in a fresh instance: `server()` is called anew each
//!   time, so it must not depend on anything but the plugin's code.

use std::fmt;

use schemars::JsonSchema;
use serde::de::DeserializeOwned;
use serde_json::{Map, Value};

use crate::content::{Annotations, ContentBlock, ResourceContents, Role};
use crate::error::ToolError;

/// What a plugin offers besides its tools: prompts, resources and resource
/// templates. See the [module documentation](self).
#[derive(Default)]
pub struct Server {
    pub(crate) prompts: Vec<Prompt>,
    pub(crate) resources: Vec<Resource>,
    pub(crate) templates: Vec<ResourceTemplate>,
}

impl fmt::Debug for Server {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Server")
            .field("prompts", &self.prompts)
            .field("resources", &self.resources)
            .field("templates", &self.templates)
            .finish()
    }
}

impl Server {
    /// A server offering nothing yet.
    pub fn new() -> Self {
        Server::default()
    }

    /// This server with `prompt`.
    pub fn prompt(mut self, prompt: Prompt) -> Self {
        self.prompts.push(prompt);
        self
    }

    /// This server with `resource`.
    pub fn resource(mut self, resource: Resource) -> Self {
        self.resources.push(resource);
        self
    }

    /// This server with `template`.
    pub fn template(mut self, template: ResourceTemplate) -> Self {
        self.templates.push(template);
        self
    }
}

type Render = Box<dyn Fn(Value) -> Result<PromptResult, ToolError>>;
type Complete = Box<dyn Fn(&str, &Context) -> Result<Completion, ToolError>>;
type Read = Box<dyn Fn(&str, Value) -> Result<Vec<ResourceContents>, ReadError>>;

/// One argument of a prompt, as the client sees it.
#[derive(Debug, Clone, PartialEq)]
pub(crate) struct PromptArgument {
    pub(crate) name: String,
    pub(crate) description: Option<String>,
    pub(crate) required: bool,
}

/// A prompt: a named message template, rendered with arguments.
pub struct Prompt {
    pub(crate) name: String,
    pub(crate) title: Option<String>,
    pub(crate) description: Option<String>,
    pub(crate) arguments: Vec<PromptArgument>,
    render: Render,
    completions: Vec<(String, Complete)>,
}

impl fmt::Debug for Prompt {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Prompt")
            .field("name", &self.name)
            .field("arguments", &self.arguments)
            .finish_non_exhaustive()
    }
}

impl Prompt {
    /// The prompt `name` (by the tool-name rule: 1 to 64 characters from
    /// `A-Z a-z 0-9 _ -`), rendered by `render` from its arguments `A`: a
    /// struct of `String` (required) and `Option<String>` fields, whose
    /// doc comments describe the prompt and its arguments. A prompt without
    /// arguments takes an empty struct, or `()`.
    pub fn new<A, R, F>(name: impl Into<String>, render: F) -> Self
    where
        A: DeserializeOwned + JsonSchema + 'static,
        R: IntoPromptResult,
        F: Fn(A) -> Result<R, ToolError> + 'static,
    {
        let (description, schema) = crate::schema::parameters_of::<A>();
        let required: Vec<&str> = schema["required"]
            .as_array()
            .map(|r| r.iter().filter_map(Value::as_str).collect())
            .unwrap_or_default();
        let arguments = schema["properties"]
            .as_object()
            .map(|properties| {
                properties
                    .iter()
                    .map(|(name, property)| PromptArgument {
                        name: name.clone(),
                        description: property["description"].as_str().map(str::to_string),
                        required: required.contains(&name.as_str()),
                    })
                    .collect()
            })
            .unwrap_or_default();
        let takes_object = A::schema_name() != "null";
        Prompt {
            name: name.into(),
            title: None,
            description: (!description.is_empty()).then_some(description),
            arguments,
            render: Box::new(move |arguments| {
                let arguments = if takes_object { arguments } else { Value::Null };
                let args: A = serde_json::from_value(arguments)
                    .map_err(|e| ToolError::invalid_arguments(e.to_string()))?;
                render(args).map(IntoPromptResult::into_prompt_result)
            }),
            completions: Vec::new(),
        }
    }

    /// This prompt with a title for people.
    pub fn title(mut self, title: impl Into<String>) -> Self {
        self.title = Some(title.into());
        self
    }

    /// This prompt with `description`, in place of its argument struct's
    /// doc comment.
    pub fn description(mut self, description: impl Into<String>) -> Self {
        self.description = Some(description.into());
        self
    }

    /// This prompt, suggesting values for its argument `argument` with
    /// `complete` (given the text typed so far and the arguments already
    /// chosen).
    pub fn complete<C: IntoCompletion>(
        mut self,
        argument: impl Into<String>,
        complete: impl Fn(&str, &Context) -> C + 'static,
    ) -> Self {
        self.completions.push((
            argument.into(),
            Box::new(move |value, context| complete(value, context).into_completion()),
        ));
        self
    }

    pub(crate) fn render(&self, arguments: Vec<(String, String)>) -> Result<PromptResult, ToolError> {
        let object: Map<String, Value> = arguments
            .into_iter()
            .map(|(k, v)| (k, Value::String(v)))
            .collect();
        (self.render)(Value::Object(object))
    }
}

/// One message of a rendered prompt.
#[derive(Debug, Clone, PartialEq)]
#[non_exhaustive]
pub struct PromptMessage {
    /// Who says it.
    pub role: Role,
    /// What is said.
    pub content: ContentBlock,
}

impl PromptMessage {
    /// A message from the user: text (a `String` or `&str`) or any block.
    pub fn user(content: impl Into<ContentBlock>) -> Self {
        PromptMessage {
            role: Role::User,
            content: content.into(),
        }
    }

    /// A message from the model.
    pub fn assistant(content: impl Into<ContentBlock>) -> Self {
        PromptMessage {
            role: Role::Assistant,
            content: content.into(),
        }
    }
}

/// A rendered prompt: its messages, and a description of this rendering.
#[derive(Debug, Clone, PartialEq, Default)]
#[non_exhaustive]
pub struct PromptResult {
    /// A description of this rendering, if any.
    pub description: Option<String>,
    /// The messages.
    pub messages: Vec<PromptMessage>,
}

impl PromptResult {
    /// A rendering made of `messages`.
    pub fn new(messages: impl IntoIterator<Item = PromptMessage>) -> Self {
        PromptResult {
            description: None,
            messages: messages.into_iter().collect(),
        }
    }

    /// This rendering with a description.
    pub fn description(mut self, description: impl Into<String>) -> Self {
        self.description = Some(description.into());
        self
    }
}

/// What a prompt's render function may return: a [`PromptResult`], its
/// messages (one [`PromptMessage`] or a list), or text (one user message).
pub trait IntoPromptResult {
    /// The rendering.
    fn into_prompt_result(self) -> PromptResult;
}

impl IntoPromptResult for PromptResult {
    fn into_prompt_result(self) -> PromptResult {
        self
    }
}

impl IntoPromptResult for Vec<PromptMessage> {
    fn into_prompt_result(self) -> PromptResult {
        PromptResult::new(self)
    }
}

impl IntoPromptResult for PromptMessage {
    fn into_prompt_result(self) -> PromptResult {
        PromptResult::new([self])
    }
}

impl IntoPromptResult for String {
    fn into_prompt_result(self) -> PromptResult {
        PromptResult::new([PromptMessage::user(self)])
    }
}

impl IntoPromptResult for &str {
    fn into_prompt_result(self) -> PromptResult {
        PromptResult::new([PromptMessage::user(self)])
    }
}

/// A resource at a fixed URI.
pub struct Resource {
    pub(crate) uri: String,
    pub(crate) name: String,
    pub(crate) title: Option<String>,
    pub(crate) description: Option<String>,
    pub(crate) mime_type: Option<String>,
    pub(crate) size: Option<u64>,
    pub(crate) annotations: Option<Annotations>,
    read: Read,
}

impl fmt::Debug for Resource {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Resource")
            .field("uri", &self.uri)
            .field("name", &self.name)
            .finish_non_exhaustive()
    }
}

impl Resource {
    /// The resource at `uri` (`scheme:...`, unique among everything the
    /// host serves), called `name`, whose contents `read` gives: text (a
    /// `String`), bytes (a `Vec<u8>`), or [`ResourceContents`] (one or a
    /// list).
    pub fn new<R, F>(uri: impl Into<String>, name: impl Into<String>, read: F) -> Self
    where
        R: IntoContents,
        F: Fn() -> Result<R, ReadError> + 'static,
    {
        Resource {
            uri: uri.into(),
            name: name.into(),
            title: None,
            description: None,
            mime_type: None,
            size: None,
            annotations: None,
            read: Box::new(move |uri, _| read().map(|r| r.into_contents(uri, None))),
        }
    }

    /// This resource with a title for people.
    pub fn title(mut self, title: impl Into<String>) -> Self {
        self.title = Some(title.into());
        self
    }

    /// This resource with a description.
    pub fn description(mut self, description: impl Into<String>) -> Self {
        self.description = Some(description.into());
        self
    }

    /// This resource with its MIME type (also that of the text or bytes
    /// its read returns).
    pub fn mime_type(mut self, mime_type: impl Into<String>) -> Self {
        self.mime_type = Some(mime_type.into());
        self
    }

    /// This resource with its size in bytes.
    pub fn size(mut self, size: u64) -> Self {
        self.size = Some(size);
        self
    }

    /// This resource with annotations (who it is for, how important).
    pub fn annotations(mut self, annotations: Annotations) -> Self {
        self.annotations = Some(annotations);
        self
    }

    pub(crate) fn read(&self, uri: &str) -> Result<Vec<ResourceContents>, ReadError> {
        let contents = (self.read)(uri, Value::Null)?;
        Ok(with_mime_type(contents, self.mime_type.as_deref()))
    }
}

/// A family of resources: a URI template (RFC 6570 `{name}` and `{+name}`
/// variables), e.g. `notes://{id}`.
pub struct ResourceTemplate {
    pub(crate) uri_template: String,
    pub(crate) name: String,
    pub(crate) title: Option<String>,
    pub(crate) description: Option<String>,
    pub(crate) mime_type: Option<String>,
    pub(crate) annotations: Option<Annotations>,
    read: Read,
    completions: Vec<(String, Complete)>,
}

impl fmt::Debug for ResourceTemplate {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("ResourceTemplate")
            .field("uri_template", &self.uri_template)
            .field("name", &self.name)
            .finish_non_exhaustive()
    }
}

impl ResourceTemplate {
    /// The resources whose URIs `uri_template` matches, called `name`,
    /// read by `read` from the template's variables `A` (a struct of
    /// `String` fields named after them, or a `HashMap<String, String>`).
    /// `{name}` matches one or more characters other than `/`, `?` and
    /// `#`; `{+name}` matches any; values are percent-decoded.
    pub fn new<A, R, F>(uri_template: impl Into<String>, name: impl Into<String>, read: F) -> Self
    where
        A: DeserializeOwned + 'static,
        R: IntoContents,
        F: Fn(A) -> Result<R, ReadError> + 'static,
    {
        ResourceTemplate {
            uri_template: uri_template.into(),
            name: name.into(),
            title: None,
            description: None,
            mime_type: None,
            annotations: None,
            read: Box::new(move |uri, variables| {
                let args: A = serde_json::from_value(variables)
                    .map_err(|e| ReadError::not_found(format!("no resource at {uri}: {e}")))?;
                read(args).map(|r| r.into_contents(uri, None))
            }),
            completions: Vec::new(),
        }
    }

    /// This template with a title for people.
    pub fn title(mut self, title: impl Into<String>) -> Self {
        self.title = Some(title.into());
        self
    }

    /// This template with a description of its resources.
    pub fn description(mut self, description: impl Into<String>) -> Self {
        self.description = Some(description.into());
        self
    }

    /// This template with its resources' MIME type.
    pub fn mime_type(mut self, mime_type: impl Into<String>) -> Self {
        self.mime_type = Some(mime_type.into());
        self
    }

    /// This template with annotations (who its resources are for).
    pub fn annotations(mut self, annotations: Annotations) -> Self {
        self.annotations = Some(annotations);
        self
    }

    /// This template, suggesting values for its variable `variable` with
    /// `complete` (given the text typed so far and the variables already
    /// chosen).
    pub fn complete<C: IntoCompletion>(
        mut self,
        variable: impl Into<String>,
        complete: impl Fn(&str, &Context) -> C + 'static,
    ) -> Self {
        self.completions.push((
            variable.into(),
            Box::new(move |value, context| complete(value, context).into_completion()),
        ));
        self
    }

    /// The template's variables in `uri`, when it matches.
    pub(crate) fn matches(&self, uri: &str) -> Option<Vec<(String, String)>> {
        match_template(&self.uri_template, uri)
    }

    pub(crate) fn read(
        &self,
        uri: &str,
        variables: Vec<(String, String)>,
    ) -> Result<Vec<ResourceContents>, ReadError> {
        let object: Map<String, Value> = variables
            .into_iter()
            .map(|(k, v)| (k, Value::String(v)))
            .collect();
        let contents = (self.read)(uri, Value::Object(object))?;
        Ok(with_mime_type(contents, self.mime_type.as_deref()))
    }
}

/// `contents` with `mime_type` where they state none.
fn with_mime_type(mut contents: Vec<ResourceContents>, mime_type: Option<&str>) -> Vec<ResourceContents> {
    if let Some(mime) = mime_type {
        for c in &mut contents {
            if let ResourceContents::Text { mime_type, .. } | ResourceContents::Blob { mime_type, .. } = c
                && mime_type.is_none()
            {
                *mime_type = Some(mime.to_string());
            }
        }
    }
    contents
}

/// What a resource's read function may return: text, bytes, or
/// [`ResourceContents`] (one or a list). Text and bytes get the URI that
/// was read and the resource's MIME type.
pub trait IntoContents {
    /// The contents of the resource at `uri`.
    fn into_contents(self, uri: &str, mime_type: Option<&str>) -> Vec<ResourceContents>;
}

impl IntoContents for String {
    fn into_contents(self, uri: &str, _: Option<&str>) -> Vec<ResourceContents> {
        vec![ResourceContents::text(uri, self)]
    }
}

impl IntoContents for &str {
    fn into_contents(self, uri: &str, _: Option<&str>) -> Vec<ResourceContents> {
        vec![ResourceContents::text(uri, self)]
    }
}

impl IntoContents for Vec<u8> {
    fn into_contents(self, uri: &str, _: Option<&str>) -> Vec<ResourceContents> {
        vec![ResourceContents::blob(uri, self)]
    }
}

impl IntoContents for ResourceContents {
    fn into_contents(self, _: &str, _: Option<&str>) -> Vec<ResourceContents> {
        vec![self]
    }
}

impl IntoContents for Vec<ResourceContents> {
    fn into_contents(self, _: &str, _: Option<&str>) -> Vec<ResourceContents> {
        self
    }
}

/// Why a resource could not be read. Any [`std::error::Error`] converts
/// into [`ReadError::failed`] with `?`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ReadError {
    pub(crate) not_found: bool,
    pub(crate) message: String,
}

impl ReadError {
    /// There is no resource at that URI; `message` says so.
    pub fn not_found(message: impl Into<String>) -> Self {
        ReadError {
            not_found: true,
            message: message.into(),
        }
    }

    /// It exists but could not be read; `message` says why.
    pub fn failed(message: impl Into<String>) -> Self {
        ReadError {
            not_found: false,
            message: message.into(),
        }
    }

    /// The message.
    pub fn message(&self) -> &str {
        &self.message
    }
}

impl<E: std::error::Error> From<E> for ReadError {
    fn from(err: E) -> Self {
        ReadError::failed(err.to_string())
    }
}

/// Suggested values for an argument being typed.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
#[non_exhaustive]
pub struct Completion {
    /// The suggestions, best first (the host passes on at most 100).
    pub values: Vec<String>,
    /// How many suggestions there are in all, when known.
    pub total: Option<u32>,
    /// Whether there are more than `values`.
    pub has_more: bool,
}

impl Completion {
    /// The suggestions `values`, all there are.
    pub fn new(values: impl IntoIterator<Item = impl Into<String>>) -> Self {
        let values: Vec<String> = values.into_iter().map(Into::into).collect();
        Completion {
            total: u32::try_from(values.len()).ok(),
            values,
            has_more: false,
        }
    }

    /// The `candidates` that start with `typed` (ignoring case), in order;
    /// at most 100, with the total and whether there are more.
    pub fn matching(candidates: impl IntoIterator<Item = impl Into<String>>, typed: &str) -> Self {
        let typed = typed.to_lowercase();
        let all: Vec<String> = candidates
            .into_iter()
            .map(Into::into)
            .filter(|c| c.to_lowercase().starts_with(&typed))
            .collect();
        let total = all.len();
        Completion {
            values: all.into_iter().take(100).collect(),
            total: u32::try_from(total).ok(),
            has_more: total > 100,
        }
    }
}

/// What a completion function may return: a [`Completion`], a list of
/// values, or either in a `Result` with a [`ToolError`].
pub trait IntoCompletion {
    /// The suggestions.
    fn into_completion(self) -> Result<Completion, ToolError>;
}

impl IntoCompletion for Completion {
    fn into_completion(self) -> Result<Completion, ToolError> {
        Ok(self)
    }
}

impl IntoCompletion for Vec<String> {
    fn into_completion(self) -> Result<Completion, ToolError> {
        Ok(Completion::new(self))
    }
}

impl IntoCompletion for Vec<&str> {
    fn into_completion(self) -> Result<Completion, ToolError> {
        Ok(Completion::new(self))
    }
}

impl<C: IntoCompletion> IntoCompletion for Result<C, ToolError> {
    fn into_completion(self) -> Result<Completion, ToolError> {
        self.and_then(IntoCompletion::into_completion)
    }
}

/// The arguments (or template variables) already chosen when a completion
/// is asked for.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Context {
    chosen: Vec<(String, String)>,
}

impl Context {
    pub(crate) fn new(chosen: Vec<(String, String)>) -> Self {
        Context { chosen }
    }

    /// The value chosen for `name`, if any.
    pub fn get(&self, name: &str) -> Option<&str> {
        self.chosen
            .iter()
            .find(|(k, _)| k == name)
            .map(|(_, v)| v.as_str())
    }

    /// Every chosen (name, value), in the order the client gave them.
    pub fn iter(&self) -> impl Iterator<Item = (&str, &str)> {
        self.chosen.iter().map(|(k, v)| (k.as_str(), v.as_str()))
    }
}

/// Runs the completion for `argument` among `completions`; none for an
/// argument without one.
fn complete_among(
    completions: &[(String, Complete)],
    argument: &str,
    value: &str,
    context: Vec<(String, String)>,
) -> Result<Completion, ToolError> {
    match completions.iter().find(|(name, _)| name == argument) {
        Some((_, complete)) => complete(value, &Context::new(context)),
        None => Ok(Completion::default()),
    }
}

impl Server {
    /// The prompt `name`.
    pub(crate) fn find_prompt(&self, name: &str) -> Result<&Prompt, ToolError> {
        self.prompts
            .iter()
            .find(|p| p.name == name)
            .ok_or_else(|| ToolError::invalid_arguments(format!("this plugin has no prompt named `{name}`")))
    }

    /// Suggestions for `argument` of prompt `name`.
    pub(crate) fn complete_prompt(
        &self,
        name: &str,
        argument: &str,
        value: &str,
        context: Vec<(String, String)>,
    ) -> Result<Completion, ToolError> {
        complete_among(&self.find_prompt(name)?.completions, argument, value, context)
    }

    /// Reads `uri`: a resource's own URI first, then the first template
    /// that matches it.
    pub(crate) fn read(&self, uri: &str) -> Result<Vec<ResourceContents>, ReadError> {
        if let Some(resource) = self.resources.iter().find(|r| r.uri == uri) {
            return resource.read(uri);
        }
        for template in &self.templates {
            if let Some(variables) = template.matches(uri) {
                return template.read(uri, variables);
            }
        }
        Err(ReadError::not_found(format!(
            "this plugin has no resource at {uri}"
        )))
    }

    /// Suggestions for `variable` of template `uri_template`.
    pub(crate) fn complete_template(
        &self,
        uri_template: &str,
        variable: &str,
        value: &str,
        context: Vec<(String, String)>,
    ) -> Result<Completion, ToolError> {
        let template = self
            .templates
            .iter()
            .find(|t| t.uri_template == uri_template)
            .ok_or_else(|| {
                ToolError::invalid_arguments(format!("this plugin has no resource template `{uri_template}`"))
            })?;
        complete_among(&template.completions, variable, value, context)
    }
}

/// One piece of a URI template: literal text, or a variable.
#[derive(Debug, PartialEq)]
enum Piece<'a> {
    Literal(&'a str),
    Var { name: &'a str, reserved: bool },
}

/// `template`'s pieces; `None` for a template with an unclosed `{`.
fn pieces(template: &str) -> Option<Vec<Piece<'_>>> {
    let mut out = Vec::new();
    let mut rest = template;
    while let Some(open) = rest.find('{') {
        if open > 0 {
            out.push(Piece::Literal(&rest[..open]));
        }
        let close = rest[open..].find('}')? + open;
        let inner = &rest[open + 1..close];
        let (name, reserved) = match inner.strip_prefix('+') {
            Some(name) => (name, true),
            None => (inner, false),
        };
        out.push(Piece::Var { name, reserved });
        rest = &rest[close + 1..];
    }
    if !rest.is_empty() {
        out.push(Piece::Literal(rest));
    }
    Some(out)
}

/// The variables of `template` in `uri`, when it matches (see
/// [`ResourceTemplate::new`]). Backtracks over where each variable ends;
/// URIs and templates are short.
fn match_template(template: &str, uri: &str) -> Option<Vec<(String, String)>> {
    fn go<'a>(pieces: &[Piece<'a>], uri: &str, out: &mut Vec<(String, String)>) -> bool {
        match pieces.split_first() {
            None => uri.is_empty(),
            Some((Piece::Literal(lit), rest)) => uri.strip_prefix(lit).is_some_and(|u| go(rest, u, out)),
            Some((Piece::Var { name, reserved }, rest)) => {
                let mut ends: Vec<usize> = uri.char_indices().map(|(i, _)| i).skip(1).collect();
                ends.push(uri.len());
                for end in ends.into_iter().filter(|&end| end > 0) {
                    let value = &uri[..end];
                    if !reserved && value.contains(['/', '?', '#']) {
                        break;
                    }
                    out.push((name.to_string(), percent_decode(value)));
                    if go(rest, &uri[end..], out) {
                        return true;
                    }
                    out.pop();
                }
                false
            }
        }
    }
    let pieces = pieces(template)?;
    let mut out = Vec::new();
    go(&pieces, uri, &mut out).then_some(out)
}

/// `text` with `%XX` escapes decoded (left as they are where the result
/// would not be UTF-8).
fn percent_decode(text: &str) -> String {
    if !text.contains('%') {
        return text.to_string();
    }
    let bytes = text.as_bytes();
    let mut out = Vec::with_capacity(bytes.len());
    let mut i = 0;
    while i < bytes.len() {
        let hex = |b: u8| (b as char).to_digit(16);
        if bytes[i] == b'%'
            && i + 2 < bytes.len()
            && let (Some(h), Some(l)) = (hex(bytes[i + 1]), hex(bytes[i + 2]))
        {
            out.push((h * 16 + l) as u8);
            i += 3;
        } else {
            out.push(bytes[i]);
            i += 1;
        }
    }
    String::from_utf8(out).unwrap_or_else(|_| text.to_string())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn templates_match_simple_and_reserved_variables() {
        let vars = |t: &str, u: &str| match_template(t, u);
        assert_eq!(
            vars("test://template/{id}/data", "test://template/42/data"),
            Some(vec![("id".into(), "42".into())])
        );
        assert_eq!(
            vars("test://template/{id}/data", "test://template/4/2/data"),
            None
        );
        assert_eq!(
            vars("file:///{+path}", "file:///a/b c.txt"),
            Some(vec![("path".into(), "a/b c.txt".into())])
        );
        assert_eq!(
            vars("notes://{a}-{b}", "notes://x%20y-z"),
            Some(vec![("a".into(), "x y".into()), ("b".into(), "z".into())])
        );
        assert_eq!(vars("notes://{id}", "notes://"), None);
        assert_eq!(vars("notes://{id", "notes://1"), None);
    }

    /// Reviews code.
    #[derive(serde::Deserialize, JsonSchema)]
    struct Review {
        /// The language.
        language: String,
        /// How strict to be.
        strictness: Option<String>,
    }

    #[test]
    fn a_prompts_arguments_come_from_its_struct() {
        let prompt = Prompt::new("review", |r: Review| {
            Ok::<_, ToolError>(format!("{} {}", r.language, r.strictness.unwrap_or_default()))
        })
        .complete("language", |typed, _| {
            Completion::matching(["Rust", "Ruby", "Go"], typed)
        });
        assert_eq!(prompt.description.as_deref(), Some("Reviews code."));
        assert_eq!(
            prompt.arguments,
            [
                PromptArgument {
                    name: "language".into(),
                    description: Some("The language.".into()),
                    required: true
                },
                PromptArgument {
                    name: "strictness".into(),
                    description: Some("How strict to be.".into()),
                    required: false
                },
            ]
        );
        let server = Server::new().prompt(prompt);
        let rendered = server
            .find_prompt("review")
            .unwrap()
            .render(vec![("language".into(), "Rust".into())])
            .unwrap();
        assert_eq!(rendered.messages, [PromptMessage::user("Rust ")]);
        let done = server
            .complete_prompt("review", "language", "r", Vec::new())
            .unwrap();
        assert_eq!(
            (done.values, done.total),
            (vec!["Rust".to_string(), "Ruby".to_string()], Some(2))
        );
        assert!(
            server
                .complete_prompt("review", "strictness", "", Vec::new())
                .unwrap()
                .values
                .is_empty()
        );
        assert!(server.find_prompt("nope").unwrap_err().is_invalid_arguments());
        let unit = Prompt::new("plain", |()| Ok::<_, ToolError>("hi"));
        assert!(unit.arguments.is_empty());
        assert_eq!(
            unit.render(Vec::new()).unwrap().messages,
            [PromptMessage::user("hi")]
        );
    }

    #[test]
    fn reads_find_resources_then_templates() {
        #[derive(serde::Deserialize)]
        struct Id {
            id: String,
        }
        let server = Server::new()
            .resource(Resource::new("test://static-text", "text", || Ok("hello")).mime_type("text/plain"))
            .resource(Resource::new("test://static-binary", "bin", || Ok(vec![1u8, 2])))
            .template(
                ResourceTemplate::new("test://template/{id}/data", "t", |a: Id| {
                    if a.id == "missing" {
                        return Err(ReadError::not_found("no such id"));
                    }
                    Ok(format!("data {}", a.id))
                })
                .mime_type("application/json"),
            );
        assert_eq!(
            server.read("test://static-text").unwrap(),
            [ResourceContents::text("test://static-text", "hello").mime_type("text/plain")]
        );
        assert_eq!(
            server.read("test://static-binary").unwrap(),
            [ResourceContents::blob("test://static-binary", vec![1, 2])]
        );
        assert_eq!(
            server.read("test://template/7/data").unwrap(),
            [ResourceContents::text("test://template/7/data", "data 7").mime_type("application/json")]
        );
        assert!(server.read("test://template/missing/data").unwrap_err().not_found);
        assert!(server.read("test://other").unwrap_err().not_found);
    }
}
