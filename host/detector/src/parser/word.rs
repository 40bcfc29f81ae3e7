//! Words: quoting, escapes, parameters and substitutions.

use super::{Parser, is_meta};
use crate::ast::{Assign, List, Part, Word};

/// Where the characters being read stand.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) enum Mode {
    /// Inside `"..."`: ends before the closing quote.
    DoubleQuote,
    /// A heredoc body or an arithmetic text: runs to the end of the text,
    /// `"` is an ordinary character.
    Heredoc,
    /// The operand of `${name...}`: ends before the unmatched `}`.
    ParamOperand,
}

/// Collects the parts of a word, merging adjacent literal characters.
#[derive(Debug, Default)]
pub(super) struct Buf {
    parts: Vec<Part>,
    text: String,
    quoted: bool,
}

impl Buf {
    fn push(&mut self, c: char, quoted: bool) {
        if quoted != self.quoted && !self.text.is_empty() {
            self.flush();
        }
        self.quoted = quoted;
        self.text.push(c);
    }

    /// Adds a quoted literal as its own part, even when empty (`''`).
    fn quoted_lit(&mut self, text: String) {
        self.flush();
        self.parts.push(Part::Lit { text, quoted: true });
    }

    fn part(&mut self, p: Part) {
        self.flush();
        self.parts.push(p);
    }

    fn flush(&mut self) {
        if !self.text.is_empty() {
            self.parts.push(Part::Lit {
                text: std::mem::take(&mut self.text),
                quoted: self.quoted,
            });
        }
    }

    pub(super) fn finish(mut self) -> Vec<Part> {
        self.flush();
        self.parts
    }

    fn ends_with_extglob_prefix(&self) -> bool {
        !self.quoted && self.text.ends_with(['?', '*', '+', '@', '!'])
    }
}

