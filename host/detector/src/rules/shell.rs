//! Code sinks: shells (`-c`, scripts from stdin or `<( )`), `eval`,
//! `source`, `trap`, `alias`, and interpreters given inline code. Known
//! code is analysed recursively; code that is only known at run time needs
//! approval, and code from the network is remote code execution.

use super::langs::Dialect;
use super::names::{Lang, SHELLS};
use super::{Cmd, args};
use crate::analyze::{Analyzer, Input};
use crate::ast::Part;
use crate::expand::Field;
use crate::payload::Payload;
use crate::verdict::Category;

const PIPED: &str = "piped into it";

/// What kind of code a sink runs.
#[derive(Debug, Clone, Copy)]
pub(crate) enum Sink {
    Shell,
    /// Shell code run in the current shell (`source`, `.`).
    Source,
    Code(Lang),
    Sql,
}

impl Analyzer {
    /// Runs the rules for code reaching a sink.
    pub(crate) fn run_code(&mut self, p: &Payload, sink: Sink, c: &Cmd<'_>, what: &str) {
        self.run_code_with(p, sink, c, what, None);
    }

    /// Like [`Analyzer::run_code`], with the positional parameters shell
    /// code sees (`sh -c CODE NAME ARGS`).
    pub(crate) fn run_code_with(
        &mut self,
        p: &Payload,
        sink: Sink,
        c: &Cmd<'_>,
        what: &str,
        positional: Option<Vec<Field>>,
    ) {
        let matched = if what == PIPED { c.place.pipeline } else { c.raw() };
        if p.network {
            self.add(
                Category::RemoteCodeExecution,
                matched,
                format!("runs code downloaded from the network ({what})"),
            );
        } else if p.decoded && !matches!(sink, Sink::Sql) {
            self.add(
                Category::DynamicCommand,
                matched,
                format!("runs decoded or transformed data as code ({what})"),
            );
        }
        let Some(text) = &p.text else {
            if !p.network && !p.decoded && !matches!(sink, Sink::Sql) {
                self.add(
                    Category::DynamicCommand,
                    matched,
                    format!("runs code that is only known at run time ({what})"),
                );
            }
            return;
        };
        let text = text.clone();
        match sink {
            Sink::Shell => self.payload_with(&text, Input::None, positional),
            Sink::Code(lang) => self.inline_code(lang, &text, c.raw()),
            Sink::Sql => self.sql_text(&text, c.raw()),
            Sink::Source => self.script(&text, Input::None),
        }
    }

    /// A field used as code, with the provenance of the command's words.
    fn field_code(&mut self, f: &Field, c: &Cmd<'_>) -> Payload {
        let prov = self.provenance(c.simple);
        Payload {
            text: Some(f.text.clone()),
            ..prov
        }
    }

    /// Code read from standard input.
    fn stdin_code(&mut self, c: &Cmd<'_>, sink: Sink) {
        match c.stdin {
            Input::Pipe(p) => self.run_code(&p.clone(), sink, c, PIPED),
            Input::Here(p) => self.run_code(&p.clone(), sink, c, "from a heredoc"),
            Input::File(w) => {
                let w = w.clone();
                if let Some(f) = self.expand(&w).first() {
                    self.run_file(f, sink, c.raw(), &[]);
                }
            }
            Input::None => {
                if matches!(sink, Sink::Shell)
                    && c.inv
                        .wrappers
                        .iter()
                        .any(|w| matches!(*w, "sudo" | "doas" | "su" | "pkexec" | "chroot"))
                {
                    self.add(
                        Category::PrivilegeEscalation,
                        c.raw(),
                        "opens an interactive root shell",
                    );
                }
            }
        }
    }

    /// Scripts given as `<(...)` process substitutions.
    fn procsub_scripts(&mut self, c: &Cmd<'_>, sink: Sink) -> bool {
        let mut found = false;
        for w in &c.simple.words {
            for p in &w.parts {
                if let Part::ProcSub { list, input: true } = p {
                    found = true;
                    let out = self.list_output(list);
                    self.run_code(&out, sink, c, "from a process substitution");
                }
            }
        }
        found
    }

