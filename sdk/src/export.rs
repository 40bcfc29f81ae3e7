//! What the `plugin!` expansion calls: the world's exports answered from a
//! [`Server`] and the SDK's types, converted into the world's.

use crate::__private::server::exports::toolhost::plugin::prompts as wp;
use crate::__private::server::exports::toolhost::plugin::resources as wr;
use crate::__private::server::toolhost::plugin::types as wt;
use crate::error::{Kind, ToolError};
use crate::server::{Completion, ReadError, Server};

impl From<ToolError> for wt::ToolError {
    fn from(e: ToolError) -> Self {
        match e.kind {
            Kind::InvalidArguments => wt::ToolError::InvalidArguments(e.message),
            Kind::Failed => wt::ToolError::Failed(e.message),
        }
    }
}

impl From<Completion> for wt::Completion {
    fn from(c: Completion) -> Self {
        wt::Completion {
            values: c.values,
            total: c.total,
            has_more: c.has_more,
        }
    }
}

/// `list-prompts`.
pub fn list_prompts(server: &Server) -> Vec<wp::PromptSpec> {
    server
        .prompts
        .iter()
        .map(|p| wp::PromptSpec {
            name: p.name.clone(),
            title: p.title.clone(),
            description: p.description.clone(),
            arguments: p
                .arguments
                .iter()
                .map(|a| wp::PromptArgument {
                    name: a.name.clone(),
                    title: None,
                    description: a.description.clone(),
                    required: a.required,
                })
                .collect(),
        })
        .collect()
}

/// `get-prompt`.
pub fn get_prompt(
    server: &Server,
    name: &str,
    arguments: Vec<(String, String)>,
) -> Result<wp::PromptResult, wt::ToolError> {
    let result = server.find_prompt(name)?.render(arguments)?;
    Ok(wp::PromptResult {
        description: result.description,
        messages: result
            .messages
            .into_iter()
            .map(|m| wp::PromptMessage {
                role: m.role.into(),
                content: m.content.into(),
            })
            .collect(),
    })
}

/// `prompts.complete`.
pub fn complete_prompt(
    server: &Server,
    name: &str,
    argument: &str,
    value: &str,
    context: Vec<(String, String)>,
) -> Result<wt::Completion, wt::ToolError> {
    Ok(server.complete_prompt(name, argument, value, context)?.into())
}

/// `list-resources`.
pub fn list_resources(server: &Server) -> Vec<wr::ResourceSpec> {
    server
        .resources
        .iter()
        .map(|r| wr::ResourceSpec {
            uri: r.uri.clone(),
            name: r.name.clone(),
            title: r.title.clone(),
            description: r.description.clone(),
            mime_type: r.mime_type.clone(),
            size: r.size,
            annotations: r.annotations.clone().map(Into::into),
        })
        .collect()
}

/// `list-templates`.
pub fn list_templates(server: &Server) -> Vec<wr::ResourceTemplate> {
    server
        .templates
        .iter()
        .map(|t| wr::ResourceTemplate {
            uri_template: t.uri_template.clone(),
            name: t.name.clone(),
            title: t.title.clone(),
            description: t.description.clone(),
            mime_type: t.mime_type.clone(),
            annotations: t.annotations.clone().map(Into::into),
        })
        .collect()
}

/// `read-resource`.
pub fn read_resource(server: &Server, uri: &str) -> Result<Vec<wt::ResourceContents>, wr::ReadError> {
    match server.read(uri) {
        Ok(contents) => Ok(contents.into_iter().map(Into::into).collect()),
        Err(ReadError {
            not_found: true,
            message,
        }) => Err(wr::ReadError::NotFound(message)),
        Err(ReadError { message, .. }) => Err(wr::ReadError::Failed(message)),
    }
}

/// `resources.complete`.
pub fn complete_template(
    server: &Server,
    template: &str,
    argument: &str,
    value: &str,
    context: Vec<(String, String)>,
) -> Result<wt::Completion, wt::ToolError> {
    Ok(server
        .complete_template(template, argument, value, context)?
        .into())
}
