//! Finding the program that really runs: command words are reduced to their
//! normalized name (`/usr/bin/../bin/rm`, `./rm`, `\rm`, `"rm"` are all
//! `rm`), and wrappers (`sudo`, `env`, `timeout`, `xargs`, `watch`, `ssh`,
//! ...) are peeled off with their own options. Wrappers that take a shell
//! string (`watch`, `su -c`, `ssh host cmd`, `env -S`) become `sh -c`.

use super::expand::{Field, generated_names};

/// How the program gets its (extra) arguments.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) enum Via {
    /// Arguments as written.
    Direct,
    /// Run once per batch of names generated at run time (`xargs`,
    /// `parallel`, `find -exec`): the arguments hold the names (see
    /// [`bulk_command`]).
    Bulk,
}

/// A resolved program with its arguments.
#[derive(Debug, Clone)]
pub(crate) struct Invocation {
    /// The normalized program name (basename, lower case).
    pub name: String,
    /// The program word as expanded (`./x`, `/bin/rm`, `rm`): a word with
    /// a `/` runs that file rather than a program found on `PATH`.
    pub path: String,
    /// The arguments after the program word.
    pub args: Vec<Field>,
    /// How the arguments are supplied.
    pub via: Via,
    /// The wrappers peeled off, outermost first.
    pub wrappers: Vec<&'static str>,
    /// `NAME=value` words given to wrappers (`env A=1 cmd`, `sudo A=1 cmd`):
    /// they set the program's environment.
    pub env: Vec<Field>,
}

