//! The walker: visits every simple command of a parsed script (through
//! pipelines, lists, compound commands, functions and substitutions),
//! tracks what the script itself makes knowable (variables, IFS, the
//! working directory), and hands each resolved command to the rules.

use std::collections::{HashMap, HashSet};
use std::rc::Rc;

use super::ast::{Command, Compound, CompoundKind, Function, Item, List, Part, Pipeline, Simple, Word};
use super::definitions::Calls;
use super::expand::{Field, UNKNOWN, generated_names};
use super::files::Files;
use super::parser;
use super::payload::Payload;
use super::protected::Host;
use super::resolve::{Invocation, resolve};
use crate::verdict::{Category, Match, clip};

/// Deepest nesting of syntax plus re-parsed payloads that is analysed.
pub(crate) const MAX_NESTING: usize = 48;
/// Deepest chain of re-parsed payloads (`sh -c "eval '...'"`).
pub(crate) const MAX_PAYLOAD_DEPTH: usize = 8;

/// What the script has made knowable so far.
#[derive(Debug, Clone, Default)]
pub(crate) struct Scope {
    /// Variables set by the script: `Some` when the value is known.
    pub vars: HashMap<String, Option<String>>,
    /// The field separators when the script set `IFS`.
    pub ifs: Option<String>,
    /// The working directory when a `cd` made it known.
    pub cwd: Option<String>,
    /// Where the values of variables came from (network, decoded, secret).
    pub taint: HashMap<String, Payload>,
    /// Arrays set by the script (`a=(rm -rf d)`), element by element.
    pub arrays: HashMap<String, Vec<Field>>,
    /// Aliases defined by the script: `Some` when the text is known.
    pub aliases: HashMap<String, Option<String>>,
    /// Functions defined by the script, by name.
    pub functions: HashMap<String, Rc<Command>>,
    /// Exported variable and function names (`export X`, `export -f f`):
    /// child shells (`bash -c`, scripts) see them.
    pub exported: HashSet<String>,
    /// The positional parameters (`$1`, `$@`) when known: inside a
    /// function call, a script file run with arguments or `sh -c CODE
    /// NAME ARGS`.
    pub positional: Option<Vec<Field>>,
}

impl Scope {
    /// What a child shell started from this scope knows: exported
    /// variables and functions (and the working directory).
    pub(crate) fn inherited(&self) -> Scope {
        let mut child = Scope {
            cwd: self.cwd.clone(),
            exported: self.exported.clone(),
            ..Scope::default()
        };
        for name in &self.exported {
            if let Some(v) = self.vars.get(name) {
                child.vars.insert(name.clone(), v.clone());
            }
            if let Some(f) = self.functions.get(name) {
                child.functions.insert(name.clone(), f.clone());
            }
        }
        child
    }
}

/// Where a command's standard input comes from.
#[derive(Debug, Clone, Default)]
pub(crate) enum Input {
    /// Nothing known: the terminal or the caller's input.
    #[default]
    None,
    /// A pipe from an earlier command.
    Pipe(Payload),
    /// A file redirection (`< file`).
    File(Word),
    /// A heredoc or here-string.
    Here(Payload),
}

/// The pipeline a command stands in.
#[derive(Debug, Clone, Copy, Default)]
pub(crate) struct Place<'a> {
    /// The source text of the whole pipeline.
    pub pipeline: &'a str,
}

/// The detector's state for one reading of a command.
#[derive(Debug)]
pub(crate) struct Analyzer {
    pub scope: Scope,
    pub findings: Vec<Match>,
    /// Every program (and wrapper) judged, normalized.
    pub programs: Vec<String>,
    /// Files the command writes, with what is known of their content.
    pub files: Files,
    /// What the caller protects (see [`crate::Context`]).
    pub host: Host,
    /// Function calls and alias expansions in progress and done.
    pub calls: Calls,
    /// Git remotes the command adds or re-points (`git remote add`,
    /// `set-url`, `git config remote.NAME.url`; `*` when `insteadOf`
    /// rewrites every URL): a push to one sends the repository to a
    /// place the command chose.
    pub git_remotes: Vec<String>,
    /// How many conditional contexts enclose the command being judged
    /// (`if`/`case`/loop bodies, the right of `&&`/`||`, function bodies
    /// at their definition): assignments there may not happen.
    pub cond: usize,
    work: usize,
    exhausted: bool,
    nest: usize,
    payload_depth: usize,
}

