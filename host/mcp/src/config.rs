//! # MCP client configuration
//!
//! The `[[mcp.servers]]` entries of the config file: which MCP servers to
//! bridge in, how to reach them, which of their tools to keep, and whether
//! they are bridged lazily (see [`lazy`](crate::lazy)).
//!
//! ```
//! use toolhost_mcp::{McpConfig, McpTransport};
//!
//! let config: McpConfig = toml::from_str(r#"
//!     [[servers]]
//!     name = "everything"
//!     transport = "stdio"
//!     command = "npx"
//!     args = ["-y", "@modelcontextprotocol/server-everything"]
//!     disabled_tools = ["longRunningOperation"]
//!     timeout_ms = 10000
//!
//!     [[servers]]
//!     name = "search"
//!     transport = "http"
//!     url = "http://127.0.0.1:3001/mcp"
//!     headers = { Authorization = "Bearer s3cret" }
//!     ask = ["elicitation"]      # its questions reach the caller's user
//!
//!     [[servers]]
//!     name = "github"
//!     transport = "http"
//!     url = "http://127.0.0.1:3002/mcp"
//!     lazy = true                # two tools: list_tools and call_tool
//!     catalog_ttl_s = 600
//! "#).unwrap();
//! assert!(matches!(config.servers[0].transport, McpTransport::Stdio { .. }));
//! assert_eq!(config.servers[1].timeout_ms, 60_000);
//! assert_eq!(config.servers[1].ask, [toolhost_core::client::AskKind::Elicitation]);
//! assert!(config.servers[2].lazy && config.servers[2].catalog_ttl().as_secs() == 600);
//! config.validate().unwrap();
//! ```

use std::collections::{BTreeMap, HashSet};
use std::path::PathBuf;
use std::time::Duration;

use serde::{Deserialize, Serialize};

use toolhost_core::client::AskKind;
use toolhost_core::error::{Error, ErrorCode, Result};

/// The `mcp` section of the config file.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct McpConfig {
    /// The MCP servers whose tools are bridged in (`[[mcp.servers]]`).
    #[serde(default)]
    pub servers: Vec<McpServerConfig>,
    /// The file holding the secret (at least 32 bytes) that seals MCP
    /// 2026-07-28 request states (`[mcp] state_key_file`, relative to the
    /// config file): replicas that continue each other's requests must
    /// share it. Without it (and without `TOOLHOST_MCP_STATE_KEY`), each
    /// process makes a random key of its own.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub state_key_file: Option<PathBuf>,
}

impl McpConfig {
    /// Checks every server entry and that server names are unique.
    ///
    /// # Errors
    ///
    /// [`ErrorCode::Config`] naming the first bad entry.
    pub fn validate(&self) -> Result<()> {
        let mut names = HashSet::new();
        for server in &self.servers {
            server.validate()?;
            if !names.insert(server.name.as_str()) {
                return Err(Error::new(
                    ErrorCode::Config,
                    format!(
                        "two [[mcp.servers]] entries are named {:?}; names must be unique",
                        server.name
                    ),
                ));
            }
        }
        Ok(())
    }
}

/// One `[[mcp.servers]]` entry. Unknown keys, and keys of the other
/// transport (`url` on a stdio server, say), are refused.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(try_from = "RawServer")]
pub struct McpServerConfig {
    /// The server's name, used in its tools' names (`mcp__NAME__TOOL`) and
    /// as the `Mcp { server }` source.
    pub name: String,
    /// How to reach the server.
    #[serde(flatten)]
    pub transport: McpTransport,
    /// If set, only these remote tools (by their name on the server) are kept.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub enabled_tools: Option<Vec<String>>,
    /// Remote tools (by their name on the server) that are never kept.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub disabled_tools: Vec<String>,
    /// How long one call may take before it is cancelled on the server.
    #[serde(default = "default_timeout_ms")]
    pub timeout_ms: u64,
    /// What goes in front of each remote tool's name; `mcp__NAME__` if unset.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub prefix: Option<String>,
    /// Whether the server is connected at all.
    #[serde(default = "default_true")]
    pub enabled: bool,
    /// Lazy mode: instead of one tool per remote tool, two for the whole
    /// server, `…list_tools` (its catalog) and `…call_tool` (see
    /// [`lazy`](crate::lazy)).
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub lazy: bool,
    /// How long a lazy server's catalog is kept before it is listed again,
    /// in seconds ([`DEFAULT_CATALOG_TTL_S`] if unset). Lazy servers only.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub catalog_ttl_s: Option<u64>,
    /// What the server may ask the client of the call it serves (`ask =
    /// ["elicitation", "sampling", "roots"]`, none by default): declared to
    /// the server on each request whose client can answer it, and its
    /// questions relayed to that client (see [`relay`](crate::relay)).
    #[serde(
        default,
        skip_serializing_if = "Vec::is_empty",
        serialize_with = "serialize_ask"
    )]
    pub ask: Vec<AskKind>,
}

