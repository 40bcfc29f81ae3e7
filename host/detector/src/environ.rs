//! Environment variables that change what runs.
//!
//! Judged wherever a variable is set: before a command (`PATH=./b ls`),
//! on its own or with `export`/`declare` (then it holds for every later
//! command), and through `env`/`sudo` (`env LD_PRELOAD=x.so ls`).
//!
//! - Search paths (`PATH`, `LD_LIBRARY_PATH`, ...): a folder outside the
//!   system's installed locations (see [`paths::is_installed`]), the
//!   current folder (an empty entry) or a computed entry means the program
//!   or library that runs is no longer known → `opaque`. Installed
//!   locations (`/usr/local/go/bin`, `/opt/x/bin`) stay benign: they hold
//!   root-installed software, which an unmodified `PATH` may find anyway.
//! - Preloads and startup files (`LD_PRELOAD`, `BASH_ENV`, `ENV`,
//!   `NODE_OPTIONS=--require`, `PERL5OPT`, ...) run code from a file →
//!   `opaque` (a startup file this command wrote is analysed instead).
//! - Variables holding a command (`GIT_SSH_COMMAND`, `PAGER`, `EDITOR`,
//!   `LESSOPEN`, `PROMPT_COMMAND`, ...): a literal value is analysed as
//!   a shell command; a computed one is `opaque`.

use super::analyze::{Analyzer, Input};
use super::expand::{Field, INHERITED, UNKNOWN};
use super::paths;
use super::rules::names::SHELLS;
use crate::verdict::Category;

/// Variables whose value is a command line some program runs.
const COMMAND_VARS: &[&str] = &[
    "EDITOR",
    "VISUAL",
    "PAGER",
    "MANPAGER",
    "GIT_PAGER",
    "GIT_EDITOR",
    "GIT_SEQUENCE_EDITOR",
    "SUDO_EDITOR",
    "SYSTEMD_PAGER",
    "SYSTEMD_EDITOR",
    "FCEDIT",
    "GIT_SSH_COMMAND",
    "GIT_SSH",
    "GIT_ASKPASS",
    "SSH_ASKPASS",
    "SUDO_ASKPASS",
    "GIT_PROXY_COMMAND",
    "GIT_EXTERNAL_DIFF",
    "BROWSER",
    "RSYNC_RSH",
    "CVS_RSH",
    "LESSOPEN",
    "LESSCLOSE",
    "PROMPT_COMMAND",
];

/// Variables naming a file or folder of code that programs load.
const CODE_FILE_VARS: &[&str] = &[
    "BASH_ENV",
    "ENV",
    "GIT_EXEC_PATH",
    "GIT_TEMPLATE_DIR",
    "GIT_CONFIG_GLOBAL",
    "GIT_CONFIG_SYSTEM",
    "GIT_CONFIG",
    "ZDOTDIR",
];

impl Analyzer {
    /// Judges `name=value` set for the commands that follow.
    pub(crate) fn environment(&mut self, name: &str, value: &Field, raw: &str) {
        let v = value.text.as_str();
        match name {
            "PATH" => self.search_path(v, raw, "program search path", "which program runs"),
            "LD_LIBRARY_PATH"
            | "DYLD_LIBRARY_PATH"
            | "DYLD_FRAMEWORK_PATH"
            | "DYLD_FALLBACK_LIBRARY_PATH" => {
                self.search_path(v, raw, "library search path", "which libraries programs load");
            }
            "LD_PRELOAD" | "LD_AUDIT" | "DYLD_INSERT_LIBRARIES" => {
                let injected = v
                    .split([':', ' '])
                    .any(|e| !e.is_empty() && e != INHERITED.to_string());
                if injected {
                    self.add(
                        Category::CodeExecution,
                        raw,
                        "injects a library into every program started",
                    );
                    self.add(
                        Category::Opaque,
                        raw,
                        format!(
                            "{name} loads a library into every program started; what it does cannot be seen"
                        ),
                    );
                }
            }
            n if CODE_FILE_VARS.contains(&n) => self.code_file_var(n, value, raw),
            n if COMMAND_VARS.contains(&n) => self.command_var(n, value, raw),
            "PS0" | "PS1" | "PS2" | "PS4" if v.contains("$(") || v.contains('`') => {
                self.payload(&format!(": {v}"), Input::None);
            }
            "SHELL" => {
                let p = paths::normalize(v, None);
                let base = p.rsplit('/').next().unwrap_or_default();
                let standard = SHELLS.contains(&base) && (!p.contains('/') || paths::is_installed(&p));
                if !v.is_empty() && !standard {
                    self.opaque_env(name, v, raw, "programs that start a shell run it instead");
                }
            }
            "GIT_CONFIG_PARAMETERS" | "GIT_CONFIG_COUNT" => {
                self.opaque_env(
                    name,
                    v,
                    raw,
                    "git reads configuration (pagers, hooks, aliases) from it",
                );
            }
            "NODE_OPTIONS"
                if has_any(
                    v,
                    &["--require", "-r", "--import", "--loader", "--experimental-loader"],
                ) =>
            {
                self.opaque_env(name, v, raw, "node loads the named module before every script");
            }
            "PERL5OPT" | "RUBYOPT" if !v.trim().is_empty() => {
                self.opaque_env(
                    name,
                    v,
                    raw,
                    "the interpreter loads modules or code given there first",
                );
            }
            "JAVA_TOOL_OPTIONS" | "_JAVA_OPTIONS" | "JDK_JAVA_OPTIONS"
                if has_any(v, &["-javaagent", "-agentpath", "-agentlib"]) =>
            {
                self.opaque_env(name, v, raw, "the JVM loads an agent into every Java program");
            }
            "TAR_OPTIONS"
                if has_any(
                    v,
                    &[
                        "--to-command",
                        "--checkpoint-action",
                        "--use-compress-program",
                        "-I",
                        "--info-script",
                        "--new-volume-script",
                        "--rsh-command",
                    ],
                ) =>
            {
                self.opaque_env(name, v, raw, "tar runs a command given there");
            }
            n if n.starts_with("BASH_FUNC_") => {
                let body = v.trim_start().trim_start_matches("()");
                self.payload(body, Input::None);
            }
            _ => {}
        }
    }

