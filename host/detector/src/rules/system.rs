//! System administration: power, processes, firewall and
//! network, accounts, logs and history, scheduled jobs, packages, kernel.

use super::shell::Sink;
use super::{Cmd, args};
use crate::analyze::Analyzer;
use crate::verdict::Category;

fn sub_is(sub: Option<&str>, words: &[&str]) -> bool {
    sub.is_some_and(|s| words.iter().any(|w| s.eq_ignore_ascii_case(w)))
}

impl Analyzer {
    /// Rules for system administration programs.
    pub(crate) fn system(&mut self, c: &Cmd<'_>) {
        let name = c.inv.name.as_str();
        let raw = c.raw();
        let a = c.args();
        let p = args::parse(
            a,
            "HMtsponl",
            &[
                "--host",
                "--machine",
                "--type",
                "--signal",
                "--property",
                "--lines",
                "--output",
                "--root",
            ],
        );
        let ops = p.texts();
        let sub = ops.first().copied();
        let second = ops.get(1).copied();
        match name {
            "shutdown" | "reboot" | "halt" | "poweroff" | "kexec" | "systemd-shutdown" => {
                self.add(Category::SystemPower, raw, "shuts down or restarts the machine");
            }
            "init" | "telinit" if sub_is(sub, &["0", "1", "6", "s", "single"]) => {
                self.add(
                    Category::SystemPower,
                    raw,
                    "changes the runlevel (halt, reboot or single-user)",
                );
            }
            "kill" => self.kill(c),
            "pkill" | "killall" | "killall5" | "skill" | "slay" | "xkill" | "pkill.exe" | "taskkill" => {
                self.add(
                    Category::ProcessKill,
                    raw,
                    "kills processes matched by name or pattern",
                );
            }
            "iptables" | "ip6tables" | "iptables-legacy" | "iptables-nft" | "ebtables" | "arptables"
                if (p.short("FXPD") || p.long("--flush") || p.long("--delete") || p.long("--policy")) =>
            {
                self.add(
                    Category::NetworkConfig,
                    raw,
                    "flushes, deletes or opens firewall rules",
                );
            }
            "iptables-restore" | "ip6tables-restore" | "nft" | "pfctl" | "ufw" | "firewall-cmd" => {
                let lower: Vec<String> = a.iter().map(|f| f.text.to_lowercase()).collect();
                let bad = match name {
                    "nft" => lower.iter().any(|t| t == "flush" || t == "delete"),
                    "pfctl" => p.short("dF"),
                    "ufw" => {
                        sub_is(sub, &["disable", "reset", "delete"])
                            || (sub_is(sub, &["default"]) && sub_is(second, &["allow"]))
                    }
                    "firewall-cmd" => lower.iter().any(|t| {
                        t.starts_with("--remove") || t.starts_with("--panic-on") || t.contains("trusted")
                    }),
                    _ => true,
                };
                if bad {
                    self.add(Category::NetworkConfig, raw, "disables or rewrites the firewall");
                }
            }
            "ip" => {
                let lower: Vec<String> = ops.iter().map(|t| t.to_lowercase()).collect();
                let down = lower.iter().any(|t| t == "down");
                let removes = lower
                    .get(1)
                    .is_some_and(|t| matches!(t.as_str(), "del" | "delete" | "flush"));
                if down || removes {
                    self.add(
                        Category::NetworkConfig,
                        raw,
                        "takes down an interface or removes addresses or routes",
                    );
                }
            }
            "ifconfig" | "ifdown" | "route" | "nmcli" => {
                let lower: Vec<String> = ops.iter().map(|t| t.to_lowercase()).collect();
                let bad = name == "ifdown"
                    || lower.iter().any(|t| {
                        matches!(
                            t.as_str(),
                            "down" | "del" | "delete" | "off" | "disconnect" | "flush"
                        )
                    });
                if bad {
                    self.add(Category::NetworkConfig, raw, "takes down networking");
                }
            }
            "useradd" | "userdel" | "usermod" | "adduser" | "deluser" | "groupdel" | "groupmod"
            | "passwd" | "chpasswd" | "chsh" | "chage" | "vipw" | "gpasswd" | "delgroup" | "dscl" => {
                let groups = [
                    "sudo", "wheel", "root", "admin", "docker", "adm", "disk", "shadow",
                ];
                let privileged = a.iter().any(|f| f.text.split(',').any(|g| groups.contains(&g)));
                if privileged && (p.short("G") || p.short("a") || name == "gpasswd" || name == "adduser") {
                    self.add(
                        Category::PrivilegeEscalation,
                        raw,
                        "adds a user to a privileged group",
                    );
                }
                self.add(
                    Category::AccountChange,
                    raw,
                    "creates, deletes or changes user accounts or passwords",
                );
            }
            "visudo" => self.add(Category::PrivilegeEscalation, raw, "edits the sudo rules"),
            "history" if p.short("cdw") && !p.short("r") => {
                self.add(
                    Category::LogTampering,
                    raw,
                    "clears or rewrites the shell history",
                );
            }
            "journalctl" if (p.long("--vacuum") || p.long("--rotate")) => {
                self.add(Category::LogTampering, raw, "deletes system journal entries");
            }
            "auditctl" | "dmesg" | "wevtutil" => {
                let clears = match name {
                    "auditctl" => p.short("D") || ops.contains(&"0"),
                    "dmesg" => p.short("cC") || p.long("--clear") || p.long("--read-clear"),
                    _ => sub_is(sub, &["cl", "clear-log"]),
                };
                if clears {
                    self.add(Category::LogTampering, raw, "clears or disables system logs");
                }
            }
            "crontab" => {
                if p.short("r") {
                    self.add(Category::ScheduledJobs, raw, "removes every cron job");
                } else if !p.short("le") && (sub.is_some() || c.stdin_payload().is_some()) {
                    self.add(Category::ScheduledJobs, raw, "replaces the cron table");
                }
            }
            "at" | "batch" if !p.short("lrdc") => match c.stdin_payload() {
                Some(pl) => {
                    let pl = pl.clone();
                    self.run_code(&pl, Sink::Shell, c, "scheduled with at");
                }
                None => self.add(Category::ScheduledJobs, raw, "schedules commands to run later"),
            },
            "apt" | "apt-get" | "aptitude" | "yum" | "dnf" | "microdnf" | "zypper" | "apk" | "snap"
            | "flatpak" | "brew" | "port" | "pkg"
                if sub_is(
                    sub,
                    &[
                        "remove",
                        "purge",
                        "autoremove",
                        "autopurge",
                        "erase",
                        "rm",
                        "del",
                        "uninstall",
                        "delete",
                    ],
                ) =>
            {
                self.add(Category::PackageRemoval, raw, "removes system packages");
            }
            "dpkg" | "rpm" | "pacman" => {
                let removes = match name {
                    "dpkg" => p.short("rP") || p.long("--remove") || p.long("--purge"),
                    "rpm" => p.short("e") || p.long("--erase"),
                    _ => a.first().is_some_and(|f| f.text.starts_with("-R")) || p.long("--remove"),
                };
                if removes {
                    self.add(Category::PackageRemoval, raw, "removes system packages");
                }
            }
            "rmmod" | "insmod" | "modprobe" | "sysctl" | "kextunload" | "kextload" => {
                let changes = match name {
                    "sysctl" => p.short("wp") || ops.iter().any(|t| t.contains('=')),
                    _ => true,
                };
                if changes {
                    self.add(
                        Category::SystemConfigOverwrite,
                        raw,
                        "changes kernel modules or parameters",
                    );
                }
            }
            _ => {}
        }
    }