impl Analyzer {
    /// An analyzer allowed about `work` units of effort, protecting what
    /// `host` names.
    pub(crate) fn new(work: usize, host: Host) -> Analyzer {
        Analyzer {
            scope: Scope::default(),
            findings: Vec::new(),
            programs: Vec::new(),
            files: Files::default(),
            host,
            calls: Calls::default(),
            git_remotes: Vec::new(),
            cond: 0,
            work,
            exhausted: false,
            nest: 0,
            payload_depth: 0,
        }
    }

    /// Records a finding.
    pub(crate) fn add(&mut self, category: Category, matched: &str, reason: impl Into<String>) {
        // Code the detector composed (a payload with generated names or
        // unknown pieces) shows its unknown parts as `…`.
        let shown = matched
            .replace(generated_names().as_str(), "…")
            .replace(UNKNOWN, "…");
        self.findings.push(Match {
            category,
            matched: clip(&shown),
            reason: reason.into(),
        });
    }

    /// Spends effort; false (and one `unanalyzable` finding) once the
    /// budget is gone.
    pub(crate) fn spend(&mut self, units: usize) -> bool {
        if self.exhausted {
            return false;
        }
        match self.work.checked_sub(units.max(1)) {
            Some(rest) => {
                self.work = rest;
                true
            }
            None => {
                self.exhausted = true;
                self.add(
                    Category::Unanalyzable,
                    "",
                    "the command is too complex to analyse within the detector's limits",
                );
                false
            }
        }
    }

    /// Parses and analyses a script text (the command, or a payload found
    /// inside it).
    pub(crate) fn script(&mut self, text: &str, input: Input) {
        if !self.spend(text.len()) {
            return;
        }
        let (list, too_deep) = parser::parse(text, self.nest, MAX_NESTING);
        if too_deep {
            self.add(
                Category::Unanalyzable,
                text,
                "the command nests too deeply to analyse",
            );
        }
        self.list(&list, &input);
    }

    /// Analyses a shell payload (`sh -c`, `eval`, piped text) one level
    /// deeper, with its own variables.
    pub(crate) fn payload(&mut self, text: &str, input: Input) {
        self.payload_with(text, input, None);
    }

    /// Like [`Analyzer::payload`], with known positional parameters (a
    /// script run with arguments, `sh -c CODE NAME ARGS`).
    pub(crate) fn payload_with(&mut self, text: &str, input: Input, positional: Option<Vec<Field>>) {
        if self.payload_depth >= MAX_PAYLOAD_DEPTH {
            self.add(
                Category::Unanalyzable,
                text,
                "shell code nested in shell code too deeply to analyse",
            );
            return;
        }
        self.payload_depth += 1;
        let saved = std::mem::take(&mut self.scope);
        self.scope = saved.inherited();
        self.scope.positional = positional;
        self.script(text, input);
        self.scope = saved;
        self.payload_depth -= 1;
    }

    pub(crate) fn enter(&mut self) -> bool {
        self.nest += 1;
        if self.nest > MAX_NESTING {
            self.nest -= 1;
            self.add(
                Category::Unanalyzable,
                "",
                "the command nests too deeply to analyse",
            );
            return false;
        }
        self.spend(1)
    }

    pub(crate) fn leave(&mut self) {
        self.nest = self.nest.saturating_sub(1);
    }

    pub(crate) fn list(&mut self, list: &List, input: &Input) {
        if !self.enter() {
            return;
        }
        for item in &list.items {
            self.item(item, input);
        }
        self.leave();
    }

