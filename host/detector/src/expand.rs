//! Word expansion as far as it can be done without running anything:
//! brace expansion, known variables (with IFS splitting), static command
//! substitutions, and quote removal. What cannot be known stays marked.

use super::analyze::Analyzer;
use super::ast::{Part, Word};

/// Brace expansion is not attempted on words longer than this.
const MAX_BRACE_WORD: usize = 4096;
/// The most words one brace expansion may produce.
const MAX_BRACE_RESULTS: usize = 256;
/// Stands for an unknown piece in [`Field::text`].
pub(crate) const UNKNOWN: char = '\u{1}';
/// Stands for the inherited value of a search-path variable the script
/// did not set (`$PATH` in `PATH=./bin:$PATH`); unknown like [`UNKNOWN`].
pub(crate) const INHERITED: char = '\u{2}';

/// Marks the names a bulk runner (`xargs`, `find -exec`, `parallel`)
/// hands a command at run time: any files (see [`generated_names`]).
pub(crate) const GENERATED: char = '\u{3}';

/// The text standing for the names a bulk runner hands a command: unknown
/// (it starts with [`UNKNOWN`], so every rule reads it as unknown) and
/// marked [`GENERATED`], so rules that care (deleting every file of a
/// generated list) can tell it from a variable they do not know.
pub(crate) fn generated_names() -> String {
    format!("{UNKNOWN}{GENERATED}")
}

/// Search-path variables whose inherited value is marked [`INHERITED`].
const SEARCH_PATHS: &[&str] = &[
    "PATH",
    "LD_LIBRARY_PATH",
    "LD_PRELOAD",
    "DYLD_LIBRARY_PATH",
    "DYLD_FRAMEWORK_PATH",
    "DYLD_INSERT_LIBRARIES",
];

/// One word after expansion.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub(crate) struct Field {
    /// The value, with [`UNKNOWN`] where a piece could not be known.
    pub text: String,
    /// Whether every piece is known.
    pub known: bool,
    /// Whether an unquoted glob character is present.
    pub glob: bool,
    /// Whether any piece is the output of a command substitution, directly
    /// or through a variable set from one: a command name spelled that
    /// way is computed at run time even when its value is known
    /// (`$(echo rm)`), while one held by a variable the script set to
    /// literal text (`cmd="ls -la"; $cmd`) is simply that program.
    pub computed: bool,
}

impl Field {
    /// A known literal field (for synthesized arguments).
    pub fn lit(text: &str) -> Field {
        Field {
            text: text.to_string(),
            known: true,
            glob: false,
            computed: false,
        }
    }

    /// The value when fully known.
    pub fn value(&self) -> Option<&str> {
        self.known.then_some(self.text.as_str())
    }

    /// Whether the field holds names a bulk runner generates at run time
    /// (see [`generated_names`]).
    pub fn generated(&self) -> bool {
        self.text.contains(GENERATED)
    }
}

const BRACE: u8 = 1;
const GLOB: u8 = 2;
/// The character comes from a command substitution's output.
const COMPUTED: u8 = 4;

#[derive(Debug, Clone, PartialEq, Eq)]
enum Atom {
    Ch(char, u8),
    Split,
    Unknown,
}

impl Analyzer {
    /// Expands a word into fields.
    pub(crate) fn expand(&mut self, word: &Word) -> Vec<Field> {
        let mut atoms = Vec::new();
        for part in &word.parts {
            self.atoms_of(part, &mut atoms);
        }
        let mut variants = Vec::new();
        let braces = atoms
            .iter()
            .any(|a| matches!(a, Atom::Ch('{', f) if f & BRACE != 0));
        if braces && atoms.len() <= MAX_BRACE_WORD && self.spend(atoms.len()) {
            let mut budget = MAX_BRACE_RESULTS;
            brace_expand(&atoms, &mut variants, &mut budget, 0);
        } else {
            variants.push(atoms);
        }
        let mut out = Vec::new();
        for v in variants {
            let split = v.contains(&Atom::Split);
            for piece in v.split(|a| *a == Atom::Split) {
                if split && piece.is_empty() {
                    continue;
                }
                out.push(field_of(piece));
            }
        }
        out
    }

