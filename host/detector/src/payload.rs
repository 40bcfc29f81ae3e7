//! What a command writes to its output, as far as it can be known without
//! running it: literal text from `echo`/`printf`/heredocs (through
//! `base64 -d`, `rev` and pass-through filters), and where unknown output
//! comes from (the network, a decoder, secrets).

use super::analyze::{Analyzer, Input};
use super::ast::{Command, Compound, List, Part, RedirOp, Simple, Word};
use super::expand::{Field, UNKNOWN};
use super::paths::{is_secret_path, is_secret_var};
use super::resolve::{self, resolve};
use super::rules::names;

/// The known facts about a stream of data.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub(crate) struct Payload {
    /// The exact text, when known.
    pub text: Option<String>,
    /// Some of it was fetched from the network.
    pub network: bool,
    /// Some of it was decoded or transformed (base64, rot13, gunzip, ...).
    pub decoded: bool,
    /// It carries secrets (environment dump, key or credential files).
    pub secret: bool,
    /// Some of it is the output of a command substitution (see
    /// [`Field::computed`]).
    pub computed: bool,
}

impl Payload {
    /// A payload of known text.
    pub fn literal(text: impl Into<String>) -> Payload {
        Payload {
            text: Some(text.into()),
            ..Payload::default()
        }
    }

    /// Combines two streams written one after the other.
    pub(crate) fn then(mut self, other: Payload) -> Payload {
        self.text = match (self.text, other.text) {
            (Some(a), Some(b)) => Some(a + &b),
            _ => None,
        };
        self.network |= other.network;
        self.decoded |= other.decoded;
        self.secret |= other.secret;
        self.computed |= other.computed;
        self
    }

    /// Keeps the provenance flags but forgets the text.
    pub(crate) fn opaque(mut self) -> Payload {
        self.text = None;
        self
    }
}

impl Analyzer {
    /// The static output of a whole list (a command substitution).
    pub(crate) fn static_output(&mut self, list: &List) -> Option<String> {
        self.list_output(list).text
    }

    /// The output of a list: each pipeline's output in order.
    pub(crate) fn list_output(&mut self, list: &List) -> Payload {
        let mut out = Payload::literal("");
        for item in &list.items {
            for p in &item.pipelines {
                let mut upstream = Payload::default();
                for c in &p.commands {
                    upstream = self.output_of(c, &upstream);
                }
                out = out.then(upstream);
            }
        }
        out
    }

    /// The payload of a word's value: literal text, or the provenance of
    /// its substitutions.
    pub(crate) fn word_payload(&mut self, w: &Word) -> Payload {
        self.parts_payload(&w.parts)
    }

    fn parts_payload(&mut self, parts: &[Part]) -> Payload {
        let mut out = Payload::literal("");
        for p in parts {
            let piece = match p {
                Part::Lit { text, .. } => Payload::literal(text.clone()),
                Part::Param {
                    name, simple, nested, ..
                } => {
                    let inner = self.parts_payload(nested).opaque();
                    let known = if *simple { self.var_value(name) } else { None };
                    let mut v = match known {
                        Some(v) => Payload::literal(v),
                        None => inner,
                    };
                    v.secret |= is_secret_var(name);
                    if let Some(t) = self.scope.taint.get(name) {
                        v.network |= t.network;
                        v.decoded |= t.decoded;
                        v.secret |= t.secret;
                        v.computed |= t.computed;
                    }
                    v
                }
                Part::CmdSub { list, .. } => {
                    let mut v = self.list_output(list);
                    if let Some(t) = v.text.take() {
                        v.text = Some(t.trim_end_matches('\n').to_string());
                    }
                    v.computed = true;
                    v
                }
                Part::ProcSub { list, .. } => self.list_output(list).opaque(),
                Part::Arith { nested } => self.parts_payload(nested).opaque(),
            };
            out = out.then(piece);
        }
        out
    }

