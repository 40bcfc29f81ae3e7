//! Service managers: starting, stopping, enabling, disabling, masking,
//! linking or editing a service, or reloading the manager's
//! configuration. Starting or enabling a unit is as consequential as
//! stopping one: it runs a program as a service and may make it persist
//! across reboots.
//!
//! Each manager is one row of [`MANAGERS`]: where its verb stands and
//! which verbs only read (`systemctl status`, `service --status-all`,
//! `launchctl list`). Any other verb changes a service, so a verb the
//! table does not know needs approval too.

use super::{Cmd, args};
use crate::analyze::Analyzer;
use crate::verdict::Category;

/// Where a manager's verb stands among its operands.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Verb {
    /// First (`systemctl start NAME`).
    First,
    /// After the service name (`service NAME start`).
    Second,
    /// The program name is the verb (upstart's `start NAME`).
    Program,
}

/// A service manager.
#[derive(Debug)]
struct Manager {
    /// Its program names.
    programs: &'static [&'static str],
    /// Short options that take a value.
    with_arg: &'static str,
    /// Long options that take a value.
    long_with_arg: &'static [&'static str],
    /// Where the verb stands.
    verb: Verb,
    /// Verbs that only read or show state.
    reads: &'static [&'static str],
    /// Whether a missing verb reads (`systemctl` lists units) rather than
    /// changes (`update-rc.d NAME` with no action is an error either way).
    bare_reads: bool,
    /// Flags that make any verb read (`--status-all`, `--list`, `-n`:
    /// dry run).
    reading_flags: &'static [&'static str],
    /// Flags that change a service whatever the verb (`chkconfig --add`).
    changing_flags: &'static [&'static str],
}

/// Verbs of `systemctl` that power off, reboot or suspend (judged as
/// [`Category::SystemPower`]).
const POWER: &[&str] = &[
    "poweroff",
    "reboot",
    "halt",
    "kexec",
    "suspend",
    "hibernate",
    "hybrid-sleep",
    "suspend-then-hibernate",
    "rescue",
    "emergency",
    "soft-reboot",
];

const MANAGERS: &[Manager] = &[
    Manager {
        programs: &["systemctl"],
        with_arg: "HMtspon",
        long_with_arg: &[
            "--host",
            "--machine",
            "--type",
            "--signal",
            "--property",
            "--lines",
            "--output",
            "--root",
            "--state",
            "--kill-whom",
            "--job-mode",
            "--what",
            "--image",
            "--when",
            "--message",
            "--timestamp",
        ],
        verb: Verb::First,
        reads: &[
            "status",
            "show",
            "cat",
            "list-units",
            "list-unit-files",
            "list-sockets",
            "list-timers",
            "list-jobs",
            "list-dependencies",
            "list-machines",
            "list-automounts",
            "list-paths",
            "is-active",
            "is-enabled",
            "is-failed",
            "is-system-running",
            "get-default",
            "show-environment",
            "help",
            "whoami",
        ],
        bare_reads: true,
        changing_flags: &[],
        reading_flags: &["--version", "-h", "--help"],
    },
    Manager {
        programs: &["service", "rc-service", "invoke-rc.d"],
        with_arg: "",
        long_with_arg: &[],
        verb: Verb::Second,
        reads: &["status", "describe"],
        bare_reads: true,
        changing_flags: &[],
        reading_flags: &[
            "--status-all",
            "-l",
            "--list",
            "--help",
            "-h",
            "-e",
            "--exists",
            "--query",
        ],
    },
    Manager {
        programs: &["update-rc.d"],
        with_arg: "f",
        long_with_arg: &[],
        verb: Verb::Second,
        reads: &[],
        bare_reads: true,
        changing_flags: &[],
        reading_flags: &["-n", "-h"],
    },
    Manager {
        programs: &["chkconfig"],
        with_arg: "",
        long_with_arg: &["--level"],
        verb: Verb::Second,
        reads: &[],
        // `chkconfig NAME` only tests whether it is enabled.
        bare_reads: true,
        reading_flags: &["--list", "-l", "--help"],
        changing_flags: &["--add", "--del", "--override"],
    },
    Manager {
        programs: &["rc-update"],
        with_arg: "",
        long_with_arg: &[],
        verb: Verb::First,
        reads: &["show"],
        bare_reads: true,
        changing_flags: &[],
        reading_flags: &["-h", "--help"],
    },
    Manager {
        programs: &["launchctl"],
        with_arg: "",
        long_with_arg: &[],
        verb: Verb::First,
        reads: &[
            "list",
            "print",
            "print-cache",
            "print-disabled",
            "blame",
            "dumpstate",
            "dumpjpcategory",
            "help",
            "version",
            "procinfo",
            "hostinfo",
            "resolveport",
            "managerpid",
            "manageruid",
            "managername",
            "error",
            "variant",
            "getenv",
        ],
        bare_reads: true,
        changing_flags: &[],
        reading_flags: &[],
    },
    Manager {
        programs: &["sv"],
        with_arg: "w",
        long_with_arg: &[],
        verb: Verb::First,
        reads: &["status", "s", "check", "c"],
        bare_reads: true,
        changing_flags: &[],
        reading_flags: &[],
    },
    Manager {
        programs: &["initctl"],
        with_arg: "",
        long_with_arg: &[],
        verb: Verb::First,
        reads: &[
            "status",
            "list",
            "show-config",
            "check-config",
            "version",
            "usage",
        ],
        bare_reads: true,
        changing_flags: &[],
        reading_flags: &["--help", "--version"],
    },
    Manager {
        programs: &["start", "stop", "restart", "reload", "s6-svc"],
        with_arg: "",
        long_with_arg: &[],
        verb: Verb::Program,
        reads: &[],
        bare_reads: false,
        changing_flags: &[],
        reading_flags: &["--help"],
    },
    Manager {
        programs: &["supervisorctl"],
        with_arg: "csurp",
        long_with_arg: &[
            "--configuration",
            "--serverurl",
            "--username",
            "--password",
            "--history-file",
        ],
        verb: Verb::First,
        reads: &[
            "status", "avail", "tail", "maintail", "pid", "version", "help", "fg",
        ],
        // Without a verb it is an interactive prompt.
        bare_reads: true,
        changing_flags: &[],
        reading_flags: &["-h", "--help"],
    },
    Manager {
        programs: &["loginctl"],
        with_arg: "HMpPn",
        long_with_arg: &[
            "--host",
            "--machine",
            "--property",
            "--lines",
            "--output",
            "--signal",
        ],
        verb: Verb::First,
        reads: &[
            "list-sessions",
            "session-status",
            "show-session",
            "list-users",
            "user-status",
            "show-user",
            "list-seats",
            "seat-status",
            "show-seat",
        ],
        bare_reads: true,
        changing_flags: &[],
        reading_flags: &["-h", "--help", "--version"],
    },
];

