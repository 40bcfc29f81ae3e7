//! Interpreter languages, one row of [`LANGUAGES`] each: the programs
//! that run the language, how their command line gives inline code, how
//! its string literals are written, and which standard-library calls run
//! other programs, evaluate code or delete files and directory trees.
//!
//! Adding an interpreter is adding a row: `inline_code` (in `code`) and
//! the command-line rule (in `shell`) read only the table, apart from a
//! few [`Dialect`]s whose grammar is not a call syntax (awk programs,
//! PowerShell's command line).

/// What a language's calls are written like beyond plain calls.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Dialect {
    /// Calls and string literals only.
    Plain,
    /// awk: the program is the first operand; its `print > "f"`, pipes and
    /// `system()` are scanned (see `awk`).
    Awk,
    /// PowerShell: names are case-insensitive, `-Command` takes the rest
    /// of the line, `-EncodedCommand` hides the code.
    PowerShell,
}

/// One interpreter language.
#[derive(Debug)]
pub(crate) struct Language {
    /// A short name, for lookups by other rules.
    pub name: &'static str,
    /// Program names (lower case).
    pub programs: &'static [&'static str],
    /// Program names that may carry a version (`python3.12`, `perl5.36`).
    pub versioned: &'static [&'static str],
    /// How its command line and calls are read.
    pub dialect: Dialect,
    /// Short options whose value is inline code (`-c`, `-e`).
    pub code_opts: &'static str,
    /// Short options that take a value.
    pub with_arg: &'static str,
    /// Long options whose value is inline code (`--eval`).
    pub long_code: &'static [&'static str],
    /// Other long options that take a value.
    pub long_with_arg: &'static [&'static str],
    /// An option that runs a library module instead of a script
    /// (`python -m`).
    pub module_opt: Option<&'static str>,
    /// An option that edits its operand files in place (`perl -i`).
    pub in_place: Option<&'static str>,
    /// Options naming modules loaded before the code (`node -r`).
    pub preload_opts: &'static [&'static str],
    /// Whether `"""` strings exist (Python).
    pub triple_quotes: bool,
    /// Whether backticks run a shell command (Perl, Ruby, PHP, Julia).
    pub backtick_shell: bool,
    /// The prefix of a quoted shell command (`qx(...)`, `%x{...}`).
    pub shell_quote: Option<&'static str>,
    /// Whether `open("|cmd")` (a string starting with `|`) runs `cmd`.
    pub pipe_open: bool,
    /// Words whose following words, up to the end of the command
    /// (`]`, `;`, a newline), are a command line (Tcl's `exec rm -rf d`).
    pub command_words: &'static [&'static str],
    /// Whether a string naming a function calls it
    /// (`array_map('unlink', ...)`, `call_user_func('system', ...)`).
    pub string_callables: bool,
    /// Calls that run other programs or shell commands (besides
    /// [`COMMON_RUNS`]).
    pub runs: &'static [&'static str],
    /// Calls that evaluate code built at run time (besides `eval`).
    pub evals: &'static [&'static str],
    /// Calls that delete files; each entry lists names that must all
    /// appear (`["Bun.file", "delete"]`).
    pub deletes: &'static [&'static [&'static str]],
    /// Calls that delete directory trees (same form:
    /// `["rmSync", "recursive"]`).
    pub tree_deletes: &'static [&'static [&'static str]],
}

/// An interpreter language (a row of [`LANGUAGES`]).
pub(crate) type Lang = &'static Language;

impl PartialEq for Language {
    fn eq(&self, other: &Language) -> bool {
        self.name == other.name
    }
}

impl Eq for Language {}

/// Calls that run programs in most languages (`system`, `exec`,
/// `popen`, the POSIX `exec*`/`spawn*` family).
pub(crate) const COMMON_RUNS: &[&str] = &[
    "system",
    "popen",
    "exec",
    "spawn",
    "fork",
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
];

const fn lang(name: &'static str, programs: &'static [&'static str]) -> Language {
    Language {
        name,
        programs,
        versioned: &[],
        dialect: Dialect::Plain,
        code_opts: "e",
        with_arg: "e",
        long_code: &[],
        long_with_arg: &[],
        module_opt: None,
        in_place: None,
        preload_opts: &[],
        triple_quotes: false,
        backtick_shell: false,
        shell_quote: None,
        pipe_open: false,
        command_words: &[],
        string_callables: false,
        runs: &[],
        evals: &[],
        deletes: &[],
        tree_deletes: &[],
    }
}

/// Every language the detector reads.
pub(crate) static LANGUAGES: &[Language] = &[
    Language {
        versioned: &["python", "pypy"],
        code_opts: "c",
        with_arg: "cmWXQ",
        module_opt: Some("m"),
        triple_quotes: true,
        runs: &[
            "subprocess",
            "Popen",
            "getoutput",
            "getstatusoutput",
            "check_output",
            "check_call",
            "create_subprocess_shell",
            "create_subprocess_exec",
            "pty.spawn",
        ],
        evals: &["compile", "__import__", "importlib", "getattr"],
        deletes: &[
            &["os.remove"],
            &["os.unlink"],
            &["unlink"],
            &["os.rmdir"],
            &["rmdir"],
            &["send2trash"],
        ],
        tree_deletes: &[&["rmtree"], &["removedirs"]],
        ..lang("python", &[])
    },
    Language {
        versioned: &["perl"],
        code_opts: "eE",
        with_arg: "eEIMm",
        in_place: Some("i"),
        backtick_shell: true,
        shell_quote: Some("qx"),
        pipe_open: true,
        runs: &["qx", "IPC::Open3", "IPC::Run", "open3", "open2"],
        deletes: &[&["unlink"], &["rmdir"]],
        tree_deletes: &[&["rmtree"], &["remove_tree"]],
        ..lang("perl", &[])
    },
    Language {
        with_arg: "eIrCEFx",
        in_place: Some("i"),
        backtick_shell: true,
        shell_quote: Some("%x"),
        pipe_open: true,
        runs: &[
            "Kernel.spawn",
            "IO.popen",
            "Open3",
            "capture2",
            "capture2e",
            "capture3",
            "popen3",
            "PTY.spawn",
        ],
        evals: &["instance_eval", "class_eval", "module_eval", "binding.eval"],
        deletes: &[
            &["File.delete"],
            &["File.unlink"],
            &["FileUtils.rm"],
            &["FileUtils.rm_f"],
            &["FileUtils.remove"],
            &["FileUtils.remove_file"],
            &["FileUtils.rmdir"],
            &["Dir.rmdir"],
            &["Dir.delete"],
            &["Dir.unlink"],
            &["Pathname", "delete"],
        ],
        tree_deletes: &[
            &["rm_rf"],
            &["rm_r"],
            &["remove_dir"],
            &["remove_entry"],
            &["remove_entry_secure"],
            &["rmtree"],
        ],
        ..lang("ruby", &["ruby", "jruby", "truffleruby", "irb"])
    },
    Language {
        code_opts: "ep",
        with_arg: "eprC",
        long_code: &["--eval", "--print"],
        long_with_arg: &["--require", "--import", "--loader", "--experimental-loader"],
        preload_opts: &["r", "--require", "--import", "--loader", "--experimental-loader"],
        runs: &[
            "child_process",
            "execSync",
            "execFileSync",
            "spawnSync",
            "execFile",
            "Deno.run",
            "Deno.Command",
            "Bun.spawn",
            "Bun.spawnSync",
            "execa",
            "shelljs",
            "$``",
        ],
        evals: &["Function", "runInThisContext", "runInNewContext", "vm.Script"],
        deletes: &[
            &["unlink"],
            &["unlinkSync"],
            &["rmSync"],
            &["rmdirSync"],
            &["fs.rm"],
            &["rmdir"],
            &["Deno.remove"],
            &["Deno.removeSync"],
            &["Bun.file", "delete"],
        ],
        tree_deletes: &[
            &["rimraf"],
            &["emptyDirSync"],
            &["removeSync"],
            &["rmSync", "recursive"],
            &["rm", "recursive"],
            &["rmdirSync", "recursive"],
            &["rmdir", "recursive"],
            &["promises", "recursive"],
            &["remove", "recursive"],
            &["removeSync", "recursive"],
        ],
        ..lang("node", &["node", "nodejs", "deno", "bun", "qjs"])
    },
    Language {
        versioned: &["php"],
        code_opts: "r",
        with_arg: "rfdcBRFEzSt",
        backtick_shell: true,
        string_callables: true,
        runs: &["shell_exec", "passthru", "proc_open", "pcntl_exec"],
        evals: &["create_function", "assert", "call_user_func"],
        deletes: &[&["unlink"], &["rmdir"]],
        ..lang("php", &[])
    },
    Language {
        versioned: &["lua"],
        with_arg: "el",
        runs: &["os.execute", "io.popen"],
        evals: &["loadstring", "load", "dofile"],
        deletes: &[&["os.remove"]],
        ..lang("lua", &["luajit"])
    },
    Language {
        dialect: Dialect::Awk,
        code_opts: "",
        with_arg: "Fvfi",
        long_code: &["--source"],
        long_with_arg: &["--include", "--file"],
        ..lang("awk", &["awk", "gawk", "mawk", "nawk"])
    },
    Language {
        with_arg: "el",
        // Matched in lower case (JXA's `doShellScript` too).
        runs: &["do shell script", "doshellscript"],
        evals: &["run script"],
        deletes: &[&["delete"]],
        ..lang("applescript", &["osascript"])
    },
    Language {
        dialect: Dialect::PowerShell,
        code_opts: "c",
        with_arg: "cfe",
        long_code: &["--command", "-command"],
        runs: &[
            "start-process",
            "invoke-expression",
            "iex",
            "invoke-command",
            "invoke-item",
            "cmd.exe",
            "saps",
        ],
        deletes: &[
            &["remove-item"],
            &["del"],
            &["ri"],
            &["rm"],
            &["rmdir"],
            &["rd"],
            &["erase"],
        ],
        tree_deletes: &[
            &["remove-item", "-recurse"],
            &["remove-item", "-r"],
            &["rm", "-recurse"],
            &["rm", "-r"],
            &["ri", "-recurse"],
            &["ri", "-r"],
            &["del", "-recurse"],
            &["rmdir", "-recurse"],
            &["rd", "-recurse"],
        ],
        ..lang(
            "powershell",
            &["pwsh", "powershell", "powershell.exe", "pwsh.exe"],
        )
    },
    Language {
        long_code: &["--expr"],
        runs: &["system2", "shell", "processx", "pipe"],
        deletes: &[&["file.remove"], &["unlink"], &["file_delete"]],
        tree_deletes: &[&["unlink", "recursive"], &["dir_delete"]],
        ..lang("r", &["rscript", "r"])
    },
    Language {
        code_opts: "c",
        with_arg: "cf",
        pipe_open: true,
        command_words: &["exec", "spawn"],
        runs: &["exec", "spawn"],
        evals: &["uplevel", "subst"],
        deletes: &[&["file", "delete"]],
        tree_deletes: &[&["file", "delete", "-force"]],
        ..lang("tcl", &["tclsh", "wish", "expect", "tclsh8.6", "tclsh9.0"])
    },
    Language {
        code_opts: "eE",
        with_arg: "eEpLJCOgt",
        long_code: &["--eval", "--print"],
        backtick_shell: true,
        runs: &["run", "pipeline"],
        evals: &["Meta.parse", "include_string"],
        deletes: &[&["rm"]],
        tree_deletes: &[&["rm", "recursive"]],
        ..lang("julia", &["julia"])
    },
    Language {
        code_opts: "",
        with_arg: "",
        runs: &["Runtime", "ProcessBuilder"],
        deletes: &[&["Files.delete"], &["Files.deleteIfExists"], &["File", "delete"]],
        tree_deletes: &[
            &["deleteDirectory"],
            &["deleteRecursively"],
            &["Files.walk", "delete"],
        ],
        ..lang("java", &["jshell"])
    },
    Language {
        runs: &["execute", "Runtime", "ProcessBuilder"],
        evals: &["Eval.me", "GroovyShell"],
        deletes: &[&["delete"], &["Files.delete"]],
        tree_deletes: &[&["deleteDir"], &["deleteDirectory"]],
        ..lang("groovy", &["groovy"])
    },
    Language {
        runs: &["sys.process", "Process", "ProcessBuilder", "Runtime"],
        deletes: &[&["Files.delete"], &["Files.deleteIfExists"], &["os.remove"]],
        tree_deletes: &[&["deleteRecursively"], &["os.remove.all"]],
        ..lang("scala", &["scala", "scala-cli", "amm", "kotlin", "kotlinc"])
    },
    Language {
        with_arg: "erS",
        runs: &["System.cmd", "System.shell", ":os.cmd", "Port.open"],
        evals: &["Code.eval_string", "Code.eval_quoted"],
        deletes: &[&["File.rm"]],
        tree_deletes: &[&["rm_rf"]],
        ..lang("elixir", &["elixir"])
    },
    Language {
        runs: &["shell", "run", "qqx", "Proc::Async"],
        evals: &["EVAL"],
        deletes: &[&["unlink"], &["rmdir"]],
        tree_deletes: &[&["rmtree"]],
        ..lang("raku", &["raku", "perl6", "rakudo"])
    },
    Language {
        runs: &[
            "shell",
            "sh",
            "process",
            "clojure.java.shell",
            "babashka.process",
            "ProcessBuilder",
        ],
        evals: &["load-string", "read-string"],
        deletes: &[&["fs/delete"], &["delete-file"], &["fs/delete-if-exists"]],
        tree_deletes: &[&["delete-tree"]],
        ..lang("clojure", &["bb", "clojure", "clj"])
    },
];

/// A language with no known calls: code in it is still scanned for paths
/// and shell commands in backticks.
static PLAIN: Language = lang("plain", &[]);

/// The language a program name runs, if it is an interpreter
/// (`python3.12` is `python`; `phpunit` is not `php`).
pub(crate) fn interpreter(name: &str) -> Option<Lang> {
    LANGUAGES.iter().find(|l| {
        l.programs.contains(&name)
            || l.versioned.iter().any(|v| {
                name.strip_prefix(v)
                    .is_some_and(|rest| rest.chars().all(|c| c.is_ascii_digit() || c == '.'))
            })
    })
}

/// The language called `name` in [`LANGUAGES`] (for rules that run
/// embedded code: an editor's `:py3`, a MongoDB shell's JavaScript).
pub(crate) fn by_name(name: &str) -> Lang {
    LANGUAGES.iter().find(|l| l.name == name).unwrap_or(&PLAIN)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn programs_find_their_language() {
        assert_eq!(interpreter("python3.12").map(|l| l.name), Some("python"));
        assert_eq!(interpreter("perl").map(|l| l.name), Some("perl"));
        assert_eq!(interpreter("lua5.4").map(|l| l.name), Some("lua"));
        assert_eq!(interpreter("lua").map(|l| l.name), Some("lua"));
        assert_eq!(interpreter("tclsh").map(|l| l.name), Some("tcl"));
        assert!(interpreter("phpunit").is_none() && interpreter("perltidy").is_none());
        assert_eq!(by_name("node").name, "node");
        assert_eq!(by_name("nothing").name, "plain");
    }
}