    /// The payload of a redirection-provided standard input.
    pub(crate) fn here_payload(&mut self, w: &Word, herestring: bool) -> Payload {
        let mut p = self.word_payload(w);
        if herestring && let Some(t) = p.text.as_mut() {
            t.push('\n');
        }
        p
    }

    /// What one command writes, given what it reads.
    pub(crate) fn output_of(&mut self, c: &Command, input: &Payload) -> Payload {
        if !self.spend(1) {
            return Payload::default();
        }
        match c {
            Command::Compound(k) => self.compound_output(k, input),
            Command::Function(_) => Payload::literal(""),
            Command::Simple(s) => self.simple_output(s, input),
        }
    }

    /// What a compound command writes, given what it reads.
    pub(crate) fn compound_output(&mut self, k: &Compound, input: &Payload) -> Payload {
        let mut out = Payload::literal("");
        for l in &k.lists {
            out = out.then(self.list_output(l));
        }
        if input.network || input.decoded || input.secret {
            out = out.then(input.clone().opaque());
        }
        out
    }

    /// What a simple command writes, given what it reads.
    pub(crate) fn simple_output(&mut self, s: &Simple, input: &Payload) -> Payload {
        let mut input = input.clone();
        for r in &s.redirects {
            match r.op {
                RedirOp::Heredoc => input = self.here_payload(&r.target, false),
                RedirOp::HereString => input = self.here_payload(&r.target, true),
                RedirOp::In => {
                    let path = self.expand(&r.target);
                    let secret = path.iter().any(|f| is_secret_path(&f.text));
                    input = match path.first().and_then(|f| self.file_data(f)) {
                        Some(known) => known,
                        None => Payload {
                            secret,
                            ..Payload::default()
                        },
                    };
                }
                _ => {}
            }
        }
        let fields = self.expand_all(&s.words);
        if fields.is_empty() {
            // `$(<file)`: the file's content.
            return input;
        }
        if let Some(found) = program_lookup(&fields).or_else(|| setup_output(&fields)) {
            return found;
        }
        let Some(inv) = resolve(fields).inv else {
            return Payload::default();
        };
        self.command_output(&inv.name, &inv.args, input)
    }

    fn command_output(&mut self, name: &str, args: &[Field], input: Payload) -> Payload {
        // An archive of the home folder, `/` or a credential folder
        // carries its secrets (`tar c ~ | nc host 9000`).
        let archiver = matches!(
            name,
            "tar" | "gtar" | "bsdtar" | "zip" | "7z" | "7za" | "cpio" | "pax"
        );
        let reads_secret = args.iter().any(|a| {
            is_secret_path(&a.text)
                || archiver && !a.text.starts_with('-') && self.exposes_secrets(&a.text).is_some()
        });
        let mut out = match name {
            "echo" => echo(args),
            "printf" => printf(args),
            "cat" | "tee" | "head" | "tail" | "tac" | "stdbuf" | "dd" | "buffer" => {
                let files: Vec<&Field> = args.iter().filter(|a| !a.text.starts_with('-')).collect();
                if name == "tee" || files.is_empty() || files.iter().all(|f| f.text == "-") {
                    input.clone()
                } else if name == "cat" {
                    // Files this command wrote earlier are known.
                    let mut out = Payload::literal("");
                    for f in files {
                        out = out.then(self.file_data(f).unwrap_or_default());
                    }
                    out
                } else {
                    Payload::default()
                }
            }
            "rev" => Payload {
                text: input.text.as_ref().map(|t| rev_lines(t)),
                decoded: true,
                ..input.clone()
            },
            "base64" | "base32" | "basenc" if args.iter().any(|a| is_decode_flag(&a.text)) => Payload {
                text: input.text.as_deref().and_then(base64_decode),
                decoded: true,
                ..input.clone()
            },
            n if names::DECODERS.contains(&n) => Payload {
                decoded: true,
                ..input.clone().opaque()
            },
            n if names::is_fetcher(n) => Payload {
                network: true,
                ..Payload::default()
            },
            "env" | "printenv" | "set" | "export" | "declare" | "typeset" | "compgen" => Payload {
                secret: true,
                ..Payload::default()
            },
            _ => input.clone().opaque(),
        };
        out.network |= input.network;
        out.decoded |= input.decoded;
        out.secret |= input.secret || reads_secret;
        out
    }

