//! # Resources
//!
//! A resource is data a client may read by URI (MCP's `resources/list`,
//! `resources/read` and `resources/templates/list`): a file, a record, a
//! generated report. A source offers **resources** ([`ResourceSpec`], one
//! URI each) and **templates** ([`ResourceTemplateSpec`], a family of URIs
//! such as `notes://{id}`, RFC 6570 level 1), and one [`Resources`] reader
//! that reads any URI it offers. They live in the
//! [`Registry`](super::Registry) beside tools, with the same sources,
//! audiences and toolsets.
//!
//! ```
//! use toolhost_core::registry::UriTemplate;
//!
//! let template = UriTemplate::parse("test://template/{id}/data").unwrap();
//! let vars = template.matches("test://template/42/data").unwrap();
//! assert_eq!(vars["id"], "42");
//! assert!(template.matches("test://template/4/2/data").is_none());
//! ```

use std::collections::BTreeMap;
use std::fmt;

use serde::{Deserialize, Serialize};

use super::prompt::Completion;
use super::tool::{BoxFuture, CallContext};
use crate::content::{Annotations, ResourceContents};
use crate::error::{Error, ErrorCode, Result};

/// What a client is told about one resource (MCP's `Resource`).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct ResourceSpec {
    /// Its URI, unique in a registry.
    pub uri: String,
    /// Its name.
    pub name: String,
    /// A title for people.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub title: Option<String>,
    /// What it is.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub description: Option<String>,
    /// Its MIME type.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub mime_type: Option<String>,
    /// Its size in bytes, when known.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub size: Option<u64>,
    /// Who it is for, how important, when it changed.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub annotations: Option<Annotations>,
}

impl ResourceSpec {
    /// A resource at `uri` named `name`.
    pub fn new(uri: impl Into<String>, name: impl Into<String>) -> Self {
        ResourceSpec {
            uri: uri.into(),
            name: name.into(),
            title: None,
            description: None,
            mime_type: None,
            size: None,
            annotations: None,
        }
    }

    /// This spec with MIME type `mime_type`.
    pub fn mime_type(mut self, mime_type: impl Into<String>) -> Self {
        self.mime_type = Some(mime_type.into());
        self
    }

    /// This spec with `description`.
    pub fn describe(mut self, description: impl Into<String>) -> Self {
        self.description = Some(description.into());
        self
    }
}

/// What a client is told about a family of resources (MCP's
/// `ResourceTemplate`).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct ResourceTemplateSpec {
    /// The URI template (RFC 6570 level 1: `{name}` expansions), unique in
    /// a registry.
    pub uri_template: String,
    /// Its name.
    pub name: String,
    /// A title for people.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub title: Option<String>,
    /// What its resources are.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub description: Option<String>,
    /// Its resources' MIME type.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub mime_type: Option<String>,
    /// Who they are for, how important.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub annotations: Option<Annotations>,
}

impl ResourceTemplateSpec {
    /// A template `uri_template` named `name`.
    pub fn new(uri_template: impl Into<String>, name: impl Into<String>) -> Self {
        ResourceTemplateSpec {
            uri_template: uri_template.into(),
            name: name.into(),
            title: None,
            description: None,
            mime_type: None,
            annotations: None,
        }
    }
}

/// The longest URI or URI template the registry takes.
pub const MAX_URI_BYTES: usize = 2048;

/// Checks that `uri` is a URI a registry may hold: not empty, at most
/// [`MAX_URI_BYTES`], with a scheme, and without whitespace or control
/// characters.
///
/// # Errors
///
/// `invalid_arguments` naming what is wrong.
pub fn check_uri(uri: &str) -> Result<()> {
    let why = if uri.is_empty() {
        Some("it is empty")
    } else if uri.len() > MAX_URI_BYTES {
        Some("it is longer than 2048 bytes")
    } else if uri.chars().any(|c| c.is_whitespace() || c.is_control()) {
        Some("it contains whitespace or control characters")
    } else if !has_scheme(uri) {
        Some("it has no scheme (`scheme:...`)")
    } else {
        None
    };
    match why {
        None => Ok(()),
        Some(why) => Err(Error::new(
            ErrorCode::InvalidArguments,
            format!(
                "{:?} is not a resource URI: {why}",
                uri.chars().take(80).collect::<String>()
            ),
        )),
    }
}

fn has_scheme(uri: &str) -> bool {
    let Some((scheme, _)) = uri.split_once(':') else {
        return false;
    };
    let mut chars = scheme.chars();
    chars.next().is_some_and(|c| c.is_ascii_alphabetic())
        && chars.all(|c| c.is_ascii_alphanumeric() || matches!(c, '+' | '-' | '.'))
}

/// A parsed URI template: literal text and `{name}` (or `{+name}`)
/// variables (RFC 6570 level 1, and level 2's reserved expansion), for
/// matching URIs against. Matching runs in time linear in the URI (the
/// template is compiled to a `regex`, which has no backtracking), whatever
/// the template and the URI: both come from outside.
#[derive(Debug, Clone)]
pub struct UriTemplate {
    names: Vec<String>,
    pattern: regex::Regex,
}

impl PartialEq for UriTemplate {
    fn eq(&self, other: &Self) -> bool {
        self.pattern.as_str() == other.pattern.as_str()
    }
}

impl Eq for UriTemplate {}

