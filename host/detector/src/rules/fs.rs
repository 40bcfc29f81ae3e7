//! Files and disks: deletion, formatting, raw device writes, permission
//! changes and writes into sensitive locations.

use super::{Cmd, args};
use crate::analyze::Analyzer;
use crate::expand::{Field, generated_names};
use crate::paths::{is_log_or_history, is_secret_path, system_write_reason};
use crate::resolve::{Via, bulk_command};
use crate::verdict::Category;

const FORMATTERS: &[&str] = &[
    "mke2fs",
    "mkswap",
    "mkdosfs",
    "mkntfs",
    "mkexfatfs",
    "wipefs",
    "sfdisk",
    "cfdisk",
    "gdisk",
    "sgdisk",
    "cgdisk",
    "blkdiscard",
    "newfs",
    "format",
    "mformat",
];

impl Analyzer {
    /// Rules for file and disk programs.
    pub(crate) fn files(&mut self, c: &Cmd<'_>) {
        let name = c.inv.name.as_str();
        let raw = c.raw();
        let a = c.args();
        match name {
            "rm" | "unlink" | "del" | "trash" | "trash-put" => self.rm(c),
            // Node's `rm -rf`, often run through npx.
            "rimraf" | "del-cli" => self.add(
                Category::RecursiveDelete,
                raw,
                format!(
                    "deletes directories recursively ({})",
                    c.args()
                        .iter()
                        .map(|f| f.text.as_str())
                        .collect::<Vec<_>>()
                        .join(" ")
                ),
            ),
            "find" => self.find(c),
            "shred" | "srm" | "wipe" => {
                self.add(
                    Category::FileDestruction,
                    raw,
                    "overwrites files so they cannot be recovered",
                );
                self.deleted_paths(c);
            }
            n if n.starts_with("mkfs") || FORMATTERS.contains(&n) => {
                self.add(
                    Category::FilesystemFormat,
                    raw,
                    "formats, wipes or repartitions a disk",
                );
            }
            "fdisk" | "parted" => {
                let p = args::parse(a, "", &[]);
                let listing = p.short("l") || p.long("--list") || p.operand_in(&["print", "p"]);
                if !listing {
                    self.add(Category::FilesystemFormat, raw, "edits a disk's partition table");
                }
            }
            "zpool" | "zfs" | "lvremove" | "vgremove" | "pvremove" | "mdadm" | "cryptsetup" | "diskutil"
            | "badblocks" | "hdparm" => {
                let texts: Vec<String> = a.iter().map(|f| f.text.to_lowercase()).collect();
                let bad = texts.iter().any(|t| {
                    matches!(
                        t.as_str(),
                        "destroy"
                            | "labelclear"
                            | "luksformat"
                            | "erase"
                            | "--zero-superblock"
                            | "-w"
                            | "--security-erase"
                            | "--trim-sector-ranges"
                    ) || t.starts_with("erase")
                        || t.starts_with("zerodisk")
                        || t.starts_with("partitiondisk")
                        || t.starts_with("reformat")
                        || t.starts_with("secureerase")
                }) || matches!(name, "lvremove" | "vgremove" | "pvremove");
                if bad {
                    self.add(
                        Category::FilesystemFormat,
                        raw,
                        "destroys a volume, pool or disk's contents",
                    );
                }
            }
            "dd" => {
                for f in a {
                    if let Some(v) = f.text.strip_prefix("of=") {
                        let target = Field {
                            text: v.to_string(),
                            ..f.clone()
                        };
                        self.write_target(&target, raw);
                    }
                }
            }
            "chmod" => self.chmod(c),
            "chown" | "chgrp" | "chattr" | "setfacl" => {
                let p = args::parse(a, "m", &["--reference"]);
                let skip = usize::from(!p.long("--reference") && name != "setfacl");
                let recursive = p.short("R") || p.long("--recursive");
                for f in p.operands.iter().skip(skip) {
                    if self
                        .path(f)
                        .is_some_and(|x| system_write_reason(&x).is_some() || x == "~")
                    {
                        let how = if recursive {
                            "recursively changes"
                        } else {
                            "changes"
                        };
                        self.add(
                            Category::PermissionChange,
                            raw,
                            format!("{how} ownership or attributes of system files"),
                        );
                    }
                }
            }
            "setcap" => self.add(
                Category::PrivilegeEscalation,
                raw,
                "grants capabilities to a program",
            ),
            "cp" | "install" | "ln" | "mv" | "rsync" => self.copy_like(c),
            "tee" | "sudoedit" => {
                for f in args::parse(a, "", &[]).operands {
                    self.write_target(f, raw);
                }
            }
            "truncate" => {
                for f in args::parse(a, "sr", &["--size", "--reference"]).operands {
                    self.write_target(f, raw);
                }
            }
            "sed" => self.sed(c),
            _ => {}
        }
    }

