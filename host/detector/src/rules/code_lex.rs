//! Splitting inline interpreter code into string literals and the code
//! around them, so that names inside strings are data.

use super::names::Lang;

/// Code split into its parts.
#[derive(Debug, Default)]
pub(crate) struct Lexed {
    /// The code with every string literal emptied (`"..."` → `""`).
    pub code: String,
    /// String literal contents, in order.
    pub strings: Vec<String>,
    /// Literals that run as shell commands (Perl/Ruby/PHP backticks, `qx`).
    pub shell: Vec<String>,
    /// Runs of adjacent literals separated only by commas and list
    /// brackets, joined by spaces.
    pub groups: Vec<String>,
}

/// Splits `src` (code of `lang`) into literals and code.
pub(crate) fn lex(src: &str, lang: Lang) -> Lexed {
    let mut out = Lexed::default();
    let chars: Vec<char> = src.chars().collect();
    let mut i = 0;
    let mut group: Vec<String> = Vec::new();
    let backtick_is_shell = lang.backtick_shell;
    let quote: Vec<char> = lang.shell_quote.unwrap_or_default().chars().collect();
    while let Some(&c) = chars.get(i) {
        let qx = !quote.is_empty() && chars.get(i..i + quote.len()) == Some(quote.as_slice());
        let after = i + quote.len();
        if qx && chars.get(after).is_some_and(|d| "({[</|!".contains(*d)) {
            let open = chars.get(after).copied().unwrap_or('(');
            let close = match open {
                '(' => ')',
                '{' => '}',
                '[' => ']',
                '<' => '>',
                o => o,
            };
            let mut j = after + 1;
            let mut s = String::new();
            while let Some(&d) = chars.get(j) {
                if d == close {
                    break;
                }
                s.push(d);
                j += 1;
            }
            out.shell.push(s);
            out.code.push_str("qx()");
            i = j + 1;
            continue;
        }
        if c == '"' || c == '\'' || c == '`' {
            let triple = lang.triple_quotes && chars.get(i + 1) == Some(&c) && chars.get(i + 2) == Some(&c);
            let mut j = if triple { i + 3 } else { i + 1 };
            let mut s = String::new();
            while let Some(&d) = chars.get(j) {
                if d == '\\' && c != '`' {
                    if let Some(&e) = chars.get(j + 1) {
                        s.push(match e {
                            'n' => '\n',
                            't' => '\t',
                            other => other,
                        });
                    }
                    j += 2;
                    continue;
                }
                if d == c && (!triple || (chars.get(j + 1) == Some(&c) && chars.get(j + 2) == Some(&c))) {
                    break;
                }
                s.push(d);
                j += 1;
            }
            i = j + if triple { 3 } else { 1 };
            out.code.push(c);
            out.code.push(c);
            if c == '`' && backtick_is_shell {
                out.shell.push(s);
            } else {
                group.push(s.clone());
                out.strings.push(s);
            }
            continue;
        }
        // A program and its argument list are one group too
        // (`System.cmd("rm", ["-rf", "d"])`).
        let separates = c == ',' || c == '[' || c == ']' || c.is_whitespace();
        if !separates && group.len() > 1 {
            out.groups.push(group.join(" "));
        }
        if !separates {
            group.clear();
        }
        out.code.push(c);
        i += 1;
    }
    if group.len() > 1 {
        out.groups.push(group.join(" "));
    }
    out
}

/// Whether `name` occurs in `code` as a whole identifier (dotted names are
/// matched as written).
pub(crate) fn has(code: &str, name: &str) -> bool {
    let ident = |c: char| c.is_alphanumeric() || c == '_' || c == '$';
    let mut from = 0;
    while let Some(pos) = code.get(from..).and_then(|r| r.find(name)) {
        let start = from + pos;
        let end = start + name.len();
        let before = code.get(..start).and_then(|b| b.chars().next_back());
        let after = code.get(end..).and_then(|a| a.chars().next());
        if !before.is_some_and(ident) && !after.is_some_and(ident) {
            return true;
        }
        from = end;
    }
    false
}

/// Whether any of `names` occurs in `code` (see [`has`]).
pub(crate) fn any(code: &str, names: &[&str]) -> bool {
    names.iter().any(|n| has(code, n))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::rules::langs::by_name;

    #[test]
    fn lexes_strings_and_groups() {
        let python = by_name("python");
        let lx = lex(r#"subprocess.call(["rm", "-rf", "/"])"#, python);
        assert_eq!(lx.strings, vec!["rm", "-rf", "/"]);
        assert_eq!(lx.groups, vec!["rm -rf /"]);
        assert!(has(&lx.code, "subprocess"));
        assert!(!has(&lex("print('os.system')", python).code, "system"));
    }

    #[test]
    fn perl_backticks_are_shell() {
        let lx = lex("print `rm -rf /`", by_name("perl"));
        assert_eq!(lx.shell, vec!["rm -rf /"]);
        let lx = lex("puts %x{rm -rf d}", by_name("ruby"));
        assert_eq!(lx.shell, vec!["rm -rf d"]);
    }
}