fn serialize_ask<S: serde::Serializer>(
    ask: &[AskKind],
    serializer: S,
) -> std::result::Result<S::Ok, S::Error> {
    serializer.collect_seq(ask.iter().map(|kind| kind.as_str()))
}

/// The question kinds `ask` may name, by their names.
fn ask_kind(name: &str) -> Option<AskKind> {
    [AskKind::Elicitation, AskKind::Sampling, AskKind::Roots]
        .into_iter()
        .find(|kind| kind.as_str() == name)
}

/// How long a lazy server's catalog is kept by default, in seconds (it is
/// listed again sooner on `notifications/tools/list_changed`).
pub const DEFAULT_CATALOG_TTL_S: u64 = 300;

/// A `[[mcp.servers]]` entry as written: every key of both transports, so
/// that unknown keys are refused (serde cannot do that through `flatten`).
#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct RawServer {
    name: String,
    transport: String,
    command: Option<String>,
    #[serde(default)]
    args: Vec<String>,
    #[serde(default)]
    env: BTreeMap<String, String>,
    cwd: Option<PathBuf>,
    url: Option<String>,
    #[serde(default)]
    headers: BTreeMap<String, String>,
    enabled_tools: Option<Vec<String>>,
    #[serde(default)]
    disabled_tools: Vec<String>,
    #[serde(default = "default_timeout_ms")]
    timeout_ms: u64,
    prefix: Option<String>,
    #[serde(default = "default_true")]
    enabled: bool,
    #[serde(default)]
    lazy: bool,
    catalog_ttl_s: Option<u64>,
    #[serde(default)]
    ask: Vec<String>,
    oauth: Option<McpOAuth>,
}

impl TryFrom<RawServer> for McpServerConfig {
    type Error = String;

    fn try_from(raw: RawServer) -> std::result::Result<Self, String> {
        let name = &raw.name;
        let stdio_only = [
            ("command", raw.command.is_some()),
            ("args", !raw.args.is_empty()),
            ("env", !raw.env.is_empty()),
            ("cwd", raw.cwd.is_some()),
        ];
        let http_only = [
            ("url", raw.url.is_some()),
            ("headers", !raw.headers.is_empty()),
            ("oauth", raw.oauth.is_some()),
        ];
        let (transport, foreign) = match raw.transport.as_str() {
            "stdio" => (
                McpTransport::Stdio {
                    command: raw
                        .command
                        .ok_or_else(|| format!("server {name:?}: a stdio server needs `command`"))?,
                    args: raw.args,
                    env: raw.env,
                    cwd: raw.cwd,
                },
                &http_only[..],
            ),
            "http" => (
                McpTransport::Http {
                    url: raw
                        .url
                        .ok_or_else(|| format!("server {name:?}: an http server needs `url`"))?,
                    headers: raw.headers,
                    oauth: raw.oauth,
                },
                &stdio_only[..],
            ),
            other => {
                return Err(format!(
                    "server {name:?}: transport {other:?} is not \"stdio\" or \"http\""
                ));
            }
        };
        if let Some((key, _)) = foreign.iter().find(|(_, set)| *set) {
            return Err(format!(
                "server {name:?}: `{key}` does not apply to transport {:?}",
                raw.transport
            ));
        }
        if raw.catalog_ttl_s.is_some() && !raw.lazy {
            return Err(format!(
                "server {name:?}: `catalog_ttl_s` applies to lazy servers only (`lazy = true`)"
            ));
        }
        let mut ask = Vec::new();
        for what in &raw.ask {
            let kind = ask_kind(what).ok_or_else(|| {
                format!("server {name:?}: `ask` names {what:?}, which is not \"elicitation\", \"sampling\" or \"roots\"")
            })?;
            if !ask.contains(&kind) {
                ask.push(kind);
            }
        }
        Ok(McpServerConfig {
            name: raw.name,
            transport,
            enabled_tools: raw.enabled_tools,
            disabled_tools: raw.disabled_tools,
            timeout_ms: raw.timeout_ms,
            prefix: raw.prefix,
            enabled: raw.enabled,
            lazy: raw.lazy,
            catalog_ttl_s: raw.catalog_ttl_s,
            ask,
        })
    }
}