    fn rm(&mut self, c: &Cmd<'_>) {
        let p = args::parse(c.args(), "", &[]);
        let recursive = p.short("rR") || p.long("--recursive");
        if recursive {
            let what = p.texts().join(" ");
            self.add(
                Category::RecursiveDelete,
                c.raw(),
                format!("deletes directories recursively ({what})"),
            );
        } else {
            if p.operands.iter().any(|f| f.generated()) {
                self.add(
                    Category::RecursiveDelete,
                    c.raw(),
                    "deletes every file named in a generated list",
                );
            }
            self.deleted_paths(c);
        }
    }

    /// Deleting system files, logs or history.
    fn deleted_paths(&mut self, c: &Cmd<'_>) {
        for f in args::parse(c.args(), "ns", &[]).operands {
            let Some(p) = self.path(f) else { continue };
            if is_log_or_history(&p) {
                self.add(
                    Category::LogTampering,
                    c.raw(),
                    format!("deletes the log or history file {p}"),
                );
            } else if system_write_reason(&p).is_some() || p == "~" {
                self.add(
                    Category::FileDestruction,
                    c.raw(),
                    format!("deletes a system or security-sensitive file: {p}"),
                );
            }
        }
    }

    fn find(&mut self, c: &Cmd<'_>) {
        let a = c.args();
        // What `{}` stands for: the names found, inside the folders
        // searched (`.` when none is given).
        let mut found: Vec<String> = find_starts(a)
            .iter()
            .map(|s| format!("{}/{}", s.text.trim_end_matches('/'), generated_names()))
            .collect();
        if found.is_empty() {
            found.push(format!("./{}", generated_names()));
        }
        let mut i = 0;
        while let Some(f) = a.get(i) {
            match f.text.as_str() {
                "-delete" => self.add(
                    Category::RecursiveDelete,
                    c.raw(),
                    "find -delete removes every match",
                ),
                "-exec" | "-execdir" | "-ok" | "-okdir" => {
                    let start = i + 1;
                    let mut end = start;
                    while a.get(end).is_some_and(|t| t.text != ";" && t.text != "+") {
                        end += 1;
                    }
                    let sub = a.get(start..end).unwrap_or_default();
                    let holders = ["{}".to_string()];
                    let cmd = bulk_command(sub, &holders, false, &found);
                    self.judge_fields(cmd, Via::Bulk, c);
                    i = end;
                }
                "-fprint" | "-fprint0" | "-fprintf" | "-fls" => {
                    if let Some(t) = a.get(i + 1) {
                        self.write_target(&t.clone(), c.raw());
                    }
                }
                _ => {}
            }
            i += 1;
        }
    }

    fn chmod(&mut self, c: &Cmd<'_>) {
        let p = args::parse(c.args(), "", &["--reference"]);
        let recursive = p.short("R") || p.long("--recursive");
        let mut ops = p.operands.iter();
        let mode = if p.long("--reference") {
            None
        } else {
            ops.next().map(|f| Mode::parse(&f.text))
        };
        let raw = c.raw();
        if mode.is_some_and(|m| m.setid) {
            self.add(Category::PermissionChange, raw, "sets the setuid/setgid bit");
        }
        if mode.is_some_and(|m| m.world_write) {
            self.add(
                Category::PermissionChange,
                raw,
                "makes files writable by every user",
            );
        }
        for f in ops {
            let Some(x) = self.path(f) else { continue };
            if system_write_reason(&x).is_none() && x != "~" {
                continue;
            }
            // Tightening the permissions of one's own files (`chmod 600
            // ~/.ssh/id_ed25519`, `chmod 700 ~/.ssh`) protects them: only
            // opening them to others (or any change to system files)
            // needs approval.
            let own = x == "~" || x.starts_with("~/");
            let opens = mode.is_none_or(|m| m.others_write || m.setid || m.others_read && is_secret_path(&x));
            if own && !opens {
                continue;
            }
            let how = if recursive {
                "recursively changes"
            } else {
                "changes"
            };
            self.add(
                Category::PermissionChange,
                raw,
                format!("{how} permissions of system or security files"),
            );
        }
    }