/// The result of resolving a command line.
#[derive(Debug, Default)]
pub(crate) struct Resolution {
    /// The program that runs, when it can be known.
    pub inv: Option<Invocation>,
    /// Command words computed at run time (their text; empty if unknown).
    pub dynamic: Vec<String>,
    /// Wrappers whose own options can run commands (`ssh -o
    /// ProxyCommand=...`, `strace -o '|cmd'`), with their arguments; kept
    /// even when no command follows them.
    pub wrapped: Vec<(&'static str, Vec<Field>)>,
}

/// The normalized program name of a command word.
pub(crate) fn program_name(word: &str) -> String {
    let base = word.rsplit('/').find(|s| !s.is_empty()).unwrap_or(word);
    base.to_lowercase()
}

/// Resolves a command line given directly.
pub(crate) fn resolve(fields: Vec<Field>) -> Resolution {
    resolve_via(fields, Via::Direct)
}

/// Resolves a command line whose arguments arrive `via` some route.
pub(crate) fn resolve_via(mut args: Vec<Field>, mut via: Via) -> Resolution {
    let mut res = Resolution::default();
    let mut wrappers = Vec::new();
    let mut env = Vec::new();
    for _ in 0..32 {
        let Some(first) = args.first() else {
            return res;
        };
        if !first.known || first.glob {
            res.dynamic.push(first.text.replace(super::expand::UNKNOWN, "…"));
            return res;
        }
        if first.computed {
            res.dynamic.push(first.text.clone());
        }
        let name = program_name(&first.text);
        let rest = args.get(1..).unwrap_or_default().to_vec();
        if let Some(w) = ["ssh", "strace", "ltrace"].into_iter().find(|w| *w == name) {
            res.wrapped.push((w, rest.clone()));
        }
        match peel(&name, &rest) {
            Peel::NotWrapper => {
                res.inv = Some(Invocation {
                    name,
                    path: first.text.clone(),
                    args: rest,
                    via,
                    wrappers,
                    env,
                });
                return res;
            }
            Peel::Stop => return res,
            Peel::Next(next, w, v) => {
                if matches!(w, "env" | "sudo") {
                    let before = rest.len().saturating_sub(next.len());
                    let given = rest.get(..before).unwrap_or_default();
                    env.extend(given.iter().filter(|f| is_assignment(&f.text)).cloned());
                }
                wrappers.push(w);
                if let Some(v) = v {
                    via = v;
                }
                args = next;
            }
        }
    }
    res
}

enum Peel {
    NotWrapper,
    Stop,
    Next(Vec<Field>, &'static str, Option<Via>),
}

struct Opts {
    with_arg: &'static str,
    long_with_arg: &'static [&'static str],
    positionals: usize,
    assigns: bool,
}

const fn opts(with_arg: &'static str) -> Opts {
    Opts {
        with_arg,
        long_with_arg: &[],
        positionals: 0,
        assigns: false,
    }
}

#[derive(Default)]
struct Scan {
    cmd: Option<usize>,
    flags: String,
    values: Vec<(String, String)>,
}

impl Scan {
    fn has(&self, letters: &str) -> bool {
        self.flags.chars().any(|c| letters.contains(c))
    }
    fn value(&self, keys: &[&str]) -> Option<&str> {
        self.values
            .iter()
            .find(|(k, _)| keys.contains(&k.as_str()))
            .map(|(_, v)| v.as_str())
    }
}

fn is_assignment(t: &str) -> bool {
    t.split_once('=').is_some_and(|(n, _)| {
        // `env 'BASH_FUNC_f%%=() { ...; }'` exports a function.
        n.starts_with("BASH_FUNC_") && n.ends_with("%%")
            || !n.is_empty()
                && n.chars().all(|c| c.is_ascii_alphanumeric() || c == '_')
                && !n.starts_with(|c: char| c.is_ascii_digit())
    })
}

fn scan(args: &[Field], o: &Opts) -> Scan {
    let mut s = Scan::default();
    let mut i = 0;
    let mut left = o.positionals;
    while let Some(a) = args.get(i) {
        let t = a.text.as_str();
        if t == "--" {
            i += 1 + left;
            s.cmd = (i < args.len()).then_some(i);
            return s;
        }
        if let Some(long) = t.strip_prefix("--").filter(|l| !l.is_empty()) {
            let (name, val) = match long.split_once('=') {
                Some((n, v)) => (format!("--{n}"), Some(v.to_string())),
                None => (t.to_string(), None),
            };
            s.flags.push('-');
            if val.is_none() && o.long_with_arg.contains(&name.as_str()) {
                let v = args.get(i + 1).map(|f| f.text.clone()).unwrap_or_default();
                s.values.push((name, v));
                i += 2;
            } else {
                s.values.push((name, val.unwrap_or_default()));
                i += 1;
            }
            continue;
        }
        if t.len() > 1 && t.starts_with('-') {
            let chars: Vec<char> = t.chars().skip(1).collect();
            if !chars.iter().all(char::is_ascii_digit) {
                for (k, c) in chars.iter().enumerate() {
                    s.flags.push(*c);
                    if o.with_arg.contains(*c) {
                        let attached: String = chars.get(k + 1..).unwrap_or_default().iter().collect();
                        if attached.is_empty() {
                            let v = args.get(i + 1).map(|f| f.text.clone()).unwrap_or_default();
                            s.values.push((c.to_string(), v));
                            i += 1;
                        } else {
                            s.values.push((c.to_string(), attached));
                        }
                        break;
                    }
                }
            }
            i += 1;
            continue;
        }
        if o.assigns && is_assignment(t) {
            i += 1;
            continue;
        }
        if left > 0 {
            left -= 1;
            i += 1;
            continue;
        }
        s.cmd = Some(i);
        return s;
    }
    s
}

fn join(fields: &[Field]) -> Field {
    join_with(fields, " ")
}

fn join_with(fields: &[Field], sep: &str) -> Field {
    Field {
        text: fields
            .iter()
            .map(|f| f.text.as_str())
            .collect::<Vec<_>>()
            .join(sep),
        known: fields.iter().all(|f| f.known),
        glob: false,
        computed: fields.iter().any(|f| f.computed),
    }
}

fn sh_c(code: Field) -> Vec<Field> {
    vec![Field::lit("sh"), Field::lit("-c"), code]
}

fn after(args: &[Field], s: &Scan) -> Option<Vec<Field>> {
    s.cmd.map(|i| args.get(i..).unwrap_or_default().to_vec())
}

fn next(args: Vec<Field>, w: &'static str) -> Peel {
    Peel::Next(args, w, None)
}

fn simple_wrapper(args: &[Field], o: &Opts, w: &'static str) -> Peel {
    match after(args, &scan(args, o)) {
        Some(a) => next(a, w),
        None => Peel::Stop,
    }
}

fn peel(name: &str, args: &[Field]) -> Peel {
    match name {
        "sudo" => {
            let o = Opts {
                with_arg: "CDghpRrTtUu",
                long_with_arg: &[
                    "--user",
                    "--group",
                    "--host",
                    "--prompt",
                    "--close-from",
                    "--chdir",
                    "--role",
                    "--type",
                    "--other-user",
                    "--command-timeout",
                    "--chroot",
                ],
                positionals: 0,
                assigns: true,
            };
            let s = scan(args, &o);
            if s.has("e") {
                let files = args
                    .iter()
                    .filter(|f| !f.text.starts_with('-'))
                    .cloned()
                    .collect();
                return next([vec![Field::lit("sudoedit")], files].concat(), "sudo");
            }
            match after(args, &s) {
                Some(a) => next(a, "sudo"),
                None if s.has("is") => next(vec![Field::lit("sh")], "sudo"),
                None => Peel::Stop,
            }
        }
        "doas" => {
            let s = scan(args, &opts("Cu"));
            match after(args, &s) {
                Some(a) => next(a, "doas"),
                None if s.has("s") => next(vec![Field::lit("sh")], "doas"),
                None => Peel::Stop,
            }
        }
        "su" | "runuser" => {
            let o = Opts {
                with_arg: "csgGwu",
                long_with_arg: &[
                    "--command",
                    "--session-command",
                    "--shell",
                    "--group",
                    "--supp-group",
                    "--whitelist-environment",
                    "--user",
                ],
                positionals: 0,
                assigns: false,
            };
            let s = scan(args, &o);
            if let Some(c) = s.value(&["c", "--command", "--session-command"]) {
                return next(sh_c(Field::lit(c)), "su");
            }
            // `su - user -c CMD`: options may follow the user name.
            if let Some(c) = su_command(args) {
                return next(sh_c(c), "su");
            }
            if name == "runuser"
                && s.value(&["u", "--user"]).is_some()
                && let Some(a) = after(args, &s)
            {
                return next(a, "runuser");
            }
            next(vec![Field::lit("sh")], "su")
        }
        "env" => {
            let o = Opts {
                with_arg: "uCS",
                long_with_arg: &["--unset", "--chdir", "--split-string"],
                positionals: 0,
                assigns: true,
            };
            let args: Vec<Field> = args.iter().filter(|f| f.text != "-").cloned().collect();
            let s = scan(&args, &o);
            if let Some(split) = s.value(&["S", "--split-string"]) {
                // `env -S` splits its string with quotes, like a shell.
                let mut code = split.to_string();
                for f in after(&args, &s).unwrap_or_default() {
                    code.push(' ');
                    code.push_str(&f.text);
                }
                return next(sh_c(Field::lit(&code)), "env");
            }
            match after(&args, &s) {
                Some(a) => next(a, "env"),
                None => Peel::NotWrapper,
            }
        }
        "command" => {
            let s = scan(args, &opts(""));
            if s.has("vV") {
                return Peel::Stop;
            }
            simple_wrapper(args, &opts(""), "command")
        }
        "builtin" | "nohup" | "setsid" | "unbuffer" | "fakeroot" | "torsocks" | "tsocks" | "catchsegv"
        | "firejail" | "pkexec" | "nocache" | "eatmydata" | "unshare" => {
            simple_wrapper(args, &opts(""), static_name(name))
        }
        "exec" => simple_wrapper(args, &opts("a"), "exec"),
        "valgrind" | "dbus-run-session" | "setpriv" | "chronic" => {
            simple_wrapper(args, &opts(""), static_name(name))
        }
        "run0" => simple_wrapper(args, &opts("uDg"), "run0"),
        // `npx PKG ARGS` runs the package's program (`npx -c CMD`: a shell
        // command).
        "npx" | "bunx" | "pnpx" => {
            let o = Opts {
                long_with_arg: &["--package", "--call", "--registry", "--cache"],
                ..opts("pc")
            };
            let s = scan(args, &o);
            if let Some(cmd) = s.value(&["c", "--call"]) {
                return next(sh_c(Field::lit(cmd)), "npx");
            }
            simple_wrapper(args, &o, "npx")
        }
        // `ssh-agent CMD` runs CMD with the agent's variables set.
        "ssh-agent" => simple_wrapper(args, &opts("aEPt"), "ssh-agent"),
        "xvfb-run" => simple_wrapper(args, &opts("nsfep"), "xvfb-run"),
        "sshpass" => simple_wrapper(args, &opts("pfdP"), "sshpass"),
        "prlimit" => simple_wrapper(args, &opts("p"), "prlimit"),
        "entr" => {
            let s = scan(args, &opts(""));
            match after(args, &s) {
                Some(a) if s.has("s") => next(sh_c(join(&a)), "entr"),
                Some(a) => next(a, "entr"),
                None => Peel::Stop,
            }
        }
        "sg" => {
            // `sg GROUP [-c] COMMAND`: the command is shell code.
            let rest: Vec<Field> = args.iter().skip(1).filter(|f| f.text != "-c").cloned().collect();
            if rest.is_empty() {
                return Peel::Stop;
            }
            next(sh_c(join(&rest)), "sg")
        }
        "perf" => match args.first().map(|f| f.text.as_str()) {
            Some("stat" | "record" | "trace") => {
                simple_wrapper(args.get(1..).unwrap_or_default(), &opts("eoFcCGmrIjxDp"), "perf")
            }
            _ => Peel::Stop,
        },
        "nice" => simple_wrapper(args, &opts("n"), "nice"),
        "proxychains" | "proxychains4" => simple_wrapper(args, &opts("f"), "proxychains"),
        "caffeinate" => simple_wrapper(args, &opts("wt"), "caffeinate"),
        "stdbuf" => simple_wrapper(args, &opts("ioe"), "stdbuf"),
        "time" => simple_wrapper(args, &opts("fo"), "time"),
        "nsenter" => simple_wrapper(args, &opts("tSG"), "nsenter"),
        "numactl" => simple_wrapper(args, &opts("NmCip"), "numactl"),
        "systemd-run" => simple_wrapper(args, &opts("pMuEHs"), "systemd-run"),
        "screen" => simple_wrapper(args, &opts("SceptTh"), "screen"),
        "gosu" | "su-exec" | "chpst" => {
            let o = Opts {
                positionals: 1,
                ..opts("")
            };
            simple_wrapper(args, &o, "gosu")
        }
        "ionice" | "strace" | "ltrace" | "chrt" | "taskset" => {
            let with_arg = match name {
                "ionice" => "cnp",
                "strace" => "abeEIoOpPsSuX",
                "ltrace" => "aeEnoOpsu",
                _ => "",
            };
            let s = scan(args, &opts(with_arg));
            if s.has("p") {
                return Peel::Stop;
            }
            let positionals = usize::from(matches!(name, "chrt" | "taskset"));
            let o = Opts {
                positionals,
                ..opts(with_arg)
            };
            simple_wrapper(args, &o, static_name(name))
        }
        "timeout" => {
            let o = Opts {
                with_arg: "sk",
                long_with_arg: &["--signal", "--kill-after"],
                positionals: 1,
                assigns: false,
            };
            simple_wrapper(args, &o, "timeout")
        }
        "chroot" => {
            let o = Opts {
                long_with_arg: &["--userspec", "--groups"],
                positionals: 1,
                ..opts("")
            };
            match after(args, &scan(args, &o)) {
                Some(a) => next(a, "chroot"),
                None => next(vec![Field::lit("sh")], "chroot"),
            }
        }
        "busybox" | "toybox" => match args.first() {
            Some(f) if !f.text.starts_with('-') => next(args.to_vec(), "busybox"),
            _ => Peel::Stop,
        },
        "xargs" => {
            let o = Opts {
                with_arg: "adEILnPs",
                long_with_arg: &[
                    "--arg-file",
                    "--delimiter",
                    "--max-lines",
                    "--max-args",
                    "--max-procs",
                    "--max-chars",
                    "--process-slot-var",
                ],
                positionals: 0,
                assigns: false,
            };
            let s = scan(args, &o);
            let replace = s
                .value(&["I", "--replace"])
                .map(|v| {
                    if v.is_empty() {
                        "{}".to_string()
                    } else {
                        v.to_string()
                    }
                })
                .or_else(|| s.has("i").then(|| "{}".to_string()));
            match after(args, &s) {
                Some(a) => {
                    let holders: Vec<String> = replace.into_iter().collect();
                    let append = holders.is_empty();
                    let cmd = bulk_command(&a, &holders, append, &[generated_names()]);
                    Peel::Next(cmd, "xargs", Some(Via::Bulk))
                }
                None => Peel::Stop,
            }
        }
        "parallel" => {
            let o = Opts {
                long_with_arg: &[
                    "--jobs",
                    "--sshlogin",
                    "--arg-file",
                    "--delimiter",
                    "--max-args",
                    "--colsep",
                    "--joblog",
                    "--results",
                    "--tmpdir",
                    "--timeout",
                    "--delay",
                    "--retries",
                    "--tagstring",
                    "--workdir",
                ],
                ..opts("jSIadn")
            };
            let s = scan(args, &o);
            let Some(a) = after(args, &s) else {
                // No command: each line of the input is one.
                return next(vec![Field::lit("sh")], "parallel");
            };
            let end = a
                .iter()
                .position(|f| f.text.starts_with(":::"))
                .unwrap_or(a.len());
            let cmd = a.get(..end).unwrap_or_default();
            if cmd.is_empty() {
                // `parallel ::: CMD...`: each argument is a command.
                let given: Vec<Field> = a.iter().filter(|f| !f.text.starts_with(":::")).cloned().collect();
                if given.is_empty() {
                    return Peel::Stop;
                }

                return next(sh_c(join_with(&given, "; ")), "parallel");
            }
            // The arguments (from `:::` or the input) replace `{}`, `{.}`,
            // `{1}`, ... or are appended; the line runs in a shell.
            let mut holders = parallel_placeholders(cmd);
            holders.extend(s.value(&["I"]).map(str::to_string));
            let append = holders.is_empty();
            let cmd = bulk_command(cmd, &holders, append, &[generated_names()]);
            Peel::Next(sh_c(join(&cmd)), "parallel", Some(Via::Bulk))
        }
        "watch" => {
            let o = Opts {
                long_with_arg: &["--interval", "--equexit"],
                ..opts("nq")
            };
            let s = scan(args, &o);
            let Some(a) = after(args, &s) else {
                return Peel::Stop;
            };
            if s.has("x") || s.value(&["--exec"]).is_some() {
                return next(a, "watch");
            }
            next(sh_c(join(&a)), "watch")
        }
        "flock" => {
            let o = Opts {
                long_with_arg: &["--timeout", "--conflict-exit-code", "--command"],
                positionals: 1,
                ..opts("wEc")
            };
            let s = scan(args, &o);
            if let Some(c) = s.value(&["c", "--command"]) {
                return next(sh_c(Field::lit(c)), "flock");
            }
            match after(args, &s) {
                Some(a) => next(a, "flock"),
                None => Peel::Stop,
            }
        }
        "script" => {
            let s = scan(
                args,
                &Opts {
                    long_with_arg: &["--command"],
                    ..opts("cEIOTBm")
                },
            );
            match s.value(&["c", "--command"]) {
                Some(c) => next(sh_c(Field::lit(c)), "script"),
                None => Peel::Stop,
            }
        }
        "ssh" => {
            let s = scan(args, &opts("BbcDEeFIiJLlmOoPpQRSWw"));
            let remote = s.cmd.map(|i| args.get(i + 1..).unwrap_or_default().to_vec());
            match remote {
                Some(r) if !r.is_empty() => next(sh_c(join(&r)), "ssh"),
                _ => Peel::Stop,
            }
        }
        "tmux" => {
            let sub = args.first().map(|f| f.text.as_str()).unwrap_or_default();
            let runs = matches!(
                sub,
                "new"
                    | "new-session"
                    | "new-window"
                    | "neww"
                    | "split-window"
                    | "splitw"
                    | "run-shell"
                    | "run"
                    | "respawn-pane"
                    | "respawnp"
                    | "respawn-window"
            );
            if !runs {
                return Peel::Stop;
            }
            let rest = args.get(1..).unwrap_or_default();
            match after(rest, &scan(rest, &opts("censtFxylpTL"))) {
                Some(a) => next(sh_c(join(&a)), "tmux"),
                None => Peel::Stop,
            }
        }
        _ => Peel::NotWrapper,
    }
}

/// The command line a bulk runner (`xargs`, `parallel`, `find -exec`)
/// runs, with the names it generates at run time in place: each
/// `placeholders` string stands for them (a word that is only a
/// placeholder becomes one word per entry of `names`, a placeholder
/// inside a word the first entry), and with no placeholder in the command
/// they are appended when `append` (as `xargs` without `-I` does). So
/// every rule judges the command as one whose operands are any files
/// (`names`: [`generated_names`], or the folders `find` searches with
/// them inside).
pub(crate) fn bulk_command(
    cmd: &[Field],
    placeholders: &[String],
    append: bool,
    names: &[String],
) -> Vec<Field> {
    let holders: Vec<&str> = placeholders
        .iter()
        .map(String::as_str)
        .filter(|h| !h.is_empty())
        .collect();
    let name = |text: &str| Field {
        text: text.to_string(),
        known: false,
        ..Field::default()
    };
    let mut out = Vec::with_capacity(cmd.len() + names.len());
    let mut replaced = false;
    for f in cmd {
        if holders.contains(&f.text.as_str()) {
            out.extend(names.iter().map(|n| name(n)));
            replaced = true;
        } else if let Some(h) = holders.iter().find(|h| f.text.contains(**h)) {
            let first = names.first().map_or_else(generated_names, String::clone);
            let mut text = f.text.clone();
            for h in &holders {
                text = text.replace(h, &first);
            }
            out.push(Field {
                text,
                known: false,
                ..f.clone()
            });
            replaced |= !h.is_empty();
        } else {
            out.push(f.clone());
        }
    }
    if append && !replaced {
        out.extend(names.iter().map(|n| name(n)));
    }
    out
}

/// GNU parallel's replacement strings in a command (`{}`, `{.}`, `{/}`,
/// `{//}`, `{/.}`, `{#}`, `{%}` and their numbered forms `{1}`, `{2.}`).
fn parallel_placeholders(cmd: &[Field]) -> Vec<String> {
    let mut out: Vec<String> = Vec::new();
    for f in cmd {
        let mut rest = f.text.as_str();
        while let Some(open) = rest.find('{') {
            let after = rest.get(open + 1..).unwrap_or_default();
            let Some(close) = after.find('}') else { break };
            let inner = after.get(..close).unwrap_or_default();
            let body = inner.trim_start_matches(|c: char| c.is_ascii_digit());
            if inner.len() <= 8 && matches!(body, "" | "." | "/" | "//" | "/." | "#" | "%") {
                let h = format!("{{{inner}}}");
                if !out.contains(&h) {
                    out.push(h);
                }
            }
            rest = after.get(close + 1..).unwrap_or_default();
        }
    }
    out
}

/// The `-c`/`--command` value of `su`/`runuser` wherever it stands
/// (`su - root -c CMD`).
fn su_command(args: &[Field]) -> Option<Field> {
    let mut it = args.iter();
    while let Some(f) = it.next() {
        let t = f.text.as_str();
        if let Some(v) = t
            .strip_prefix("--command=")
            .or_else(|| t.strip_prefix("--session-command="))
        {
            return Some(Field {
                text: v.to_string(),
                ..f.clone()
            });
        }
        if matches!(t, "-c" | "--command" | "--session-command") {
            return it.next().cloned();
        }
    }
    None
}

fn static_name(name: &str) -> &'static str {
    const NAMES: &[&str] = &[
        "builtin",
        "nohup",
        "setsid",
        "unbuffer",
        "fakeroot",
        "torsocks",
        "tsocks",
        "catchsegv",
        "firejail",
        "pkexec",
        "nocache",
        "eatmydata",
        "unshare",
        "ionice",
        "strace",
        "ltrace",
        "chrt",
        "taskset",
        "valgrind",
        "dbus-run-session",
        "setpriv",
        "chronic",
    ];
    NAMES.iter().copied().find(|n| *n == name).unwrap_or("wrapper")
}
