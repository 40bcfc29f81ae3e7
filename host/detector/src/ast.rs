//! The syntax tree the detector's parser builds: only as much structure as
//! judging commands needs, with the source text of every simple command and
//! redirection kept for reporting.

/// A sequence of and-or lists separated by `;`, `&` or newlines.
#[derive(Debug, Clone, Default)]
pub(crate) struct List {
    pub items: Vec<Item>,
}

/// One and-or list and whether it runs in the background (`&`).
#[derive(Debug, Clone)]
pub(crate) struct Item {
    pub pipelines: Vec<Pipeline>,
    pub background: bool,
}

/// Commands connected by `|` or `|&`.
#[derive(Debug, Clone, Default)]
pub(crate) struct Pipeline {
    pub commands: Vec<Command>,
    /// The source text of the whole pipeline.
    pub raw: String,
}

/// One element of a pipeline.
#[derive(Debug, Clone)]
pub(crate) enum Command {
    Simple(Simple),
    Compound(Compound),
    Function(Function),
}

/// A simple command: assignments, words and redirections.
#[derive(Debug, Clone, Default)]
pub(crate) struct Simple {
    pub assigns: Vec<Assign>,
    pub words: Vec<Word>,
    pub redirects: Vec<Redirect>,
    /// The source text of the whole command.
    pub raw: String,
}

/// `NAME=value`, `NAME+=value` or `NAME=(a b c)`.
#[derive(Debug, Clone)]
pub(crate) struct Assign {
    pub name: String,
    pub value: Vec<Word>,
    pub raw: String,
}

/// What kind of compound command this is.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum CompoundKind {
    /// `( list )`
    Subshell,
    /// `{ list; }`
    Group,
    /// `if`: lists are condition, body, condition, body, ..., [else].
    If,
    /// `while`/`until`: lists are condition, body.
    While { until: bool },
    /// `for`/`select`: `words` are the iterated words, list is the body.
    For,
    /// `for ((;;))`; `infinite` when the condition part is empty.
    ArithFor { infinite: bool },
    /// `case`: words are the subject then the patterns; lists are the arms.
    Case,
    /// `(( expression ))`
    Arith,
    /// `[[ expression ]]`
    Cond,
}

/// A compound command with its lists, words and trailing redirections.
#[derive(Debug, Clone)]
pub(crate) struct Compound {
    pub kind: CompoundKind,
    pub lists: Vec<List>,
    pub words: Vec<Word>,
    pub redirects: Vec<Redirect>,
    pub raw: String,
}

/// `name() body` or `function name body`.
#[derive(Debug, Clone)]
pub(crate) struct Function {
    pub name: String,
    pub body: Box<Command>,
    pub raw: String,
}

/// A redirection operator.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum RedirOp {
    /// `<`
    In,
    /// `>`, `>|`, `&>`, `>&` with a file
    Out,
    /// `>>`, `&>>`
    Append,
    /// `<>`
    ReadWrite,
    /// `<&` / `>&` with a descriptor number or `-`
    Dup,
    /// `<<` / `<<-`
    Heredoc,
    /// `<<<`
    HereString,
}

impl RedirOp {
    /// Whether the redirection writes its target file.
    pub fn writes(self) -> bool {
        matches!(self, RedirOp::Out | RedirOp::Append | RedirOp::ReadWrite)
    }
}

/// A redirection with its target (for heredocs: the body as a word).
#[derive(Debug, Clone)]
pub(crate) struct Redirect {
    pub op: RedirOp,
    pub target: Word,
    pub raw: String,
    /// For heredocs while parsing: the slot of the body (filled in after the
    /// body lines have been read).
    pub heredoc: Option<usize>,
}

/// A shell word: a sequence of parts, with its source text.
#[derive(Debug, Clone, Default)]
pub(crate) struct Word {
    pub parts: Vec<Part>,
    pub raw: String,
}

/// A piece of a word.
#[derive(Debug, Clone)]
pub(crate) enum Part {
    /// Literal text; `quoted` when it came from quotes or a backslash escape
    /// (so it is not subject to globbing or brace expansion).
    Lit { text: String, quoted: bool },
    /// `$name` or `${...}`; `simple` when it is exactly `$name`/`${name}`.
    /// `nested` holds the parts of any operand (`${x:-$(cmd)}`).
    Param {
        name: String,
        simple: bool,
        quoted: bool,
        nested: Vec<Part>,
    },
    /// `$( list )` or a backtick substitution.
    CmdSub { list: List, quoted: bool },
    /// `$(( ... ))`, with any substitutions inside.
    Arith { nested: Vec<Part> },
    /// `<( list )` (`input`) or `>( list )`.
    ProcSub { list: List, input: bool },
}

impl Word {
    /// The literal value when the word has only literal parts.
    pub fn literal(&self) -> Option<String> {
        let mut out = String::new();
        for p in &self.parts {
            match p {
                Part::Lit { text, .. } => out.push_str(text),
                _ => return None,
            }
        }
        Some(out)
    }
}
