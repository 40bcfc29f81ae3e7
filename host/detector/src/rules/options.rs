//! Programs that run a command given as an option or configuration value:
//! `tar --to-command`/`--checkpoint-action=exec=`/`-I`, `zip -TT`,
//! `git -c core.pager=...`/`alias.x=!...`/`git config`, `ext::` remotes,
//! `ssh -o ProxyCommand=`, `scp -S`, `rsync -e`/`--rsync-path`,
//! `tcpdump -z`, `man -P`, `strace -o '|cmd'`, `make SHELL=`/`--eval`,
//! `hyperfine`, `nodemon --exec`, `sort --compress-program`, `split
//! --filter`.
//!
//! A literal value is analysed as the shell command it is; a computed one
//! is `dynamic_command`; a file of such commands (`git -c
//! core.hooksPath=d`, `ssh -F f`, `tar --info-script=f`) is `opaque`.

use super::Cmd;
use super::shell::Sink;
use crate::analyze::{Analyzer, Input};
use crate::expand::{Field, INHERITED, UNKNOWN};
use crate::paths;
use crate::verdict::Category;

/// Make variables that name programs its recipes run.
const MAKE_PROGRAMS: &[&str] = &[
    "CC", "CXX", "CPP", "LD", "AR", "AS", "RM", "MAKE", "INSTALL", "LEX", "YACC", "FC", "PERL", "PYTHON",
    "RUSTC", "CARGO", "GO", "NM", "STRIP", "OBJCOPY",
];

impl Analyzer {
    /// Judges a command given in an option of another program.
    pub(crate) fn option_command(&mut self, value: &str, matched: &str, what: &str) {
        if value.trim().is_empty() {
            return;
        }
        if value.contains(UNKNOWN) || value.contains(INHERITED) {
            self.add(
                Category::DynamicCommand,
                matched,
                format!("runs a command given to {what} that is computed at run time"),
            );
            return;
        }
        self.payload(value, Input::None);
    }

    /// Judges a file of commands named by an option (`ssh -F`,
    /// `tar --info-script`): what this command wrote there, or opaque.
    pub(crate) fn option_file(&mut self, file: &str, matched: &str) {
        if file.is_empty() || file == "/dev/null" || file == "none" {
            return;
        }
        self.run_file(&Field::lit(file), Sink::Shell, matched, &[]);
    }

    /// The rules for programs with command-valued options.
    pub(crate) fn options(&mut self, c: &Cmd<'_>) {
        let raw = c.raw();
        let a: Vec<String> = c.args().iter().map(|f| f.text.clone()).collect();
        match c.inv.name.as_str() {
            "tar" | "gtar" | "bsdtar" => self.tar(&a, raw),
            "zip" => {
                for (_, v) in valued(&a, &["-TT", "--unzip-command"]) {
                    self.option_command(&v, raw, "zip -TT");
                }
            }
            "git" => self.git_options(&a, raw),
            "sort" => {
                for (_, v) in valued(&a, &["--compress-program"]) {
                    self.option_command(&v, raw, "sort --compress-program");
                }
            }
            "split" => {
                for (_, v) in valued(&a, &["--filter"]) {
                    self.option_command(&v, raw, "split --filter");
                }
            }
            "scp" | "sftp" => self.ssh_options(&a, raw, &["-o", "-F", "-S", "-D"]),
            "sshfs" | "autossh" => self.ssh_options(&a, raw, &["-o", "-F"]),
            "rsync" => {
                for (_, v) in valued(&a, &["-e", "--rsh", "--rsync-path"]) {
                    self.option_command(&v, raw, "rsync");
                }
            }
            "tcpdump" => {
                for (_, v) in valued(&a, &["-z"]) {
                    self.option_command(&format!("{v} FILE"), raw, "tcpdump -z");
                }
            }
            "man" => {
                for (_, v) in valued(&a, &["-P", "--pager", "-H", "--html"]) {
                    self.option_command(&v, raw, "man");
                }
            }
            "make" | "gmake" | "bmake" => self.make(c, &a, raw),
            "hyperfine" => {
                let with_arg = [
                    "-w",
                    "--warmup",
                    "-m",
                    "--min-runs",
                    "-M",
                    "--max-runs",
                    "-r",
                    "--runs",
                    "-S",
                    "--shell",
                    "-n",
                    "--command-name",
                    "-u",
                    "--time-unit",
                    "--style",
                    "--output",
                    "-D",
                ];
                let cmds = ["-s", "--setup", "-p", "--prepare", "-c", "--cleanup"];
                let mut i = 0;
                while let Some(t) = a.get(i) {
                    let t = t.as_str();
                    i += 1;
                    if cmds.contains(&t) {
                        let v = a.get(i).cloned().unwrap_or_default();
                        self.option_command(&v, raw, "hyperfine");
                        i += 1;
                    } else if with_arg.contains(&t) || t.starts_with("--export-") && !t.contains('=') {
                        i += 1;
                    } else if matches!(t, "-L" | "--parameter-list") {
                        i += 2;
                    } else if matches!(t, "-P" | "--parameter-scan") {
                        i += 3;
                    } else if !t.starts_with('-') {
                        self.option_command(t, raw, "hyperfine");
                    }
                }
            }
            "nodemon" | "watchexec" => {
                for (_, v) in valued(&a, &["-x", "--exec", "--shell-command"]) {
                    self.option_command(&v, raw, "a file watcher");
                }
            }
            _ => {}
        }
    }

