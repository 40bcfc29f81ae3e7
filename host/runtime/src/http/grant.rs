//! What the operator writes (`http` and `secrets` in `[plugins.grants]`) and
//! what a component gets from it: [`HttpAccess`], declared ∩ granted.

use std::path::{Path, PathBuf};

use serde::{Deserialize, Serialize};

use super::policy::{HostPattern, Rule, Target};
use toolhost_core::error::{Error, ErrorCode, Result};

/// One destination granted for outbound HTTP: a string
/// (`"https://api.example.com"`, `"*.example.com"`, `"http://127.0.0.1:8080"`)
/// or a table that can opt the host into private addresses
/// (`{ url = "http://intranet:8080", allow_private = true }`) or pin its TLS
/// to a private certificate authority
/// (`{ url = "https://git.corp", ca_file = "corp-ca.pem" }`).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(untagged, deny_unknown_fields)]
pub enum HttpGrant {
    /// `[scheme://]host[:port]`; without a scheme, `https` only; without a
    /// port, the scheme's default only.
    Url(String),
    /// The same, with options.
    Detailed {
        /// `[scheme://]host[:port]`.
        url: String,
        /// Let this host resolve to (and connect to) loopback, private and
        /// link-local addresses. Not allowed on wildcards.
        #[serde(default)]
        allow_private: bool,
        /// A PEM file of certificate authorities that alone are trusted for
        /// this destination's TLS (in place of the public roots). In a
        /// config file, relative to the file's folder.
        #[serde(default, skip_serializing_if = "Option::is_none")]
        ca_file: Option<PathBuf>,
    },
}

impl HttpGrant {
    fn rule(&self) -> Result<Rule> {
        let (url, allow_private, ca_file) = match self {
            HttpGrant::Url(url) => (url, false, None),
            HttpGrant::Detailed {
                url,
                allow_private,
                ca_file,
            } => (url, *allow_private, ca_file.as_ref()),
        };
        let mut rule = Rule::parse(url, allow_private).map_err(|e| {
            Error::new(
                ErrorCode::Config,
                format!("the http grant {url:?} is invalid: {e}"),
            )
        })?;
        if let Some(path) = ca_file {
            rule.trusted_cas = read_cas(path).map_err(|e| {
                Error::new(
                    ErrorCode::Config,
                    format!("the http grant {url:?}: ca_file {}: {e}", path.display()),
                )
            })?;
        }
        Ok(rule)
    }

    /// This grant with a relative `ca_file` resolved against `base`.
    pub fn resolved_against(mut self, base: &Path) -> HttpGrant {
        if let HttpGrant::Detailed {
            ca_file: Some(path), ..
        } = &mut self
        {
            *path = base.join(&*path);
        }
        self
    }
}

/// The certificates of a PEM file, as DER; at least one.
fn read_cas(path: &Path) -> std::result::Result<Vec<Vec<u8>>, String> {
    use rustls::pki_types::CertificateDer;
    use rustls::pki_types::pem::PemObject;
    let certs = CertificateDer::pem_file_iter(path)
        .map_err(|e| e.to_string())?
        .map(|c| c.map(|c| c.to_vec()).map_err(|e| e.to_string()))
        .collect::<std::result::Result<Vec<_>, _>>()?;
    if certs.is_empty() {
        return Err("no PEM certificate in it".into());
    }
    Ok(certs)
}

/// A secret the host injects as a request header for the hosts it is
/// granted to. The guest never sees its value.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct SecretGrant {
    /// The name the component declares (`secret NAME`, or `secret *` for
    /// any granted secret).
    pub name: String,
    /// The host process's environment variable holding the value.
    pub value_env: String,
    /// The request header it is sent in, e.g. `Authorization`.
    pub header: String,
    /// How the header value is made from the secret; `{}` is replaced by
    /// the value (default `{}`), e.g. `Bearer {}`.
    #[serde(default)]
    pub format: Option<String>,
    /// The destinations it is sent to, in the form of [`HttpGrant::Url`].
    pub hosts: Vec<String>,
}