impl Analyzer {
    /// The rule for service managers.
    pub(crate) fn services(&mut self, c: &Cmd<'_>) {
        let name = c.inv.name.as_str();
        let raw = c.raw();
        if let Some(verb) = brew_or_pm2(c) {
            self.add(
                Category::ServiceManipulation,
                raw,
                format!("{name} {verb}: changes a background service"),
            );
            return;
        }
        let Some(m) = MANAGERS.iter().find(|m| m.programs.contains(&name)) else {
            return;
        };
        let p = args::parse(c.args(), m.with_arg, m.long_with_arg);
        let given = |flags: &[&str]| {
            flags.iter().any(|f| match f.strip_prefix("--") {
                Some(_) => p.long(f),
                None => p.short(f.trim_start_matches('-')),
            })
        };
        if given(m.changing_flags) {
            self.add(
                Category::ServiceManipulation,
                raw,
                "adds or removes a system service",
            );
            return;
        }
        if given(m.reading_flags) {
            return;
        }
        let ops = p.texts();
        let verb = match m.verb {
            Verb::First => ops.first().copied(),
            Verb::Second => ops.get(1).copied(),
            Verb::Program => Some(name),
        };
        let Some(verb) = verb.map(str::to_ascii_lowercase) else {
            if !m.bare_reads {
                self.add(Category::ServiceManipulation, raw, "changes a system service");
            }
            return;
        };
        if m.reads.contains(&verb.as_str()) {
            return;
        }
        if name == "systemctl" && POWER.contains(&verb.as_str()) {
            self.add(
                Category::SystemPower,
                raw,
                "powers off, reboots or suspends the machine",
            );
            return;
        }
        // `systemctl log-level` without a value only shows it.
        if name == "systemctl" && matches!(verb.as_str(), "log-level" | "log-target") && ops.len() == 1 {
            return;
        }
        let what = if name == "loginctl" {
            "changes or ends user sessions and lingering services".to_string()
        } else {
            format!("{verb}: starts, stops, enables, disables or reconfigures a service")
        };
        self.add(Category::ServiceManipulation, raw, what);
    }
}

/// `brew services start NAME` and `pm2 startup` (a boot service): the
/// verb, when it changes a service.
fn brew_or_pm2(c: &Cmd<'_>) -> Option<String> {
    let ops: Vec<&str> = c
        .args()
        .iter()
        .map(|f| f.text.as_str())
        .filter(|t| !t.starts_with('-'))
        .collect();
    match (c.inv.name.as_str(), ops.as_slice()) {
        ("brew", ["services", verb, ..])
            if matches!(*verb, "start" | "stop" | "restart" | "run" | "kill" | "cleanup") =>
        {
            Some((*verb).to_string())
        }
        ("pm2", [verb, ..]) if matches!(*verb, "startup" | "unstartup") => Some((*verb).to_string()),
        _ => None,
    }
}
