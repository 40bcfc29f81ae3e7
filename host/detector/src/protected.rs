//! Paths the caller protects: toolhost's own configuration, command
//! allowlist and managed storage (see [`Context::with_protected`]).
//!
//! A write into a protected path, or a deletion, move or recursive change
//! of a protected path or of a folder holding one, is
//! `host_config_write`: the command would change the rules that judge
//! commands, or the data toolhost manages. The rule sees every write the
//! other rules see (redirections, `tee`, `cp`/`mv`/`install`/`rsync`
//! targets, `sed -i`, `perl -i`, `truncate`, `dd of=`, `curl -o`,
//! `tar -C`, `sort -o`, awk's `print > "f"`, ...) plus deletions (`rm`,
//! `shred`, `find -delete`, `gzip FILE`, `rsync --remove-source-files`),
//! `mv` sources, `ln`, `touch`, `mkdir`, editors, permission changes and
//! the commands `find -exec` runs on what it finds.
//!
//! Paths inside a writable folder ([`Context::with_writable`]) are not
//! protected by a protected folder holding that writable folder; protected
//! paths inside it, and the writable folder itself, still are.
//!
//! Paths are compared after normalization (`..`, `~`, the working
//! directory). With the working directory unknown, a relative path
//! matches a protected path it could name from some directory
//! (`toolhost.toml` matches `/srv/toolhost.toml`).

use super::analyze::Analyzer;
use super::expand::{Field, INHERITED, UNKNOWN, generated_names};
use super::paths::{self, under};
use super::rules::{Cmd, args};
use crate::Context;
use crate::verdict::Category;

/// The caller's protected paths, normalized, and its home folder.
#[derive(Debug, Clone, Default)]
pub(crate) struct Host {
    protected: Vec<String>,
    /// Folders inside protected ones that the command may change (see
    /// [`Context::with_writable`]).
    writable: Vec<String>,
    home: Option<String>,
}

impl Host {
    /// The protected paths of `cx`, resolved (see [`Host::resolve`]).
    pub(crate) fn new(cx: &Context<'_>) -> Host {
        let mut h = Host {
            protected: Vec::new(),
            writable: Vec::new(),
            home: cx
                .home
                .map(|d| paths::normalize(d, None))
                .filter(|d| d.starts_with('/') && d != "/"),
        };
        let cwd = h.working_dir(cx.cwd);
        h.protected = cx
            .protected
            .iter()
            .filter(|p| !p.trim().is_empty())
            .map(|p| h.resolve(p, cwd.as_deref()))
            .collect();
        h.writable = cx
            .writable
            .iter()
            .filter(|p| !p.trim().is_empty())
            .map(|p| h.resolve(p, cwd.as_deref()))
            .filter(|p| p.starts_with('/') || p.starts_with('~'))
            .collect();
        h
    }

    /// Whether the protected path `g` does not cover the resolved path `p`
    /// (or, for a pattern, what it matches inside `p`) because `p` lies in
    /// a writable folder inside `g`. Writing the writable folder itself
    /// (`mkdir -p`) is allowed; removing it is not.
    fn carved_out(&self, g: &str, p: &str, pattern: bool, how: Touch) -> bool {
        self.writable.iter().any(|w| {
            let inside_g = under(w, g) && w != g;
            let inside_w = if pattern || how == Touch::Write {
                under(p, w)
            } else {
                under(p, w) && p != w
            };
            inside_g && inside_w
        })
    }

    /// The home folder (absolute), when known.
    pub(crate) fn home(&self) -> Option<&str> {
        self.home.as_deref()
    }

    /// `p` with a leading `~` replaced by the home folder, when known.
    fn unfold(&self, p: &str) -> String {
        match (&self.home, p.strip_prefix('~')) {
            (Some(h), Some(rest)) if rest.is_empty() || rest.starts_with('/') => format!("{h}{rest}"),
            _ => p.to_string(),
        }
    }

    /// `p` with the home folder written as `~`.
    fn fold(&self, p: String) -> String {
        match &self.home {
            Some(h) if p == *h => "~".to_string(),
            Some(h) => match p.strip_prefix(h.as_str()).filter(|r| r.starts_with('/')) {
                Some(rest) => format!("~{rest}"),
                None => p,
            },
            None => p,
        }
    }

    /// The path `text` names from the working directory `cwd`, normalized
    /// (`..`, `.`, `//` folded) with `~` standing for the home folder.
    /// With the home folder known, `..` above it is resolved
    /// (`~/project/../../me/x` is `~/x` for home `/home/me`).
    pub(crate) fn resolve(&self, text: &str, cwd: Option<&str>) -> String {
        let cwd = cwd.map(|c| self.unfold(c));
        self.fold(paths::normalize(&self.unfold(text), cwd.as_deref()))
    }

