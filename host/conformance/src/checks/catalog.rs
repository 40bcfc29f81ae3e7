//! The catalog family: `catalog`, a component's prompts and resources
//! (`toolhost:plugin@0.3.0`'s `server` worlds). Each prompt is rendered,
//! each resource read, each template read at a URI made from it, and each
//! argument and variable completed, every request in a fresh instance as
//! the host makes them; none may trap or exhaust a limit, and a resource
//! the component lists must be there.

use std::collections::BTreeMap;

use toolhost_core::error::{Error, ErrorCode};
use toolhost_core::registry::CallContext;
use toolhost_runtime::LoadedComponent;

use super::CheckId;
use crate::report::{CheckReport, Problem, count};

/// The value the suite gives every required prompt argument and template
/// variable.
const SAMPLE_VALUE: &str = "1";

/// Whether `error` is the sandbox stopping the guest rather than the
/// component answering with an error.
fn is_hard(error: &Error) -> bool {
    matches!(
        error.code(),
        ErrorCode::Trap
            | ErrorCode::Timeout
            | ErrorCode::OutOfFuel
            | ErrorCode::MemoryLimit
            | ErrorCode::StackOverflow
    )
}

/// A problem of one prompt, resource or template (`what`, e.g. ``prompt
/// `greeting` ``), named in the message.
fn problem(what: &str, message: impl std::fmt::Display, fix: &str) -> Problem {
    Problem::component(format!("{what}: {message}"), fix)
}

fn hard_problem(what: &str, request: &str, e: &Error) -> Problem {
    problem(
        what,
        format!("{request} ended in {}: {}", e.code(), e.message()),
        "answer every request with a result or an error (Rust: Err(ToolError::..) or Err(ReadError::..)), never a panic; keep rendering and reading cheap",
    )
}

/// `template` with each `{name}` and `{+name}` replaced by `value`.
fn expand(template: &str, value: &str) -> String {
    let mut out = String::new();
    let mut rest = template;
    while let Some(open) = rest.find('{') {
        out.push_str(&rest[..open]);
        match rest[open..].find('}') {
            Some(close) => {
                out.push_str(value);
                rest = &rest[open + close + 1..];
            }
            None => {
                rest = &rest[open..];
                break;
            }
        }
    }
    out.push_str(rest);
    out
}

/// The variables of `template`, in order.
fn variables(template: &str) -> Vec<String> {
    let mut names = Vec::new();
    let mut rest = template;
    while let Some(open) = rest.find('{') {
        let Some(close) = rest[open..].find('}') else {
            break;
        };
        names.push(rest[open + 1..open + close].trim_start_matches('+').to_string());
        rest = &rest[open + close + 1..];
    }
    names
}

/// `catalog`: the component's prompts render, its resources read, its
/// templates read at a URI made from them, its completions answer, none
/// with a trap or an exhausted limit; every listed resource is found.
pub(crate) async fn catalog(component: Option<&LoadedComponent>) -> CheckReport {
    let Some(component) = component else {
        return CheckReport::skipped(
            CheckId::Catalog,
            "the host does not load the component (see `loads`)",
        );
    };
    let catalog = component.catalog();
    if catalog.is_empty() {
        return CheckReport::skipped(CheckId::Catalog, "it offers no prompts or resources");
    }
    let ctx = || CallContext::default();
    let mut problems = Vec::new();
    let mut requests = 0usize;
    for prompt in &catalog.prompts {
        let arguments: BTreeMap<String, String> = prompt
            .arguments
            .iter()
            .filter(|a| a.required)
            .map(|a| (a.name.clone(), SAMPLE_VALUE.to_string()))
            .collect();
        requests += 1;
        let what = format!("prompt `{}`", prompt.name);
        if let Err(e) = component.get_prompt(&prompt.name, &arguments, ctx()).await
            && is_hard(&e)
        {
            problems.push(hard_problem(
                &what,
                "rendering it with its required arguments",
                &e,
            ));
            continue;
        }
        for argument in &prompt.arguments {
            requests += 1;
            let completed = component
                .complete_prompt(&prompt.name, &argument.name, "", &BTreeMap::new(), ctx())
                .await;
            if let Err(e) = completed
                && is_hard(&e)
            {
                problems.push(hard_problem(
                    &what,
                    &format!("completing `{}`", argument.name),
                    &e,
                ));
            }
        }
    }
    for resource in &catalog.resources {
        requests += 1;
        let what = format!("resource {}", resource.uri);
        match component.read_resource(&resource.uri, ctx()).await {
            Ok(contents) if contents.is_empty() => problems.push(problem(
                &what,
                "reading it gave no contents",
                "give at least one text or blob for a resource the component lists",
            )),
            Ok(_) => {}
            Err(e) if is_hard(&e) => problems.push(hard_problem(&what, "reading it", &e)),
            Err(e) if e.code() == ErrorCode::NotFound => problems.push(problem(
                &what,
                format!(
                    "the component lists it but reading it says it is not found: {}",
                    e.message()
                ),
                "read every URI list-resources gives (or stop listing it)",
            )),
            Err(_) => {}
        }
    }
    for template in &catalog.templates {
        let what = format!("resource template {}", template.uri_template);
        let uri = expand(&template.uri_template, SAMPLE_VALUE);
        requests += 1;
        if let Err(e) = component.read_resource(&uri, ctx()).await
            && is_hard(&e)
        {
            problems.push(hard_problem(&what, &format!("reading {uri}"), &e));
            continue;
        }
        for variable in variables(&template.uri_template) {
            requests += 1;
            let completed = component
                .complete_resource(&template.uri_template, &variable, "", &BTreeMap::new(), ctx())
                .await;
            if let Err(e) = completed
                && is_hard(&e)
            {
                problems.push(hard_problem(&what, &format!("completing `{variable}`"), &e));
            }
        }
    }
    let tried = format!(
        "made {}, a fresh instance each: rendered each of {} with its required arguments set to {SAMPLE_VALUE:?}, read each of {}, read each of {} at its URI with every variable {SAMPLE_VALUE:?}, and completed every argument and variable from an empty value",
        count(requests, "request"),
        count(catalog.prompts.len(), "prompt"),
        count(catalog.resources.len(), "resource"),
        count(catalog.templates.len(), "template"),
    );
    CheckReport::ran(CheckId::Catalog, tried, problems)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn templates_expand_and_name_their_variables() {
        assert_eq!(expand("notes://{id}/v/{+path}", "1"), "notes://1/v/1");
        assert_eq!(variables("notes://{id}/v/{+path}"), ["id", "path"]);
        assert_eq!(expand("plain://x", "1"), "plain://x");
    }
}