impl Parser<'_> {
    /// One word up to the next unquoted metacharacter (possibly empty).
    pub(super) fn word(&mut self) -> Word {
        let start = self.pos;
        let mut buf = Buf::default();
        while let Some(c) = self.peek() {
            match c {
                b'<' | b'>' if self.peek_at(1) == Some(b'(') => {
                    self.pos += 2;
                    if let Some(list) = self.nested_parens() {
                        buf.part(Part::ProcSub {
                            list,
                            input: c == b'<',
                        });
                    }
                }
                b'(' if buf.ends_with_extglob_prefix() => self.extglob(&mut buf),
                c if is_meta(c) => break,
                b'\\' => match self.peek_at(1) {
                    Some(b'\n') => self.pos += 2,
                    Some(_) => {
                        self.bump();
                        if let Some(ch) = self.bump_char() {
                            buf.push(ch, true);
                        }
                    }
                    None => {
                        self.bump();
                        buf.push('\\', false);
                    }
                },
                b'\'' => {
                    self.bump();
                    let text = self.until_quote();
                    buf.quoted_lit(text);
                }
                b'"' => self.double_quoted(&mut buf),
                b'$' => self.dollar(&mut buf, false),
                b'`' => self.backtick(&mut buf, false),
                _ => {
                    if let Some(ch) = self.bump_char() {
                        buf.push(ch, false);
                    }
                }
            }
        }
        Word {
            parts: buf.finish(),
            raw: self.slice(start, self.pos),
        }
    }

    /// Text up to the next `'` (consumed); the rest of input if none.
    fn until_quote(&mut self) -> String {
        let start = self.pos;
        while self.peek().is_some_and(|c| c != b'\'') {
            self.bump();
        }
        let text = self.src.get(start..self.pos).unwrap_or_default().to_string();
        self.bump();
        text
    }

    fn double_quoted(&mut self, buf: &mut Buf) {
        self.bump();
        let before = buf.parts.len();
        self.inner(Mode::DoubleQuote, buf, true);
        if buf.parts.len() == before && buf.text.is_empty() {
            buf.quoted_lit(String::new());
        }
        if self.peek() == Some(b'"') {
            self.bump();
        }
    }

    /// Reads characters in `mode` into `buf` (see [`Mode`]).
    pub(super) fn inner(&mut self, mode: Mode, buf: &mut Buf, quoted: bool) {
        let mut braces = 0usize;
        while let Some(c) = self.peek() {
            match c {
                b'"' if mode == Mode::DoubleQuote => break,
                b'"' if mode == Mode::ParamOperand => self.double_quoted(buf),
                b'\'' if mode == Mode::ParamOperand && !quoted => {
                    self.bump();
                    let text = self.until_quote();
                    buf.quoted_lit(text);
                }
                b'{' if mode == Mode::ParamOperand => {
                    braces += 1;
                    self.bump();
                    buf.push('{', quoted);
                }
                b'}' if mode == Mode::ParamOperand => {
                    if braces == 0 {
                        break;
                    }
                    braces -= 1;
                    self.bump();
                    buf.push('}', quoted);
                }
                b'\\' => {
                    let next = self.peek_at(1);
                    let escapes = match mode {
                        Mode::DoubleQuote => matches!(next, Some(b'$' | b'`' | b'"' | b'\\')),
                        Mode::Heredoc => matches!(next, Some(b'$' | b'`' | b'\\')),
                        Mode::ParamOperand => next.is_some(),
                    };
                    if next == Some(b'\n') {
                        self.pos += 2;
                    } else if escapes {
                        self.bump();
                        if let Some(ch) = self.bump_char() {
                            buf.push(ch, true);
                        }
                    } else {
                        self.bump();
                        buf.push('\\', quoted);
                    }
                }
                b'$' => self.dollar(buf, quoted),
                b'`' => self.backtick(buf, quoted),
                _ => {
                    if let Some(ch) = self.bump_char() {
                        buf.push(ch, quoted);
                    }
                }
            }
        }
    }

    /// `$...`: ANSI-C and locale quotes, substitutions and parameters.
    fn dollar(&mut self, buf: &mut Buf, quoted: bool) {
        match self.peek_at(1) {
            Some(b'\'') if !quoted => {
                self.pos += 2;
                let text = self.ansi_c();
                buf.quoted_lit(text);
            }
            Some(b'"') if !quoted => {
                self.bump();
                self.double_quoted(buf);
            }
            Some(b'(') if self.peek_at(2) == Some(b'(') && self.arith_end(self.pos + 3).is_some() => {
                let from = self.pos + 3;
                let end = self.arith_end(from).unwrap_or(from);
                let text = self.src.get(from..end).unwrap_or_default().to_string();
                self.pos = end + 2;
                let nested = self.sub_parts(&text);
                buf.part(Part::Arith {
                    nested: nested.unwrap_or_default(),
                });
            }
            Some(b'(') => {
                self.pos += 2;
                if let Some(list) = self.nested_parens() {
                    buf.part(Part::CmdSub { list, quoted });
                }
            }
            Some(b'{') => {
                self.pos += 2;
                self.param_brace(buf, quoted);
            }
            Some(c) if c.is_ascii_alphabetic() || c == b'_' => {
                self.bump();
                let start = self.pos;
                while self
                    .peek()
                    .is_some_and(|c| c.is_ascii_alphanumeric() || c == b'_')
                {
                    self.bump();
                }
                let name = self.src.get(start..self.pos).unwrap_or_default().to_string();
                buf.part(Part::Param {
                    name,
                    simple: true,
                    quoted,
                    nested: Vec::new(),
                });
            }
            Some(c) if c.is_ascii_digit() || b"@*#?$!-".contains(&c) => {
                self.pos += 2;
                buf.part(Part::Param {
                    name: char::from(c).to_string(),
                    simple: true,
                    quoted,
                    nested: Vec::new(),
                });
            }
            _ => {
                self.bump();
                buf.push('$', quoted);
            }
        }
    }

    /// After `${`: the parameter name and any operand, to the closing `}`.
    fn param_brace(&mut self, buf: &mut Buf, quoted: bool) {
        let mut name = String::new();
        let mut prefixed = false;
        if matches!(self.peek(), Some(b'!' | b'#')) && self.peek_at(1) != Some(b'}') {
            prefixed = true;
            self.bump();
        }
        let start = self.pos;
        while self
            .peek()
            .is_some_and(|c| c.is_ascii_alphanumeric() || c == b'_')
        {
            self.bump();
        }
        if self.pos == start && self.peek().is_some_and(|c| b"@*#?$!-".contains(&c)) {
            self.bump();
        }
        name.push_str(self.src.get(start..self.pos).unwrap_or_default());
        let mut nested = Vec::new();
        if self.peek() != Some(b'}') && self.enter() {
            let mut b = Buf::default();
            self.inner(Mode::ParamOperand, &mut b, quoted);
            nested = b.finish();
            self.leave();
        }
        let simple = !prefixed && nested.is_empty();
        if self.peek() == Some(b'}') {
            self.bump();
        }
        buf.part(Part::Param {
            name,
            simple,
            quoted,
            nested,
        });
    }

    /// A backtick substitution: its text is unescaped and parsed anew.
    fn backtick(&mut self, buf: &mut Buf, quoted: bool) {
        self.bump();
        let mut content = String::new();
        loop {
            match self.peek() {
                None => break,
                Some(b'`') => {
                    self.bump();
                    break;
                }
                Some(b'\\') => match self.peek_at(1) {
                    Some(c @ (b'$' | b'`' | b'\\')) => {
                        content.push(char::from(c));
                        self.pos += 2;
                    }
                    Some(b'"') if quoted => {
                        content.push('"');
                        self.pos += 2;
                    }
                    _ => {
                        content.push('\\');
                        self.bump();
                    }
                },
                Some(_) => {
                    if let Some(ch) = self.bump_char() {
                        content.push(ch);
                    }
                }
            }
        }
        if let Some(list) = self.sub_program(&content) {
            buf.part(Part::CmdSub { list, quoted });
        }
    }

    /// The list inside `$( )`, `<( )` or `( )` after the opening paren,
    /// consuming the closing one; stray terminators inside are skipped.
    pub(super) fn nested_parens(&mut self) -> Option<List> {
        if !self.enter() {
            return None;
        }
        let mut out = List::default();
        loop {
            let l = self.list();
            out.items.extend(l.items);
            match self.peek() {
                None => break,
                Some(b')') => {
                    self.bump();
                    break;
                }
                Some(_) => {
                    let before = self.pos;
                    if let Some(w) = self.reserved_here() {
                        self.pos += w.len();
                    }
                    if self.pos == before {
                        self.bump();
                    }
                }
            }
        }
        self.leave();
        Some(out)
    }

    /// Where `((`-arithmetic starting at `from` closes with `))`, if it does.
    pub(super) fn arith_end(&self, from: usize) -> Option<usize> {
        let mut depth = 0usize;
        let mut i = from;
        while let Some(&c) = self.b.get(i) {
            match c {
                b'(' => depth += 1,
                b')' if depth == 0 => {
                    return (self.b.get(i + 1) == Some(&b')')).then_some(i);
                }
                b')' => depth -= 1,
                _ => {}
            }
            i += 1;
        }
        None
    }

    /// An extglob group such as `@(a|b)`, kept as unquoted literal text.
    fn extglob(&mut self, buf: &mut Buf) {
        let mut depth = 0usize;
        while let Some(c) = self.peek() {
            match c {
                b'(' => depth += 1,
                b')' => {
                    depth = depth.saturating_sub(1);
                    if depth == 0 {
                        self.bump();
                        buf.push(')', false);
                        return;
                    }
                }
                b'\n' => return,
                _ => {}
            }
            if let Some(ch) = self.bump_char() {
                buf.push(ch, false);
            }
        }
    }

    /// `NAME=value`, `NAME+=value`, `NAME[i]=value` or `NAME=(...)`.
    pub(super) fn assignment(&mut self) -> Option<Assign> {
        let rest = self.b.get(self.pos..)?;
        if self.too_deep
            || !rest
                .first()
                .is_some_and(|c| c.is_ascii_alphabetic() || *c == b'_')
        {
            return None;
        }
        let mut i = 0;
        while rest
            .get(i)
            .is_some_and(|c| c.is_ascii_alphanumeric() || *c == b'_')
        {
            i += 1;
        }
        let name = self.src.get(self.pos..self.pos + i)?.to_string();
        if rest.get(i) == Some(&b'[') {
            while rest.get(i).is_some_and(|&c| c != b']' && !is_meta(c)) {
                i += 1;
            }
            if rest.get(i) != Some(&b']') {
                return None;
            }
            i += 1;
        }
        if rest.get(i) == Some(&b'+') {
            i += 1;
        }
        if rest.get(i) != Some(&b'=') {
            return None;
        }
        let start = self.pos;
        self.pos += i + 1;
        let mut value = Vec::new();
        if self.peek() == Some(b'(') {
            self.bump();
            loop {
                self.blanks_and_newlines();
                match self.peek() {
                    None => break,
                    Some(b')') => {
                        self.bump();
                        break;
                    }
                    Some(_) => {}
                }
                let before = self.pos;
                let w = self.word();
                if self.pos == before {
                    self.bump();
                } else {
                    value.push(w);
                }
            }
        } else {
            value.push(self.word());
        }
        Some(Assign {
            name,
            value,
            raw: self.slice(start, self.pos),
        })
    }

    /// The body of `$'...'` after the opening quote, decoded.
    fn ansi_c(&mut self) -> String {
        let mut out = String::new();
        while let Some(c) = self.peek() {
            match c {
                b'\'' => {
                    self.bump();
                    break;
                }
                b'\\' => {
                    self.bump();
                    self.ansi_escape(&mut out);
                }
                _ => {
                    if let Some(ch) = self.bump_char() {
                        out.push(ch);
                    }
                }
            }
        }
        out
    }

    fn ansi_escape(&mut self, out: &mut String) {
        let Some(c) = self.peek() else {
            out.push('\\');
            return;
        };
        if !c.is_ascii() {
            out.push('\\');
            out.extend(self.bump_char());
            return;
        }
        self.bump();
        let simple = match c {
            b'a' => Some('\u{7}'),
            b'b' => Some('\u{8}'),
            b'e' | b'E' => Some('\u{1b}'),
            b'f' => Some('\u{c}'),
            b'n' => Some('\n'),
            b'r' => Some('\r'),
            b't' => Some('\t'),
            b'v' => Some('\u{b}'),
            b'\\' | b'\'' | b'"' | b'?' => Some(char::from(c)),
            _ => None,
        };
        if let Some(ch) = simple {
            out.push(ch);
            return;
        }
        let (radix, max, first) = match c {
            b'0'..=b'7' => (8, 2, Some(u32::from(c - b'0'))),
            b'x' => (16, 2, None),
            b'u' => (16, 4, None),
            b'U' => (16, 8, None),
            b'c' => {
                if let Some(x) = self.bump_char() {
                    out.push(char::from_u32(u32::from(x) & 0x1f).unwrap_or('\u{fffd}'));
                }
                return;
            }
            _ => {
                out.push('\\');
                out.push(char::from(c));
                return;
            }
        };
        let mut value = first.unwrap_or(0);
        let mut digits = usize::from(first.is_some());
        let limit = if first.is_some() { max + 1 } else { max };
        while digits < limit {
            let Some(d) = self.peek().and_then(|d| char::from(d).to_digit(radix)) else {
                break;
            };
            value = value.saturating_mul(radix).saturating_add(d);
            self.bump();
            digits += 1;
        }
        if digits == 0 {
            out.push('\\');
            out.push(char::from(c));
        } else if value != 0 {
            out.push(char::from_u32(value).unwrap_or('\u{fffd}'));
        }
    }
}