    /// A working directory as the analysis keeps it: absolute when the
    /// home folder is known (so that `..` can leave it).
    pub(crate) fn working_dir(&self, cwd: Option<&str>) -> Option<String> {
        cwd.map(|c| self.unfold(&paths::normalize(c, None)))
    }
}

/// How a command touches a path.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Touch {
    /// Writes, creates or changes the path itself.
    Write,
    /// Deletes or moves the path, or changes everything under it: a
    /// folder holding a protected path counts too.
    Remove,
}

impl Analyzer {
    /// Flags `how` on the path `f` names when it is protected.
    pub(crate) fn protected_touch(&mut self, f: &Field, how: Touch, matched: &str) {
        if self.host.protected.is_empty() {
            return;
        }
        if let Some(hit) = self.protected_hit(&f.text, how) {
            let verb = match how {
                Touch::Write => "writes",
                Touch::Remove => "deletes, moves or changes",
            };
            self.add(
                Category::HostConfigWrite,
                matched,
                format!(
                    "{verb} {hit}, which toolhost protects (its configuration, allowlist or managed storage)"
                ),
            );
        }
    }

    /// The protected path `text` touches, if any.
    fn protected_hit(&self, text: &str, how: Touch) -> Option<String> {
        let cut = text
            .find(['*', '?', '[', UNKNOWN, INHERITED])
            .unwrap_or(text.len());
        let pattern = cut < text.len();
        let (fixed, _) = text.split_at(cut);
        let fixed = if pattern {
            fixed.rsplit_once('/').map_or("", |(d, _)| d)
        } else {
            fixed
        };
        if fixed.is_empty() && (!pattern || self.scope.cwd.is_none()) && !text.starts_with('/') {
            return None;
        }
        let base = if fixed.is_empty() { "." } else { fixed };
        let p = self.host.resolve(base, self.scope.cwd.as_deref());
        let relative = !p.starts_with('/') && !p.starts_with('~');
        self.host
            .protected
            .iter()
            .find(|g| {
                if relative {
                    let tail = format!("/{p}");
                    return !pattern && g.ends_with(&tail)
                        || how == Touch::Remove && g.contains(&format!("{tail}/"));
                }
                if self.host.carved_out(g, &p, pattern, how) {
                    return false;
                }
                if pattern {
                    return under(g, &p) || under(&p, g);
                }
                under(&p, g) || how == Touch::Remove && under(g, &p)
            })
            .cloned()
    }

    /// The protection rule for programs that delete, move, link, create
    /// or edit files (writes through redirections and copy targets are
    /// judged with every other write).
    pub(crate) fn protected_rules(&mut self, c: &Cmd<'_>) {
        if self.host.protected.is_empty() {
            return;
        }
        let a = c.args();
        let name = c.inv.name.as_str();
        let (how, skip, with_arg): (Touch, usize, &str) = match name {
            "rm" | "rmdir" | "unlink" | "shred" | "srm" | "wipe" | "trash" | "trash-put" | "del" => {
                (Touch::Remove, 0, "ns")
            }
            "mv" => (Touch::Remove, 0, "tS"),
            "ln" | "touch" | "mkdir" => (Touch::Write, 0, "tSmdrt"),
            "chmod" | "chown" | "chgrp" | "chattr" | "setfacl" => {
                let p = args::parse(a, "m", &["--reference"]);
                let recursive = p.short("R") || p.long("--recursive");
                let how = if recursive { Touch::Remove } else { Touch::Write };
                (how, usize::from(!p.long("--reference") && name != "setfacl"), "m")
            }
            "vi" | "vim" | "nvim" | "gvim" | "nano" | "pico" | "emacs" | "ed" | "ex" | "micro" | "joe"
            | "kak" | "hx" | "mcedit" | "code" => (Touch::Write, 0, "cSuTts"),
            "find" => {
                // The commands of `-exec` are judged with the names found
                // as their operands; `-delete` removes the folders searched.
                if a.iter().any(|f| f.text == "-delete") {
                    for f in &super::rules::find_starts(a) {
                        // `find . -delete` cannot remove `.` itself, only
                        // what it finds inside.
                        let t = if matches!(f.text.trim_end_matches('/'), "." | "") {
                            Field::lit(&format!("./{}", generated_names()))
                        } else {
                            f.clone()
                        };
                        self.protected_touch(&t, Touch::Remove, c.raw());
                    }
                }
                return;
            }
            "rsync" if a.iter().any(|f| f.text.starts_with("--delete")) => {
                if let Some(t) = args::parse(a, "e", &["--rsh"]).operands.last() {
                    let t = (*t).clone();
                    self.protected_touch(&t, Touch::Remove, c.raw());
                }
                return;
            }
            _ => return,
        };
        let ops: Vec<Field> = args::parse(a, with_arg, &[])
            .operands
            .iter()
            .skip(skip)
            .map(|f| (*f).clone())
            .collect();
        for f in &ops {
            self.protected_touch(f, how, c.raw());
        }
    }
}
