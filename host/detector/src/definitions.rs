//! Names a script defines and uses later: aliases, functions, arrays and
//! positional parameters.
//!
//! A function's body is judged where it is defined (its arguments unknown)
//! and again at every call, with the call's arguments as `$1`, `$@`, ...
//! (`f(){ rm "$@"; }; f -rf /` deletes `/`). An alias is expanded where it
//! is used, as bash does, and the result analysed (`alias x='rm -rf'; x d`).
//! Arrays keep their elements (`a=(rm -rf d); "${a[@]}"`).
//!
//! Work stays bounded: a call already in progress is not entered again
//! (`f(){ f; }; f`), a call with the same name, arguments and variables as
//! an earlier one is not analysed twice (so `f(){ g; g; }; g(){ h; h; }`
//! stays linear), and past [`MAX_EXPANSIONS`] calls and alias expansions
//! the command is `unanalyzable`.

use std::collections::HashSet;
use std::collections::hash_map::DefaultHasher;
use std::hash::{Hash, Hasher};
use std::rc::Rc;

use super::analyze::{Analyzer, Input, Place};
use super::ast::{Assign, Function, Part, Simple};
use super::expand::{Field, UNKNOWN};
use crate::verdict::Category;

/// The most function calls and alias expansions analysed per reading.
pub(crate) const MAX_EXPANSIONS: usize = 512;

/// Function calls and alias expansions in progress and done.
#[derive(Debug, Default)]
pub(crate) struct Calls {
    /// Functions being called, innermost last.
    functions: Vec<String>,
    /// Aliases being expanded, innermost last.
    aliases: Vec<String>,
    /// Calls already analysed (name, arguments, variables).
    seen: HashSet<u64>,
    /// Calls and expansions analysed so far.
    count: usize,
    /// Bumped whenever a variable changes (part of a call's identity).
    pub version: u64,
}

impl Analyzer {
    /// Records a function definition (the body was judged already).
    pub(crate) fn define_function(&mut self, f: &Function) {
        self.scope
            .functions
            .insert(f.name.clone(), Rc::new((*f.body).clone()));
    }

    /// Records or removes definitions made by builtins: `alias`,
    /// `unalias`, `unset -f`.
    pub(crate) fn definition_builtin(&mut self, name: &str, args: &[Field]) {
        match name {
            "alias" => {
                for f in args {
                    if let Some((n, v)) = f.text.split_once('=') {
                        let value = (f.known && !v.contains(UNKNOWN)).then(|| v.to_string());
                        self.scope.aliases.insert(n.to_string(), value);
                    }
                }
            }
            "unalias" => {
                if args.iter().any(|f| f.text == "-a") {
                    self.scope.aliases.clear();
                }
                for f in args {
                    self.scope.aliases.remove(&f.text);
                }
            }
            "unset" if args.iter().any(|f| f.text == "-f") => {
                for f in args {
                    self.scope.functions.remove(&f.text);
                }
            }
            _ => {}
        }
    }

    /// Counts one call or expansion; false (and one `unanalyzable`
    /// finding) past the limit.
    fn count_expansion(&mut self, raw: &str) -> bool {
        self.calls.count += 1;
        if self.calls.count == MAX_EXPANSIONS + 1 {
            self.add(
                Category::Unanalyzable,
                raw,
                "the command calls functions or aliases too often to analyse",
            );
        }
        self.calls.count <= MAX_EXPANSIONS
    }

    /// Expands an alias in command position and analyses the result.
    /// True when `s` was an alias use (then it is fully handled).
    pub(crate) fn expand_alias(&mut self, s: &Simple, stdin: &Input) -> bool {
        let Some(first) = s.words.first() else {
            return false;
        };
        let [
            Part::Lit {
                text: name,
                quoted: false,
            },
        ] = first.parts.as_slice()
        else {
            return false;
        };
        let Some(value) = self.scope.aliases.get(name).cloned() else {
            return false;
        };
        if self.calls.aliases.contains(name) {
            return false;
        }
        let Some(value) = value else {
            self.add(
                Category::DynamicCommand,
                &s.raw,
                format!("runs the alias `{name}`, whose text is computed at run time"),
            );
            return true;
        };
        if !self.count_expansion(&s.raw) {
            return true;
        }
        let mut text = value;
        for w in s.words.iter().skip(1) {
            text.push(' ');
            text.push_str(&w.raw);
        }
        self.calls.aliases.push(name.clone());
        self.script(&text, stdin.clone());
        self.calls.aliases.pop();
        true
    }

