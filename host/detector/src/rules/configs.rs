//! Files that make a program run commands later, written by the command
//! itself: git hooks and git configuration (judged when written), and a
//! Makefile or `package.json` a build tool then runs (judged when run).
//!
//! `echo 'rm -rf d' > .git/hooks/pre-commit` is analysed as the script it
//! is; a hook whose content cannot be known is opaque. A `.git/config`
//! written with `[core] pager = ...` is judged like `git config`.
//! `make`, `npm run`/`npm test`, `yarn`, `pnpm` and `bun run` after the
//! same command wrote their Makefile or `package.json` judge its recipes
//! or scripts. (Build files the command did not write stay trusted, as
//! build tools are.)

use super::Cmd;
use super::options::valued;
use crate::analyze::Analyzer;
use crate::expand::Field;
use crate::files::Content;
use crate::paths;
use crate::verdict::Category;

/// Whether the (resolved) path is a git hook (`.git/hooks/x`, husky's
/// `.husky/x`).
fn is_git_hook(p: &str) -> bool {
    let comps: Vec<&str> = p.split('/').filter(|c| !c.is_empty()).collect();
    comps.windows(3).any(|w| w[0] == ".git" && w[1] == "hooks") || comps.windows(2).any(|w| w[0] == ".husky")
}

/// Whether the (resolved) path is a git configuration file.
fn is_git_config(p: &str) -> bool {
    p.ends_with(".git/config") || paths::basename(p) == ".gitconfig" || p.ends_with(".config/git/config")
}

impl Analyzer {
    /// Judges configuration files written so far by the command being
    /// judged (`matched`).
    pub(crate) fn written_configs(&mut self, matched: &str) {
        for key in self.files.take_written() {
            if is_git_hook(&key) {
                match self.file_content(&Field::lit(&key)) {
                    Some(Content::Data(p)) => match p.text.clone() {
                        Some(text) => self.run_executable(&Field::lit(&key), &text, matched, &[]),
                        None => self.add(
                            Category::Opaque,
                            matched,
                            format!("installs the git hook {key}, whose content the detector cannot see"),
                        ),
                    },
                    Some(Content::Program(n)) => self.add(
                        Category::Opaque,
                        matched,
                        format!("installs the program {n} as the git hook {key}"),
                    ),
                    None => {}
                }
            } else if is_git_config(&key)
                && let Some(text) = self.file_data(&Field::lit(&key)).and_then(|p| p.text)
            {
                for (k, v) in ini_pairs(&text) {
                    self.git_config(&k, &v, matched);
                }
            }
        }
    }

    /// Build tools run what a Makefile or `package.json` written by this
    /// command says.
    pub(crate) fn build_files(&mut self, c: &Cmd<'_>) {
        let a: Vec<String> = c.args().iter().map(|f| f.text.clone()).collect();
        let raw = c.raw();
        match c.inv.name.as_str() {
            "make" | "gmake" | "bmake" => {
                let dir = valued(&a, &["-C", "--directory"]).pop().map(|(_, d)| d + "/");
                let dir = dir.unwrap_or_default();
                let named: Vec<String> = valued(&a, &["-f", "--file", "--makefile"])
                    .into_iter()
                    .map(|(_, f)| f)
                    .collect();
                let files = if named.is_empty() {
                    vec![
                        "GNUmakefile".to_string(),
                        "makefile".to_string(),
                        "Makefile".to_string(),
                    ]
                } else {
                    named
                };
                for f in files {
                    if let Some(text) = self
                        .file_data(&Field::lit(&format!("{dir}{f}")))
                        .and_then(|p| p.text)
                    {
                        for cmd in super::options::make_recipes(&text) {
                            self.option_command(&cmd, raw, "a Makefile this command writes");
                        }
                    }
                }
            }
            "npm" | "yarn" | "pnpm" | "bun" => {
                let dir = valued(&a, &["--prefix", "-C", "--cwd", "--dir"])
                    .pop()
                    .map(|(_, d)| d + "/");
                let file = format!("{}package.json", dir.unwrap_or_default());
                if let Some(text) = self.file_data(&Field::lit(&file)).and_then(|p| p.text) {
                    for cmd in json_scripts(&text) {
                        self.option_command(&cmd, raw, "a package.json script this command writes");
                    }
                }
            }
            _ => {}
        }
    }
}

/// `section.key = value` pairs of a git-style INI file (`[core]`,
/// `[alias]`, `[remote "origin"]`).
fn ini_pairs(text: &str) -> Vec<(String, String)> {
    let mut out = Vec::new();
    let mut section = String::new();
    for line in text.lines().take(10_000) {
        let l = line.trim();
        if let Some(head) = l.strip_prefix('[').and_then(|h| h.strip_suffix(']')) {
            let mut parts = head.splitn(2, char::is_whitespace);
            let name = parts.next().unwrap_or_default().to_lowercase();
            let sub = parts.next().map(|s| s.trim().trim_matches('"').to_string());
            section = match sub {
                Some(s) => format!("{name}.{s}"),
                None => name,
            };
        } else if let Some((k, v)) = l.split_once('=')
            && !l.starts_with(['#', ';'])
        {
            let v = v.trim().trim_matches('"').to_string();
            out.push((format!("{section}.{}", k.trim()), v));
        }
    }
    out
}

/// The values of the `"scripts"` object of a `package.json` text (a
/// tolerant scan, not a full JSON parser).
fn json_scripts(text: &str) -> Vec<String> {
    let Some(start) = text.find("\"scripts\"") else {
        return Vec::new();
    };
    let rest = text.get(start + 9..).unwrap_or_default();
    let Some(open) = rest.find('{') else {
        return Vec::new();
    };
    let mut strings = Vec::new();
    let mut chars = rest.get(open + 1..).unwrap_or_default().chars();
    while let Some(c) = chars.next() {
        match c {
            '}' => break,
            '"' => {
                let mut s = String::new();
                while let Some(d) = chars.next() {
                    match d {
                        '\\' => match chars.next() {
                            Some('n') => s.push('\n'),
                            Some('t') => s.push('\t'),
                            Some(e) => s.push(e),
                            None => {}
                        },
                        '"' => break,
                        d => s.push(d),
                    }
                }
                strings.push(s);
            }
            _ => {}
        }
    }
    strings.into_iter().skip(1).step_by(2).collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn reads_ini_and_package_scripts() {
        let pairs = ini_pairs("[core]\n\tpager = less\n[alias \"x\"]\n[alias]\n x = !rm -rf d\n");
        assert!(pairs.contains(&("core.pager".to_string(), "less".to_string())));
        assert!(pairs.contains(&("alias.x".to_string(), "!rm -rf d".to_string())));
        let s = json_scripts(r#"{"name":"x","scripts":{"test":"jest","pre":"rm -rf \"d\""},"x":{}}"#);
        assert_eq!(s, vec!["jest".to_string(), "rm -rf \"d\"".to_string()]);
        assert!(is_git_hook("/p/.git/hooks/pre-commit"));
        assert!(is_git_hook(".husky/pre-commit"));
        assert!(!is_git_hook("/p/.git/config"));
        assert!(is_git_config("/p/.git/config") && is_git_config("~/.gitconfig"));
    }
}
