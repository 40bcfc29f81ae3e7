//! # Verdicts
//!
//! The result of [`detect`](crate::detect): whether a command needs
//! approval, the [`Category`] of every reason, and each [`Match`] with the
//! part of the command that triggered it.

use std::fmt;
use std::str::FromStr;

use serde::{Deserialize, Serialize};

/// What makes a command dangerous.
///
/// The serialized form (and [`Category::as_str`]) is the stable snake_case
/// name used in JSON verdicts, session approvals and allowlist entries.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
#[non_exhaustive]
pub enum Category {
    /// Recursive or bulk deletion (`rm -r`, `find -delete`, `xargs rm`).
    RecursiveDelete,
    /// Irrecoverable destruction or removal of individual important files
    /// (`shred`, deleting system files).
    FileDestruction,
    /// Formatting, partitioning or raw overwriting of block devices.
    FilesystemFormat,
    /// Writing to device nodes other than block devices (`/dev/mem`, ...).
    DeviceWrite,
    /// Destructive SQL or datastore statements sent to a database client,
    /// and datastore tools that drop databases, users or keys (`dropdb`,
    /// `redis-cli DEL`, `influx bucket delete`).
    SqlDestructive,
    /// Writing, editing or moving system or security configuration files.
    SystemConfigOverwrite,
    /// Starting, stopping, enabling, disabling, masking, linking or
    /// editing services, or reloading a service manager: a service
    /// started or enabled runs a program in the background and may
    /// persist across reboots (`systemctl enable`, `service x start`,
    /// `launchctl load`).
    ServiceManipulation,
    /// Running code fetched from the network.
    RemoteCodeExecution,
    /// A command (or shell payload) that cannot be known without running it.
    DynamicCommand,
    /// Inline interpreter code that runs processes or evaluates code.
    CodeExecution,
    /// Unbounded process creation.
    ForkBomb,
    /// Killing processes forcibly or in bulk.
    ProcessKill,
    /// Dangerous permission or ownership changes.
    PermissionChange,
    /// Shutdown, reboot, halt, power-off and similar.
    SystemPower,
    /// Git operations that discard work or rewrite shared history.
    GitDestructive,
    /// Obtaining a root shell or extra privileges.
    PrivilegeEscalation,
    /// Creating, deleting or altering user accounts and passwords.
    AccountChange,
    /// Sending secrets (keys, credentials, environment) over the network,
    /// pushing the repository to a place the command names or points a
    /// remote at (`git remote add x URL && git push x`), or serving the
    /// home folder, `/` or a credential folder over the network
    /// (`cd ~ && python3 -m http.server`).
    SecretExfiltration,
    /// Connecting a shell to a network socket.
    ReverseShell,
    /// Disabling firewalls or taking network interfaces and routes down.
    NetworkConfig,
    /// Erasing shell history or system logs.
    LogTampering,
    /// Destroying cloud, cluster or container infrastructure, or the
    /// resources of a hosted service (a repository or release on a code
    /// forge: `gh repo delete`, `gh api -X DELETE`).
    InfrastructureDestroy,
    /// Removing or replacing scheduled jobs.
    ScheduledJobs,
    /// Removing system packages.
    PackageRemoval,
    /// The command is too large or too deeply nested to analyse.
    Unanalyzable,
    /// Code runs that lives outside the command, so the detector cannot see
    /// it: a script file (`sh cleanup.sh`, `. ./env.sh`, `python3 x.py`), a
    /// program run by a path outside the system's program folders
    /// (`./run`), a command a program reads from a file (`vim -S f`,
    /// `git config core.hooksPath d`), or a changed program search path or
    /// injected library (`PATH=./bin:$PATH`, `LD_PRELOAD`).
    Opaque,
    /// Reading well-known credential files: private keys, cloud, registry
    /// and cluster credentials, `.netrc`, `.env` files, `/etc/shadow`.
    CredentialAccess,
    /// Writing, moving, deleting or changing the permissions of a path the
    /// caller protects (toolhost's own configuration, command allowlist or
    /// managed storage; see [`Context`](crate::Context)).
    HostConfigWrite,
}