    /// Options of wrappers that the resolution peels off (`ssh`,
    /// `strace`): they are judged even when no command follows.
    pub(crate) fn wrapper_options(&mut self, name: &str, args: &[Field], raw: &str) {
        let a: Vec<String> = args.iter().map(|f| f.text.clone()).collect();
        match name {
            "ssh" => self.ssh_options(&a, raw, &["-o", "-F"]),
            "strace" | "ltrace" => {
                for (_, v) in valued(&a, &["-o", "--output"]) {
                    if let Some(cmd) = v.strip_prefix(['|', '!']) {
                        self.option_command(cmd, raw, "strace -o");
                    }
                }
            }
            _ => {}
        }
    }

    fn tar(&mut self, a: &[String], raw: &str) {
        for (k, v) in valued(
            a,
            &[
                "--to-command",
                "--checkpoint-action",
                "--use-compress-program",
                "-I",
                "--rsh-command",
                "--rmt-command",
                "--info-script",
                "--new-volume-script",
                "-F",
            ],
        ) {
            match k.as_str() {
                "--checkpoint-action" => {
                    if let Some(cmd) = v.strip_prefix("exec=") {
                        self.option_command(cmd, raw, "tar --checkpoint-action");
                    }
                }
                "--info-script" | "--new-volume-script" | "-F" => self.option_file(&v, raw),
                _ => self.option_command(&v, raw, "tar"),
            }
        }
    }

    fn ssh_options(&mut self, a: &[String], raw: &str, keys: &[&str]) {
        for (k, v) in valued(a, keys) {
            match k.as_str() {
                "-o" if v.split(['=', ' ']).next().is_some_and(|k| k.contains(UNKNOWN)) => {
                    self.option_command(&v, raw, "ssh -o (a computed option)");
                }
                "-o" => {
                    let (key, value) = v
                        .split_once(['=', ' ', '\t'])
                        .map(|(k, v)| (k.trim().to_lowercase(), v.trim()))
                        .unwrap_or_default();
                    let runs = matches!(
                        key.as_str(),
                        "proxycommand"
                            | "localcommand"
                            | "knownhostscommand"
                            | "remotecommand"
                            | "ssh_command"
                    );
                    if runs && !value.eq_ignore_ascii_case("none") {
                        let cmd = expand_percent(value);
                        self.option_command(&cmd, raw, "an ssh option");
                    }
                }
                "-F" => self.option_file(&v, raw),
                _ => self.option_command(&v, raw, "the ssh program option"),
            }
        }
    }