impl UriTemplate {
    /// Parses `template`.
    ///
    /// # Errors
    ///
    /// `invalid_arguments` for a template that is not a URI (see
    /// [`check_uri`]), an unclosed or empty `{}`, an operator other than
    /// `+`, two variables in a row, or a variable named twice.
    pub fn parse(template: &str) -> Result<UriTemplate> {
        check_uri(template)?;
        let bad = |why: &str| {
            Error::new(
                ErrorCode::InvalidArguments,
                format!("URI template {template:?}: {why}"),
            )
        };
        let mut names: Vec<String> = Vec::new();
        let mut pattern = String::from("^");
        let mut rest = template;
        let mut after_var = false;
        while let Some(open) = rest.find('{') {
            let literal = &rest[..open];
            if literal.contains('}') {
                return Err(bad("a `}` is not opened"));
            }
            if literal.is_empty() && after_var {
                return Err(bad("two variables in a row cannot be told apart"));
            }
            pattern.push_str(&regex::escape(literal));
            let close = rest[open..].find('}').ok_or_else(|| bad("a `{` is not closed"))? + open;
            let inner = &rest[open + 1..close];
            let (reserved, name) = match inner.strip_prefix('+') {
                Some(name) => (true, name),
                None => (false, inner),
            };
            if name.is_empty() || !name.chars().all(|c| c.is_ascii_alphanumeric() || c == '_') {
                return Err(bad(&format!(
                    "`{{{inner}}}` is not a variable this host matches (`{{name}}` or `{{+name}}`)"
                )));
            }
            if names.iter().any(|n| n == name) {
                return Err(bad(&format!("variable `{name}` appears twice")));
            }
            pattern.push_str(if reserved { "(.+?)" } else { "([^/?#]+?)" });
            names.push(name.to_string());
            rest = &rest[close + 1..];
            after_var = true;
        }
        if rest.contains('}') {
            return Err(bad("a `}` is not opened"));
        }
        pattern.push_str(&regex::escape(rest));
        pattern.push('$');
        let pattern = regex::Regex::new(&pattern).map_err(|e| bad(&format!("cannot be matched: {e}")))?;
        Ok(UriTemplate { names, pattern })
    }

    /// The variables of `uri` if it is one of this template's URIs. A
    /// `{name}` matches one or more characters other than `/ ? #`; a
    /// `{+name}` one or more of any (the shortest that lets the rest match).
    pub fn matches(&self, uri: &str) -> Option<BTreeMap<String, String>> {
        let captures = self.pattern.captures(uri)?;
        Some(
            self.names
                .iter()
                .zip(captures.iter().skip(1))
                .map(|(name, value)| (name.clone(), value.map_or("", |m| m.as_str()).to_string()))
                .collect(),
        )
    }

    /// The names of its variables, in order.
    pub fn variables(&self) -> impl Iterator<Item = &str> {
        self.names.iter().map(String::as_str)
    }
}

/// Reads the resources a source offers. See the module documentation.
pub trait Resources: Send + Sync + 'static {
    /// Reads `uri`: one of the source's resources, or a URI one of its
    /// templates matches.
    ///
    /// # Errors
    ///
    /// `not_found` when there is no such resource; the source's own
    /// failure otherwise.
    fn read(&self, uri: &str, ctx: CallContext) -> BoxFuture<'_, Result<Vec<ResourceContents>>>;

    /// Suggests values for variable `argument` of template `template`
    /// whose text so far is `value`, given the `context` of variables
    /// already chosen. Default: no suggestions.
    fn complete(
        &self,
        template: &str,
        argument: &str,
        value: &str,
        context: &BTreeMap<String, String>,
        ctx: CallContext,
    ) -> BoxFuture<'_, Result<Completion>> {
        let _ = (template, argument, value, context, ctx);
        Box::pin(std::future::ready(Ok(Completion::default())))
    }
}

impl fmt::Debug for dyn Resources {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("Resources")
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn templates_match_their_uris_and_no_others() {
        let t = UriTemplate::parse("notes://{folder}/{id}.md").unwrap();
        let v = t.matches("notes://work/a.b.md").unwrap();
        assert_eq!((v["folder"].as_str(), v["id"].as_str()), ("work", "a.b"));
        assert!(t.matches("notes://work/.md").is_none(), "an empty variable");
        assert!(
            t.matches("notes://a/b/c.md").is_none(),
            "`/` inside a simple variable"
        );
        let wide = UriTemplate::parse("file:///{+path}").unwrap();
        assert_eq!(wide.matches("file:///a/b/c").unwrap()["path"], "a/b/c");
        assert_eq!(t.variables().collect::<Vec<_>>(), ["folder", "id"]);
        let exact = UriTemplate::parse("test://static").unwrap();
        assert!(exact.matches("test://static").is_some());
        assert!(exact.matches("test://static2").is_none());
    }

    #[test]
    fn malformed_templates_and_uris_are_refused() {
        for bad in [
            "",
            "no-scheme",
            "x://{",
            "x://}",
            "x://{}",
            "x://{a}{b}",
            "x://{a}/{a}",
            "x://{#frag}",
            "x://a b",
        ] {
            let e = UriTemplate::parse(bad).unwrap_err();
            assert_eq!(e.code(), ErrorCode::InvalidArguments, "{bad:?}");
        }
        assert!(check_uri(&format!("x://{}", "a".repeat(MAX_URI_BYTES))).is_err());
    }
}