    /// `sh`, `bash -c CODE`, `bash script`, `bash < file`, `... | bash`.
    pub(crate) fn shell(&mut self, c: &Cmd<'_>) {
        let a = c.args();
        let mut i = 0;
        let mut dash_c = false;
        let mut dash_s = false;
        while let Some(f) = a.get(i) {
            let t = f.text.as_str();
            if t == "--" || t == "-" {
                i += usize::from(t == "--");
                break;
            }
            if (t.starts_with('-') || t.starts_with('+')) && t.len() > 1 {
                if t.starts_with("--") {
                    i += 1 + usize::from(matches!(t, "--rcfile" | "--init-file"));
                    continue;
                }
                dash_c |= t.starts_with('-') && t.contains('c');
                dash_s |= t.starts_with('-') && t.contains('s');
                i += 1 + usize::from(t.ends_with('o') || t.ends_with('O'));
                continue;
            }
            break;
        }
        if dash_c {
            match a.get(i) {
                Some(code) => {
                    let p = self.field_code(code, c);
                    let positional = a.get(i + 2..).map(<[Field]>::to_vec);
                    self.run_code_with(&p, Sink::Shell, c, "shell code given to -c", positional);
                }
                None => self.add(Category::DynamicCommand, c.raw(), "shell -c without visible code"),
            }
            return;
        }
        if self.procsub_scripts(c, Sink::Shell) {
            return;
        }
        match a.get(i) {
            _ if dash_s => self.stdin_code(c, Sink::Shell),
            None => {
                if !self.bulk_scripts(c) {
                    self.stdin_code(c, Sink::Shell);
                }
            }
            Some(f) if matches!(f.text.as_str(), "-" | "/dev/stdin" | "/proc/self/fd/0") => {
                self.stdin_code(c, Sink::Shell);
            }
            Some(f) => {
                let f = f.clone();
                let rest = a.get(i + 1..).unwrap_or_default().to_vec();
                self.script_operand(c, Sink::Shell, &f, &rest);
            }
        }
    }

    /// `python -c`, `perl -e`, `node -e`, `ruby -e`, `php -r`, `awk PROG`,
    /// and interpreters reading their program from stdin.
    pub(crate) fn interpreter(&mut self, c: &Cmd<'_>, lang: Lang) {
        let longs: Vec<&str> = lang.long_code.iter().chain(lang.long_with_arg).copied().collect();
        let parsed = args::parse(c.args(), lang.with_arg, &longs);
        if let Some(m) = lang.module_opt
            && parsed.short(m)
        {
            return;
        }
        let mut codes: Vec<String> = parsed
            .values
            .iter()
            .filter(|(k, _)| {
                k.len() == 1 && lang.code_opts.contains(k.as_str()) || lang.long_code.contains(&k.as_str())
            })
            .map(|(_, v)| v.clone())
            .collect();
        let lower: Vec<String> = c.args().iter().map(|f| f.text.to_lowercase()).collect();
        if lang.dialect == Dialect::PowerShell {
            if lower
                .iter()
                .any(|t| t.starts_with("-enc") || t.starts_with("-e") && t.len() <= 2)
            {
                self.add(
                    Category::DynamicCommand,
                    c.raw(),
                    "runs a base64-encoded PowerShell command",
                );
            }
            if let Some(pos) = lower.iter().position(|t| t == "-c" || t == "-command") {
                codes.push(
                    c.args()
                        .iter()
                        .skip(pos + 1)
                        .map(|f| f.text.as_str())
                        .collect::<Vec<_>>()
                        .join(" "),
                );
            }
        }
        let awk = lang.dialect == Dialect::Awk;
        if awk
            && parsed.value(&["f"]).is_none()
            && codes.is_empty()
            && let Some(prog) = parsed.operands.first()
        {
            codes.push(prog.text.clone());
        }
        if awk
            && parsed
                .values_of(&["i", "--include"])
                .any(|v| v.trim_end_matches(".awk") == "inplace")
        {
            // gawk's inplace extension rewrites every input file.
            let skip = usize::from(parsed.value(&["f"]).is_none() && !parsed.long("--source"));
            let files: Vec<Field> = parsed.operands.iter().skip(skip).map(|f| (*f).clone()).collect();
            for f in files.iter().filter(|f| !f.text.contains('=')) {
                self.write_target(f, c.raw());
            }
        }
        if let Some(i) = lang.in_place
            && parsed.short(i)
        {
            let files: Vec<Field> = parsed.operands.iter().map(|f| (*f).clone()).collect();
            for f in &files {
                self.write_target(f, c.raw());
            }
        }
        if matches!(c.inv.name.as_str(), "deno" | "bun")
            && let Some(pos) = c.args().iter().position(|f| f.text == "eval")
            && let Some(code) = c.args().get(pos + 1)
        {
            codes.push(code.text.clone());
        }
        if !codes.is_empty() {
            for code in codes {
                let p = self.field_code(
                    &Field {
                        text: code,
                        ..Field::lit("")
                    },
                    c,
                );
                self.run_code(&p, Sink::Code(lang), c, "inline interpreter code");
            }
            return;
        }
        if self.procsub_scripts(c, Sink::Code(lang)) {
            return;
        }
        let raw = c.raw();
        let local: Vec<String> = parsed
            .values_of(lang.preload_opts)
            .filter(|m| m.starts_with(['.', '/', '~']))
            .map(str::to_string)
            .collect();
        for m in local {
            self.run_file(&Field::lit(&m), Sink::Code(lang), raw, &[]);
        }
        let file_opt = match lang.dialect {
            Dialect::Awk => parsed.value(&["f"]),
            Dialect::PowerShell => {
                let pos = lower.iter().position(|t| t == "-file" || t == "-f");
                pos.and_then(|p| c.args().get(p + 1)).map(|f| f.text.as_str())
            }
            Dialect::Plain => None,
        };
        if let Some(f) = file_opt.map(Field::lit) {
            self.script_operand(c, Sink::Code(lang), &f, &[]);
            return;
        }
        if awk {
            return;
        }
        let operands = parsed.operands.clone();
        match self.interpreter_script(c, lang, &operands) {
            None if operands.is_empty() && !self.bulk_scripts(c) => self.stdin_code(c, Sink::Code(lang)),
            None => {}
            Some(i) => {
                let Some(f) = operands.get(i).map(|f| (*f).clone()) else {
                    return;
                };
                if matches!(f.text.as_str(), "-" | "/dev/stdin") {
                    self.stdin_code(c, Sink::Code(lang));
                } else {
                    let rest: Vec<Field> = operands.iter().skip(i + 1).map(|f| (*f).clone()).collect();
                    self.script_operand(c, Sink::Code(lang), &f, &rest);
                }
            }
        }
    }