impl Category {
    /// Every category, in declaration order.
    pub const ALL: [Category; 28] = [
        Category::RecursiveDelete,
        Category::FileDestruction,
        Category::FilesystemFormat,
        Category::DeviceWrite,
        Category::SqlDestructive,
        Category::SystemConfigOverwrite,
        Category::ServiceManipulation,
        Category::RemoteCodeExecution,
        Category::DynamicCommand,
        Category::CodeExecution,
        Category::ForkBomb,
        Category::ProcessKill,
        Category::PermissionChange,
        Category::SystemPower,
        Category::GitDestructive,
        Category::PrivilegeEscalation,
        Category::AccountChange,
        Category::SecretExfiltration,
        Category::ReverseShell,
        Category::NetworkConfig,
        Category::LogTampering,
        Category::InfrastructureDestroy,
        Category::ScheduledJobs,
        Category::PackageRemoval,
        Category::Unanalyzable,
        Category::Opaque,
        Category::CredentialAccess,
        Category::HostConfigWrite,
    ];

    /// Whether a smart approver may be asked about this category: the
    /// ones where a low-risk case is common (deleting a build folder,
    /// killing a dev server, a force-push to one's own branch). Code
    /// execution, privilege, devices, secrets, credentials, networks,
    /// opaque or unknowable commands and writes to the host's own
    /// configuration always go to a person.
    pub fn smart_reviewable(self) -> bool {
        matches!(
            self,
            Category::RecursiveDelete
                | Category::ProcessKill
                | Category::GitDestructive
                | Category::PermissionChange
                | Category::SqlDestructive
                | Category::ServiceManipulation
                | Category::ScheduledJobs
                | Category::PackageRemoval
        )
    }

    /// Whether a match of this category means the detector could not see
    /// what runs: [`Category::Opaque`] (code outside the command) and
    /// [`Category::DynamicCommand`] (code computed at run time). Such a
    /// verdict has [`Verdict::opaque`] set.
    pub fn is_opaque(self) -> bool {
        matches!(self, Category::Opaque | Category::DynamicCommand)
    }

    /// Whether a permanent allowlist entry may approve this category.
    /// False for [`Category::HostConfigWrite`] (an approval that outlives
    /// the session must not let a command rewrite the rules that approve
    /// it) and for [`Category::Opaque`] (a pattern vouches for the text of
    /// a command, not for a script file that may change after approval).
    /// Every other category returns true.
    pub fn allowlistable(self) -> bool {
        !matches!(self, Category::HostConfigWrite | Category::Opaque)
    }

    /// The stable snake_case name of the category (as serialized).
    pub fn as_str(self) -> &'static str {
        match self {
            Category::RecursiveDelete => "recursive_delete",
            Category::FileDestruction => "file_destruction",
            Category::FilesystemFormat => "filesystem_format",
            Category::DeviceWrite => "device_write",
            Category::SqlDestructive => "sql_destructive",
            Category::SystemConfigOverwrite => "system_config_overwrite",
            Category::ServiceManipulation => "service_manipulation",
            Category::RemoteCodeExecution => "remote_code_execution",
            Category::DynamicCommand => "dynamic_command",
            Category::CodeExecution => "code_execution",
            Category::ForkBomb => "fork_bomb",
            Category::ProcessKill => "process_kill",
            Category::PermissionChange => "permission_change",
            Category::SystemPower => "system_power",
            Category::GitDestructive => "git_destructive",
            Category::PrivilegeEscalation => "privilege_escalation",
            Category::AccountChange => "account_change",
            Category::SecretExfiltration => "secret_exfiltration",
            Category::ReverseShell => "reverse_shell",
            Category::NetworkConfig => "network_config",
            Category::LogTampering => "log_tampering",
            Category::InfrastructureDestroy => "infrastructure_destroy",
            Category::ScheduledJobs => "scheduled_jobs",
            Category::PackageRemoval => "package_removal",
            Category::Unanalyzable => "unanalyzable",
            Category::Opaque => "opaque",
            Category::CredentialAccess => "credential_access",
            Category::HostConfigWrite => "host_config_write",
        }
    }
}

impl fmt::Display for Category {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

/// The error of parsing an unknown category name: holds the rejected text.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct UnknownCategory(pub String);

impl fmt::Display for UnknownCategory {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "unknown command category `{}`", self.0)
    }
}

