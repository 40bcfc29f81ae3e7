//! # Prompts
//!
//! A prompt is a named, parameterized message template a client offers its
//! user (MCP's `prompts/list` and `prompts/get`): a [`PromptSpec`] (name,
//! arguments) and an async `get` that renders [`PromptMessage`]s from the
//! arguments. Prompts live in the [`Registry`](super::Registry) beside
//! tools, with the same sources, audiences and toolsets; a component's,
//! an MCP server's and a built-in prompt are all implementations of
//! [`Prompt`].
//!
//! ```
//! use std::collections::BTreeMap;
//! use toolhost_core::content::{ContentBlock, Role};
//! use toolhost_core::registry::{CallContext, FnPrompt, Prompt, PromptArgument, PromptMessage, PromptResult, PromptSpec};
//!
//! let prompt = FnPrompt::new(
//!     PromptSpec::new("review", "Asks for a code review.").argument(PromptArgument::required("code")),
//!     |args: BTreeMap<String, String>, _ctx| async move {
//!         let text = format!("Please review:\n{}", args["code"]);
//!         Ok(PromptResult::new(vec![PromptMessage::new(Role::User, ContentBlock::text(text))]))
//!     },
//! );
//! # tokio::runtime::Runtime::new().unwrap().block_on(async {
//! let args = BTreeMap::from([("code".to_string(), "fn main() {}".to_string())]);
//! let out = prompt.get(args, CallContext::default()).await.unwrap();
//! assert_eq!(out.messages[0].content.as_text(), Some("Please review:\nfn main() {}"));
//! # });
//! ```

use std::collections::BTreeMap;
use std::fmt;
use std::future::Future;

use serde::{Deserialize, Serialize};

use super::tool::{BoxFuture, CallContext};
use crate::content::{ContentBlock, Role};
use crate::error::{Error, ErrorCode, Result};

/// One argument of a prompt.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct PromptArgument {
    /// Its name.
    pub name: String,
    /// A title for people.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub title: Option<String>,
    /// What it is for.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub description: Option<String>,
    /// Whether a `get` must give it.
    #[serde(default)]
    pub required: bool,
}

impl PromptArgument {
    /// A required argument named `name`.
    pub fn required(name: impl Into<String>) -> Self {
        PromptArgument {
            name: name.into(),
            title: None,
            description: None,
            required: true,
        }
    }

    /// An optional argument named `name`.
    pub fn optional(name: impl Into<String>) -> Self {
        PromptArgument {
            required: false,
            ..PromptArgument::required(name)
        }
    }

    /// This argument with `description`.
    pub fn describe(mut self, description: impl Into<String>) -> Self {
        self.description = Some(description.into());
        self
    }
}

/// What a client is told about a prompt (MCP's `Prompt`).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct PromptSpec {
    /// Its name, unique in a registry (the same rule as tool names).
    pub name: String,
    /// A title for people.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub title: Option<String>,
    /// What it is for.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub description: Option<String>,
    /// Its arguments, in order.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub arguments: Vec<PromptArgument>,
}

impl PromptSpec {
    /// A prompt without arguments.
    pub fn new(name: impl Into<String>, description: impl Into<String>) -> Self {
        PromptSpec {
            name: name.into(),
            title: None,
            description: Some(description.into()),
            arguments: Vec::new(),
        }
    }

    /// This spec with one more argument.
    pub fn argument(mut self, argument: PromptArgument) -> Self {
        self.arguments.push(argument);
        self
    }

    /// This spec with `title`.
    pub fn title(mut self, title: impl Into<String>) -> Self {
        self.title = Some(title.into());
        self
    }

    /// Checks `arguments` against this spec: every required argument is
    /// given, and no argument is unknown.
    ///
    /// # Errors
    ///
    /// `invalid_arguments` naming the missing or unknown arguments.
    pub fn check_arguments(&self, arguments: &BTreeMap<String, String>) -> Result<()> {
        let missing: Vec<&str> = self
            .arguments
            .iter()
            .filter(|a| a.required && !arguments.contains_key(&a.name))
            .map(|a| a.name.as_str())
            .collect();
        if !missing.is_empty() {
            return Err(Error::new(
                ErrorCode::InvalidArguments,
                format!(
                    "prompt `{}` needs the argument(s) {}",
                    self.name,
                    quoted(&missing)
                ),
            ));
        }
        let unknown: Vec<&str> = arguments
            .keys()
            .map(String::as_str)
            .filter(|k| !self.arguments.iter().any(|a| a.name == *k))
            .collect();
        if !unknown.is_empty() {
            let known: Vec<&str> = self.arguments.iter().map(|a| a.name.as_str()).collect();
            return Err(Error::new(
                ErrorCode::InvalidArguments,
                format!(
                    "prompt `{}` has no argument(s) {}; it takes: {}",
                    self.name,
                    quoted(&unknown),
                    if known.is_empty() {
                        "none".to_string()
                    } else {
                        quoted(&known)
                    }
                ),
            ));
        }
        Ok(())
    }
}

fn quoted(names: &[&str]) -> String {
    names
        .iter()
        .map(|n| format!("`{n}`"))
        .collect::<Vec<_>>()
        .join(", ")
}

/// One message of a rendered prompt.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct PromptMessage {
    /// Who says it.
    pub role: Role,
    /// What is said.
    pub content: ContentBlock,
}

impl PromptMessage {
    /// A message of `role` saying `content`.
    pub fn new(role: Role, content: ContentBlock) -> Self {
        PromptMessage { role, content }
    }
}