    /// The input a command's redirections provide, if any.
    pub(crate) fn redirect_input(&mut self, redirects: &[super::ast::Redirect]) -> Option<Input> {
        let mut out = None;
        for r in redirects {
            match r.op {
                RedirOp::Heredoc => out = Some(Input::Here(self.here_payload(&r.target, false))),
                RedirOp::HereString => out = Some(Input::Here(self.here_payload(&r.target, true))),
                RedirOp::In => out = Some(Input::File(r.target.clone())),
                _ => {}
            }
        }
        out
    }
}

/// The output of `which NAME`, `command -v NAME` or `type -P NAME`: where
/// the program is found. Only its name matters to the rules, so it is
/// given as `/usr/bin/NAME`.
fn program_lookup(fields: &[Field]) -> Option<Payload> {
    let (first, rest) = fields.split_first()?;
    let flags: Vec<&str> = rest
        .iter()
        .map(|f| f.text.as_str())
        .filter(|t| t.starts_with('-'))
        .collect();
    let looks_up = match first.text.as_str() {
        "which" => true,
        "command" => flags.contains(&"-v"),
        "type" => flags.iter().any(|f| f.contains('P') || f.contains('p')),
        _ => false,
    };
    let names: Vec<&Field> = rest.iter().filter(|f| !f.text.starts_with('-')).collect();
    match names.as_slice() {
        [one] if looks_up && one.known && !one.text.contains('/') && !one.text.is_empty() => {
            Some(Payload::literal(format!("/usr/bin/{}\n", one.text)))
        }
        _ => None,
    }
}

/// The output of programs that print shell code to set up the current
/// shell, in the fixed form they print it, for the `eval "$(ssh-agent
/// -s)"` idiom: the values, which differ from run to run, are unknown
/// (they are assigned, never run). `None` for other commands, and for
/// `ssh-agent` given a command to run (that prints nothing of its own).
fn setup_output(fields: &[Field]) -> Option<Payload> {
    let (first, rest) = fields.split_first()?;
    let mut flags = String::new();
    let mut it = rest.iter();
    while let Some(f) = it.next() {
        let t = f.text.strip_prefix('-')?;
        flags.push_str(t);
        if t.ends_with(['a', 'E', 'P', 't']) {
            it.next();
        }
    }
    let csh = flags.contains('c');
    let u = UNKNOWN;
    let text = match resolve::program_name(&first.text).as_str() {
        "ssh-agent" if flags.contains('k') => {
            format!("unset SSH_AUTH_SOCK;\nunset SSH_AGENT_PID;\necho Agent pid {u} killed;\n")
        }
        "ssh-agent" if csh => {
            format!("setenv SSH_AUTH_SOCK {u};\nsetenv SSH_AGENT_PID {u};\necho Agent pid {u};\n")
        }
        "ssh-agent" => format!(
            "SSH_AUTH_SOCK={u}; export SSH_AUTH_SOCK;\nSSH_AGENT_PID={u}; export SSH_AGENT_PID;\necho Agent pid {u};\n"
        ),
        "dircolors" if csh => format!("setenv LS_COLORS '{u}'\n"),
        "dircolors" => format!("LS_COLORS='{u}';\nexport LS_COLORS\n"),
        _ => return None,
    };
    Some(Payload::literal(text))
}

fn is_decode_flag(a: &str) -> bool {
    a == "--decode" || (a.starts_with('-') && !a.starts_with("--") && (a.contains('d') || a.contains('D')))
}

