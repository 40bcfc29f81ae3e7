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
    /// Runs of adjacent literals separated only by commas, joined by spaces.
    pub groups: Vec<String>,
}

/// Splits `src` (code of `lang`) into literals and code.
pub(crate) fn lex(src: &str, lang: Lang) -> Lexed {
    let mut out = Lexed::default();
    let chars: Vec<char> = src.chars().collect();
    let mut i = 0;
    let mut group: Vec<String> = Vec::new();
    let backtick_is_shell = matches!(lang, Lang::Perl | Lang::Ruby | Lang::Php);
    while let Some(&c) = chars.get(i) {
        let qx = (lang == Lang::Perl && c == 'q' && chars.get(i + 1) == Some(&'x'))
            || (lang == Lang::Ruby && c == '%' && chars.get(i + 1) == Some(&'x'));
        if qx && chars.get(i + 2).is_some_and(|d| "({[</|!".contains(*d)) {
            let open = chars.get(i + 2).copied().unwrap_or('(');
            let close = match open {
                '(' => ')',
                '{' => '}',
                '[' => ']',
                '<' => '>',
                o => o,
            };
            let mut j = i + 3;
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
            let triple = lang == Lang::Python && chars.get(i + 1) == Some(&c) && chars.get(i + 2) == Some(&c);
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
        if !(c == ',' || c.is_whitespace()) && group.len() > 1 {
            out.groups.push(group.join(" "));
        }
        if !(c == ',' || c.is_whitespace()) {
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

    #[test]
    fn lexes_strings_and_groups() {
        let lx = lex(r#"subprocess.call(["rm", "-rf", "/"])"#, Lang::Python);
        assert_eq!(lx.strings, vec!["rm", "-rf", "/"]);
        assert_eq!(lx.groups, vec!["rm -rf /"]);
        assert!(has(&lx.code, "subprocess"));
        assert!(!has(&lex("print('os.system')", Lang::Python).code, "system"));
    }

    #[test]
    fn perl_backticks_are_shell() {
        let lx = lex("print `rm -rf /`", Lang::Perl);
        assert_eq!(lx.shell, vec!["rm -rf /"]);
    }
}
