//! `sed`: in-place edits, and scripts that run commands or write files.
//!
//! A sed script is scanned command by command (addresses, `s` and `y`
//! with any delimiter, text arguments, labels, `{}` blocks), so a `;` or
//! `e` inside a regular expression is data. GNU sed's `e COMMAND` runs a
//! shell command (analysed), `e` alone and the `s///e` flag run the
//! pattern space, computed from the input (`dynamic_command`), and `w
//! FILE` / `s///w FILE` write files (judged like any write).

use super::Cmd;
use crate::analyze::Analyzer;
use crate::expand::Field;
use crate::verdict::Category;

/// What a sed script does beyond editing its output.
#[derive(Debug, Default, PartialEq, Eq)]
struct Effects {
    /// Commands run by `e COMMAND`.
    commands: Vec<String>,
    /// Whether input lines are run as commands (`e`, `s///e`).
    runs_input: bool,
    /// Files written by `w`, `W` and `s///w`.
    writes: Vec<String>,
    /// Whether a command of the script is computed at run time.
    computed: bool,
}

impl Analyzer {
    /// The rule for `sed`.
    pub(crate) fn sed(&mut self, c: &Cmd<'_>) {
        let a = c.args();
        let mut in_place = false;
        let mut scripts: Vec<String> = Vec::new();
        let mut script_files: Vec<Field> = Vec::new();
        let mut files = Vec::new();
        let mut i = 0;
        while let Some(f) = a.get(i) {
            let t = f.text.as_str();
            i += 1;
            if t.starts_with("--in-place") || sed_in_place(t) {
                in_place = true;
                continue;
            }
            match t {
                "-e" | "--expression" => {
                    scripts.extend(a.get(i).map(|f| f.text.clone()));
                    i += 1;
                    continue;
                }
                "-f" | "--file" => {
                    script_files.extend(a.get(i).cloned());
                    i += 1;
                    continue;
                }
                "-l" | "--line-length" => {
                    i += 1;
                    continue;
                }
                _ => {}
            }
            if let Some(v) = t.strip_prefix("--expression=") {
                scripts.push(v.to_string());
            } else if let Some(v) = t.strip_prefix("--file=") {
                script_files.push(Field::lit(v));
            } else if t.starts_with('-') && t.len() > 1 {
            } else if scripts.is_empty() && script_files.is_empty() {
                scripts.push(t.to_string());
            } else {
                files.push(f.clone());
            }
        }
        if in_place {
            for f in &files {
                self.write_target(f, c.raw());
            }
        }
        for f in &script_files {
            match self.file_data(f).and_then(|p| p.text) {
                Some(text) => scripts.push(text),
                None if f.text == "-" || f.text == "/dev/null" => {}
                None => self.add(
                    Category::Opaque,
                    c.raw(),
                    format!(
                        "sed runs the script file {}, which can run commands the detector cannot see",
                        f.text
                    ),
                ),
            }
        }
        for s in scripts {
            if !self.spend(s.len()) {
                return;
            }
            let e = scan(&s);
            if e.computed {
                self.add(
                    Category::DynamicCommand,
                    c.raw(),
                    "sed runs a script computed at run time (it may run commands)",
                );
            }
            if e.runs_input {
                self.add(
                    Category::DynamicCommand,
                    c.raw(),
                    "sed runs lines of its input as shell commands (e)",
                );
            }
            for cmd in &e.commands {
                self.option_command(cmd, c.raw(), "sed's e command");
            }
            for w in &e.writes {
                if w != "/dev/stdout" && w != "/dev/stderr" {
                    self.write_target(&Field::lit(w), c.raw());
                }
            }
        }
    }
}

/// Whether a short-option cluster of sed contains `-i` (edit in place).
fn sed_in_place(t: &str) -> bool {
    let Some(letters) = t.strip_prefix('-').filter(|l| !l.starts_with('-')) else {
        return false;
    };
    for c in letters.chars() {
        match c {
            'i' => return true,
            'n' | 'r' | 'E' | 's' | 'u' | 'z' => {}
            _ => return false,
        }
    }
    false
}

