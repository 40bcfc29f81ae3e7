//! Interactive programs with their own command language, given commands
//! on the command line or standard input: editors (`vim -c`, `vi +cmd`,
//! `ex`, `ed`, `emacs --eval`), pagers (`less '+!cmd'`) and debuggers
//! (`gdb -ex`, `lldb -o`).
//!
//! Their shell escapes (`:!cmd`, `:r !cmd`, `:w !cmd`, `system()`,
//! `shell-command`, gdb's `shell`/`!`/`pipe`) are analysed as shell
//! commands and their embedded languages (`:py3`, `:lua`, gdb `python`)
//! as inline code; script files they load (`vim -S`, `emacs -l`,
//! `gdb -x`) are opaque unless this command wrote them.

use super::Cmd;
use super::langs::by_name;
use super::options::valued;
use crate::analyze::{Analyzer, Input};
use crate::expand::{Field, UNKNOWN};
use crate::resolve::Via;
use crate::verdict::Category;

/// How deeply `:execute "..."` strings are followed.
const MAX_EDITOR_DEPTH: usize = 4;

/// Editor command names whose argument is a file of editor commands.
const SCRIPT_COMMANDS: &[&str] = &[
    "so", "source", "runtime", "ru", "pyfile", "py3file", "pyxfile", "luafile", "rubyfile", "perlfile",
];

/// Calls that run processes from editor or debugger expressions.
const EXEC_CALLS: &[&str] = &[
    "system(",
    "systemlist(",
    "job_start(",
    "jobstart(",
    "termopen(",
    "term_start(",
    "libcall(",
    "popen(",
    "execl(",
    "execv(",
];

impl Analyzer {
    /// The rules for editors, pagers and debuggers.
    pub(crate) fn editors(&mut self, c: &Cmd<'_>) {
        let raw = c.raw();
        let a: Vec<String> = c.args().iter().map(|f| f.text.clone()).collect();
        let name = c.inv.name.as_str();
        match name {
            "vi" | "vim" | "nvim" | "view" | "vimdiff" | "gvim" | "ex" | "rvim" | "evim" => {
                let (opts, ex_mode) = vim_args(&a, name == "ex");
                for (k, v) in opts {
                    match k {
                        'c' => self.editor_command(&v, raw, 0),
                        'u' | 'U' if matches!(v.as_str(), "NONE" | "NORC" | "DEFAULTS") => {}
                        _ => self.editor_file(&v, raw),
                    }
                }
                if ex_mode {
                    self.editor_stdin(c, raw);
                }
            }
            "ed" | "red" => self.editor_stdin(c, raw),
            "less" | "more" => {
                for t in &a {
                    let Some(cmd) = t.strip_prefix('+').map(|c| c.trim_start_matches('+')) else {
                        continue;
                    };
                    if cmd.contains(UNKNOWN) {
                        computed(cmd, raw, self);
                    } else if let Some(shell) = cmd.strip_prefix('!') {
                        self.option_command(shell, raw, "less");
                    } else if let Some(pipe) = cmd.strip_prefix('|') {
                        self.option_command(pipe.get(1..).unwrap_or_default(), raw, "less");
                    }
                }
            }
            "emacs" | "emacsclient" | "xemacs" => {
                for (k, v) in valued(
                    &a,
                    &[
                        "--eval",
                        "-eval",
                        "--execute",
                        "-l",
                        "--load",
                        "-load",
                        "--script",
                        "-script",
                    ],
                ) {
                    if matches!(k.as_str(), "--eval" | "-eval" | "--execute") {
                        self.elisp(&v, raw);
                    } else {
                        self.editor_file(&v, raw);
                    }
                }
            }
            "gdb" | "cgdb" => {
                let keys = [
                    "-ex",
                    "--ex",
                    "-iex",
                    "--iex",
                    "--eval-command",
                    "--init-eval-command",
                    "-x",
                    "--command",
                    "-ix",
                    "--init-command",
                ];
                for (k, v) in valued(&a, &keys) {
                    if matches!(k.as_str(), "-x" | "--command" | "-ix" | "--init-command") {
                        self.editor_file(&v, raw);
                    } else {
                        self.debugger_command(&v, raw);
                    }
                }
                if let Some(pos) = c.args().iter().position(|f| f.text == "--args") {
                    let inner = c.args().get(pos + 1..).unwrap_or_default().to_vec();
                    self.judge_fields(inner, Via::Direct, c);
                }
            }
            "lldb" => {
                for (k, v) in valued(
                    &a,
                    &[
                        "-o",
                        "--one-line",
                        "-O",
                        "--one-line-before-file",
                        "-k",
                        "-s",
                        "--source",
                        "-S",
                    ],
                ) {
                    if matches!(k.as_str(), "-s" | "--source" | "-S") {
                        self.editor_file(&v, raw);
                    } else if let Some(cmd) = v.trim().strip_prefix("platform shell") {
                        self.option_command(cmd, raw, "lldb");
                    } else if let Some(code) = v.trim().strip_prefix("script") {
                        self.inline_code(by_name("python"), code, raw);
                    }
                }
            }
            _ => {}
        }
    }