fn default_timeout_ms() -> u64 {
    60_000
}

fn default_true() -> bool {
    true
}

/// How a server is reached: `transport = "stdio"` or `transport = "http"`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(tag = "transport", rename_all = "lowercase")]
pub enum McpTransport {
    /// A child process speaking MCP on its stdin and stdout.
    Stdio {
        /// The program to run (looked up in `PATH` if it has no slash).
        command: String,
        /// Its arguments.
        #[serde(default)]
        args: Vec<String>,
        /// Environment variables set on top of the host's.
        #[serde(default)]
        env: BTreeMap<String, String>,
        /// Its working folder; the host's if unset.
        #[serde(default, skip_serializing_if = "Option::is_none")]
        cwd: Option<PathBuf>,
    },
    /// A streamable HTTP endpoint.
    Http {
        /// The endpoint, e.g. `http://127.0.0.1:3001/mcp`.
        url: String,
        /// Headers sent with every request (e.g. `Authorization`).
        #[serde(default)]
        headers: BTreeMap<String, String>,
        /// Signing in with OAuth (see [`oauth`](crate::oauth)): the server's
        /// authorization server gives the bridge its access tokens.
        #[serde(default, skip_serializing_if = "Option::is_none")]
        oauth: Option<McpOAuth>,
    },
}

/// How the bridge signs in to an HTTP server that wants OAuth access
/// tokens (`oauth = { ... }`): the authorization server is found from the
/// server's protected-resource metadata, the client is pre-registered
/// (`client_id`), a Client ID Metadata Document (`client_metadata_url`)
/// or registered dynamically, and tokens are kept in `token_file`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct McpOAuth {
    /// How tokens are got: a person signs in once with `toolhost mcp login
    /// NAME` (`authorization_code`, the default), or the bridge gets them
    /// itself with the client's own credentials (`client_credentials`).
    #[serde(default)]
    pub grant: OAuthGrant,
    /// The scopes asked for; when empty, those the server's challenge or
    /// metadata names.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub scopes: Vec<String>,
    /// A client registered with the authorization server beforehand.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub client_id: Option<String>,
    /// The environment variable holding that client's secret (a secret
    /// never sits in the config file).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub client_secret_env: Option<String>,
    /// An `https` URL of a Client ID Metadata Document naming this client,
    /// used when the authorization server supports them.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub client_metadata_url: Option<String>,
    /// The loopback port `toolhost mcp login` listens on for the
    /// authorization server's redirect; any free port when unset (a
    /// pre-registered client's redirect URI may need a fixed one).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub redirect_port: Option<u16>,
    /// Where the client's registration and tokens are kept (relative to
    /// the config file); see [`McpServerConfig::token_file`] for the
    /// default.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub token_file: Option<PathBuf>,
}

/// An OAuth grant the bridge can use.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum OAuthGrant {
    /// A person signs in in a browser (`toolhost mcp login`); the bridge
    /// refreshes the tokens.
    #[default]
    AuthorizationCode,
    /// The client authenticates itself with its secret: no person.
    ClientCredentials,
}

impl McpServerConfig {
    /// A stdio server entry with the defaults.
    pub fn stdio(name: impl Into<String>, command: impl Into<String>, args: Vec<String>) -> Self {
        McpServerConfig::with_transport(
            name,
            McpTransport::Stdio {
                command: command.into(),
                args,
                env: BTreeMap::new(),
                cwd: None,
            },
        )
    }

    /// A streamable HTTP server entry with the defaults.
    pub fn http(name: impl Into<String>, url: impl Into<String>) -> Self {
        McpServerConfig::with_transport(
            name,
            McpTransport::Http {
                url: url.into(),
                headers: BTreeMap::new(),
                oauth: None,
            },
        )
    }

    fn with_transport(name: impl Into<String>, transport: McpTransport) -> Self {
        McpServerConfig {
            name: name.into(),
            transport,
            enabled_tools: None,
            disabled_tools: Vec::new(),
            timeout_ms: default_timeout_ms(),
            prefix: None,
            enabled: true,
            lazy: false,
            catalog_ttl_s: None,
            ask: Vec::new(),
        }
    }