    fn opaque_env(&mut self, name: &str, value: &str, raw: &str, why: &str) {
        let shown = value.replace([UNKNOWN, INHERITED], "…");
        self.add(
            Category::Opaque,
            raw,
            format!("{name}={shown}: {why}, which the detector cannot see"),
        );
    }

    /// A search path: every entry must be inherited or an installed
    /// location.
    fn search_path(&mut self, v: &str, raw: &str, what: &str, consequence: &str) {
        let inherited = INHERITED.to_string();
        for entry in v.split(':') {
            if entry == inherited {
                continue;
            }
            let why = if entry.is_empty() {
                Some("the current folder".to_string())
            } else if entry.contains(UNKNOWN) || entry.contains(INHERITED) {
                Some("a folder computed at run time".to_string())
            } else {
                let p = paths::normalize(entry, self.scope.cwd.as_deref());
                (!paths::is_installed(&p)).then(|| format!("`{entry}`"))
            };
            if let Some(why) = why {
                self.add(
                    Category::Opaque,
                    raw,
                    format!("the {what} includes {why}, so {consequence} cannot be known"),
                );
                return;
            }
        }
    }

    /// A variable naming a file of code (a shell startup file, git's
    /// program or template folder).
    fn code_file_var(&mut self, name: &str, value: &Field, raw: &str) {
        let v = value.text.as_str();
        if v.is_empty() || v == "/dev/null" {
            return;
        }
        if matches!(name, "BASH_ENV" | "ENV") && self.file_data(value).is_some() {
            self.run_file(value, super::rules::shell::Sink::Shell, raw, &[]);
            return;
        }
        let p = paths::normalize(v, self.scope.cwd.as_deref());
        if name == "GIT_EXEC_PATH" && paths::is_installed(&p) {
            return;
        }
        self.opaque_env(name, v, raw, "programs started load code from there");
    }

    /// A variable holding a command line.
    fn command_var(&mut self, name: &str, value: &Field, raw: &str) {
        let v = value.text.as_str();
        if v.trim().is_empty() {
            return;
        }
        if v.contains(UNKNOWN) || v.contains(INHERITED) {
            self.add(
                Category::DynamicCommand,
                raw,
                format!("{name} holds a command computed at run time"),
            );
            return;
        }
        let mut cmd = v.trim_start();
        if matches!(name, "LESSOPEN" | "LESSCLOSE") {
            cmd = cmd.trim_start_matches('|').trim_start_matches('-');
        }
        let cmd = cmd.replace("%s", "FILE");
        self.payload(&cmd, Input::None);
    }
}

/// Whether `text` has one of `words` as a whole option word (`-r`,
/// `--require=x`).
fn has_any(text: &str, words: &[&str]) -> bool {
    text.split_whitespace().any(|t| {
        words.iter().any(|w| {
            t == *w
                || t.strip_prefix(w).is_some_and(|r| {
                    r.starts_with(['=', ':']) || w.starts_with("--") || w.len() == 2 && !r.is_empty()
                })
        })
    })
}