    /// Shell builtins that run or change things: `eval`, `source`, `trap`,
    /// `alias`, `cd`, `export`/`declare`, `unset`, `set`.
    pub(crate) fn builtins(&mut self, c: &Cmd<'_>) {
        let a = c.args();
        self.definition_builtin(c.inv.name.as_str(), a);
        match c.inv.name.as_str() {
            "eval" => {
                let joined = Field {
                    text: a.iter().map(|f| f.text.as_str()).collect::<Vec<_>>().join(" "),
                    ..Field::lit("")
                };
                let p = self.field_code(&joined, c);
                self.run_code(&p, Sink::Shell, c, "code given to eval");
            }
            "source" | "." => {
                if self.procsub_scripts(c, Sink::Shell) {
                    return;
                }
                match a.first() {
                    Some(f) if matches!(f.text.as_str(), "/dev/stdin" | "-" | "/proc/self/fd/0") => {
                        self.stdin_code(c, Sink::Shell);
                    }
                    Some(f) => {
                        let f = f.clone();
                        let rest = a.get(1..).unwrap_or_default().to_vec();
                        self.run_file(&f, Sink::Source, c.raw(), &rest);
                    }
                    None => {}
                }
            }
            "trap" => {
                if let Some(code) = a.first().filter(|f| !f.text.starts_with('-')) {
                    let p = self.field_code(code, c);
                    self.run_code(&p, Sink::Shell, c, "code given to trap");
                }
            }
            "alias" => {
                for f in a {
                    if let Some((_, v)) = f.text.split_once('=') {
                        let p = Payload {
                            text: Some(v.to_string()),
                            ..Payload::default()
                        };
                        self.run_code(&p, Sink::Shell, c, "an alias definition");
                    }
                }
            }
            "cd" | "pushd" => {
                let target = a.iter().find(|f| !f.text.starts_with('-'));
                let dir = match target {
                    None => Some("~".to_string()),
                    Some(f) => f
                        .value()
                        .map(|v| crate::paths::normalize(v, self.scope.cwd.as_deref())),
                };
                self.scope.cwd = self.host.working_dir(dir.as_deref());
            }
            "export" | "declare" | "typeset" | "local" | "readonly" => {
                let exports = c.inv.name == "export"
                    || a.iter().any(|f| f.text.starts_with('-') && f.text.contains('x'));
                for f in a.iter().filter(|f| exports && !f.text.starts_with('-')) {
                    let n = f.text.split_once('=').map_or(f.text.as_str(), |(n, _)| n);
                    self.scope.exported.insert(n.trim_end_matches('+').to_string());
                }
                for f in a {
                    if let Some((n, v)) = f.text.split_once('=') {
                        let n = n.trim_end_matches('+');
                        let value = Field {
                            text: v.to_string(),
                            ..f.clone()
                        };
                        self.environment(n, &value, c.raw());
                        self.set_var(n, f.known.then_some(v), c.raw(), true);
                    }
                }
            }
            "hash" if a.iter().any(|f| f.text == "-p") => {
                self.add(
                    Category::Opaque,
                    c.raw(),
                    "hash -p makes a program name run another file, which the detector cannot see",
                );
            }
            "enable" if a.iter().any(|f| f.text.starts_with("-f")) => {
                self.add(
                    Category::Opaque,
                    c.raw(),
                    "enable -f loads a shell builtin from a library, which the detector cannot see",
                );
            }
            "unset"
                if a.iter()
                    .any(|f| matches!(f.text.as_str(), "HISTFILE" | "HISTSIZE" | "HISTFILESIZE")) =>
            {
                self.add(Category::LogTampering, c.raw(), "turns off shell history");
            }
            "set" | "shopt" => {
                let texts: Vec<&str> = a.iter().map(|f| f.text.as_str()).collect();
                let off = texts
                    .windows(2)
                    .any(|w| (w[0] == "+o" || w[0] == "-u") && w[1] == "history")
                    || texts.contains(&"-u") && texts.contains(&"history");
                if off {
                    self.add(Category::LogTampering, c.raw(), "turns off shell history");
                }
            }
            n if SHELLS.contains(&n) => {}
            _ => {}
        }
    }
}
