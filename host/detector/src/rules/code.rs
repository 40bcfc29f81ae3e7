//! Inline interpreter code (`python -c`, `perl -e`, `node -e`, ...).
//!
//! The code is split into string literals and the code around them, so
//! names inside strings are data. Calls that run processes, delete trees,
//! evaluate code, open sockets or write system files are flagged; when code
//! runs processes, its string literals (and lists of literals joined, as in
//! `subprocess.call(["rm", "-rf", "/"])`) are analysed as shell commands.

use super::awk;
use super::code_lex::{Lexed, any, has, lex};
use super::names::Lang;
use crate::analyze::{Analyzer, Input};
use crate::expand::Field;
use crate::paths::{is_block_device, is_harmless_device, is_secret_path, normalize, system_write_reason};
use crate::protected::Touch;
use crate::verdict::Category;

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
    "system2",
    "processx",
    "Deno.run",
    "Deno.Command",
    "execa",
    "shelljs",
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
    "dir_delete",
    "delete_tree",
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

/// Whether the code deletes files, by the deletion calls of its language
/// (qualified where a bare name is common: Python's `list.remove`).
fn deletes_files(lang: Lang, code: &str, lower: &str) -> bool {
    match lang {
        Lang::Python => any(
            code,
            &[
                "os.remove",
                "os.unlink",
                "unlink",
                "os.rmdir",
                "rmdir",
                "send2trash",
            ],
        ),
        Lang::Perl | Lang::Php => any(code, &["unlink", "rmdir"]),
        Lang::Ruby => any(
            code,
            &[
                "File.delete",
                "File.unlink",
                "FileUtils.rm",
                "FileUtils.rm_f",
                "FileUtils.remove",
                "FileUtils.remove_file",
                "FileUtils.rmdir",
                "Dir.rmdir",
                "Dir.delete",
                "Dir.unlink",
            ],
        ),
        Lang::Node => any(
            code,
            &[
                "unlink",
                "unlinkSync",
                "rmSync",
                "rmdirSync",
                "fs.rm",
                "rmdir",
                "Deno.remove",
                "Deno.removeSync",
            ],
        ),
        Lang::Lua => has(code, "os.remove"),
        Lang::R => any(code, &["file.remove", "unlink", "file_delete"]),
        Lang::PowerShell => lower.contains("remove-item") || has(lower, "del") || has(lower, "ri"),
        Lang::AppleScript => lower.contains("delete"),
        Lang::Other => code.contains("file delete") || has(code, "delete"),
        Lang::Awk => false,
    }
}

impl Analyzer {
    /// Judges inline interpreter code.
    pub(crate) fn inline_code(&mut self, lang: Lang, src: &str, raw: &str) {
        if !self.spend(src.len()) {
            return;
        }
        let lx = lex(src, lang);
        let code = lx.code.as_str();
        if code.contains(crate::expand::UNKNOWN) {
            self.add(
                Category::DynamicCommand,
                raw,
                "inline interpreter code is partly computed at run time",
            );
        }
        let lower = src.to_lowercase();
        let mut exec = any(code, EXEC) || lang == Lang::Node && code.contains("$``");
        let mut commands: Vec<String> = lx.shell.clone();
        if lang == Lang::Awk {
            let e = awk::scan(src);
            exec = !e.commands.is_empty();
            commands.extend(e.commands.into_iter().flatten());
            for w in e.writes.into_iter().flatten() {
                self.write_target(&Field::lit(&w), raw);
            }
        }
        if lang == Lang::PowerShell {
            let l = &lower;
            if l.contains("remove-item") && (l.contains("-recurse") || l.contains("-r ")) {
                self.add(
                    Category::RecursiveDelete,
                    raw,
                    "PowerShell deletes a directory tree",
                );
            }
            exec |= l.contains("invoke-expression") || has(l, "iex") || l.contains("start-process");
        }
        let recursive_js = lang == Lang::Node
            && any(
                code,
                &[
                    "rmSync",
                    "rm",
                    "rmdirSync",
                    "rmdir",
                    "promises",
                    "remove",
                    "removeSync",
                ],
            )
            && has(code, "recursive");
        let recursive_r = lang == Lang::R && has(code, "unlink") && has(code, "recursive");
        let tree = any(code, TREE_DELETE) || recursive_js || recursive_r;
        if tree {
            self.add(
                Category::RecursiveDelete,
                raw,
                "inline code deletes a directory tree",
            );
        }
        let deletes = deletes_files(lang, code, &lower);
        if deletes && !tree {
            self.add(Category::FileDestruction, raw, "inline code deletes files");
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
        self.code_paths(code, &lx, raw, deletes || tree);
        if exec && lang != Lang::Awk {
            commands.extend(lx.strings.iter().cloned());
            commands.extend(lx.groups.iter().cloned());
        }
        for cmd in commands {
            if !cmd.trim().is_empty() {
                self.payload(&cmd, Input::None);
            }
        }
    }

    /// Sensitive paths written, deleted or read by inline code.
    fn code_paths(&mut self, code: &str, lx: &Lexed, raw: &str, deletes: bool) {
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
            if target.is_empty() || target.len() > 4096 || target.contains(['\n', ' ']) {
                continue;
            }
            if writes || deletes {
                let how = if deletes { Touch::Remove } else { Touch::Write };
                self.protected_touch(&Field::lit(target), how, raw);
            }
            if target.contains('/') || target.starts_with('.') {
                self.credential_read(target, raw);
            }
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
                } else if p.starts_with("/dev/") && !is_harmless_device(&p) {
                    self.add(
                        Category::DeviceWrite,
                        raw,
                        format!("inline code writes the device {p}"),
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
