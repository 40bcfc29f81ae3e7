//! A tolerant parser for the POSIX/bash command language.
//!
//! Why not a parser crate: `brush-parser` 0.4 (the best-kept candidate; it
//! builds here) overflows the stack and aborts the process on 100k nested
//! parentheses, rejects a whole script over one syntax error at its end
//! (while bash would already have run the lines before it), and pulls in
//! snapshot-testing crates as runtime dependencies. `conch-parser` is
//! unmaintained since 2017 and `yash-syntax` is GPL. A detector needs the
//! opposite trade-offs: a hard depth bound that ends parsing instead of
//! crashing, recovery that keeps every command bash could run, and quoting
//! details kept per word part. So this parser is written for that purpose.
//!
//! It covers words with single/double quotes, backslash escapes, `$'..'`,
//! `$".."`, parameters, `$( )`, backticks, `$(( ))`, `<( )`/`>( )`, extglob;
//! pipes, `;`, `&&`, `||`, `&`, newlines, comments, subshells, groups,
//! `if`/`while`/`until`/`for`/`select`/`case`, `(( ))`, `[[ ]]`, function
//! definitions, assignments (including arrays) and every redirection form
//! including heredocs (their bodies are parsed for substitutions unless the
//! delimiter is quoted).
//!
//! Every loop consumes input or stops, so parsing is linear in the input;
//! nesting deeper than the limit sets [`Parser::too_deep`] and makes the
//! parser see end-of-input, which unwinds it at once.

mod compound;
mod heredoc;
mod word;

use super::ast::{Command, Item, List, Part, Pipeline, RedirOp, Redirect, Simple, Word};

/// Terminating reserved words: a list ends before any of them.
const TERMINATORS: &[&str] = &["then", "elif", "else", "fi", "do", "done", "esac", "}"];

/// The parser state over one source text.
#[derive(Debug)]
pub(crate) struct Parser<'a> {
    src: &'a str,
    b: &'a [u8],
    pos: usize,
    depth: usize,
    max_depth: usize,
    /// Set when nesting exceeded the limit; the tree is then incomplete.
    pub too_deep: bool,
    pending: Vec<heredoc::Pending>,
    bodies: Vec<Option<Word>>,
}

/// Parses `src` as a whole script, starting at nesting `depth`.
/// Returns the tree and whether the nesting limit was hit.
pub(crate) fn parse(src: &str, depth: usize, max_depth: usize) -> (List, bool) {
    let mut p = Parser::new(src, depth, max_depth);
    let list = p.program();
    (list, p.too_deep)
}

impl<'a> Parser<'a> {
    fn new(src: &'a str, depth: usize, max_depth: usize) -> Parser<'a> {
        Parser {
            src,
            b: src.as_bytes(),
            pos: 0,
            depth,
            max_depth,
            too_deep: depth > max_depth,
            pending: Vec::new(),
            bodies: Vec::new(),
        }
    }

    /// The next byte, or `None` at the end (or once too deep).
    fn peek(&self) -> Option<u8> {
        if self.too_deep {
            return None;
        }
        self.b.get(self.pos).copied()
    }

    fn peek_at(&self, off: usize) -> Option<u8> {
        if self.too_deep {
            return None;
        }
        self.b.get(self.pos + off).copied()
    }

    fn starts_with(&self, s: &str) -> bool {
        !self.too_deep
            && self
                .b
                .get(self.pos..)
                .is_some_and(|r| r.starts_with(s.as_bytes()))
    }

    /// Consumes one character (never stopping inside a UTF-8 sequence).
    fn bump(&mut self) {
        let _ = self.bump_char();
    }

    /// Consumes one whole character and returns it; always makes progress
    /// while input remains.
    fn bump_char(&mut self) -> Option<char> {
        match self.src.get(self.pos..).and_then(|r| r.chars().next()) {
            Some(c) => {
                self.pos += c.len_utf8();
                Some(c)
            }
            None => {
                if self.pos < self.b.len() {
                    self.pos += 1;
                }
                None
            }
        }
    }

    fn slice(&self, from: usize, to: usize) -> String {
        self.src.get(from..to).unwrap_or_default().trim().to_string()
    }

    /// Enters one nesting level; false (and `too_deep`) past the limit.
    fn enter(&mut self) -> bool {
        self.depth += 1;
        if self.depth > self.max_depth {
            self.too_deep = true;
        }
        !self.too_deep
    }

    fn leave(&mut self) {
        self.depth = self.depth.saturating_sub(1);
    }

    /// Parses a backtick text as a script, one level deeper.
    fn sub_program(&mut self, text: &str) -> Option<List> {
        let mut p = Parser::new(text, self.depth + 1, self.max_depth);
        let list = p.program();
        if p.too_deep {
            self.too_deep = true;
            return None;
        }
        Some(list)
    }

    /// Parses a heredoc body or arithmetic text for substitutions, one
    /// level deeper.
    fn sub_parts(&mut self, text: &str) -> Option<Vec<Part>> {
        let mut p = Parser::new(text, self.depth + 1, self.max_depth);
        let mut b = word::Buf::default();
        p.inner(word::Mode::Heredoc, &mut b, true);
        let mut parts = b.finish();
        p.finish();
        heredoc::fill_parts(&mut parts, &mut p.bodies);
        if p.too_deep {
            self.too_deep = true;
            return None;
        }
        Some(parts)
    }

    /// The whole script: lists, skipping stray terminators so that every
    /// command bash could still run is kept.
    fn program(&mut self) -> List {
        let mut out = List::default();
        loop {
            let list = self.list();
            out.items.extend(list.items);
            if self.peek().is_none() {
                break;
            }
            let before = self.pos;
            if let Some(w) = self.reserved_here() {
                self.pos += w.len();
            } else {
                self.bump();
            }
            if self.pos == before {
                break;
            }
        }
        self.finish();
        heredoc::fill_list(&mut out, &mut self.bodies);
        out
    }

    /// Skips spaces, tabs, line continuations and comments.
    fn blanks(&mut self) {
        while let Some(c) = self.peek() {
            match c {
                b' ' | b'\t' | b'\r' => self.bump(),
                b'\\' if self.peek_at(1) == Some(b'\n') => self.pos += 2,
                b'#' => {
                    while self.peek().is_some_and(|c| c != b'\n') {
                        self.bump();
                    }
                }
                _ => break,
            }
        }
    }

    /// Skips blanks and newlines (reading heredoc bodies at each newline).
    fn blanks_and_newlines(&mut self) {
        loop {
            self.blanks();
            if self.peek() == Some(b'\n') {
                self.newline();
            } else {
                break;
            }
        }
    }

    /// The reserved word at the current position, if one stands alone there.
    fn reserved_here(&self) -> Option<&'static str> {
        const WORDS: &[&str] = &[
            "then", "elif", "else", "fi", "do", "done", "esac", "}", "{", "if", "while", "until", "for",
            "select", "case", "function", "[[", "!", "time", "coproc",
        ];
        let rest = self.b.get(self.pos..)?;
        WORDS
            .iter()
            .copied()
            .find(|w| rest.starts_with(w.as_bytes()) && rest.get(w.len()).is_none_or(|&c| is_meta(c)))
    }