    /// Calls a function the script defined, judging its body with the
    /// call's arguments. True when `fields` name a defined function.
    pub(crate) fn call_function(&mut self, fields: &[Field], stdin: &Input, place: Place<'_>) -> bool {
        let Some((first, args)) = fields.split_first() else {
            return false;
        };
        if first.computed || !first.known {
            return false;
        }
        let Some(body) = self.scope.functions.get(&first.text).cloned() else {
            return false;
        };
        if self.calls.functions.contains(&first.text) {
            // Recursion: the body is being judged already.
            return true;
        }
        let mut h = DefaultHasher::new();
        first.text.hash(&mut h);
        for a in args {
            a.text.hash(&mut h);
        }
        self.calls.version.hash(&mut h);
        if !self.calls.seen.insert(h.finish()) || !self.count_expansion(place.pipeline) {
            return true;
        }
        let saved = self.scope.positional.replace(args.to_vec());
        self.calls.functions.push(first.text.clone());
        let _ = self.command(&body, stdin, place);
        self.calls.functions.pop();
        self.scope.positional = saved;
        true
    }

    /// Records an array assignment (`a=(x y z)`, `a+=(w)`); false when
    /// `a` is not one.
    pub(crate) fn array_assignment(&mut self, a: &Assign) -> bool {
        let after = a.raw.get(a.name.len()..).unwrap_or_default();
        let append = after.starts_with("+=(");
        if !append && !after.starts_with("=(") {
            return false;
        }
        let mut elems = if append {
            self.scope.arrays.get(&a.name).cloned().unwrap_or_default()
        } else {
            Vec::new()
        };
        for w in &a.value {
            elems.extend(self.expand(w));
        }
        elems.truncate(4096);
        if self.cond > 0 && self.scope.arrays.get(&a.name) != Some(&elems) {
            // A conditional assignment: the elements are not known.
            elems = vec![Field {
                text: UNKNOWN.to_string(),
                ..Field::default()
            }];
        }
        self.scope.arrays.insert(a.name.clone(), elems);
        self.calls.version += 1;
        true
    }

    /// The elements a list-like parameter stands for, when known:
    /// positional parameters (`$1`, `$@`, `$*`, `$#`) and array elements
    /// (`${a[@]}`, `${a[1]}`). The flag tells whether a quoted use gives
    /// one field per element (`"$@"`, `"${a[@]}"`).
    pub(crate) fn list_param(&self, name: &str, simple: bool, nested: &[Part]) -> Option<(Vec<Field>, bool)> {
        if simple {
            let pos = self.scope.positional.as_ref()?;
            return match name {
                "@" => Some((pos.clone(), true)),
                "*" => Some((pos.clone(), false)),
                "#" => Some((vec![Field::lit(&pos.len().to_string())], false)),
                n if !n.is_empty() && n.bytes().all(|b| b.is_ascii_digit()) && n != "0" => {
                    let i: usize = n.parse().ok()?;
                    let v = pos
                        .get(i.checked_sub(1)?)
                        .cloned()
                        .unwrap_or_else(|| Field::lit(""));
                    Some((vec![v], false))
                }
                _ => None,
            };
        }
        let [Part::Lit { text, .. }] = nested else {
            return None;
        };
        let sub = text.strip_prefix('[')?.strip_suffix(']')?;
        let elems = match self.scope.arrays.get(name) {
            Some(a) => a.clone(),
            None => vec![Field::lit(&self.scope.vars.get(name)?.clone()?)],
        };
        match sub {
            "@" => Some((elems, true)),
            "*" => Some((elems, false)),
            n => {
                let i: usize = n.trim().parse().ok()?;
                Some((
                    vec![elems.get(i).cloned().unwrap_or_else(|| Field::lit(""))],
                    false,
                ))
            }
        }
    }
}