    fn item(&mut self, item: &Item, input: &Input) {
        let cond = self.cond;
        for (i, p) in item.pipelines.iter().enumerate() {
            // After `&&` or `||`, a pipeline may not run.
            self.cond = cond + usize::from(i > 0);
            self.pipeline(p, input);
        }
        self.cond = cond;
    }

    fn pipeline(&mut self, p: &Pipeline, input: &Input) {
        let place = Place { pipeline: &p.raw };
        let mut upstream: Option<Payload> = None;
        let mut invs: Vec<Invocation> = Vec::new();
        for c in &p.commands {
            let stdin = match &upstream {
                Some(u) => Input::Pipe(u.clone()),
                None => input.clone(),
            };
            if let Some(inv) = self.command(c, &stdin, place) {
                invs.push(inv);
            }
            if p.commands.len() > 1 {
                let prev = match &stdin {
                    Input::Pipe(u) => u.clone(),
                    _ => Payload::default(),
                };
                upstream = Some(self.output_of(c, &prev));
            }
        }
        if invs.len() > 1 {
            self.pipeline_rules(&invs, &p.raw);
        }
    }

    pub(crate) fn command(&mut self, c: &Command, stdin: &Input, place: Place<'_>) -> Option<Invocation> {
        match c {
            Command::Simple(s) => self.simple(s, stdin, place),
            Command::Compound(k) => {
                self.compound(k, stdin);
                None
            }
            Command::Function(f) => {
                self.function(f);
                None
            }
        }
    }

    fn compound(&mut self, k: &Compound, stdin: &Input) {
        for w in &k.words {
            self.word_subs(w);
        }
        for r in &k.redirects {
            self.redirect(r);
        }
        let body_input = self.redirect_input(&k.redirects).unwrap_or_else(|| stdin.clone());
        let conditional = !matches!(
            k.kind,
            CompoundKind::Subshell | CompoundKind::Group | CompoundKind::Arith | CompoundKind::Cond
        );
        self.cond += usize::from(conditional);
        for l in &k.lists {
            self.list(l, &body_input);
        }
        self.cond -= usize::from(conditional);
        if k.redirects.iter().any(|r| r.op.writes()) {
            let out = self.compound_output(k, &Payload::default());
            self.record_redirects(&k.redirects, out);
            self.written_configs(&k.raw);
        }
        let infinite = match k.kind {
            CompoundKind::While { until } => k.lists.first().is_some_and(|c| always(c, !until)),
            CompoundKind::ArithFor { infinite } => infinite,
            _ => false,
        };
        let body = match k.kind {
            CompoundKind::While { .. } => k.lists.get(1),
            _ => k.lists.first(),
        };
        if infinite && body.is_some_and(has_background) {
            self.add(
                Category::ForkBomb,
                &k.raw,
                "an endless loop starts background processes without bound",
            );
        }
    }

    fn function(&mut self, f: &Function) {
        let body = List {
            items: vec![Item {
                pipelines: vec![Pipeline {
                    commands: vec![(*f.body).clone()],
                    raw: f.raw.clone(),
                }],
                background: false,
            }],
        };
        if calls_self(&body, &f.name, false) {
            self.add(
                Category::ForkBomb,
                &f.raw,
                format!("function `{}` spawns copies of itself without bound", f.name),
            );
        }
        // Judged where defined as if it ran there, maybe.
        self.cond += 1;
        self.list(&body, &Input::None);
        self.cond -= 1;
        self.define_function(f);
    }