/// A rendered prompt (MCP's `GetPromptResult`).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct PromptResult {
    /// A description of this rendering, if the prompt gives one.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub description: Option<String>,
    /// The messages.
    pub messages: Vec<PromptMessage>,
}

impl PromptResult {
    /// A result of `messages` without a description.
    pub fn new(messages: Vec<PromptMessage>) -> Self {
        PromptResult {
            description: None,
            messages,
        }
    }
}

/// Suggested values for an argument being typed (MCP's `completion`).
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct Completion {
    /// The suggestions, best first; at most [`Completion::MAX_VALUES`].
    pub values: Vec<String>,
    /// How many suggestions there are in all, when known.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub total: Option<u32>,
    /// Whether there are more than `values`.
    #[serde(default)]
    pub has_more: bool,
}

impl Completion {
    /// The most values one completion carries (MCP's limit).
    pub const MAX_VALUES: usize = 100;

    /// `values`, cut to [`Completion::MAX_VALUES`] (`has_more` then says
    /// there were more).
    pub fn of(mut values: Vec<String>) -> Self {
        let total = u32::try_from(values.len()).ok();
        let has_more = values.len() > Self::MAX_VALUES;
        values.truncate(Self::MAX_VALUES);
        Completion {
            values,
            total,
            has_more,
        }
    }

    /// This completion held to MCP's limit, whatever its source said.
    pub fn bounded(mut self) -> Self {
        if self.values.len() > Self::MAX_VALUES {
            self.values.truncate(Self::MAX_VALUES);
            self.has_more = true;
        }
        self
    }
}

/// A prompt: a description and an async renderer. See the module
/// documentation.
pub trait Prompt: Send + Sync + 'static {
    /// The prompt's description. It does not change while it is registered.
    fn spec(&self) -> &PromptSpec;

    /// Renders the prompt with `arguments` (already checked against the
    /// spec: required ones present, none unknown).
    fn get(
        &self,
        arguments: BTreeMap<String, String>,
        ctx: CallContext,
    ) -> BoxFuture<'_, Result<PromptResult>>;

    /// Suggests values for argument `argument` whose text so far is
    /// `value`, given the `context` of arguments already chosen. Default:
    /// no suggestions.
    fn complete(
        &self,
        argument: &str,
        value: &str,
        context: &BTreeMap<String, String>,
        ctx: CallContext,
    ) -> BoxFuture<'_, Result<Completion>> {
        let _ = (argument, value, context, ctx);
        Box::pin(std::future::ready(Ok(Completion::default())))
    }
}

impl fmt::Debug for dyn Prompt {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Prompt")
            .field("name", &self.spec().name)
            .finish_non_exhaustive()
    }
}

/// A prompt made of a spec and an async closure.
pub struct FnPrompt<F> {
    spec: PromptSpec,
    render: F,
}

impl<F> fmt::Debug for FnPrompt<F> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("FnPrompt")
            .field("spec", &self.spec)
            .finish_non_exhaustive()
    }
}

impl<F, Fut> FnPrompt<F>
where
    F: Fn(BTreeMap<String, String>, CallContext) -> Fut + Send + Sync + 'static,
    Fut: Future<Output = Result<PromptResult>> + Send + 'static,
{
    /// A prompt rendered by `render`.
    pub fn new(spec: PromptSpec, render: F) -> Self {
        FnPrompt { spec, render }
    }
}

impl<F, Fut> Prompt for FnPrompt<F>
where
    F: Fn(BTreeMap<String, String>, CallContext) -> Fut + Send + Sync + 'static,
    Fut: Future<Output = Result<PromptResult>> + Send + 'static,
{
    fn spec(&self) -> &PromptSpec {
        &self.spec
    }

    fn get(
        &self,
        arguments: BTreeMap<String, String>,
        ctx: CallContext,
    ) -> BoxFuture<'_, Result<PromptResult>> {
        Box::pin((self.render)(arguments, ctx))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn arguments_are_checked_against_the_spec() {
        let spec = PromptSpec::new("p", "d")
            .argument(PromptArgument::required("a"))
            .argument(PromptArgument::optional("b"));
        let args = |pairs: &[(&str, &str)]| -> BTreeMap<String, String> {
            pairs
                .iter()
                .map(|(k, v)| (k.to_string(), v.to_string()))
                .collect()
        };
        assert!(spec.check_arguments(&args(&[("a", "1")])).is_ok());
        assert!(spec.check_arguments(&args(&[("a", "1"), ("b", "2")])).is_ok());
        let missing = spec.check_arguments(&args(&[("b", "2")])).unwrap_err();
        assert_eq!(missing.code(), ErrorCode::InvalidArguments);
        assert!(missing.message().contains("`a`"), "{missing}");
        let unknown = spec
            .check_arguments(&args(&[("a", "1"), ("c", "3")]))
            .unwrap_err();
        assert!(unknown.message().contains("no argument(s) `c`"), "{unknown}");
    }

    #[test]
    fn completions_hold_to_the_limit() {
        let many: Vec<String> = (0..150).map(|i| i.to_string()).collect();
        let c = Completion::of(many);
        assert_eq!(c.values.len(), Completion::MAX_VALUES);
        assert!(c.has_more);
        assert_eq!(c.total, Some(150));
        let wire = serde_json::to_value(&c).unwrap();
        assert_eq!(wire["hasMore"], true);
    }
}