    fn at_terminator(&self) -> bool {
        self.reserved_here().is_some_and(|w| TERMINATORS.contains(&w))
            || self.peek() == Some(b')')
            || self.starts_with(";;")
            || self.starts_with(";&")
    }

    /// A list up to end of input, `)`, a case-arm end or a terminating
    /// reserved word.
    fn list(&mut self) -> List {
        let mut list = List::default();
        loop {
            self.blanks();
            match self.peek() {
                None => break,
                Some(b'\n') => {
                    self.newline();
                    continue;
                }
                Some(b';') if !self.starts_with(";;") && !self.starts_with(";&") => {
                    self.bump();
                    continue;
                }
                Some(b'&') if !self.starts_with("&>") => {
                    self.bump();
                    continue;
                }
                _ => {}
            }
            if self.at_terminator() {
                break;
            }
            let before = self.pos;
            let pipelines = self.and_or();
            self.blanks();
            let mut background = false;
            if self.peek() == Some(b'&') && !self.starts_with("&&") && !self.starts_with("&>") {
                self.bump();
                background = true;
            } else if self.peek() == Some(b';') && !self.starts_with(";;") && !self.starts_with(";&") {
                self.bump();
            }
            if !pipelines.is_empty() {
                list.items.push(Item {
                    pipelines,
                    background,
                });
            }
            if self.pos == before {
                // Nothing could be parsed here (a stray `(` or `|`): skip it.
                if self.at_terminator() {
                    break;
                }
                self.bump();
            }
        }
        list
    }

    fn and_or(&mut self) -> Vec<Pipeline> {
        let mut out = vec![self.pipeline()];
        loop {
            self.blanks();
            if self.starts_with("&&") || self.starts_with("||") {
                self.pos += 2;
                self.blanks_and_newlines();
                out.push(self.pipeline());
            } else {
                break;
            }
        }
        out.retain(|p| !p.commands.is_empty());
        out
    }

    fn pipeline(&mut self) -> Pipeline {
        let mut p = Pipeline::default();
        self.blanks();
        let start = self.pos;
        loop {
            match self.reserved_here() {
                Some("!") => self.pos += 1,
                Some("time") => {
                    self.pos += 4;
                    self.blanks();
                    if self.starts_with("-p ") {
                        self.pos += 2;
                    }
                }
                Some("coproc") => self.pos += 6,
                _ => break,
            }
            self.blanks();
        }
        loop {
            if let Some(c) = self.command() {
                p.commands.push(c);
            }
            self.blanks();
            if self.peek() == Some(b'|') && self.peek_at(1) != Some(b'|') {
                self.bump();
                if self.peek() == Some(b'&') {
                    self.bump();
                }
                self.blanks_and_newlines();
            } else {
                break;
            }
        }
        p.raw = self.slice(start, self.pos);
        p
    }