    fn simple(&mut self, s: &Simple, stdin: &Input, place: Place<'_>) -> Option<Invocation> {
        if !self.spend(s.raw.len()) {
            return None;
        }
        for a in &s.assigns {
            a.value.iter().for_each(|w| self.word_subs(w));
        }
        s.words.iter().for_each(|w| self.word_subs(w));
        for r in &s.redirects {
            self.word_subs(&r.target);
            self.redirect(r);
        }
        for a in &s.assigns {
            self.assignment(a, s.words.is_empty());
        }
        // An alias or function runs instead of the program of that name,
        // if its definition ran: the program is judged too, so that a
        // definition in a branch that never runs cannot hide it.
        self.expand_alias(s, stdin);
        let fields = self.expand_all(&s.words);
        self.call_function(&fields, stdin, place);
        let res = resolve(fields);
        for (w, args) in &res.wrapped {
            self.wrapper_options(w, args, &s.raw);
        }
        for d in &res.dynamic {
            let shown = if d.contains('…') {
                String::new()
            } else {
                format!(" (here: `{d}`)")
            };
            self.add(
                Category::DynamicCommand,
                &s.raw,
                format!(
                    "the command name is computed at run time, so what runs cannot be known in advance{shown}"
                ),
            );
        }
        let stdin = self.redirect_input(&s.redirects).unwrap_or_else(|| stdin.clone());
        if let Some(inv) = &res.inv {
            self.judge(inv, s, &stdin, place);
        }
        if s.redirects.iter().any(|r| r.op.writes()) {
            let input = match &stdin {
                Input::Pipe(p) | Input::Here(p) => p.clone(),
                _ => Payload::default(),
            };
            let out = if res.inv.is_some() {
                self.simple_output(s, &input)
            } else {
                Payload::literal("")
            };
            self.record_redirects(&s.redirects, out);
            self.written_configs(&s.raw);
        }
        res.inv
    }

    /// Walks the substitutions inside a word (they run before the command).
    pub(crate) fn word_subs(&mut self, w: &Word) {
        self.parts_subs(&w.parts);
    }

    fn parts_subs(&mut self, parts: &[Part]) {
        for p in parts {
            match p {
                Part::CmdSub { list, .. } => self.list(list, &Input::None),
                Part::ProcSub { list, input } => {
                    let i = if *input {
                        Input::None
                    } else {
                        Input::Pipe(Payload::default())
                    };
                    self.list(list, &i);
                }
                Part::Param { nested, .. } | Part::Arith { nested } => {
                    if self.enter() {
                        self.parts_subs(nested);
                        self.leave();
                    }
                }
                Part::Lit { .. } => {}
            }
        }
    }
}

/// Whether a loop condition is always true (`true`, `:`, `[ 1 ]`).
fn always(cond: &List, truth: bool) -> bool {
    let [item] = cond.items.as_slice() else {
        return false;
    };
    let [p] = item.pipelines.as_slice() else {
        return false;
    };
    let [Command::Simple(s)] = p.commands.as_slice() else {
        return false;
    };
    let words: Vec<String> = s.words.iter().filter_map(Word::literal).collect();
    let name = words
        .first()
        .map(|w| w.rsplit('/').next().unwrap_or(w).to_string());
    match name.as_deref() {
        Some("true" | ":") => truth,
        Some("false") => !truth,
        Some("[" | "test") => truth && words.len() <= 3,
        _ => false,
    }
}

/// Whether any list item inside runs in the background.
fn has_background(list: &List) -> bool {
    list.items.iter().any(|i| {
        i.background
            || i.pipelines.iter().any(|p| {
                p.commands.iter().any(|c| match c {
                    Command::Compound(k) => k.lists.iter().any(has_background),
                    _ => false,
                })
            })
    })
}

/// Whether `name` is called inside `list` in a pipeline or in the
/// background (each call then forks further copies).
fn calls_self(list: &List, name: &str, forking: bool) -> bool {
    list.items.iter().any(|i| {
        i.pipelines.iter().any(|p| {
            let f = forking || i.background || p.commands.len() > 1;
            p.commands.iter().any(|c| match c {
                Command::Simple(s) => f && s.words.first().and_then(Word::literal).as_deref() == Some(name),
                Command::Compound(k) => k.lists.iter().any(|l| calls_self(l, name, f)),
                Command::Function(_) => false,
            })
        })
    })
}
