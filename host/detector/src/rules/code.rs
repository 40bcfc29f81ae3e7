//! Inline interpreter code (`python -c`, `perl -e`, `node -e`, ...).
//!
//! The code is split into string literals and the code around them, so
//! names inside strings are data. Calls that run processes, delete trees,
//! evaluate code, open sockets or write system files are flagged; when code
//! runs processes, its string literals (and lists of literals joined, as in
//! `subprocess.call(["rm", "-rf", "/"])`) are analysed as shell commands.

use super::names::Lang;
use crate::analyze::{Analyzer, Input};
use crate::paths::{is_block_device, is_secret_path, normalize, system_write_reason};
use crate::verdict::Category;

/// Code split into its parts.
#[derive(Debug, Default)]
struct Lexed {
    /// The code with every string literal emptied (`"..."` → `""`).
    code: String,
    /// String literal contents, in order.
    strings: Vec<String>,
    /// Literals that run as shell commands (Perl/Ruby/PHP backticks, `qx`).
    shell: Vec<String>,
    /// Runs of adjacent literals separated only by commas, joined by spaces.
    groups: Vec<String>,
}

fn lex(src: &str, lang: Lang) -> Lexed {
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
fn has(code: &str, name: &str) -> bool {
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

fn any(code: &str, names: &[&str]) -> bool {
    names.iter().any(|n| has(code, n))
}

const EXEC: &[&str] = &[
    "system",
    "popen",
    "subprocess",
    "child_process",
    "execSync",
    "execFileSync",
    "spawnSync",
    "spawn",
    "execFile",
    "shell_exec",
    "passthru",
    "proc_open",
    "pcntl_exec",
    "execv",
    "execve",
    "execvp",
    "execvpe",
    "execl",
    "execle",
    "execlp",
    "execlpe",
    "spawnv",
    "spawnl",
    "spawnvp",
    "posix_spawn",
    "getoutput",
    "getstatusoutput",
    "check_output",
    "check_call",
    "Popen",
    "create_subprocess_shell",
    "create_subprocess_exec",
    "Open3",
    "capture2",
    "capture3",
    "os.execute",
    "io.popen",
    "do shell script",
    "Start-Process",
    "Invoke-Expression",
    "iex",
    "exec",
    "fork",
    "Runtime",
    "ProcessBuilder",
];
const EVAL: &[&str] = &[
    "eval",
    "compile",
    "__import__",
    "importlib",
    "getattr",
    "Function",
    "runInThisContext",
    "runInNewContext",
    "instance_eval",
    "class_eval",
    "create_function",
    "assert",
    "loadstring",
];
const TREE_DELETE: &[&str] = &[
    "rmtree",
    "rm_rf",
    "rm_r",
    "remove_dir",
    "remove_entry",
    "remove_entry_secure",
    "rimraf",
    "remove_tree",
    "removedirs",
    "deleteRecursively",
    "emptyDirSync",
    "removeSync",
];
const NET: &[&str] = &[
    "socket",
    "Socket",
    "TCPSocket",
    "fsockopen",
    "connect",
    "createConnection",
    "IO::Socket",
    "stream_socket_client",
    "TCPClient",
];
const FETCH: &[&str] = &[
    "urlopen",
    "urllib",
    "requests",
    "urlretrieve",
    "http.get",
    "https.get",
    "fetch",
    "LWP",
    "HTTP::Tiny",
    "Net::HTTP",
    "open-uri",
    "URI.open",
    "file_get_contents",
    "Invoke-WebRequest",
    "iwr",
    "DownloadString",
    "WebClient",
    "curl_exec",
    "axios",
    "httpx",
];
const WRITE: &[&str] = &[
    "write",
    "writeFile",
    "writeFileSync",
    "appendFile",
    "appendFileSync",
    "file_put_contents",
    "fopen",
    "Set-Content",
    "Out-File",
    "Add-Content",
    "copy",
    "copyfile",
    "move",
    "rename",
    "replace",
    "chmod",
    "chown",
    "remove",
    "unlink",
    "unlinkSync",
    "rmdir",
    "truncate",
    "write_text",
    "write_bytes",
    "symlink",
];

impl Analyzer {
    /// Judges inline interpreter code.
    pub(crate) fn inline_code(&mut self, lang: Lang, src: &str, raw: &str) {
        if !self.spend(src.len()) {
            return;
        }
        let lx = lex(src, lang);
        let code = lx.code.as_str();
        let mut exec = any(code, EXEC);
        if lang == Lang::Awk {
            exec = has(code, "system")
                || (code.contains('|')
                    && (has(code, "getline") || code.contains("| \"") || code.contains("|\"")));
        }
        if lang == Lang::PowerShell {
            let l = src.to_lowercase();
            if l.contains("remove-item") && (l.contains("-recurse") || l.contains("-r ")) {
                self.add(
                    Category::RecursiveDelete,
                    raw,
                    "PowerShell deletes a directory tree",
                );
            }
            exec |= l.contains("invoke-expression") || has(&l, "iex") || l.contains("start-process");
        }
        let recursive_js = lang == Lang::Node
            && any(code, &["rmSync", "rm", "rmdirSync", "rmdir", "promises"])
            && has(code, "recursive");
        if any(code, TREE_DELETE) || recursive_js {
            self.add(
                Category::RecursiveDelete,
                raw,
                "inline code deletes a directory tree",
            );
        }
        let fork = any(code, &["fork", "pcntl_fork"]);
        if fork && any(code, &["while", "for", "loop", "until", "forever"]) {
            self.add(Category::ForkBomb, raw, "inline code forks in a loop");
        }
        if any(code, NET) && (exec || any(code, &["dup2", "pty", "IO.copy", "pipe"])) {
            self.add(
                Category::ReverseShell,
                raw,
                "inline code connects a process to a network socket",
            );
        }
        let evals = any(code, EVAL);
        if any(code, FETCH) && (evals || exec) {
            self.add(
                Category::RemoteCodeExecution,
                raw,
                "inline code runs code it downloads",
            );
        }
        if exec || !lx.shell.is_empty() {
            self.add(
                Category::CodeExecution,
                raw,
                "inline interpreter code runs other programs",
            );
        } else if evals {
            self.add(
                Category::CodeExecution,
                raw,
                "inline interpreter code evaluates dynamically built code",
            );
        }
        if any(code, &["kill", "killpg", "Stop-Process"]) {
            self.add(Category::ProcessKill, raw, "inline code kills processes");
        }
        self.code_paths(code, &lx, raw);
        let mut commands: Vec<String> = lx.shell.clone();
        if exec {
            commands.extend(lx.strings.iter().cloned());
            commands.extend(lx.groups.iter().cloned());
        }
        for cmd in commands {
            if !cmd.trim().is_empty() {
                self.payload(&cmd, Input::None);
            }
        }
    }

    /// Sensitive paths written or deleted by inline code.
    fn code_paths(&mut self, code: &str, lx: &Lexed, raw: &str) {
        let mode_write = lx.strings.iter().any(|s| {
            matches!(
                s.as_str(),
                "w" | "a" | "x" | "w+" | "a+" | "r+" | "wb" | "ab" | "wt" | "at" | "rb+" | "wb+"
            )
        });
        let perl_write = lx
            .strings
            .iter()
            .any(|s| s.starts_with('>') || s.starts_with("+<"));
        let writes = any(code, WRITE) || (has(code, "open") && mode_write) || perl_write;
        let sends = any(code, FETCH) || any(code, NET);
        for s in &lx.strings {
            let target = s.trim_start_matches(['>', '+', '<']).trim();
            if !target.starts_with('/') && !target.starts_with('~') {
                continue;
            }
            let p = normalize(target, None);
            if writes {
                if is_block_device(&p) {
                    self.add(
                        Category::FilesystemFormat,
                        raw,
                        format!("inline code writes the disk device {p}"),
                    );
                } else if let Some(why) = system_write_reason(&p) {
                    self.add(
                        Category::SystemConfigOverwrite,
                        raw,
                        format!("inline code {why}: {p}"),
                    );
                }
            }
            if sends && is_secret_path(&p) {
                self.add(
                    Category::SecretExfiltration,
                    raw,
                    format!("inline code sends the secret file {p}"),
                );
            }
        }
    }
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