    fn kill(&mut self, c: &Cmd<'_>) {
        let a = c.args();
        let texts: Vec<&str> = a.iter().map(|f| f.text.as_str()).collect();
        if texts
            .first()
            .is_some_and(|t| matches!(*t, "-l" | "-L" | "--list" | "--table"))
        {
            return;
        }
        let mut signal = None;
        let mut targets = Vec::new();
        let mut i = 0;
        while let Some(t) = texts.get(i) {
            i += 1;
            if signal.is_none() && targets.is_empty() {
                if matches!(*t, "-s" | "-n" | "--signal") {
                    signal = texts.get(i).copied();
                    i += 1;
                    continue;
                }
                if let Some(s) = t.strip_prefix('-').filter(|s| !s.is_empty() && *s != "-") {
                    signal = Some(s);
                    continue;
                }
            }
            if *t != "--" {
                targets.push(*t);
            }
        }
        let sig = signal.map(|s| s.to_ascii_uppercase());
        let sigkill = sig
            .as_deref()
            .is_some_and(|s| matches!(s, "9" | "KILL" | "SIGKILL"));
        let broad = texts.contains(&"-1")
            || targets
                .iter()
                .any(|t| matches!(*t, "1" | "0") || t.starts_with('-'));
        if sigkill {
            self.add(Category::ProcessKill, c.raw(), "force-kills processes (SIGKILL)");
        }
        if broad {
            self.add(
                Category::ProcessKill,
                c.raw(),
                "signals every process, init or a whole process group",
            );
        }
    }
}
