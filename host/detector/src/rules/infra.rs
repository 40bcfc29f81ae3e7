//! Version control and infrastructure: git, containers, clusters,
//! infrastructure-as-code and cloud command-line tools.

use super::{Cmd, args};
use crate::analyze::Analyzer;
use crate::expand::Field;
use crate::paths::system_write_reason;
use crate::resolve::Via;
use crate::verdict::Category;

impl Analyzer {
    /// Rules for version control and infrastructure tools.
    pub(crate) fn infra(&mut self, c: &Cmd<'_>) {
        match c.inv.name.as_str() {
            "git" => self.git(c),
            "docker" | "podman" | "nerdctl" | "docker-compose" => self.docker(c),
            "kubectl" | "oc" | "k3s" | "microk8s.kubectl" => self.kubectl(c),
            _ => self.cloud(c),
        }
    }

    fn git(&mut self, c: &Cmd<'_>) {
        let a = c.args();
        let mut configs = Vec::new();
        let mut i = 0;
        while let Some(f) = a.get(i) {
            let t = f.text.as_str();
            if t == "-c" {
                configs.extend(a.get(i + 1).map(|v| v.text.clone()));
                i += 2;
            } else if matches!(
                t,
                "-C" | "--git-dir" | "--work-tree" | "--namespace" | "--config-env"
            ) {
                i += 2;
            } else if t.starts_with('-') {
                i += 1;
            } else {
                break;
            }
        }
        let Some(sub) = a.get(i).map(|f| f.text.as_str()) else {
            return;
        };
        let rest = a.get(i + 1..).unwrap_or_default();
        self.git_remote_rules(sub, rest, &configs, c.raw());
        let p = args::parse(rest, "mCcF", &["--message", "--file"]);
        let raw = c.raw();
        let ops = p.texts();
        let reason = match sub {
            "reset" if p.long("--hard") || p.long("--merge") => {
                Some("discards uncommitted changes (reset --hard)")
            }
            "clean" if (p.short("f") || p.long("--force")) && !(p.short("n") || p.long("--dry-run")) => {
                Some("deletes untracked files")
            }
            "push"
                if p.short("fd")
                    || p.long("--force")
                    || p.long("--mirror")
                    || p.long("--delete")
                    || p.long("--prune")
                    || ops
                        .iter()
                        .skip(1)
                        .any(|r| r.starts_with('+') || r.starts_with(':')) =>
            {
                Some("overwrites or deletes remote history or branches")
            }
            "checkout"
                if p.short("f")
                    || p.long("--force")
                    || rest.iter().any(|f| f.text == "--")
                    || ops.contains(&".") =>
            {
                Some("discards local changes to files")
            }
            "restore" if !(p.short("S") || p.long("--staged")) || p.short("W") || p.long("--worktree") => {
                Some("discards local changes to files")
            }
            "switch" if p.long("--discard-changes") || p.short("f") || p.long("--force") => {
                Some("discards local changes")
            }
            "branch"
                if p.short("DMC")
                    || ((p.short("d") || p.long("--delete")) && (p.short("f") || p.long("--force"))) =>
            {
                Some("force-deletes or overwrites a branch")
            }
            "stash" if ops.first().is_some_and(|o| matches!(*o, "clear" | "drop")) => {
                Some("deletes stashed changes")
            }
            "filter-branch" | "filter-repo" => Some("rewrites the repository history"),
            "reflog" if ops.first().is_some_and(|o| matches!(*o, "expire" | "delete")) => {
                Some("deletes reflog entries")
            }
            "gc" if p.values_of(&["--prune"]).any(|v| v == "now" || v == "all") => {
                Some("prunes unreachable commits now")
            }
            "update-ref" if p.short("d") => Some("deletes a reference"),
            _ => None,
        };
        if let Some(r) = reason {
            self.add(Category::GitDestructive, raw, r);
        }
    }

