//! Heredocs: the body lines follow the next newline, so a redirection only
//! reserves a slot; bodies are read at that newline and put into the tree
//! once the whole text has been parsed.

use super::Parser;
use crate::ast::{Command, List, Part, RedirOp, Redirect, Word};

/// A heredoc whose body has not been read yet.
#[derive(Debug)]
pub(super) struct Pending {
    delim: String,
    strip_tabs: bool,
    quoted: bool,
    slot: usize,
}

impl Parser<'_> {
    /// After `<<` or `<<-`: reads the delimiter and reserves a body slot.
    pub(super) fn heredoc_redirect(&mut self, start: usize, strip_tabs: bool) -> Redirect {
        let delim_word = self.word();
        let quoted = delim_word.raw.contains(['\'', '"', '\\']);
        let delim: String = delim_word
            .parts
            .iter()
            .map(|p| match p {
                Part::Lit { text, .. } => text.clone(),
                _ => String::new(),
            })
            .collect();
        let slot = self.bodies.len();
        self.bodies.push(None);
        self.pending.push(Pending {
            delim,
            strip_tabs,
            quoted,
            slot,
        });
        Redirect {
            op: RedirOp::Heredoc,
            target: Word::default(),
            raw: self.slice(start, self.pos),
            heredoc: Some(slot),
        }
    }

    /// Consumes a newline and reads the bodies of pending heredocs.
    pub(super) fn newline(&mut self) {
        self.bump();
        let pending = std::mem::take(&mut self.pending);
        for p in pending {
            self.read_body(p);
        }
    }

    fn read_body(&mut self, p: Pending) {
        let mut body = String::new();
        while !self.too_deep && self.pos < self.b.len() {
            let rest = self.src.get(self.pos..).unwrap_or_default();
            let line_len = rest.find('\n').unwrap_or(rest.len());
            let line = rest.get(..line_len).unwrap_or_default();
            self.pos = (self.pos + line_len + 1).min(self.b.len());
            let check = if p.strip_tabs {
                line.trim_start_matches('\t')
            } else {
                line
            };
            if check == p.delim || check.strip_suffix('\r') == Some(p.delim.as_str()) {
                break;
            }
            body.push_str(check);
            body.push('\n');
        }
        let word = if p.quoted {
            Word {
                parts: vec![Part::Lit {
                    text: body.clone(),
                    quoted: true,
                }],
                raw: body,
            }
        } else {
            let parts = self.sub_parts(&body).unwrap_or_default();
            Word { parts, raw: body }
        };
        if let Some(slot) = self.bodies.get_mut(p.slot) {
            *slot = Some(word);
        }
    }

    /// Heredocs never followed by a newline get an empty body.
    pub(super) fn finish(&mut self) {
        for p in std::mem::take(&mut self.pending) {
            if let Some(slot) = self.bodies.get_mut(p.slot) {
                slot.get_or_insert_with(Word::default);
            }
        }
    }
}

/// Puts the read bodies into the heredoc redirections of `list`.
pub(super) fn fill_list(list: &mut List, bodies: &mut [Option<Word>]) {
    for item in &mut list.items {
        for p in &mut item.pipelines {
            for c in &mut p.commands {
                fill_command(c, bodies);
            }
        }
    }
}

fn fill_command(c: &mut Command, bodies: &mut [Option<Word>]) {
    match c {
        Command::Simple(s) => {
            for a in &mut s.assigns {
                a.value.iter_mut().for_each(|w| fill_word(w, bodies));
            }
            s.words.iter_mut().for_each(|w| fill_word(w, bodies));
            s.redirects.iter_mut().for_each(|r| fill_redirect(r, bodies));
        }
        Command::Compound(k) => {
            k.lists.iter_mut().for_each(|l| fill_list(l, bodies));
            k.words.iter_mut().for_each(|w| fill_word(w, bodies));
            k.redirects.iter_mut().for_each(|r| fill_redirect(r, bodies));
        }
        Command::Function(f) => fill_command(&mut f.body, bodies),
    }
}

fn fill_redirect(r: &mut Redirect, bodies: &mut [Option<Word>]) {
    if let Some(slot) = r.heredoc.take()
        && let Some(body) = bodies.get_mut(slot).and_then(Option::take)
    {
        r.target = body;
    }
    fill_word(&mut r.target, bodies);
}

fn fill_word(w: &mut Word, bodies: &mut [Option<Word>]) {
    fill_parts(&mut w.parts, bodies);
}

pub(super) fn fill_parts(parts: &mut [Part], bodies: &mut [Option<Word>]) {
    for p in parts {
        match p {
            Part::CmdSub { list, .. } | Part::ProcSub { list, .. } => fill_list(list, bodies),
            Part::Param { nested, .. } | Part::Arith { nested } => fill_parts(nested, bodies),
            Part::Lit { .. } => {}
        }
    }
}