    /// Expands an assignment's value into one field (assignments are not
    /// split into words).
    pub(crate) fn expand_value(&mut self, w: &Word) -> Field {
        let fields = self.expand(w);
        Field {
            text: fields
                .iter()
                .map(|f| f.text.as_str())
                .collect::<Vec<_>>()
                .join(" "),
            known: fields.iter().all(|f| f.known),
            glob: false,
            computed: fields.iter().any(|f| f.computed),
        }
    }

    /// Expands every word of a command line.
    pub(crate) fn expand_all(&mut self, words: &[Word]) -> Vec<Field> {
        let mut out = Vec::new();
        for w in words {
            out.extend(self.expand(w));
        }
        out
    }

    /// The atoms of one part of a word. Each value a parameter or a
    /// command substitution expands to is paid for from the work budget
    /// by its length, so that values doubling from assignment to
    /// assignment (`a=$a$a`, 40 times in 300 bytes, would be a terabyte)
    /// exhaust the budget (an `unanalyzable` match) instead of memory.
    fn atoms_of(&mut self, part: &Part, out: &mut Vec<Atom>) {
        match part {
            Part::Lit { text, quoted } => {
                let flags = if *quoted { 0 } else { BRACE | GLOB };
                out.extend(text.chars().map(|c| Atom::Ch(c, flags)));
            }
            Part::Param {
                name,
                simple,
                quoted,
                nested,
            } if self.list_param(name, *simple, nested).is_some() => {
                let (elems, separate) = self.list_param(name, *simple, nested).unwrap_or_default();
                for (i, e) in elems.iter().enumerate() {
                    if i > 0 {
                        if separate || !*quoted {
                            out.push(Atom::Split);
                        } else {
                            out.push(Atom::Ch(' ', 0));
                        }
                    }
                    // An element partly unknown keeps what is known of it
                    // (`~/.ssh/…`, the names `find -exec` hands a shell).
                    let partly = e.known || e.text.contains(UNKNOWN);
                    if partly && self.spend(e.text.len()) {
                        self.push_expansion(&e.text, *quoted, e.computed, out);
                    } else {
                        out.push(Atom::Unknown);
                    }
                }
            }
            Part::Param {
                name,
                simple: true,
                quoted,
                ..
            } => match self.var_value(name) {
                Some(v) if self.spend(v.len()) => {
                    let computed = self.scope.taint.get(name).is_some_and(|t| t.computed);
                    self.push_expansion(&v, *quoted, computed, out);
                }
                _ => out.push(Atom::Unknown),
            },
            Part::CmdSub { list, quoted } => match self.static_output(list) {
                Some(v) if self.spend(v.len()) => {
                    self.push_expansion(v.trim_end_matches('\n'), *quoted, true, out);
                }
                _ => out.push(Atom::Unknown),
            },
            Part::Param { .. } | Part::Arith { .. } | Part::ProcSub { .. } => {
                out.push(Atom::Unknown);
            }
        }
    }

    fn push_expansion(&self, value: &str, quoted: bool, computed: bool, out: &mut Vec<Atom>) {
        let from = if computed { COMPUTED } else { 0 };
        if quoted {
            out.extend(value.chars().map(|c| Atom::Ch(c, from)));
            return;
        }
        let ifs = self.scope.ifs.as_deref().unwrap_or(" \t\n");
        for c in value.chars() {
            if ifs.contains(c) {
                if out.last() != Some(&Atom::Split) {
                    out.push(Atom::Split);
                }
            } else {
                out.push(Atom::Ch(c, GLOB | from));
            }
        }
    }

    /// The value of a variable when the script set it to a known value.
    pub(crate) fn var_value(&self, name: &str) -> Option<String> {
        match self.scope.vars.get(name) {
            Some(v) => v.clone(),
            None if name == "HOME" => Some("~".to_string()),
            None if name == "PWD" => self.scope.cwd.clone(),
            None if SEARCH_PATHS.contains(&name) => Some(INHERITED.to_string()),
            None => None,
        }
    }
}