impl std::error::Error for UnknownCategory {}

impl FromStr for Category {
    type Err = UnknownCategory;

    /// Parses the snake_case name produced by [`Category::as_str`]; any other
    /// text is rejected.
    fn from_str(s: &str) -> Result<Self, Self::Err> {
        Category::ALL
            .iter()
            .copied()
            .find(|c| c.as_str() == s)
            .ok_or_else(|| UnknownCategory(s.to_string()))
    }
}

/// One reason a command needs approval.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Match {
    /// What kind of danger this is.
    pub category: Category,
    /// The part of the (normalized) command that matched, at most
    /// [`MAX_MATCHED_CHARS`] characters.
    pub matched: String,
    /// A human-readable explanation.
    pub reason: String,
}

/// The longest `matched` text kept in a [`Match`]; longer text is cut and
/// ends with `…`.
pub const MAX_MATCHED_CHARS: usize = 200;

/// The most matches a [`Verdict`] keeps; the categories list stays complete.
pub const MAX_MATCHES: usize = 64;

/// The detector's answer for one command.
///
/// `dangerous` is true exactly when `matches` is non-empty; `categories`
/// lists each category of `matches` once, in order of first appearance;
/// `opaque` is true exactly when one of `categories` is opaque
/// ([`Category::is_opaque`]).
#[derive(Debug, Clone, PartialEq, Eq, Default, Serialize, Deserialize)]
pub struct Verdict {
    /// Whether the command needs approval.
    pub dangerous: bool,
    /// The distinct categories of all matches.
    pub categories: Vec<Category>,
    /// Every reason found (deduplicated, at most [`MAX_MATCHES`]).
    pub matches: Vec<Match>,
    /// Whether reasons were left out of `matches` for the cap. An
    /// incomplete verdict is never allowed by an allowlist: a pattern
    /// could only vouch for the reasons it was shown.
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub truncated: bool,
    /// Whether some of what the command runs could not be seen: a match
    /// of a category for which [`Category::is_opaque`] holds (a script
    /// file, a computed command, a changed `PATH`, ...). An opaque verdict
    /// is always `dangerous`. Always serialized (`"opaque": false` too).
    #[serde(default)]
    pub opaque: bool,
}

impl Verdict {
    /// Builds a verdict from raw matches: duplicates (same category and
    /// matched text) are dropped, the list is capped at [`MAX_MATCHES`] and
    /// `dangerous`, `categories` and `opaque` are derived from it.
    pub fn from_matches(raw: Vec<Match>) -> Verdict {
        let mut matches: Vec<Match> = Vec::new();
        let mut categories: Vec<Category> = Vec::new();
        let mut truncated = false;
        for m in raw {
            if !categories.contains(&m.category) {
                categories.push(m.category);
            }
            let duplicate = matches
                .iter()
                .any(|k| k.category == m.category && k.matched == m.matched);
            if duplicate {
                continue;
            }
            if matches.len() < MAX_MATCHES {
                matches.push(m);
            } else {
                truncated = true;
            }
        }
        Verdict {
            dangerous: !matches.is_empty(),
            opaque: categories.iter().any(|c| c.is_opaque()),
            categories,
            matches,
            truncated,
        }
    }

    /// A one-line summary such as `recursive_delete: rm -rf build`, joining
    /// the first match of each category with `; `.
    pub fn summary(&self) -> String {
        let mut parts = Vec::new();
        for c in &self.categories {
            if let Some(m) = self.matches.iter().find(|m| m.category == *c) {
                parts.push(format!("{}: {}", c, m.matched));
            } else {
                parts.push(c.to_string());
            }
        }
        parts.join("; ")
    }
}

/// Cuts `text` to at most [`MAX_MATCHED_CHARS`] characters (on a character
/// boundary), trimming surrounding whitespace.
pub(crate) fn clip(text: &str) -> String {
    let t = text.trim();
    if t.chars().count() <= MAX_MATCHED_CHARS {
        return t.to_string();
    }
    let mut out: String = t.chars().take(MAX_MATCHED_CHARS - 1).collect();
    out.push('…');
    out
}
