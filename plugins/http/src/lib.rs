//! The standard `http` plugin: one tool, `http_request`, that sends an HTTP
//! request through `wasi:http` (so the host's grants, address checks,
//! secrets and budgets apply) and returns the response as JSON, with HTML
//! rendered as compact semantic text.
use std::collections::BTreeMap;
use std::time::Duration;

use schemars::JsonSchema;
use serde::{Deserialize, Serialize};
use toolhost_sdk::ToolError;
use url::Url;

mod client;
mod render;

toolhost_sdk::capabilities! {
    http: ["*"],
    secrets: ["*"],
}

/// The longest a request may take unless the call says otherwise.
const DEFAULT_TIMEOUT_MS: u64 = 30_000;
/// The most response bytes kept unless the call says otherwise.
const DEFAULT_MAX_BYTES: u64 = 1 << 20;
/// The most redirects followed unless the call says otherwise.
const DEFAULT_MAX_REDIRECTS: u32 = 5;

/// An HTTP method.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Deserialize, JsonSchema)]
#[serde(rename_all = "UPPERCASE")]
enum HttpMethod {
    #[default]
    Get,
    Post,
    Put,
    Delete,
    Patch,
    Head,
    Options,
}

impl HttpMethod {
    fn as_str(self) -> &'static str {
        match self {
            HttpMethod::Get => "GET",
            HttpMethod::Post => "POST",
            HttpMethod::Put => "PUT",
            HttpMethod::Delete => "DELETE",
            HttpMethod::Patch => "PATCH",
            HttpMethod::Head => "HEAD",
            HttpMethod::Options => "OPTIONS",
        }
    }
}

/// Sends an HTTP request and returns the status, headers and body. HTML is
/// rendered as compact text (links, forms, inputs and tables kept). Redirects
/// are returned as they are unless `follow_redirects` is true.
#[derive(Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
struct HttpRequest {
    /// The URL, http:// or https://.
    url: String,
    /// The method (default GET).
    #[serde(default)]
    method: HttpMethod,
    /// Request headers.
    #[serde(default)]
    headers: BTreeMap<String, String>,
    /// The request body, as text.
    #[serde(default)]
    body: Option<String>,
    /// How long the request may take, in milliseconds (default 30000).
    #[serde(default)]
    timeout_ms: Option<u64>,
    /// The most response body bytes to keep (default 1 MiB); the rest is cut
    /// and `truncated` is true.
    #[serde(default)]
    max_response_bytes: Option<u64>,
    /// Follow 3xx redirects (each hop is checked by the host like any request).
    #[serde(default)]
    follow_redirects: bool,
    /// The most redirects to follow (default 5).
    #[serde(default)]
    max_redirects: Option<u32>,
    /// Render HTML bodies as text (default true); false returns the raw HTML.
    #[serde(default)]
    render_html: Option<bool>,
}

#[derive(Serialize)]
struct HttpResponse {
    status: u16,
    url: String,
    headers: BTreeMap<String, String>,
    body: String,
    rendered: bool,
    truncated: bool,
    #[serde(skip_serializing_if = "Vec::is_empty")]
    redirects: Vec<String>,
}

fn http_request(args: HttpRequest) -> Result<HttpResponse, ToolError> {
    let mut url = Url::parse(&args.url)
        .map_err(|e| ToolError::invalid_arguments(format!("invalid url {:?}: {e}", args.url)))?;
    let headers: Vec<(String, String)> = args.headers.into_iter().collect();
    let timeout = Duration::from_millis(args.timeout_ms.unwrap_or(DEFAULT_TIMEOUT_MS));
    let max_bytes = args.max_response_bytes.unwrap_or(DEFAULT_MAX_BYTES);
    let max_redirects = args.max_redirects.unwrap_or(DEFAULT_MAX_REDIRECTS);
    let mut method = args.method;
    let mut body = args.body;
    let mut redirects = Vec::new();
    loop {
        let response = client::send(&client::Request {
            method: method.as_str(),
            url: &url,
            headers: &headers,
            body: body.as_deref().map(str::as_bytes),
            timeout,
            max_bytes,
        })
        .map_err(|e| {
            ToolError::failed(format!(
                "the {} request to {url} failed: {}",
                method.as_str(),
                e.0
            ))
        })?;
        let location = response
            .headers
            .iter()
            .find(|(k, _)| k.eq_ignore_ascii_case("location"))
            .map(|(_, v)| v.clone());
        if args.follow_redirects
            && (300..400).contains(&response.status)
            && let Some(location) = location
        {
            if redirects.len() as u32 >= max_redirects {
                return Err(ToolError::failed(format!(
                    "more than {max_redirects} redirects (last to {location}); raise max_redirects or follow them yourself"
                )));
            }
            let next = url
                .join(&location)
                .map_err(|e| ToolError::failed(format!("the redirect to {location:?} is not a URL: {e}")))?;
            // 303, and 301/302 after POST, turn into GET without a body.
            if response.status == 303 || (matches!(response.status, 301 | 302) && method == HttpMethod::Post)
            {
                method = HttpMethod::Get;
                body = None;
            }
            redirects.push(next.to_string());
            url = next;
            continue;
        }
        return Ok(finish(response, url, redirects, args.render_html.unwrap_or(true)));
    }
}

fn finish(response: client::Response, url: Url, redirects: Vec<String>, render_html: bool) -> HttpResponse {
    let mut headers = BTreeMap::new();
    for (k, v) in response.headers {
        headers
            .entry(k.to_ascii_lowercase())
            .and_modify(|old: &mut String| {
                old.push_str(", ");
                old.push_str(&v);
            })
            .or_insert(v);
    }
    let text = String::from_utf8_lossy(&response.body).into_owned();
    let html = render_html && render::is_html(headers.get("content-type").map(String::as_str), &text);
    HttpResponse {
        status: response.status,
        url: url.to_string(),
        headers,
        body: if html { render::render(&text) } else { text },
        rendered: html,
        truncated: response.truncated,
        redirects,
    }
}

toolhost_sdk::plugin!(http_request(open_world));