fn field_of(atoms: &[Atom]) -> Field {
    let mut f = Field {
        known: true,
        ..Field::default()
    };
    // `[` starts a pattern only when a `]` closes it (`[` alone is the
    // test command).
    let mut open_bracket = false;
    for a in atoms {
        match a {
            Atom::Ch(c, flags) => {
                if flags & GLOB != 0 && matches!(c, '*' | '?') || open_bracket && *c == ']' {
                    f.glob = true;
                }
                if flags & GLOB != 0 && *c == '[' {
                    open_bracket = true;
                }
                if *c == UNKNOWN || *c == INHERITED {
                    f.known = false;
                }
                f.computed |= flags & COMPUTED != 0;
                f.text.push(*c);
            }
            Atom::Unknown => {
                f.known = false;
                f.text.push(UNKNOWN);
            }
            Atom::Split => {}
        }
    }
    f
}

/// Bash brace expansion (`a{b,c}d`, `{1..3}`, `{a..e}`), bounded in results
/// and recursion.
fn brace_expand(atoms: &[Atom], out: &mut Vec<Vec<Atom>>, budget: &mut usize, depth: usize) {
    if *budget == 0 || depth > 16 {
        out.push(atoms.to_vec());
        return;
    }
    let mut stack: Vec<(usize, Vec<usize>)> = Vec::new();
    for (i, a) in atoms.iter().enumerate() {
        match a {
            Atom::Ch('{', f) if f & BRACE != 0 => stack.push((i, Vec::new())),
            Atom::Ch(',', f) if f & BRACE != 0 => {
                if let Some(top) = stack.last_mut() {
                    top.1.push(i);
                }
            }
            Atom::Ch('}', f) if f & BRACE != 0 => {
                let Some((open, commas)) = stack.pop() else {
                    continue;
                };
                let inner = atoms.get(open + 1..i).unwrap_or_default();
                let alternatives: Vec<Vec<Atom>> = if commas.is_empty() {
                    match sequence(inner) {
                        Some(seq) => seq,
                        None => continue,
                    }
                } else {
                    let mut alts = Vec::new();
                    let mut from = open + 1;
                    for &c in commas.iter().chain(std::iter::once(&i)) {
                        alts.push(atoms.get(from..c).unwrap_or_default().to_vec());
                        from = c + 1;
                    }
                    alts
                };
                let prefix = atoms.get(..open).unwrap_or_default();
                let suffix = atoms.get(i + 1..).unwrap_or_default();
                for alt in alternatives {
                    let mut v = Vec::with_capacity(prefix.len() + alt.len() + suffix.len());
                    v.extend_from_slice(prefix);
                    v.extend(alt);
                    v.extend_from_slice(suffix);
                    brace_expand(&v, out, budget, depth + 1);
                    if *budget == 0 {
                        return;
                    }
                }
                return;
            }
            _ => {}
        }
    }
    *budget -= 1;
    out.push(atoms.to_vec());
}

/// `{x..y}` with single characters or integers, at most 64 items.
fn sequence(inner: &[Atom]) -> Option<Vec<Vec<Atom>>> {
    let text: String = inner
        .iter()
        .map(|a| match a {
            Atom::Ch(c, _) => Some(*c),
            _ => None,
        })
        .collect::<Option<String>>()?;
    let (a, b) = text.split_once("..")?;
    let (a, b) = (a.trim(), b.split("..").next()?.trim());
    let lit = |s: String| s.chars().map(|c| Atom::Ch(c, 0)).collect::<Vec<_>>();
    if let (Ok(x), Ok(y)) = (a.parse::<i64>(), b.parse::<i64>()) {
        if x.abs_diff(y) > 64 {
            return None;
        }
        let items: Vec<i64> = if x <= y {
            (x..=y).collect()
        } else {
            (y..=x).rev().collect()
        };
        return Some(items.into_iter().map(|n| lit(n.to_string())).collect());
    }
    let (mut ca, mut cb) = (a.chars(), b.chars());
    let (x, y) = (ca.next()?, cb.next()?);
    if ca.next().is_some() || cb.next().is_some() || !x.is_ascii() || !y.is_ascii() {
        return None;
    }
    let (lo, hi) = if x <= y { (x, y) } else { (y, x) };
    let mut items: Vec<char> = (lo..=hi).collect();
    if x > y {
        items.reverse();
    }
    Some(items.into_iter().map(|c| lit(c.to_string())).collect())
}