    fn copy_like(&mut self, c: &Cmd<'_>) {
        let name = c.inv.name.as_str();
        let p = args::parse(
            c.args(),
            "tSmogeB",
            &[
                "--target-directory",
                "--suffix",
                "--mode",
                "--owner",
                "--group",
                "--rsh",
                "--exclude",
                "--include",
                "--filter",
            ],
        );
        let raw = c.raw();
        if name == "rsync" && p.long("--delete") {
            self.add(
                Category::RecursiveDelete,
                raw,
                "rsync --delete removes destination files missing from the source",
            );
        }
        if name == "rsync" && p.long("--remove-source-files") {
            let n = p.operands.len().saturating_sub(1);
            let sources: Vec<Field> = p.operands.iter().take(n).map(|f| (*f).clone()).collect();
            for f in &sources {
                self.removed_file(f, raw);
            }
        }
        let target = p.value(&["t", "--target-directory"]).map(Field::lit).or_else(|| {
            (p.operands.len() >= 2)
                .then(|| p.operands.last().map(|f| (*f).clone()))
                .flatten()
        });
        if let Some(t) = target {
            if name == "mv" && t.text == "/dev/null" {
                self.add(Category::FileDestruction, raw, "moves files onto /dev/null");
            } else {
                self.write_target(&t, raw);
            }
        }
        if name == "mv" {
            let n = p.operands.len().saturating_sub(1);
            for f in p.operands.iter().take(n) {
                if self.path(f).is_some_and(|x| system_write_reason(&x).is_some()) {
                    self.add(Category::SystemConfigOverwrite, raw, "moves a system file away");
                }
            }
        }
    }
}

/// The folders `find` searches: its operands before the expression.
pub(crate) fn find_starts(a: &[Field]) -> Vec<Field> {
    a.iter()
        .take_while(|f| !f.text.starts_with('-') && f.text != "(" && f.text != "!")
        .cloned()
        .collect()
}

/// What a chmod mode grants.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
struct Mode {
    /// Every user may write.
    world_write: bool,
    /// The group or other users may write.
    others_write: bool,
    /// The group or other users may read.
    others_read: bool,
    /// The setuid or setgid bit is set.
    setid: bool,
}

impl Mode {
    /// Reads an octal (`640`) or symbolic (`go-rwx,u+x`) mode; symbolic
    /// clauses that take permissions away grant nothing.
    fn parse(mode: &str) -> Mode {
        let mut m = Mode::default();
        if !mode.is_empty() && mode.chars().all(|c| c.is_digit(8)) {
            let digits: Vec<u32> = mode.chars().filter_map(|c| c.to_digit(8)).collect();
            let digit = |back: usize| {
                digits
                    .len()
                    .checked_sub(back)
                    .and_then(|i| digits.get(i))
                    .copied()
                    .unwrap_or(0)
            };
            let (group, other) = (digit(2), digit(1));
            m.world_write = other & 2 != 0;
            m.others_write = (group | other) & 2 != 0;
            m.others_read = (group | other) & 4 != 0;
            m.setid = digits.len() >= 4 && digit(4) & 6 != 0;
            return m;
        }
        for clause in mode.split(',') {
            let who: String = clause.chars().take_while(|c| "ugoa".contains(*c)).collect();
            let rest = clause.get(who.len()..).unwrap_or_default();
            let op = rest.chars().next();
            let perms = rest.get(1..).unwrap_or_default();
            if !matches!(op, Some('+' | '=')) {
                continue;
            }
            // No `who` means everyone less the umask, which usually
            // keeps write access to the owner but lets everyone read.
            let world = who.contains(['o', 'a']);
            let others = world || who.contains('g');
            m.world_write |= world && perms.contains('w');
            m.others_write |= others && perms.contains('w');
            m.others_read |= (others || who.is_empty()) && perms.contains('r');
            m.setid |= perms.contains('s');
        }
        m
    }
}
