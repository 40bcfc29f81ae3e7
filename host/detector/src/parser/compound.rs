//! Compound commands and function definitions.

use super::{Parser, is_meta};
use crate::ast::{Command, Compound, CompoundKind, Function, List, Redirect, Word};

impl Parser<'_> {
    fn compound(&mut self, kind: CompoundKind, start: usize, lists: Vec<List>, words: Vec<Word>) -> Compound {
        let redirects: Vec<Redirect> = self.trailing_redirects();
        Compound {
            kind,
            lists,
            words,
            redirects,
            raw: self.slice(start, self.pos),
        }
    }

    /// Consumes the reserved word `w` if it stands here.
    fn expect(&mut self, w: &str) -> bool {
        self.blanks_and_newlines();
        if self.reserved_here() == Some(w) || self.word_here(w) {
            self.pos += w.len();
            true
        } else {
            false
        }
    }

    /// Whether the plain word `w` stands alone at the current position.
    fn word_here(&self, w: &str) -> bool {
        self.starts_with(w) && self.b.get(self.pos + w.len()).is_none_or(|&c| is_meta(c))
    }

    /// `( list )` or `(( arithmetic ))`.
    pub(super) fn paren_command(&mut self) -> Compound {
        let start = self.pos;
        if self.peek_at(1) == Some(b'(')
            && let Some(end) = self.arith_end(self.pos + 2)
        {
            let text = self.src.get(self.pos + 2..end).unwrap_or_default().to_string();
            self.pos = end + 2;
            let parts = self.sub_parts(&text).unwrap_or_default();
            let word = Word { parts, raw: text };
            return self.compound(CompoundKind::Arith, start, Vec::new(), vec![word]);
        }
        self.bump();
        let list = self.nested_parens().unwrap_or_default();
        self.compound(CompoundKind::Subshell, start, vec![list], Vec::new())
    }

    /// `{ list; }`
    pub(super) fn group(&mut self) -> Compound {
        let start = self.pos;
        self.bump();
        let list = self.list();
        self.expect("}");
        self.compound(CompoundKind::Group, start, vec![list], Vec::new())
    }

    /// `if list; then list; [elif list; then list;]... [else list;] fi`
    pub(super) fn if_command(&mut self) -> Compound {
        let start = self.pos;
        self.pos += 2;
        let mut lists = Vec::new();
        loop {
            lists.push(self.list());
            self.expect("then");
            lists.push(self.list());
            self.blanks_and_newlines();
            match self.reserved_here() {
                Some("elif") => self.pos += 4,
                Some("else") => {
                    self.pos += 4;
                    lists.push(self.list());
                    self.expect("fi");
                    break;
                }
                Some("fi") => {
                    self.pos += 2;
                    break;
                }
                _ => break,
            }
        }
        self.compound(CompoundKind::If, start, lists, Vec::new())
    }

    /// `while list; do list; done` and `until ...`.
    pub(super) fn while_command(&mut self, until: bool) -> Compound {
        let start = self.pos;
        self.pos += 5;
        let cond = self.list();
        let body = self.do_body();
        self.compound(CompoundKind::While { until }, start, vec![cond, body], Vec::new())
    }

    /// `do list; done`, or `{ list; }` as bash also accepts after `for`.
    fn do_body(&mut self) -> List {
        self.blanks_and_newlines();
        if self.reserved_here() == Some("{") {
            self.bump();
            let body = self.list();
            self.expect("}");
            return body;
        }
        self.expect("do");
        let body = self.list();
        self.expect("done");
        body
    }

    /// After `for`/`select`: `name [in words]; do list; done` or `((;;))`.
    pub(super) fn for_command(&mut self, start: usize) -> Compound {
        self.blanks();
        if self.starts_with("((") {
            let end = self.arith_end(self.pos + 2).unwrap_or(self.b.len());
            let text = self.src.get(self.pos + 2..end).unwrap_or_default().to_string();
            self.pos = (end + 2).min(self.b.len());
            let infinite = text.split(';').nth(1).is_none_or(|c| c.trim().is_empty());
            let parts = self.sub_parts(&text).unwrap_or_default();
            self.blanks();
            if self.peek() == Some(b';') {
                self.bump();
            }
            let body = self.do_body();
            let word = Word { parts, raw: text };
            return self.compound(CompoundKind::ArithFor { infinite }, start, vec![body], vec![word]);
        }
        let mut words = vec![self.word()];
        self.blanks_and_newlines();
        if self.word_here("in") {
            self.pos += 2;
            loop {
                self.blanks();
                match self.peek() {
                    None | Some(b';' | b'\n') => break,
                    Some(_) => {}
                }
                let before = self.pos;
                let w = self.word();
                if self.pos == before {
                    break;
                }
                words.push(w);
            }
        }
        self.blanks();
        if self.peek() == Some(b';') {
            self.bump();
        }
        let body = self.do_body();
        self.compound(CompoundKind::For, start, vec![body], words)
    }

    /// `case word in [(]pattern[|pattern]...) list ;; ... esac`
    pub(super) fn case_command(&mut self) -> Compound {
        let start = self.pos;
        self.pos += 4;
        self.blanks();
        let mut words = vec![self.word()];
        let mut lists = Vec::new();
        self.blanks_and_newlines();
        if self.word_here("in") {
            self.pos += 2;
        }
        loop {
            self.blanks_and_newlines();
            let round = self.pos;
            if self.reserved_here() == Some("esac") {
                self.pos += 4;
                break;
            }
            if self.peek().is_none() {
                break;
            }
            if self.peek() == Some(b'(') {
                self.bump();
            }
            loop {
                self.blanks();
                match self.peek() {
                    Some(b')') => {
                        self.bump();
                        break;
                    }
                    Some(b'|') => self.bump(),
                    None | Some(b'\n' | b';') => break,
                    Some(_) => {
                        let before = self.pos;
                        let w = self.word();
                        if self.pos == before {
                            self.bump();
                        } else {
                            words.push(w);
                        }
                    }
                }
            }
            lists.push(self.list());
            self.blanks_and_newlines();
            for t in [";;&", ";;", ";&"] {
                if self.starts_with(t) {
                    self.pos += t.len();
                    break;
                }
            }
            if self.pos == round {
                self.bump();
            }
        }
        self.compound(CompoundKind::Case, start, lists, words)
    }

    /// `[[ expression ]]`: its words (operators are skipped).
    pub(super) fn cond_command(&mut self) -> Compound {
        let start = self.pos;
        self.pos += 2;
        let mut words = Vec::new();
        loop {
            self.blanks_and_newlines();
            if self.word_here("]]") {
                self.pos += 2;
                break;
            }
            match self.peek() {
                None => break,
                Some(b'(' | b')' | b'!' | b'<' | b'>' | b'&' | b'|' | b';') => self.bump(),
                Some(_) => {
                    let before = self.pos;
                    let w = self.word();
                    if self.pos == before {
                        self.bump();
                    } else {
                        words.push(w);
                    }
                }
            }
        }
        self.compound(CompoundKind::Cond, start, Vec::new(), words)
    }

    /// `function name [()] body`
    pub(super) fn function_keyword(&mut self) -> Option<Command> {
        let start = self.pos;
        self.pos += 8;
        self.blanks();
        let name = self.word();
        self.blanks();
        if self.peek() == Some(b'(') {
            self.bump();
            self.blanks();
            if self.peek() == Some(b')') {
                self.bump();
            }
        }
        Some(self.function_body(start, &name))
    }

    /// `name ( ) body` once `name` has been read; `None` (position kept)
    /// when the parentheses are not an empty pair.
    pub(super) fn function_parens(&mut self, start: usize, name: &Word) -> Option<Command> {
        let save = self.pos;
        self.bump();
        self.blanks();
        if self.peek() != Some(b')') {
            self.pos = save;
            return None;
        }
        self.bump();
        Some(self.function_body(start, name))
    }

    fn function_body(&mut self, start: usize, name: &Word) -> Command {
        self.blanks_and_newlines();
        let body = self.command().unwrap_or_else(|| {
            Command::Compound(Compound {
                kind: CompoundKind::Group,
                lists: Vec::new(),
                words: Vec::new(),
                redirects: Vec::new(),
                raw: String::new(),
            })
        });
        Command::Function(Function {
            name: name.literal().unwrap_or_else(|| name.raw.clone()),
            body: Box::new(body),
            raw: self.slice(start, self.pos),
        })
    }
}