    fn docker(&mut self, c: &Cmd<'_>) {
        let a = c.args();
        let compose = c.inv.name == "docker-compose";
        let p = args::parse(a, "Hcl", &["--host", "--context", "--config", "--log-level"]);
        let ops = p.texts();
        let (sub, sub2) = if compose {
            (Some("compose"), ops.first().copied())
        } else {
            (ops.first().copied(), ops.get(1).copied())
        };
        let raw = c.raw();
        let sub_pos = a
            .iter()
            .position(|f| Some(f.text.as_str()) == sub)
            .map_or(0, |i| i + 1);
        let rest = a.get(sub_pos..).unwrap_or_default();
        let sp = args::parse(
            rest,
            "euwvpnl",
            &[
                "--env",
                "--user",
                "--workdir",
                "--volume",
                "--name",
                "--network",
                "--mount",
                "--env-file",
                "--detach-keys",
                "--device",
                "--pid",
                "--cap-add",
            ],
        );
        match sub {
            Some(s) if sub2 == Some("prune") || s == "prune" => {
                self.add(
                    Category::InfrastructureDestroy,
                    raw,
                    "deletes containers, images, volumes or networks",
                );
            }
            Some("volume") if matches!(sub2, Some("rm" | "remove")) => {
                self.add(Category::InfrastructureDestroy, raw, "deletes container volumes");
            }
            Some("rm" | "rmi") if sp.short("fv") || sp.long("--force") || sp.long("--volumes") => {
                self.add(
                    Category::InfrastructureDestroy,
                    raw,
                    "force-removes containers or images",
                );
            }
            Some("compose")
                if sub2 == Some("down") && (sp.short("v") || sp.long("--volumes") || sp.long("--rmi")) =>
            {
                self.add(
                    Category::InfrastructureDestroy,
                    raw,
                    "removes compose volumes or images",
                );
            }
            Some("run" | "create") => {
                let mounts = sp.values_of(&["v", "--volume", "--mount"]).any(|v| {
                    let src = v
                        .split(':')
                        .next()
                        .unwrap_or_default()
                        .trim_start_matches("type=bind,source=");
                    src == "/" || system_write_reason(src).is_some() || src == "/var/run/docker.sock"
                });
                let host = sp.long("--privileged")
                    || sp.values_of(&["--pid", "--cap-add", "--device"]).any(|v| {
                        v == "host"
                            || v.eq_ignore_ascii_case("all")
                            || v.eq_ignore_ascii_case("sys_admin")
                            || v.starts_with("/dev/sd")
                    });
                if mounts || host {
                    self.add(
                        Category::PrivilegeEscalation,
                        raw,
                        "gives a container control over the host",
                    );
                }
            }
            Some("exec") => {
                let mut i = 0;
                while let Some(f) = rest.get(i) {
                    let t = f.text.as_str();
                    if matches!(
                        t,
                        "-e" | "-u"
                            | "-w"
                            | "--env"
                            | "--user"
                            | "--workdir"
                            | "--env-file"
                            | "--detach-keys"
                    ) {
                        i += 2;
                    } else if t.starts_with('-') {
                        i += 1;
                    } else {
                        break;
                    }
                }
                let inner: Vec<Field> = rest.get(i + 1..).unwrap_or_default().to_vec();
                self.judge_fields(inner, Via::Direct, c);
            }
            _ => {}
        }
    }

    fn kubectl(&mut self, c: &Cmd<'_>) {
        let a = c.args();
        let p = args::parse(
            a,
            "nsl",
            &[
                "--namespace",
                "--context",
                "--cluster",
                "--kubeconfig",
                "--server",
                "--user",
                "--selector",
            ],
        );
        let sub = p.operands.first().map(|f| f.text.as_str());
        let raw = c.raw();
        match sub {
            Some("delete" | "drain") => self.add(
                Category::InfrastructureDestroy,
                raw,
                "deletes or drains cluster resources",
            ),
            Some("scale") if p.values_of(&["--replicas"]).any(|v| v == "0") => {
                self.add(Category::InfrastructureDestroy, raw, "scales a workload to zero");
            }
            Some("replace") if p.long("--force") => self.add(
                Category::InfrastructureDestroy,
                raw,
                "force-replaces cluster resources",
            ),
            Some("exec") => {
                if let Some(pos) = a.iter().position(|f| f.text == "--") {
                    let inner = a.get(pos + 1..).unwrap_or_default().to_vec();
                    self.judge_fields(inner, Via::Direct, c);
                }
            }
            _ => {}
        }
    }

    fn cloud(&mut self, c: &Cmd<'_>) {
        let name = c.inv.name.as_str();
        let p = args::parse(
            c.args(),
            "",
            &[
                "--profile",
                "--region",
                "--project",
                "--output",
                "--resource-group",
            ],
        );
        let ops: Vec<String> = p.texts().iter().map(|t| t.to_lowercase()).collect();
        let first = ops.first().map(String::as_str);
        let second = ops.get(1).map(String::as_str);
        let raw = c.raw();
        let destroys = match name {
            "helm" => matches!(first, Some("uninstall" | "delete" | "del" | "un")),
            "terraform" | "tofu" | "terragrunt" | "opentofu" => {
                matches!(first, Some("destroy"))
                    || (first == Some("apply")
                        && c.args()
                            .iter()
                            .any(|f| f.text == "-destroy" || f.text == "--destroy"))
                    || (matches!(first, Some("state")) && matches!(second, Some("rm")))
                    || (matches!(first, Some("workspace")) && matches!(second, Some("delete")))
            }
            "pulumi" => matches!(first, Some("destroy")) || (first == Some("stack") && second == Some("rm")),
            "aws" => match (first, second) {
                (Some("s3"), Some("rm")) => p.long("--recursive"),
                (Some("s3"), Some("rb")) => true,
                (Some("s3"), Some("sync")) => p.long("--delete"),
                (_, Some(op)) => [
                    "delete-",
                    "terminate-",
                    "remove-",
                    "deregister-",
                    "purge-",
                    "destroy-",
                ]
                .iter()
                .any(|x| op.starts_with(x)),
                _ => false,
            },
            "gsutil" => matches!(first, Some("rb")) || (first == Some("rm") && p.short("ra")),
            "rclone" => {
                matches!(first, Some("purge" | "delete" | "deletefile" | "rmdirs")) || (first == Some("sync"))
            }
            "s3cmd" => {
                matches!(first, Some("rb" | "del" | "rm"))
                    && (p.short("r") || p.long("--recursive") || first == Some("rb"))
            }
            _ => false,
        };
        if destroys {
            self.add(
                Category::InfrastructureDestroy,
                raw,
                "deletes cloud or cluster infrastructure or data",
            );
        }
    }
}