    /// A file of editor or debugger commands: what this command wrote
    /// there, or opaque.
    fn editor_file(&mut self, file: &str, raw: &str) {
        if file.is_empty() || file == "/dev/null" {
            return;
        }
        let f = Field::lit(file);
        match self.file_data(&f).and_then(|p| p.text) {
            Some(text) => {
                for line in text.lines().take(10_000) {
                    self.editor_command(line, raw, 1);
                }
            }
            None => self.add(
                Category::Opaque,
                raw,
                format!("loads the editor or debugger script {file}, which can run commands the detector cannot see"),
            ),
        }
    }

    /// Editor commands read from standard input (`ex`, `ed`, `vim -es`).
    fn editor_stdin(&mut self, c: &Cmd<'_>, raw: &str) {
        match c.stdin {
            Input::Pipe(p) | Input::Here(p) => match p.text.clone() {
                Some(text) => {
                    for line in text.lines().take(10_000) {
                        self.editor_command(line, raw, 0);
                    }
                }
                None => self.add(
                    Category::DynamicCommand,
                    raw,
                    "the editor runs commands from its input, which are computed at run time",
                ),
            },
            Input::File(w) => {
                let w = w.clone();
                if let Some(f) = self.expand(&w).first() {
                    let file = f.text.clone();
                    self.editor_file(&file, raw);
                }
            }
            Input::None => {}
        }
    }

    /// One vi/ex/ed command line (`:!cmd`, `r !cmd`, `%!sort`, `py3 ...`,
    /// `call system("...")`, `exe "..."`), `|`-separated.
    fn editor_command(&mut self, text: &str, raw: &str, depth: usize) {
        if depth > MAX_EDITOR_DEPTH || !self.spend(text.len()) {
            return;
        }
        if computed(text, raw, self) {
            return;
        }
        let mut rest = text;
        while !rest.trim().is_empty() {
            let cmd = strip_modifiers(rest.trim_start().trim_start_matches([':', ' ', '\t']));
            if let Some(shell) = cmd.strip_prefix('!') {
                self.option_command(shell, raw, "an editor");
                return;
            }
            let word: String = cmd.chars().take_while(char::is_ascii_alphanumeric).collect();
            let after = cmd.get(word.len()..).unwrap_or_default();
            let arg = after.trim_start();
            let shell_arg = arg.strip_prefix('!');
            match word.as_str() {
                "r" | "read" | "e" | "edit" if shell_arg.is_some() => {
                    self.option_command(shell_arg.unwrap_or_default(), raw, "an editor");
                    return;
                }
                "w" | "write" | "up" | "update"
                    if after.starts_with(char::is_whitespace) && shell_arg.is_some() =>
                {
                    self.option_command(shell_arg.unwrap_or_default(), raw, "an editor");
                    return;
                }
                "ter" | "terminal" => {
                    self.option_command(arg, raw, "an editor");
                    return;
                }
                "py" | "py3" | "python" | "python3" | "pyx" | "pythonx" | "pydo" | "py3do" => {
                    self.inline_code(by_name("python"), arg, raw);
                    return;
                }
                "lua" | "luado" => {
                    self.inline_code(by_name("lua"), arg, raw);
                    return;
                }
                "perl" | "perldo" => {
                    self.inline_code(by_name("perl"), arg, raw);
                    return;
                }
                "ruby" | "rubydo" | "rub" => {
                    self.inline_code(by_name("ruby"), arg, raw);
                    return;
                }
                w if SCRIPT_COMMANDS.contains(&w) => {
                    let file = arg.split('|').next().unwrap_or_default().trim().to_string();
                    self.editor_file(&file, raw);
                }
                _ => {}
            }
            let end = bar(cmd).unwrap_or(cmd.len());
            let segment = cmd.get(..end).unwrap_or_default();
            if matches!(word.as_str(), "exe" | "execute") {
                for s in literals(segment) {
                    self.editor_command(&s, raw, depth + 1);
                }
            } else if EXEC_CALLS.iter().any(|e| segment.contains(e)) {
                self.process_strings(segment, raw, "the editor runs a command computed at run time");
            }
            rest = cmd.get(end + 1..).unwrap_or_default();
        }
    }