/// A secret ready to inject: its header, the header's value and the
/// destinations. `Debug` and `Serialize` never show the value.
#[derive(Clone, PartialEq, Eq, Serialize)]
pub struct Secret {
    /// The declared name.
    pub name: String,
    /// The header it is sent in.
    pub header: String,
    #[serde(skip)]
    pub(crate) raw: String,
    #[serde(skip)]
    pub(crate) header_value: String,
    /// Where it is sent.
    pub hosts: Vec<Rule>,
}

impl std::fmt::Debug for Secret {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Secret")
            .field("name", &self.name)
            .field("header", &self.header)
            .field("hosts", &self.hosts)
            .finish_non_exhaustive()
    }
}

/// Outbound HTTP as a component gets it: the hosts it declared, the rules
/// the operator granted, and the secrets both named.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize)]
pub struct HttpAccess {
    /// Host patterns the component declared (`http HOST`).
    pub declared: Vec<HostPattern>,
    /// Destinations the operator granted.
    pub rules: Vec<Rule>,
    /// Secrets declared and granted, whose values were found.
    pub secrets: Vec<Secret>,
}

impl HttpAccess {
    /// Intersects the declarations with the grants; returns the access and
    /// the declarations that were not granted (`http HOST`, `secret NAME`).
    ///
    /// # Errors
    ///
    /// `invalid_component` for a declared host that is not a host pattern;
    /// `config` for a grant that does not parse, or a granted secret whose
    /// header is not a valid header name.
    pub fn resolve(
        declared_hosts: &[String],
        declared_secrets: &[String],
        grants: &[HttpGrant],
        secrets: &[SecretGrant],
    ) -> Result<(HttpAccess, Vec<String>)> {
        let mut not_granted = Vec::new();
        // (What was granted but not declared is [`HttpAccess::not_declared`].)
        let mut declared = Vec::new();
        for host in declared_hosts {
            let pattern = HostPattern::parse(host).ok_or_else(|| {
                Error::new(
                    ErrorCode::InvalidComponent,
                    format!("the component declares `http {host}`, which is not a host pattern"),
                )
            })?;
            declared.push(pattern);
        }
        let rules = grants.iter().map(HttpGrant::rule).collect::<Result<Vec<_>>>()?;
        for pattern in &declared {
            let covered = rules.iter().any(|r| match pattern {
                HostPattern::Any | HostPattern::Subdomains(_) => true,
                HostPattern::Name(n) => r.host.matches(&super::policy::Host::Name(n.clone())),
                HostPattern::Ip(ip) => r.host.matches(&super::policy::Host::Ip(*ip)),
            });
            if !covered {
                not_granted.push(format!("http {pattern}"));
            }
        }
        let mut access = HttpAccess {
            declared,
            rules,
            secrets: Vec::new(),
        };
        // `secret *` (a generic client such as the http plugin) takes
        // whichever secrets the operator grants.
        let names: Vec<&String> = if declared_secrets.iter().any(|n| n == "*") {
            secrets.iter().map(|s| &s.name).collect()
        } else {
            declared_secrets.iter().collect()
        };
        for name in names {
            let Some(grant) = secrets.iter().find(|s| &s.name == name) else {
                not_granted.push(format!("secret {name}"));
                continue;
            };
            if http::HeaderName::from_bytes(grant.header.as_bytes()).is_err() {
                return Err(Error::new(
                    ErrorCode::Config,
                    format!(
                        "the secret {name} names the header {:?}, which is not a header name",
                        grant.header
                    ),
                ));
            }
            let Ok(raw) = std::env::var(&grant.value_env) else {
                tracing::warn!(secret = %name, env = %grant.value_env, "the granted secret's variable is unset; it is not sent");
                not_granted.push(format!("secret {name} (${} is unset)", grant.value_env));
                continue;
            };
            let hosts = grant
                .hosts
                .iter()
                .map(|h| HttpGrant::Url(h.clone()).rule())
                .collect::<Result<Vec<_>>>()?;
            let format = grant.format.as_deref().unwrap_or("{}");
            access.secrets.push(Secret {
                name: name.clone(),
                header: grant.header.to_ascii_lowercase(),
                header_value: format.replace("{}", &raw),
                raw,
                hosts,
            });
        }
        Ok((access, not_granted))
    }

