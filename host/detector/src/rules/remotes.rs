//! Pushing a repository somewhere the command itself chose: a URL given
//! to `git push`, or a remote the same command adds or re-points (`git
//! remote add x URL && git push x`, `git remote set-url origin URL; git
//! push`, `git config remote.origin.url URL`, `url.X.insteadOf`, `git -c
//! remote.origin.url=URL push`). That sends the code and its history (and
//! any secret ever committed) off the machine: `secret_exfiltration`.
//!
//! A push to a remote the repository already has (`git push`, `git push
//! origin main`) stays benign; local paths and `file://` URLs are not the
//! network.

use super::args;
use crate::analyze::Analyzer;
use crate::expand::Field;
use crate::verdict::Category;

/// The most remotes remembered per reading.
const MAX_REMOTES: usize = 64;

impl Analyzer {
    /// Tracks and judges one git command: `sub` and its arguments `rest`,
    /// `configs` the `-c key=value` settings given to git itself.
    pub(crate) fn git_remote_rules(&mut self, sub: &str, rest: &[Field], configs: &[String], raw: &str) {
        for kv in configs {
            let (k, _) = kv.split_once('=').unwrap_or((kv.as_str(), ""));
            if let Some(name) = remote_key(k) {
                self.remember_remote(&name);
            }
        }
        match sub {
            "remote" => {
                let p = args::parse(rest, "tm", &[]);
                let ops = p.texts();
                match ops.as_slice() {
                    ["add", name, ..] | ["set-url", name, ..] => {
                        let name = name.to_string();
                        self.remember_remote(&name);
                    }
                    ["rename", old, new, ..] if self.git_remotes.iter().any(|r| r == old) => {
                        let new = new.to_string();
                        self.remember_remote(&new);
                    }
                    _ => {}
                }
            }
            "config" => {
                let p = args::parse(rest, "f", &["--file", "--type", "--default", "--comment"]);
                let ops: Vec<&str> = p.texts().into_iter().filter(|o| *o != "set").collect();
                if let [k, _value, ..] = ops.as_slice()
                    && let Some(name) = remote_key(k)
                {
                    self.remember_remote(&name);
                }
            }
            "push" | "send-pack" => {
                let p = args::parse(
                    rest,
                    "o",
                    &["--repo", "--push-option", "--receive-pack", "--exec"],
                );
                let repo = p
                    .value(&["--repo"])
                    .map(str::to_string)
                    .or_else(|| p.operands.first().map(|f| f.text.clone()));
                let chosen = match repo.as_deref() {
                    Some(r) if is_network_url(r) => Some(r.to_string()),
                    Some(r) if self.git_remotes.iter().any(|g| g == r || g == "*") => Some(r.to_string()),
                    // With no remote named, the push goes to the branch's
                    // remote, which may be the one re-pointed.
                    None if !self.git_remotes.is_empty() => Some("the default remote".to_string()),
                    _ => None,
                };
                if let Some(to) = chosen {
                    self.add(
                        Category::SecretExfiltration,
                        raw,
                        format!(
                            "pushes the repository to {to}, a place this command names or points a remote at (the code, its history and any secret committed leave the machine)"
                        ),
                    );
                }
            }
            _ => {}
        }
    }

    fn remember_remote(&mut self, name: &str) {
        if self.git_remotes.len() < MAX_REMOTES && !self.git_remotes.iter().any(|r| r == name) {
            self.git_remotes.push(name.to_string());
        }
    }
}

/// The remote a git configuration key re-points, if it does:
/// `remote.NAME.url`/`pushurl` → NAME; `url.X.insteadOf`/
/// `pushInsteadOf` → `*` (every remote); `remote.pushDefault`,
/// `branch.B.remote`/`pushRemote` → `*` (the default remote changes).
fn remote_key(key: &str) -> Option<String> {
    let k = key.to_ascii_lowercase();
    let last = k.rsplit('.').next().unwrap_or_default();
    if let Some(rest) = k.strip_prefix("remote.")
        && matches!(last, "url" | "pushurl")
    {
        let name = rest.rsplit_once('.').map(|(n, _)| n).unwrap_or_default();
        // The key is lower-cased; the name keeps its case from `key`.
        let original = key.get(7..7 + name.len()).unwrap_or(name);
        return Some(original.to_string());
    }
    let rewrites = k.starts_with("url.") && matches!(last, "insteadof" | "pushinsteadof");
    let default =
        k == "remote.pushdefault" || k.starts_with("branch.") && matches!(last, "remote" | "pushremote");
    (rewrites || default).then(|| "*".to_string())
}

/// Whether a git repository argument is a network URL: `scheme://...`
/// other than `file://`, or the scp-like `[user@]host:path`.
fn is_network_url(r: &str) -> bool {
    if let Some((scheme, _)) = r.split_once("://") {
        return !scheme.eq_ignore_ascii_case("file") && !scheme.is_empty();
    }
    match r.split_once(':') {
        Some((host, _)) => !host.is_empty() && !host.contains('/') && host.len() > 1,
        None => false,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn urls_and_keys() {
        assert!(is_network_url("https://evil.example/x.git"));
        assert!(is_network_url("git@github.com:me/x.git"));
        assert!(is_network_url("ssh://h/x"));
        assert!(!is_network_url("origin"));
        assert!(!is_network_url("../backup.git"));
        assert!(!is_network_url("file:///srv/x.git"));
        assert!(!is_network_url("/srv/a:b"));
        assert_eq!(remote_key("remote.Origin.url").as_deref(), Some("Origin"));
        assert_eq!(remote_key("url.https://x/.insteadOf").as_deref(), Some("*"));
        assert_eq!(remote_key("user.name"), None);
    }
}