    /// This entry with the server allowed to ask the calling client
    /// questions of `kinds` (see [`ask`](McpServerConfig#structfield.ask)).
    pub fn asking(mut self, kinds: &[AskKind]) -> Self {
        for kind in kinds {
            if !self.ask.contains(kind) {
                self.ask.push(*kind);
            }
        }
        self
    }

    /// This entry in lazy mode (see [`lazy`](McpServerConfig#structfield.lazy)).
    pub fn lazy(mut self) -> Self {
        self.lazy = true;
        self
    }

    /// How long a lazy server's catalog is kept before it is listed again.
    pub fn catalog_ttl(&self) -> Duration {
        Duration::from_secs(self.catalog_ttl_s.unwrap_or(DEFAULT_CATALOG_TTL_S))
    }

    /// The call timeout.
    pub fn timeout(&self) -> Duration {
        Duration::from_millis(self.timeout_ms)
    }

    /// The file the server's OAuth client registration and tokens are kept
    /// in: its `oauth.token_file`, else `NAME.json` in
    /// `$TOOLHOST_STATE_DIR/oauth`, `$XDG_STATE_HOME/toolhost/oauth` or
    /// `~/.local/state/toolhost/oauth`. `None` for a server without
    /// `oauth`, or when no folder can be named.
    pub fn token_file(&self) -> Option<PathBuf> {
        let McpTransport::Http {
            oauth: Some(oauth), ..
        } = &self.transport
        else {
            return None;
        };
        if let Some(file) = &oauth.token_file {
            return Some(file.clone());
        }
        let state = std::env::var_os("TOOLHOST_STATE_DIR")
            .map(PathBuf::from)
            .or_else(|| std::env::var_os("XDG_STATE_HOME").map(|d| PathBuf::from(d).join("toolhost")))
            .or_else(|| std::env::var_os("HOME").map(|h| PathBuf::from(h).join(".local/state/toolhost")))?;
        Some(state.join("oauth").join(format!("{}.json", self.name)))
    }

    /// Whether remote tool `name` passes `enabled_tools` / `disabled_tools`.
    pub fn keeps_tool(&self, name: &str) -> bool {
        let enabled = self
            .enabled_tools
            .as_ref()
            .is_none_or(|list| list.iter().any(|t| t == name));
        enabled && !self.disabled_tools.iter().any(|t| t == name)
    }

    /// Checks the entry on its own.
    ///
    /// # Errors
    ///
    /// [`ErrorCode::Config`] saying what is wrong.
    pub fn validate(&self) -> Result<()> {
        let bad = |msg: String| {
            Err(Error::new(
                ErrorCode::Config,
                format!("[[mcp.servers]] {:?}: {msg}", self.name),
            ))
        };
        if self.name.is_empty() {
            return bad("the name is empty".into());
        }
        if self.timeout_ms == 0 {
            return bad("timeout_ms must be at least 1".into());
        }
        if self.catalog_ttl_s == Some(0) {
            return bad("catalog_ttl_s must be at least 1".into());
        }
        match &self.transport {
            McpTransport::Stdio { command, .. } if command.is_empty() => bad("the command is empty".into()),
            McpTransport::Http { url, headers, oauth } => {
                if !(url.starts_with("http://") || url.starts_with("https://")) {
                    return bad(format!("url {url:?} must start with http:// or https://"));
                }
                if let Some(oauth) = oauth {
                    if headers.keys().any(|k| k.eq_ignore_ascii_case("authorization")) {
                        return bad(
                            "`oauth` and an `Authorization` header both say how to sign in; keep one".into(),
                        );
                    }
                    oauth.validate().map_err(|why| {
                        Error::new(
                            ErrorCode::Config,
                            format!("[[mcp.servers]] {:?}: oauth: {why}", self.name),
                        )
                    })?;
                }
                for (k, v) in headers {
                    if http::HeaderName::try_from(k.as_str()).is_err()
                        || http::HeaderValue::try_from(v.as_str()).is_err()
                    {
                        return bad(format!("header {k:?} is not a valid HTTP header"));
                    }
                }
                Ok(())
            }
            McpTransport::Stdio { .. } => Ok(()),
        }
    }
}