    /// Runs each string literal of `expr` as a shell command (a process
    /// call's argument); none: the command is computed.
    fn process_strings(&mut self, expr: &str, raw: &str, computed: &str) {
        self.process_literals(literals(expr), raw, computed);
    }

    fn process_literals(&mut self, strings: Vec<String>, raw: &str, computed: &str) {
        if strings.is_empty() {
            self.add(Category::DynamicCommand, raw, computed);
        }
        let joined = strings.join(" ");
        for s in strings.iter().chain(std::iter::once(&joined)) {
            self.option_command(s, raw, "a process call");
        }
        if strings.len() > 1 {
            let tail = strings.get(1..).unwrap_or_default().join(" ");
            self.option_command(&tail, raw, "a process call");
        }
    }

    /// One gdb command (`shell cmd`, `!cmd`, `pipe ... | cmd`, `python
    /// ...`, `call system("...")`).
    fn debugger_command(&mut self, text: &str, raw: &str) {
        if computed(text, raw, self) {
            return;
        }
        let t = text.trim();
        let word: String = t
            .chars()
            .take_while(|c| c.is_ascii_alphanumeric() || *c == '-')
            .collect();
        let arg = t.get(word.len()..).unwrap_or_default().trim_start();
        if let Some(shell) = t.strip_prefix('!') {
            self.option_command(shell, raw, "gdb");
        } else if word == "shell" {
            self.option_command(arg, raw, "gdb");
        } else if word == "pipe" || t.starts_with('|') {
            let shell = t.rsplit('|').next().unwrap_or_default();
            self.option_command(shell, raw, "gdb");
        } else if matches!(word.as_str(), "python" | "py" | "pi" | "python-interactive") {
            self.inline_code(by_name("python"), arg, raw);
        } else if matches!(word.as_str(), "source" | "so") {
            self.editor_file(arg, raw);
        } else if EXEC_CALLS.iter().any(|e| t.contains(e)) {
            self.process_strings(t, raw, "the debugger runs a command computed at run time");
        }
    }

    /// An Emacs Lisp expression: process calls run their string
    /// arguments; file and directory deletions are flagged.
    fn elisp(&mut self, expr: &str, raw: &str) {
        if expr.contains(UNKNOWN) {
            self.add(
                Category::DynamicCommand,
                raw,
                "emacs evaluates code computed at run time",
            );
            return;
        }
        let calls = [
            "shell-command",
            "call-process",
            "start-process",
            "make-process",
            "process-file",
            "process-lines",
            "start-file-process",
        ];
        if calls.iter().any(|k| expr.contains(k)) {
            self.add(Category::CodeExecution, raw, "emacs runs other programs");
            self.process_literals(
                literals_of(expr, false),
                raw,
                "emacs runs a command computed at run time",
            );
        }
        if expr.contains("delete-directory") && expr.contains(" t") {
            self.add(Category::RecursiveDelete, raw, "emacs deletes a directory tree");
        } else if expr.contains("delete-file") || expr.contains("delete-directory") {
            self.add(Category::FileDestruction, raw, "emacs deletes files");
        }
        for f in literals_of(expr, false) {
            if f.starts_with('/') || f.starts_with('~') {
                let target = Field::lit(&f);
                if expr.contains("write-region") || expr.contains("write-file") {
                    self.write_target(&target, raw);
                }
            }
        }
    }
}