    /// The grants (`http HOST`, `secret NAME`) that cover nothing the
    /// component declared, so give it nothing: a destination whose hosts
    /// overlap no declared host pattern, a secret it does not name.
    pub fn not_declared(&self, declared_secrets: &[String], secrets: &[SecretGrant]) -> Vec<String> {
        let mut out: Vec<String> = self
            .rules
            .iter()
            .filter(|r| !self.declared.iter().any(|d| d.overlaps(&r.host)))
            .map(|r| format!("http {r}"))
            .collect();
        if !declared_secrets.iter().any(|n| n == "*") {
            out.extend(
                secrets
                    .iter()
                    .filter(|s| !declared_secrets.contains(&s.name))
                    .map(|s| format!("secret {}", s.name)),
            );
        }
        out
    }

    /// Whether the component may use outbound HTTP at all: it declared a
    /// host and the operator granted one.
    pub fn is_usable(&self) -> bool {
        !self.declared.is_empty() && !self.rules.is_empty()
    }

    /// The rule that lets a request reach `target`.
    ///
    /// # Errors
    ///
    /// A message naming what is missing: the declaration or the grant.
    pub fn check(&self, target: &Target) -> std::result::Result<&Rule, String> {
        if !self.declared.iter().any(|p| p.matches(&target.host)) {
            return Err(format!(
                "the component does not declare `http {}` (it declares: {})",
                target.host,
                list(&self.declared)
            ));
        }
        self.rules.iter().find(|r| r.matches(target)).ok_or_else(|| {
            format!(
                "{target} is not granted (granted: {}); add it to the plugin's `http` grants",
                list(&self.rules)
            )
        })
    }
}

fn list<T: std::fmt::Display>(items: &[T]) -> String {
    if items.is_empty() {
        return "nothing".into();
    }
    items.iter().map(|i| i.to_string()).collect::<Vec<_>>().join(", ")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn declared_and_granted_hosts_are_both_required() {
        let grants = [
            HttpGrant::Url("https://api.example.com".into()),
            HttpGrant::Detailed {
                url: "http://127.0.0.1:8080".into(),
                allow_private: false,
                ca_file: None,
            },
        ];
        let (access, not_granted) = HttpAccess::resolve(
            &["api.example.com".into(), "other.org".into()],
            &["TOKEN".into()],
            &grants,
            &[],
        )
        .unwrap();
        assert_eq!(not_granted, ["http other.org", "secret TOKEN"]);
        let ok = Target::new("https", "api.example.com").unwrap();
        assert!(access.check(&ok).is_ok());
        let undeclared = Target::new("http", "127.0.0.1:8080").unwrap();
        assert!(
            access
                .check(&undeclared)
                .unwrap_err()
                .contains("does not declare")
        );
        let ungranted = Target::new("https", "other.org").unwrap();
        assert!(access.check(&ungranted).unwrap_err().contains("is not granted"));
    }

    #[test]
    fn grants_parse_from_toml() {
        #[derive(Deserialize)]
        struct G {
            http: Vec<HttpGrant>,
            secrets: Vec<SecretGrant>,
        }
        let g: G = toml::from_str(
            r#"
            http = ["https://api.github.com", { url = "http://intranet:8080", allow_private = true }]
            [[secrets]]
            name = "github"
            value_env = "GITHUB_TOKEN"
            header = "Authorization"
            format = "Bearer {}"
            hosts = ["api.github.com"]
            "#,
        )
        .unwrap();
        assert_eq!(g.http.len(), 2);
        assert!(g.http[1].rule().unwrap().allow_private);
        assert_eq!(g.secrets[0].format.as_deref(), Some("Bearer {}"));
        assert!(HttpGrant::Url("ftp://x".into()).rule().is_err());
    }
}
