//! Programs and scripts run from files: `./run.sh`, `/tmp/x`, `sh f`,
//! `python3 f.py`, `. ./f`, `bash < f`.
//!
//! A file this command wrote is analysed (see the `files` module); an
//! installed program or system script is judged by its name; anything
//! else runs code the detector cannot see and is `opaque`.

use super::Cmd;
use super::names::Lang;
use super::shell::Sink;
use crate::analyze::Analyzer;
use crate::expand::Field;
use crate::files::Content;
use crate::paths;
use crate::resolve::Via;
use crate::verdict::Category;

/// Standard folders a bare program name is looked up in.
const PATH_DIRS: &[&str] = &[
    "~/.local/bin",
    "~/bin",
    "/usr/local/sbin",
    "/usr/local/bin",
    "/usr/sbin",
    "/usr/bin",
    "/sbin",
    "/bin",
];

/// The deepest chain of renamed programs followed (`cp /bin/rm x; cp x y`).
const MAX_RENAMES: usize = 4;

impl Analyzer {
    /// The rule for the program file itself: a program run by its path
    /// (or a program this command put on `PATH` under a new name).
    pub(crate) fn program_file(&mut self, c: &Cmd<'_>) {
        let path = c.inv.path.as_str();
        let file = if path.contains('/') {
            Field::lit(path)
        } else {
            let found = PATH_DIRS
                .iter()
                .map(|d| Field::lit(&format!("{d}/{path}")))
                .find(|f| self.file_content(f).is_some());
            match found {
                Some(f) => f,
                None => return,
            }
        };
        match self.file_content(&file) {
            Some(Content::Data(p)) => match &p.text {
                Some(text) => {
                    let args = c.args().to_vec();
                    self.run_executable(&file, text, c.raw(), &args);
                }
                None => self.run_unknown(&p, path, c.raw()),
            },
            Some(Content::Program(real)) if real != c.inv.name && self.files.renames < MAX_RENAMES => {
                self.files.renames += 1;
                let fields = [vec![Field::lit(&real)], c.args().to_vec()].concat();
                self.judge_fields(fields, c.inv.via.clone(), c);
                self.files.renames -= 1;
            }
            Some(Content::Program(_)) => {}
            None => {
                let p = paths::normalize(path, self.scope.cwd.as_deref());
                if !(p.starts_with('/') && paths::is_installed(&p)) {
                    self.add(
                        Category::Opaque,
                        c.raw(),
                        format!(
                            "runs the program file {path}, which is not an installed program: what it does cannot be seen"
                        ),
                    );
                }
            }
        }
    }

    /// A shell or interpreter given a script file operand (`sh f a b`,
    /// `python3 f.py`): `args` are the script's arguments.
    pub(crate) fn script_operand(&mut self, c: &Cmd<'_>, sink: Sink, file: &Field, args: &[Field]) {
        if c.inv.via == Via::Bulk && file.generated() {
            self.add(
                Category::Opaque,
                c.raw(),
                "runs script files named by its input, whose content the detector cannot see",
            );
            return;
        }
        self.run_file(file, sink, c.raw(), args);
    }

    /// A shell or interpreter with no script operand and no inline code
    /// fed file names by `xargs`/`find -exec`/`parallel`.
    pub(crate) fn bulk_scripts(&mut self, c: &Cmd<'_>) -> bool {
        if c.inv.via == Via::Bulk {
            self.add(
                Category::Opaque,
                c.raw(),
                "runs script files named by its input, whose content the detector cannot see",
            );
            return true;
        }
        false
    }

    /// The script file of an interpreter command line, when it names one
    /// (`node x.js`, `deno run x.ts`, `bun x.ts`, `php artisan`): the index
    /// of its operand. `None`: no script file (a subcommand such as `deno
    /// task` or `bun install`, or no operand at all).
    pub(crate) fn interpreter_script(&self, c: &Cmd<'_>, lang: Lang, operands: &[&Field]) -> Option<usize> {
        let first = operands.first()?;
        let looks_like_file = |f: &Field| {
            f.text.contains('/')
                || [".js", ".mjs", ".cjs", ".ts", ".mts", ".cts", ".tsx", ".jsx"]
                    .iter()
                    .any(|e| f.text.ends_with(e))
        };
        if lang.name == "node" && matches!(c.inv.name.as_str(), "deno" | "bun") {
            return match first.text.as_str() {
                "run" => operands
                    .get(1)
                    .filter(|f| c.inv.name == "deno" || looks_like_file(f))
                    .map(|_| 1),
                _ if looks_like_file(first) => Some(0),
                _ => None,
            };
        }
        Some(0)
    }
}