    fn git_options(&mut self, a: &[String], raw: &str) {
        let mut i = 0;
        while let Some(t) = a.get(i) {
            match t.as_str() {
                "-c" => {
                    let kv = a.get(i + 1).cloned().unwrap_or_default();
                    let (k, v) = kv.split_once('=').unwrap_or((kv.as_str(), "true"));
                    if k.contains([UNKNOWN, INHERITED]) {
                        self.option_command(k, raw, "git -c (a computed setting)");
                    } else {
                        self.git_config(k, v, raw);
                    }
                    i += 2;
                }
                "-C" | "--git-dir" | "--work-tree" | "--namespace" | "--config-env" => i += 2,
                t if t.starts_with("--exec-path=") => {
                    let dir = t.trim_start_matches("--exec-path=");
                    if !paths::is_installed(&paths::normalize(dir, self.scope.cwd.as_deref())) {
                        self.option_file(dir, raw);
                    }
                    i += 1;
                }
                t if t.starts_with('-') => i += 1,
                _ => break,
            }
        }
        let Some(sub) = a.get(i) else { return };
        let rest = a.get(i + 1..).unwrap_or_default();
        match sub.as_str() {
            "config" => {
                let reads = [
                    "--get",
                    "--get-all",
                    "--get-regexp",
                    "--list",
                    "-l",
                    "--unset",
                    "--unset-all",
                    "--remove-section",
                    "--rename-section",
                    "-e",
                    "--edit",
                    "--get-color",
                    "--get-colorbool",
                    "--get-urlmatch",
                    "get",
                    "list",
                    "unset",
                    "remove-section",
                    "rename-section",
                    "edit",
                ];
                if rest.iter().any(|r| reads.contains(&r.as_str())) {
                    return;
                }
                let with_arg = ["-f", "--file", "--blob", "--type", "--default", "--comment"];
                let mut ops = Vec::new();
                let mut j = 0;
                while let Some(r) = rest.get(j) {
                    j += 1;
                    if with_arg.contains(&r.as_str()) {
                        j += 1;
                    } else if !r.starts_with('-') && r != "set" {
                        ops.push(r.clone());
                    }
                }
                if let [k, v, ..] = ops.as_slice() {
                    self.git_config(k, v, raw);
                }
            }
            "clone" | "fetch" | "pull" | "push" | "ls-remote" | "archive" | "remote" | "submodule" => {
                for r in rest {
                    if let Some(cmd) = r.strip_prefix("ext::") {
                        self.option_command(&ext_command(cmd), raw, "a git ext:: remote");
                    }
                }
                for (_, v) in valued(rest, &["-u", "--upload-pack", "--receive-pack", "--exec"]) {
                    self.option_command(&v, raw, "git");
                }
            }
            _ => {}
        }
    }

    /// One git configuration value set for this command or stored.
    pub(crate) fn git_config(&mut self, key: &str, value: &str, raw: &str) {
        let k = key.to_lowercase();
        let boolean = matches!(
            value.to_lowercase().as_str(),
            "" | "true" | "false" | "yes" | "no" | "on" | "off" | "1" | "0"
        );
        let last = k.rsplit('.').next().unwrap_or_default();
        let command = matches!(
            k.as_str(),
            "core.pager"
                | "core.editor"
                | "core.sshcommand"
                | "core.askpass"
                | "core.gitproxy"
                | "core.fsmonitor"
                | "sequence.editor"
                | "diff.external"
                | "interactive.difffilter"
                | "uploadpack.packobjectshook"
                | "gpg.program"
        ) || k.starts_with("pager.")
            || k.starts_with("gpg.") && last == "program"
            || k.starts_with("diff.") && matches!(last, "textconv" | "command")
            || k.starts_with("merge.") && last == "driver"
            || k.starts_with("filter.") && matches!(last, "clean" | "smudge" | "process")
            || k.starts_with("remote.") && matches!(last, "uploadpack" | "receivepack" | "proxy")
            || last == "cmd";
        let shell_alias = (k.starts_with("alias.") || k.starts_with("credential.") && last == "helper")
            && value.starts_with('!');
        let code_dir = matches!(k.as_str(), "core.hookspath" | "include.path" | "init.templatedir")
            || k.starts_with("includeif.") && last == "path";
        if shell_alias {
            self.option_command(value.trim_start_matches('!'), raw, "a git alias or helper");
        } else if command && !boolean {
            self.option_command(value, raw, "git configuration");
        } else if code_dir && value != "/dev/null" {
            self.add(
                Category::Opaque,
                raw,
                format!("git {key}={value}: git runs hooks or reads configuration from there, which the detector cannot see"),
            );
        }
    }

