//! awk programs: the files their `print`/`printf` statements write
//! (`print > "f"`, `>> "f"`), the commands they pipe to or read from
//! (`print | "cmd"`, `"cmd" | getline`, `|&`) and `system()` calls.
//!
//! The program is scanned token by token (strings, regular expressions,
//! comments and parentheses), so a `>` in a condition (`$1 > 5`) or
//! inside parentheses (`print (a > b)`) is a comparison and text inside
//! strings is data.

/// What an awk program does besides computing its output.
#[derive(Debug, Default, PartialEq, Eq)]
pub(crate) struct Effects {
    /// Files written by output redirections (`None`: a name computed at
    /// run time).
    pub writes: Vec<Option<String>>,
    /// Commands run by `system()`, pipes and `getline` (`None`: computed
    /// at run time).
    pub commands: Vec<Option<String>>,
}

#[derive(Debug, Clone, PartialEq, Eq)]
enum Tok {
    Str(String),
    Word(String),
    Op(String),
    /// A statement boundary: `;`, `{`, `}` or a newline.
    End,
}

/// Splits awk source into tokens (linear in its length).
fn tokens(src: &str) -> Vec<(Tok, usize)> {
    let chars: Vec<char> = src.chars().collect();
    let mut out: Vec<(Tok, usize)> = Vec::new();
    let mut depth = 0usize;
    let mut i = 0;
    while let Some(&c) = chars.get(i) {
        // A `/` starts a regular expression where an operand is expected.
        let operand_before = matches!(out.last(), Some((Tok::Str(_), _)) | Some((Tok::Word(_), _)))
            || matches!(out.last(), Some((Tok::Op(o), _)) if o == ")" || o == "]");
        match c {
            '#' => {
                while chars.get(i).is_some_and(|&d| d != '\n') {
                    i += 1;
                }
            }
            '\\' if chars.get(i + 1) == Some(&'\n') => i += 2,
            '\n' | ';' | '{' | '}' => {
                out.push((Tok::End, depth));
                i += 1;
            }
            '"' => {
                let mut s = String::new();
                i += 1;
                while let Some(&d) = chars.get(i) {
                    i += 1;
                    match d {
                        '\\' => {
                            if let Some(&e) = chars.get(i) {
                                s.push(match e {
                                    'n' => '\n',
                                    't' => '\t',
                                    e => e,
                                });
                                i += 1;
                            }
                        }
                        '"' => break,
                        d => s.push(d),
                    }
                }
                out.push((Tok::Str(s), depth));
            }
            '/' if !operand_before => {
                i += 1;
                while let Some(&d) = chars.get(i) {
                    i += 1;
                    if d == '\\' {
                        i += 1;
                    } else if d == '/' || d == '\n' {
                        break;
                    }
                }
                out.push((Tok::Word("/re/".to_string()), depth));
            }
            c if c.is_alphanumeric() || c == '_' || c == '$' => {
                let mut w = String::new();
                while let Some(&d) = chars
                    .get(i)
                    .filter(|d| d.is_alphanumeric() || **d == '_' || **d == '$')
                {
                    w.push(d);
                    i += 1;
                }
                out.push((Tok::Word(w), depth));
            }
            c if c.is_whitespace() => i += 1,
            '(' | '[' => {
                out.push((Tok::Op(c.to_string()), depth));
                depth += 1;
                i += 1;
            }
            ')' | ']' => {
                depth = depth.saturating_sub(1);
                out.push((Tok::Op(c.to_string()), depth));
                i += 1;
            }
            _ => {
                let two: String = chars.get(i..i + 2).unwrap_or_default().iter().collect();
                let op = if matches!(
                    two.as_str(),
                    ">>" | "|&" | "||" | "&&" | ">=" | "==" | "!=" | "<="
                ) {
                    two
                } else {
                    c.to_string()
                };
                i += op.chars().count();
                out.push((Tok::Op(op), depth));
            }
        }
    }
    out
}

/// The target after a redirection at `i`: a string literal alone (up to
/// the end of the statement or the closing parenthesis), else computed.
fn target(toks: &[(Tok, usize)], i: usize, depth: usize) -> Option<String> {
    let (Tok::Str(s), _) = toks.get(i)? else {
        return None;
    };
    match toks.get(i + 1) {
        None | Some((Tok::End, _)) => Some(s.clone()),
        Some((Tok::Op(o), d)) if o == ")" && *d < depth => Some(s.clone()),
        _ => None,
    }
}

/// Scans an awk program.
pub(crate) fn scan(src: &str) -> Effects {
    let toks = tokens(src);
    let mut e = Effects::default();
    // The parenthesis depth of the `print` statement being read.
    let mut print: Option<usize> = None;
    for (i, (t, depth)) in toks.iter().enumerate() {
        match t {
            Tok::End => print = None,
            Tok::Word(w) if w == "print" || w == "printf" => print = Some(*depth),
            Tok::Word(w) if w == "system" => {
                let call = matches!(toks.get(i + 1), Some((Tok::Op(o), _)) if o == "(");
                if call {
                    e.commands.push(target(&toks, i + 2, depth + 1));
                }
            }
            Tok::Op(o) if (o == ">" || o == ">>") && print == Some(*depth) => {
                e.writes.push(target(&toks, i + 1, *depth));
            }
            Tok::Op(o) if o == "|" || o == "|&" => {
                let getline = matches!(toks.get(i + 1), Some((Tok::Word(w), _)) if w == "getline");
                if getline {
                    // `"cmd" | getline`: the command is what stands before.
                    let before = i.checked_sub(1).and_then(|b| toks.get(b));
                    let two_before = i.checked_sub(2).and_then(|b| toks.get(b));
                    let alone = !matches!(two_before, Some((Tok::Str(_) | Tok::Word(_), _)));
                    match before {
                        Some((Tok::Str(s), _)) if alone => e.commands.push(Some(s.clone())),
                        _ => e.commands.push(None),
                    }
                } else if print == Some(*depth) {
                    e.commands.push(target(&toks, i + 1, *depth));
                }
            }
            _ => {}
        }
    }
    e
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn finds_writes_and_commands() {
        let e = scan(r#"{ print $1 > "/etc/passwd" }"#);
        assert_eq!(e.writes, vec![Some("/etc/passwd".to_string())]);
        let e = scan(r#"{ print >> "out.txt"; printf "%s", $2 > $1 ".txt" }"#);
        assert_eq!(e.writes, vec![Some("out.txt".to_string()), None]);
        let e = scan(r#"{ print | "sh" } END { "date" | getline d; system("rm -rf " $1) }"#);
        assert_eq!(
            e.commands,
            vec![Some("sh".to_string()), Some("date".to_string()), None]
        );
        assert_eq!(
            scan("BEGIN{system(\"ls\")}").commands,
            vec![Some("ls".to_string())]
        );
        assert_eq!(scan("{ cmd | getline x }").commands, vec![None]);
    }

    #[test]
    fn comparisons_regexes_and_strings_are_data() {
        assert_eq!(scan("$1 > 5 { print $2 }"), Effects::default());
        assert_eq!(scan("{ print (a > b) }"), Effects::default());
        assert_eq!(scan(r#"/x > y|z/ { print "a > b | c" }"#), Effects::default());
        assert_eq!(scan("{ print $1 } # print > \"/etc/x\""), Effects::default());
        assert_eq!(
            scan("{ if ($1 > max) max = $1 } END { print max }"),
            Effects::default()
        );
        assert_eq!(scan("{ n = n / 2; print n / 3 }"), Effects::default());
    }
}
