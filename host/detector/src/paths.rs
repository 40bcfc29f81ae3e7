//! Paths: lexical normalization and what makes a path sensitive.
//!
//! Paths are compared after normalization (`//`, `.` and `..` folded, `~`
//! and `$HOME` as `~`, relative paths joined to a known working directory),
//! so `/usr/bin/../../etc/passwd` is `/etc/passwd`.

use super::expand::UNKNOWN;

/// Lexically normalizes `path` (see the module docs). Relative paths stay
/// relative when the working directory is unknown.
pub(crate) fn normalize(path: &str, cwd: Option<&str>) -> String {
    let (root, rest) = if let Some(r) = path.strip_prefix('~') {
        let after_user = r.find('/').map_or("", |i| r.get(i..).unwrap_or_default());
        ("~", after_user.to_string())
    } else if path.starts_with('/') {
        ("/", path.to_string())
    } else {
        match cwd {
            Some(c) => return normalize(&format!("{c}/{path}"), None),
            None => ("", path.to_string()),
        }
    };
    let mut stack: Vec<&str> = Vec::new();
    for seg in rest.split('/') {
        match seg {
            "" | "." => {}
            ".." => {
                if stack.last().is_some_and(|s| *s != "..") {
                    stack.pop();
                } else if root.is_empty() {
                    stack.push("..");
                }
            }
            s => stack.push(s),
        }
    }
    let joined = stack.join("/");
    match root {
        "~" if joined.is_empty() => "~".to_string(),
        "~" => format!("~/{joined}"),
        "/" => format!("/{joined}"),
        _ if joined.is_empty() => ".".to_string(),
        _ => joined,
    }
}

/// Locations of root-installed software: programs, libraries and system
/// scripts there were put by the system's administrator or package
/// manager, not by a tool writing files a moment ago.
const INSTALLED: &[&str] = &[
    "/bin",
    "/sbin",
    "/usr",
    "/lib",
    "/lib32",
    "/lib64",
    "/libx32",
    "/etc",
    "/opt",
    "/snap",
    "/nix/store",
    "/run/current-system",
    "/System",
    "/Library",
    "/Applications",
];

/// Whether the (normalized, absolute) path lies in a location of
/// root-installed software (see [`INSTALLED`]). Assumes the agent does
/// not run as root: writing there needs privileges, which other rules flag.
pub(crate) fn is_installed(p: &str) -> bool {
    !p.contains(UNKNOWN) && INSTALLED.iter().any(|d| under(p, d)) && !under(p, "/usr/tmp")
}

/// Whether `p` is `prefix` or lies inside it.
pub(crate) fn under(p: &str, prefix: &str) -> bool {
    p == prefix
        || prefix == "/" && p.starts_with('/')
        || p.strip_prefix(prefix).is_some_and(|r| r.starts_with('/'))
}

/// The last component of a path.
pub(crate) fn basename(p: &str) -> &str {
    p.rsplit('/').next().unwrap_or(p)
}

const SYSTEM_DIRS: &[&str] = &[
    "/etc",
    "/boot",
    "/usr",
    "/bin",
    "/sbin",
    "/lib",
    "/lib32",
    "/lib64",
    "/libx32",
    "/root",
    "/sys",
    "/proc",
    "/var/spool/cron",
    "/var/lib",
    "/System",
    "/Library",
    "/private/etc",
    "/private/var",
    "/efi",
    "/snap",
];

const SHELL_STARTUP: &[&str] = &[
    ".bashrc",
    ".bash_profile",
    ".bash_login",
    ".bash_logout",
    ".profile",
    ".zshrc",
    ".zshenv",
    ".zprofile",
    ".zlogin",
    ".zlogout",
    ".cshrc",
    ".tcshrc",
    ".kshrc",
    ".inputrc",
];

const HOME_SENSITIVE_DIRS: &[&str] = &[
    "~/.ssh",
    "~/.gnupg",
    "~/.config/autostart",
    "~/.config/systemd",
    "~/Library/LaunchAgents",
    "~/.config/fish",
    "~/.aws",
    "~/.kube",
    "~/.docker",
];

const HISTORY_FILES: &[&str] = &[
    ".bash_history",
    ".zsh_history",
    ".history",
    ".sh_history",
    ".python_history",
    ".mysql_history",
    ".psql_history",
    ".sqlite_history",
    ".node_repl_history",
    ".lesshst",
    ".zhistory",
    "fish_history",
];

/// Why writing to (normalized) `p` is dangerous, if it is.
pub(crate) fn system_write_reason(p: &str) -> Option<&'static str> {
    if p == "/" {
        return Some("writes to the filesystem root");
    }
    if SYSTEM_DIRS.iter().any(|d| under(p, d)) {
        return Some("writes into a system directory");
    }
    if HOME_SENSITIVE_DIRS.iter().any(|d| under(p, d)) {
        return Some("writes into a security-sensitive directory of the home folder");
    }
    let base = basename(p);
    if base == "authorized_keys" || base == "authorized_keys2" || base == "sudoers" {
        return Some("writes a file that grants access");
    }
    if SHELL_STARTUP.contains(&base) {
        return Some("writes a shell startup file (runs on every login)");
    }
    None
}