    fn make(&mut self, c: &Cmd<'_>, a: &[String], raw: &str) {
        for t in a {
            let Some((n, v)) = t.split_once('=') else { continue };
            if n == "SHELL" {
                let p = paths::normalize(v, None);
                let base = paths::basename(&p);
                if !(super::names::SHELLS.contains(&base) && paths::is_installed(&p)) {
                    self.add(
                        Category::Opaque,
                        raw,
                        format!("make runs every recipe with the shell {v}, which the detector cannot see"),
                    );
                }
            } else if MAKE_PROGRAMS.contains(&n) {
                self.option_command(v, raw, "a make program variable");
            }
        }
        let mut texts: Vec<String> = valued(a, &["--eval"]).into_iter().map(|(_, v)| v).collect();
        let stdin_makefile = valued(a, &["-f", "--file", "--makefile"])
            .iter()
            .any(|(_, v)| matches!(v.as_str(), "-" | "/dev/stdin"));
        if stdin_makefile && let Some(t) = c.stdin_payload().and_then(|p| p.text.clone()) {
            texts.push(t);
        }
        for t in texts {
            for cmd in make_recipes(&t) {
                self.option_command(&cmd, raw, "make");
            }
        }
    }
}

/// The values of the options `keys` in `args`: `-k V`, `-kV` (one-letter
/// keys), `--key V` and `--key=V`.
pub(crate) fn valued(args: &[String], keys: &[&str]) -> Vec<(String, String)> {
    let mut out = Vec::new();
    let mut i = 0;
    while let Some(t) = args.get(i) {
        i += 1;
        if t == "--" {
            break;
        }
        for k in keys {
            if t == k {
                out.push((k.to_string(), args.get(i).cloned().unwrap_or_default()));
                i += 1;
                break;
            }
            if let Some(v) = t.strip_prefix(k) {
                let long = k.starts_with("--") || k.len() > 2;
                if let Some(v) = v.strip_prefix('=').filter(|_| long) {
                    out.push((k.to_string(), v.to_string()));
                    break;
                }
                if !long && !v.is_empty() {
                    out.push((k.to_string(), v.to_string()));
                    break;
                }
            }
        }
    }
    out
}

/// The command of a git `ext::` remote as shell text: words split at
/// spaces, `% ` a space inside a word, `%%` a percent sign, other `%x`
/// placeholders a plain word.
fn ext_command(url: &str) -> String {
    let mut words: Vec<String> = vec![String::new()];
    let mut chars = url.chars();
    while let Some(c) = chars.next() {
        let piece = match c {
            '%' => match chars.next() {
                Some(' ') => ' ',
                Some('%') => '%',
                Some(_) => 'x',
                None => continue,
            },
            ' ' => {
                words.push(String::new());
                continue;
            }
            c => c,
        };
        if let Some(w) = words.last_mut() {
            w.push(piece);
        }
    }
    words
        .iter()
        .filter(|w| !w.is_empty())
        .map(|w| format!("'{}'", w.replace('\'', "'\\''")))
        .collect::<Vec<_>>()
        .join(" ")
}

/// ssh's `%h`, `%p`, ... placeholders as plain words.
fn expand_percent(v: &str) -> String {
    let mut out = String::new();
    let mut chars = v.chars();
    while let Some(c) = chars.next() {
        if c == '%' {
            match chars.next() {
                Some('%') => out.push('%'),
                Some(_) => out.push('x'),
                None => {}
            }
        } else {
            out.push(c);
        }
    }
    out
}

/// Shell commands in make text: recipe lines (after a tab or a rule's
/// `;`) and `$(shell ...)` calls.
pub(crate) fn make_recipes(text: &str) -> Vec<String> {
    let mut out = Vec::new();
    for line in text.lines() {
        if let Some(r) = line.strip_prefix('\t') {
            out.push(r.trim_start_matches(['@', '-', '+']).to_string());
        } else if let Some((head, recipe)) = line.split_once(';')
            && head.contains(':')
        {
            out.push(recipe.trim_start_matches(['@', '-', '+', ' ']).to_string());
        }
        let mut rest = line;
        while let Some(pos) = rest.find("$(shell ") {
            let after = rest.get(pos + 8..).unwrap_or_default();
            let end = after.find(')').unwrap_or(after.len());
            out.push(after.get(..end).unwrap_or_default().to_string());
            rest = after.get(end..).unwrap_or_default();
        }
    }
    out
}