/// The options of a vi/vim/ex command line that carry commands or
/// command files: `('c', cmd)` for `-c CMD`, `--cmd CMD` and `+CMD`;
/// `('S'|'s'|'u'|'U'|'l', file)` for script files. Short options cluster
/// (`ex -sc CMD`); `-s` is "silent" in Ex mode (`-e`, `-E`, `ex`) and
/// takes a script of keystrokes otherwise. Also returns whether Ex mode
/// is on (then commands are read from standard input).
fn vim_args(args: &[String], ex: bool) -> (Vec<(char, String)>, bool) {
    let mut out = Vec::new();
    let mut ex_mode = ex;
    let mut i = 0;
    while let Some(t) = args.get(i) {
        i += 1;
        if t == "--" {
            break;
        }
        if let Some(cmd) = t.strip_prefix('+') {
            if !cmd.is_empty() {
                out.push(('c', cmd.to_string()));
            }
            continue;
        }
        if let Some(long) = t.strip_prefix("--") {
            if long == "cmd" {
                out.push(('c', args.get(i).cloned().unwrap_or_default()));
                i += 1;
            } else if matches!(long, "startuptime" | "servername" | "remote-send" | "remote-expr") {
                i += 1;
            }
            continue;
        }
        let Some(cluster) = t.strip_prefix('-') else {
            continue;
        };
        let chars: Vec<char> = cluster.chars().collect();
        for (k, &ch) in chars.iter().enumerate() {
            let takes = match ch {
                'e' | 'E' => {
                    ex_mode = true;
                    false
                }
                's' => !ex_mode,
                'c' | 'S' | 'u' | 'U' | 'T' | 'i' | 'w' | 'W' | 't' | 'q' | 'l' => true,
                _ => false,
            };
            if !takes {
                continue;
            }
            let attached: String = chars.get(k + 1..).unwrap_or_default().iter().collect();
            let value = if !attached.is_empty() {
                attached
            } else if ch == 'S' && args.get(i).is_none_or(|n| n.starts_with('-')) {
                "Session.vim".to_string()
            } else {
                i += 1;
                args.get(i - 1).cloned().unwrap_or_default()
            };
            if matches!(ch, 'c' | 'S' | 's' | 'u' | 'U' | 'l') {
                out.push((ch, value));
            }
            break;
        }
    }
    (out, ex_mode)
}

/// Flags an editor or debugger command computed at run time (it may be a
/// shell escape); true when it was.
fn computed(text: &str, raw: &str, a: &mut Analyzer) -> bool {
    if !text.contains(UNKNOWN) {
        return false;
    }
    a.add(
        Category::DynamicCommand,
        raw,
        "the program runs an editor or debugger command computed at run time",
    );
    true
}

/// Removes ex command modifiers (`silent!`, `noautocmd`, ...) and a line
/// range (`%`, `1,$`, `'<,'>`) from the start of a command.
fn strip_modifiers(mut cmd: &str) -> &str {
    loop {
        let before = cmd;
        cmd = cmd.trim_start_matches(|c: char| c.is_ascii_digit() || "%$.,;+-'<> \t".contains(c));
        for m in [
            "silent!",
            "silent",
            "sil!",
            "sil",
            "noautocmd",
            "noa",
            "keepalt",
            "vertical",
            "tab",
        ] {
            if let Some(r) = cmd
                .strip_prefix(m)
                .filter(|r| r.starts_with([' ', '!']) || r.is_empty())
            {
                cmd = r.trim_start_matches('!').trim_start();
            }
        }
        if cmd == before {
            return cmd;
        }
    }
}

/// The position of the first `|` outside quotes.
fn bar(cmd: &str) -> Option<usize> {
    let mut quote: Option<char> = None;
    for (i, c) in cmd.char_indices() {
        match (quote, c) {
            (None, '"' | '\'') => quote = Some(c),
            (Some(q), c) if c == q => quote = None,
            (None, '|') => return Some(i),
            _ => {}
        }
    }
    None
}

/// The contents of the `"..."` and `'...'` literals in `text`.
fn literals(text: &str) -> Vec<String> {
    literals_of(text, true)
}

/// The contents of the `"..."` literals in `text`, and of `'...'` ones
/// when `singles` (Lisp uses `'` to quote symbols).
fn literals_of(text: &str, singles: bool) -> Vec<String> {
    let mut out = Vec::new();
    let mut chars = text.chars();
    while let Some(c) = chars.next() {
        if c != '"' && (c != '\'' || !singles) {
            continue;
        }
        let mut s = String::new();
        while let Some(d) = chars.next() {
            if d == '\\' && c == '"' {
                if let Some(e) = chars.next() {
                    s.push(e);
                }
                continue;
            }
            if d == c {
                break;
            }
            s.push(d);
        }
        out.push(s);
        if out.len() >= 64 {
            break;
        }
    }
    out
}