    /// One command: compound, function definition or simple.
    fn command(&mut self) -> Option<Command> {
        self.blanks();
        if self.peek().is_none() || self.at_terminator() {
            return None;
        }
        if !self.enter() {
            return None;
        }
        let out = self.command_inner();
        self.leave();
        out
    }

    fn command_inner(&mut self) -> Option<Command> {
        if self.peek() == Some(b'(') {
            return Some(Command::Compound(self.paren_command()));
        }
        match self.reserved_here() {
            Some("{") => return Some(Command::Compound(self.group())),
            Some("if") => return Some(Command::Compound(self.if_command())),
            Some(w @ ("while" | "until")) => {
                return Some(Command::Compound(self.while_command(w == "until")));
            }
            Some(w @ ("for" | "select")) => {
                let start = self.pos;
                self.pos += w.len();
                return Some(Command::Compound(self.for_command(start)));
            }
            Some("case") => return Some(Command::Compound(self.case_command())),
            Some("[[") => return Some(Command::Compound(self.cond_command())),
            Some("function") => return self.function_keyword(),
            _ => {}
        }
        self.simple()
    }

    /// A simple command, or a function definition `name() body`.
    fn simple(&mut self) -> Option<Command> {
        let start = self.pos;
        let mut cmd = Simple::default();
        loop {
            self.blanks();
            let Some(c) = self.peek() else { break };
            if matches!(c, b'\n' | b';' | b'&' | b'|' | b')') && !self.starts_with("&>") {
                break;
            }
            if c == b'(' {
                if cmd.words.len() == 1
                    && cmd.assigns.is_empty()
                    && cmd.redirects.is_empty()
                    && let Some(f) = self.function_parens(start, &cmd.words[0])
                {
                    return Some(f);
                }
                break;
            }
            if let Some(r) = self.redirect() {
                cmd.redirects.push(r);
                continue;
            }
            if cmd.words.is_empty()
                && let Some(a) = self.assignment()
            {
                cmd.assigns.push(a);
                continue;
            }
            let before = self.pos;
            let w = self.word();
            if self.pos == before {
                break;
            }
            cmd.words.push(w);
        }
        cmd.raw = self.slice(start, self.pos);
        if cmd.words.is_empty() && cmd.assigns.is_empty() && cmd.redirects.is_empty() {
            return None;
        }
        Some(Command::Simple(cmd))
    }

    /// Redirections after a compound command.
    fn trailing_redirects(&mut self) -> Vec<Redirect> {
        let mut out = Vec::new();
        loop {
            self.blanks();
            match self.redirect() {
                Some(r) => out.push(r),
                None => break,
            }
        }
        out
    }

    /// A redirection at the current position, if one starts here.
    fn redirect(&mut self) -> Option<Redirect> {
        let start = self.pos;
        let mut i = self.pos;
        while self.b.get(i).is_some_and(u8::is_ascii_digit) {
            i += 1;
        }
        if i == self.pos && self.peek() == Some(b'{') {
            let mut j = i + 1;
            while self
                .b
                .get(j)
                .is_some_and(|c| c.is_ascii_alphanumeric() || *c == b'_')
            {
                j += 1;
            }
            if j > i + 1 && self.b.get(j) == Some(&b'}') {
                i = j + 1;
            }
        }
        let rest = self.b.get(i..)?;
        if self.too_deep || rest.starts_with(b"<(") || rest.starts_with(b">(") {
            return None;
        }
        let ops: [(&[u8], RedirOp); 12] = [
            (b"&>>", RedirOp::Append),
            (b"&>", RedirOp::Out),
            (b"<<<", RedirOp::HereString),
            (b"<<-", RedirOp::Heredoc),
            (b"<<", RedirOp::Heredoc),
            (b"<>", RedirOp::ReadWrite),
            (b"<&", RedirOp::Dup),
            (b"<", RedirOp::In),
            (b">>", RedirOp::Append),
            (b">|", RedirOp::Out),
            (b">&", RedirOp::Dup),
            (b">", RedirOp::Out),
        ];
        let &(tok, mut op) = ops.iter().find(|(t, _)| rest.starts_with(t))?;
        if i > self.pos && tok.starts_with(b"&") {
            return None;
        }
        self.pos = i + tok.len();
        self.blanks();
        if op == RedirOp::Heredoc {
            let strip = tok.ends_with(b"-");
            return Some(self.heredoc_redirect(start, strip));
        }
        let target = self.word();
        if op == RedirOp::Dup {
            let lit = target.literal().unwrap_or_default();
            let is_fd = !lit.is_empty() && lit.trim_end_matches('-').bytes().all(|c| c.is_ascii_digit());
            if !is_fd {
                op = if tok.starts_with(b"<") {
                    RedirOp::In
                } else {
                    RedirOp::Out
                };
            }
        }
        Some(Redirect {
            op,
            target,
            raw: self.slice(start, self.pos),
            heredoc: None,
        })
    }
}

/// Shell metacharacters that end an unquoted word.
pub(crate) fn is_meta(c: u8) -> bool {
    matches!(
        c,
        b' ' | b'\t' | b'\n' | b'\r' | b';' | b'&' | b'|' | b'<' | b'>' | b'(' | b')'
    )
}