impl McpOAuth {
    fn validate(&self) -> std::result::Result<(), String> {
        if self.client_secret_env.is_some() && self.client_id.is_none() {
            return Err("`client_secret_env` needs the `client_id` it is the secret of".into());
        }
        if self.grant == OAuthGrant::ClientCredentials
            && (self.client_id.is_none() || self.client_secret_env.is_none())
        {
            return Err("the client_credentials grant needs `client_id` and `client_secret_env`".into());
        }
        if let Some(url) = &self.client_metadata_url
            && !url.starts_with("https://")
        {
            return Err(format!("client_metadata_url {url:?} must be an https:// URL"));
        }
        if self.token_file.as_ref().is_some_and(|f| f.as_os_str().is_empty()) {
            return Err("token_file is empty".into());
        }
        Ok(())
    }

    /// The client's secret, from `client_secret_env`.
    ///
    /// # Errors
    ///
    /// [`ErrorCode::Config`] when the variable is named but not set.
    pub fn client_secret(&self) -> Result<Option<String>> {
        let Some(var) = &self.client_secret_env else {
            return Ok(None);
        };
        std::env::var(var).map(Some).map_err(|_| {
            Error::new(
                ErrorCode::Config,
                format!("oauth.client_secret_env names {var:?}, which is not set in the environment"),
            )
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn entry(extra: &str) -> std::result::Result<McpConfig, toml::de::Error> {
        toml::from_str(&format!(
            "[[servers]]\nname = \"a\"\ntransport = \"stdio\"\ncommand = \"x\"\n{extra}\n"
        ))
    }

    #[test]
    fn ask_names_the_question_kinds_and_nothing_else() {
        assert!(entry("").unwrap().servers[0].ask.is_empty());
        let config = entry("ask = [\"roots\", \"elicitation\", \"roots\"]").unwrap();
        assert_eq!(config.servers[0].ask, [AskKind::Roots, AskKind::Elicitation]);
        let again: McpConfig = toml::from_str(&toml::to_string(&config).unwrap()).unwrap();
        assert_eq!(again, config, "it serializes as it is written");
        let err = entry("ask = [\"everything\"]").unwrap_err().to_string();
        assert!(
            err.contains(
                "`ask` names \"everything\", which is not \"elicitation\", \"sampling\" or \"roots\""
            ),
            "{err}"
        );
    }

    fn http(oauth: &str, extra: &str) -> std::result::Result<McpConfig, String> {
        let config: McpConfig = toml::from_str(&format!(
            "[[servers]]\nname = \"r\"\ntransport = \"http\"\nurl = \"https://x/mcp\"\noauth = {oauth}\n{extra}\n"
        ))
        .map_err(|e| e.to_string())?;
        config.validate().map_err(|e| e.to_string())?;
        Ok(config)
    }

    #[test]
    fn oauth_entries_are_checked() {
        let config = http("{}", "").unwrap();
        let McpTransport::Http {
            oauth: Some(oauth), ..
        } = &config.servers[0].transport
        else {
            panic!("{config:?}")
        };
        assert_eq!(oauth.grant, OAuthGrant::AuthorizationCode);
        let refusals = [
            (
                "{ grant = \"client_credentials\" }",
                "",
                "needs `client_id` and `client_secret_env`",
            ),
            ("{ client_secret_env = \"S\" }", "", "needs the `client_id`"),
            (
                "{ client_metadata_url = \"http://x/c.json\" }",
                "",
                "must be an https:// URL",
            ),
            ("{ grant = \"password\" }", "", "unknown variant"),
            ("{ scope = [\"a\"] }", "", "unknown field"),
            ("{}", "headers = { Authorization = \"Bearer t\" }", "keep one"),
        ];
        for (oauth, extra, why) in refusals {
            let err = http(oauth, extra).unwrap_err();
            assert!(err.contains(why), "{oauth} {extra}: {err}");
        }
        let stdio: std::result::Result<McpConfig, _> =
            toml::from_str("[[servers]]\nname = \"s\"\ntransport = \"stdio\"\ncommand = \"x\"\noauth = {}\n");
        let err = stdio.unwrap_err().to_string();
        assert!(
            err.contains("`oauth` does not apply to transport \"stdio\""),
            "{err}"
        );
    }

    #[test]
    fn tokens_are_kept_by_server_name_unless_a_file_is_named() {
        let config = http("{ token_file = \"t.json\" }", "").unwrap();
        assert_eq!(config.servers[0].token_file().unwrap(), PathBuf::from("t.json"));
        let config = http("{}", "").unwrap();
        // Under whichever state folder the environment names (HOME at least).
        let file = config.servers[0].token_file().expect("a state folder");
        assert!(file.ends_with("oauth/r.json"), "{}", file.display());
        let plain = McpServerConfig::http("p", "https://x/mcp");
        assert_eq!(plain.token_file(), None);
    }
}