/// Whether `p` is a log or shell-history file.
pub(crate) fn is_log_or_history(p: &str) -> bool {
    under(p, "/var/log") || HISTORY_FILES.contains(&basename(p)) || under(p, "/var/audit")
}

/// Whether `p` names a disk or partition device.
pub(crate) fn is_block_device(p: &str) -> bool {
    let Some(dev) = p.strip_prefix("/dev/") else {
        return false;
    };
    const PREFIXES: &[&str] = &[
        "sd", "hd", "vd", "xvd", "nvme", "mmcblk", "disk", "rdisk", "mapper/", "md", "dm-", "loop", "sr",
        "nbd", "zd", "root", "mtd",
    ];
    PREFIXES.iter().any(|x| dev.starts_with(x))
}

/// Whether writing to device `p` is harmless (`/dev/null`, terminals, ...).
pub(crate) fn is_harmless_device(p: &str) -> bool {
    matches!(
        p,
        "/dev/null"
            | "/dev/zero"
            | "/dev/full"
            | "/dev/stdout"
            | "/dev/stderr"
            | "/dev/stdin"
            | "/dev/tty"
            | "/dev/random"
            | "/dev/urandom"
            | "/dev/console"
    ) || ["/dev/fd", "/dev/pts", "/dev/shm"].iter().any(|d| under(p, d))
}

/// Whether `p` is bash's network pseudo-device (`/dev/tcp/host/port`).
pub(crate) fn is_net_device(p: &str) -> bool {
    under(p, "/dev/tcp") || under(p, "/dev/udp")
}

/// Whether the (raw) text names a file holding secrets: private keys,
/// cloud and tool credentials, `.env` files, password databases.
pub(crate) fn is_secret_path(text: &str) -> bool {
    let t = text.trim_start_matches('@').trim_start_matches('<');
    let t = t
        .rsplit_once('=')
        .map_or(t, |(_, v)| v.trim_start_matches(['@', '<']));
    if t.is_empty() || t.contains(UNKNOWN) && !t.contains('/') {
        return false;
    }
    let p = normalize(t, None);
    let base = basename(&p);
    if base.ends_with(".pub") || base == "known_hosts" {
        return false;
    }
    const DIRS: &[&str] = &[
        "~/.ssh",
        "~/.aws",
        "~/.gnupg",
        "~/.kube",
        "~/.docker",
        "~/.azure",
        "~/.config/gcloud",
        "~/.password-store",
        "/var/run/secrets",
        "/run/secrets",
        "~/.config/gh",
    ];
    const FILES: &[&str] = &[
        ".env",
        ".netrc",
        ".pgpass",
        ".my.cnf",
        ".git-credentials",
        ".npmrc",
        ".pypirc",
        ".dockercfg",
        "credentials",
        "credentials.json",
        "shadow",
        "gshadow",
        "sudoers",
        "id_rsa",
        "id_dsa",
        "id_ecdsa",
        "id_ed25519",
        ".bash_history",
        ".zsh_history",
        "environ",
        "secrets.yml",
        "secrets.yaml",
        "secrets.json",
        ".htpasswd",
        "master.key",
    ];
    DIRS.iter().any(|d| under(&p, d))
        || FILES.contains(&base)
        || base.starts_with(".env.")
        || base.starts_with("id_rsa")
        || base.starts_with("id_ed25519")
        || base.starts_with("ssh_host_") && base.ends_with("_key")
        || [
            ".pem",
            ".key",
            ".p12",
            ".pfx",
            ".kdbx",
            ".jks",
            ".keystore",
            ".asc",
            ".gpg",
        ]
        .iter()
        .any(|e| base.ends_with(e))
}

/// Whether a variable name suggests a secret value.
pub(crate) fn is_secret_var(name: &str) -> bool {
    let n = name.to_ascii_uppercase();
    [
        "SECRET",
        "TOKEN",
        "PASSWORD",
        "PASSWD",
        "API_KEY",
        "ACCESS_KEY",
        "PRIVATE_KEY",
        "CREDENTIAL",
    ]
    .iter()
    .any(|k| n.contains(k))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn normalizes() {
        assert_eq!(normalize("/usr/bin/../../etc//passwd", None), "/etc/passwd");
        assert_eq!(
            normalize("~/.ssh/./authorized_keys", None),
            "~/.ssh/authorized_keys"
        );
        assert_eq!(normalize("passwd", Some("/etc")), "/etc/passwd");
        assert_eq!(normalize("../../x", None), "../../x");
        assert_eq!(normalize("/../..", None), "/");
    }

    #[test]
    fn secrets() {
        assert!(is_secret_path("~/.ssh/id_rsa"));
        assert!(is_secret_path("@.env"));
        assert!(is_secret_path("file=@.env"));
        assert!(!is_secret_path("~/.ssh/known_hosts"));
        assert!(!is_secret_path("~/.ssh/id_rsa.pub"));
        assert!(!is_secret_path("README.md"));
    }
}