fn echo(args: &[Field]) -> Payload {
    let mut newline = true;
    let mut escapes = false;
    let mut rest = args;
    while let Some((first, tail)) = rest.split_first() {
        let t = first.text.as_str();
        if t.len() > 1 && t.starts_with('-') && t[1..].chars().all(|c| matches!(c, 'n' | 'e' | 'E')) {
            newline &= !t.contains('n');
            escapes = t.contains('e');
            rest = tail;
        } else {
            break;
        }
    }
    let Some(words) = rest.iter().map(Field::value).collect::<Option<Vec<_>>>() else {
        return Payload::default();
    };
    let mut text = words.join(" ");
    if escapes {
        text = unescape(&text);
    }
    if newline {
        text.push('\n');
    }
    Payload::literal(text)
}

fn printf(args: &[Field]) -> Payload {
    let Some(words) = args.iter().map(Field::value).collect::<Option<Vec<_>>>() else {
        return Payload::default();
    };
    let Some((fmt, rest)) = words.split_first() else {
        return Payload::default();
    };
    let fmt = unescape(fmt);
    let mut out = String::new();
    let mut values = rest.iter();
    let mut chars = fmt.chars().peekable();
    while let Some(c) = chars.next() {
        if c != '%' {
            out.push(c);
            continue;
        }
        match chars.next() {
            Some('%') => out.push('%'),
            Some('b') => out.push_str(&unescape(values.next().copied().unwrap_or_default())),
            Some(_) => out.push_str(values.next().copied().unwrap_or_default()),
            None => out.push('%'),
        }
    }
    for v in values {
        out.push_str(v);
    }
    Payload::literal(out)
}

/// Decodes `\n`, `\t`, `\\`, `\xHH` and octal `\0NNN`/`\NNN` escapes.
fn unescape(s: &str) -> String {
    let mut out = String::new();
    let mut chars = s.chars().peekable();
    while let Some(c) = chars.next() {
        if c != '\\' {
            out.push(c);
            continue;
        }
        let Some(n) = chars.next() else {
            out.push('\\');
            break;
        };
        let (radix, max) = match n {
            'n' => {
                out.push('\n');
                continue;
            }
            't' => {
                out.push('\t');
                continue;
            }
            'r' => {
                out.push('\r');
                continue;
            }
            '\\' => {
                out.push('\\');
                continue;
            }
            'x' => (16, 2),
            '0'..='7' => (8, 3),
            other => {
                out.push('\\');
                out.push(other);
                continue;
            }
        };
        let mut v: u32 = if radix == 8 { n.to_digit(8).unwrap_or(0) } else { 0 };
        let mut count = usize::from(radix == 8);
        while count < max {
            match chars.peek().and_then(|d| d.to_digit(radix)) {
                Some(d) => {
                    v = v * radix + d;
                    chars.next();
                    count += 1;
                }
                None => break,
            }
        }
        out.push(char::from_u32(v).unwrap_or('\u{fffd}'));
    }
    out
}

fn rev_lines(t: &str) -> String {
    t.lines()
        .map(|l| l.chars().rev().collect::<String>())
        .collect::<Vec<_>>()
        .join("\n")
        + "\n"
}

/// Decodes standard or URL-safe base64, ignoring whitespace; `None` when
/// the text is not valid base64 or does not decode to UTF-8.
pub(crate) fn base64_decode(s: &str) -> Option<String> {
    let mut bits: u32 = 0;
    let mut nbits = 0u32;
    let mut out = Vec::new();
    for c in s.bytes() {
        let v = match c {
            b'A'..=b'Z' => c - b'A',
            b'a'..=b'z' => c - b'a' + 26,
            b'0'..=b'9' => c - b'0' + 52,
            b'+' | b'-' => 62,
            b'/' | b'_' => 63,
            b'=' | b' ' | b'\n' | b'\r' | b'\t' => continue,
            _ => return None,
        };
        bits = ((bits << 6) | u32::from(v)) & 0xffff;
        nbits += 6;
        if nbits >= 8 {
            nbits -= 8;
            out.push(((bits >> nbits) & 0xff) as u8);
        }
    }
    String::from_utf8(out).ok()
}