/// Scans a sed script (linear in its length).
fn scan(script: &str) -> Effects {
    let chars: Vec<char> = script.chars().collect();
    let mut e = Effects::default();
    let mut i = 0;
    let rest_of_line = |i: &mut usize| -> String {
        let mut s = String::new();
        while let Some(&c) = chars.get(*i) {
            *i += 1;
            if c == '\n' {
                break;
            }
            s.push(c);
        }
        s.trim().to_string()
    };
    while i < chars.len() {
        let Some(&c) = chars.get(i) else { break };
        if c.is_whitespace() || c == ';' || c == '}' || c == '{' || c == '!' || c == ',' {
            i += 1;
            continue;
        }
        match c {
            '#' => {
                rest_of_line(&mut i);
            }
            '0'..='9' | '$' | '~' | '+' => i += 1,
            '/' => i = skip_delimited(&chars, i + 1, '/') + 1,
            '\\' => {
                let d = chars.get(i + 1).copied().unwrap_or('/');
                i = skip_delimited(&chars, i + 2, d) + 1;
            }
            's' => {
                let d = chars.get(i + 1).copied().unwrap_or('/');
                let mid = skip_delimited(&chars, i + 2, d);
                i = skip_delimited(&chars, mid + 1, d) + 1;
                while let Some(&f) = chars.get(i) {
                    match f {
                        'e' => {
                            e.runs_input = true;
                            i += 1;
                        }
                        'w' => {
                            i += 1;
                            e.writes.push(rest_of_line(&mut i));
                            break;
                        }
                        f if f.is_ascii_alphanumeric() => i += 1,
                        _ => break,
                    }
                }
            }
            'y' => {
                let d = chars.get(i + 1).copied().unwrap_or('/');
                let mid = skip_delimited(&chars, i + 2, d);
                i = skip_delimited(&chars, mid + 1, d) + 1;
            }
            'e' => {
                i += 1;
                let cmd = rest_of_line(&mut i);
                if cmd.is_empty() {
                    e.runs_input = true;
                } else {
                    e.commands.push(cmd);
                }
            }
            'w' | 'W' => {
                i += 1;
                e.writes.push(rest_of_line(&mut i));
            }
            'r' | 'R' | 'a' | 'i' | 'c' => {
                i += 1;
                let mut line = rest_of_line(&mut i);
                while line.ends_with('\\') && i < chars.len() {
                    line = rest_of_line(&mut i);
                }
            }
            ':' | 'b' | 't' | 'T' => {
                i += 1;
                while chars.get(i).is_some_and(|&d| d != '\n' && d != ';') {
                    i += 1;
                }
            }
            crate::expand::UNKNOWN => {
                e.computed = true;
                i += 1;
            }
            _ => i += 1,
        }
    }
    e
}

/// The index of the next unescaped `delim` from `from` (or the end).
fn skip_delimited(chars: &[char], from: usize, delim: char) -> usize {
    let mut i = from;
    while let Some(&c) = chars.get(i) {
        if c == '\\' {
            i += 2;
            continue;
        }
        if c == delim || c == '\n' && delim != '\n' {
            return i;
        }
        i += 1;
    }
    chars.len()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn finds_commands_and_writes() {
        assert_eq!(scan("e rm -rf d").commands, vec!["rm -rf d"]);
        assert!(scan("s/x/y/e").runs_input);
        assert_eq!(scan("s/a/b/w out.txt").writes, vec!["out.txt"]);
        assert_eq!(scan("1,5{/x/w /etc/passwd\n}").writes, vec!["/etc/passwd"]);
    }

    #[test]
    fn regexes_and_text_are_data() {
        assert_eq!(scan("s/old/new/g"), Effects::default());
        assert_eq!(scan("s|e;w x|e|g"), Effects::default());
        assert_eq!(scan("/e rm/d; y/abc/xyz/"), Effects::default());
        assert_eq!(scan("a\\\ne rm -rf d"), Effects::default());
        assert_eq!(scan("1i e rm -rf d"), Effects::default());
        assert_eq!(scan("$!N;P;D"), Effects::default());
    }
}
