//! Files a program writes, deletes or replaces through its own options
//! and operands rather than a shell redirection: `sort -o FILE`, `uniq IN
//! OUT`, `split IN PREFIX`, `openssl ... -out FILE`, `curl -o`, `wget
//! -O`, `gcc -o`, `sponge FILE`, archives created or extracted (`tar -cf
//! FILE`, `tar -xf A -C DIR`, `unzip -d`), and compressors that replace
//! their operands (`gzip FILE` deletes FILE).
//!
//! Each such file is judged exactly like the target of `>`
//! ([`Analyzer::write_target`]): system files, logs, devices and the
//! caller's protected paths. Most programs are one row of [`WRITERS`];
//! archivers and compressors, whose modes decide what they write, have
//! their own functions.

use super::options::valued;
use super::{Cmd, args};
use crate::analyze::Analyzer;
use crate::expand::{Field, UNKNOWN};
use crate::protected::Touch;

/// Which operands a program writes.
#[derive(Debug, Clone, Copy)]
enum Operands {
    /// None.
    None,
    /// The operand at this index (`uniq IN OUT`).
    At(usize),
    /// Every operand from this index on (`sponge FILE`, `yq -i EXPR FILES`).
    From(usize),
    /// The operand at this index is the start of the names written
    /// (`split IN PREFIX` writes `PREFIXaa`, `PREFIXab`, ...).
    Prefix(usize),
}

/// A program that writes files it names in options or operands.
#[derive(Debug)]
struct Writer {
    /// Its program names.
    programs: &'static [&'static str],
    /// Short options that take a value (so that operands are counted
    /// right).
    with_arg: &'static str,
    /// Long options that take a value.
    long_with_arg: &'static [&'static str],
    /// Options whose value is a file or folder written (`-o`, `--output`,
    /// `-out`: as `-k V`, `-kV` for one letter, `--key V`, `--key=V`).
    outputs: &'static [&'static str],
    /// Options whose value starts the names written (`csplit -f xx`).
    prefixes: &'static [&'static str],
    /// The operands written.
    operands: Operands,
    /// Flags without which the operands are only read (`yq -i`); empty:
    /// always written.
    only_with: &'static [&'static str],
}

const fn writer(programs: &'static [&'static str], outputs: &'static [&'static str]) -> Writer {
    Writer {
        programs,
        with_arg: "",
        long_with_arg: &[],
        outputs,
        prefixes: &[],
        operands: Operands::None,
        only_with: &[],
    }
}

/// Programs and the files they write.
const WRITERS: &[Writer] = &[
    writer(&["sort"], &["-o", "--output"]),
    writer(&["shuf"], &["-o", "--output"]),
    writer(&["iconv"], &["-o", "--output"]),
    writer(&["gpg", "gpg2"], &["-o", "--output"]),
    writer(&["pandoc"], &["-o", "--output"]),
    writer(&["openssl"], &["-out", "-keyout", "-certout"]),
    writer(&["tcpdump", "tshark", "dumpcap"], &["-w"]),
    writer(
        &[
            "gcc", "g++", "cc", "c++", "clang", "clang++", "tcc", "ld", "ld.lld", "ld.gold", "as", "rustc",
            "go", "objcopy", "strip",
        ],
        &["-o"],
    ),
    writer(
        &["curl"],
        &[
            "-o",
            "--output",
            "--output-dir",
            "-D",
            "--dump-header",
            "-c",
            "--cookie-jar",
            "--trace",
            "--trace-ascii",
            "--stderr",
            "--libcurl",
            "--etag-save",
        ],
    ),
    writer(
        &["wget", "wget2"],
        &[
            "-O",
            "--output-document",
            "-P",
            "--directory-prefix",
            "-o",
            "--output-file",
            "-a",
            "--append-output",
            "--save-cookies",
        ],
    ),
    writer(&["aria2c"], &["-d", "--dir"]),
    writer(&["cpio"], &["-O", "-D", "--directory"]),
    Writer {
        with_arg: "fsw",
        long_with_arg: &["--skip-fields", "--skip-chars", "--check-chars"],
        operands: Operands::At(1),
        ..writer(&["uniq"], &[])
    },
    Writer {
        with_arg: "cglosn",
        operands: Operands::At(1),
        ..writer(&["xxd"], &[])
    },
    Writer {
        with_arg: "abClnt",
        long_with_arg: &[
            "--suffix-length",
            "--bytes",
            "--line-bytes",
            "--lines",
            "--number",
            "--separator",
            "--additional-suffix",
            "--filter",
        ],
        operands: Operands::Prefix(1),
        ..writer(&["split"], &[])
    },
    Writer {
        with_arg: "bfn",
        long_with_arg: &["--suffix-format", "--prefix", "--digits"],
        prefixes: &["-f", "--prefix"],
        ..writer(&["csplit"], &[])
    },
    Writer {
        with_arg: "pFdDiorBYzVgM",
        long_with_arg: &[
            "--strip",
            "--fuzz",
            "--directory",
            "--ifdef",
            "--input",
            "--output",
            "--reject-file",
            "--basename-prefix",
            "--prefix",
            "--suffix",
        ],
        operands: Operands::At(0),
        ..writer(&["patch"], &["-o", "--output", "-r", "--reject-file"])
    },
    Writer {
        with_arg: "bnPtxiO",
        operands: Operands::At(0),
        ..writer(&["zip"], &["-O", "--output-file"])
    },
    Writer {
        operands: Operands::From(0),
        ..writer(&["sponge", "dos2unix", "unix2dos"], &[])
    },
    Writer {
        operands: Operands::From(2),
        ..writer(&["sd"], &[])
    },
    Writer {
        with_arg: "IopP",
        long_with_arg: &["--indent", "--output-format", "--input-format", "--front-matter"],
        operands: Operands::From(1),
        only_with: &["-i", "--inplace"],
        ..writer(&["yq"], &[])
    },
];

/// Compressors that replace each file operand with its (de)compressed
/// copy, deleting the original unless told to keep it or write to
/// standard output; `zstd` and `lz4` keep it unless given `--rm`.
const COMPRESSORS: &[&str] = &[
    "gzip",
    "gunzip",
    "pigz",
    "unpigz",
    "bzip2",
    "bunzip2",
    "pbzip2",
    "xz",
    "unxz",
    "lzma",
    "unlzma",
    "lzip",
    "compress",
    "uncompress",
    "zstd",
    "unzstd",
    "lz4",
];

/// Whether `key` is a one-letter option (`-o`).
fn one_letter(key: &str) -> bool {
    key.len() == 2 && key.starts_with('-') && key != "--"
}

impl Analyzer {
    /// The rule for programs' own output files.
    pub(crate) fn outputs(&mut self, c: &Cmd<'_>) {
        let name = c.inv.name.as_str();
        match name {
            "tar" | "gtar" | "bsdtar" => self.tar_files(c),
            "unzip" => self.unzip_files(c),
            "7z" | "7za" | "7zr" | "7zz" => self.sevenzip_files(c),
            n if COMPRESSORS.contains(&n) => self.compressed_in_place(c),
            _ => {}
        }
        let Some(w) = WRITERS.iter().find(|w| w.programs.contains(&name)) else {
            return;
        };
        let raw = c.raw();
        let texts: Vec<String> = c.args().iter().map(|f| f.text.clone()).collect();
        // One-letter output options are read from the parsed clusters
        // (`sort -uo FILE`); the others as written.
        let mut with_arg = w.with_arg.to_string();
        with_arg.extend(
            w.outputs
                .iter()
                .chain(w.prefixes)
                .filter(|k| one_letter(k))
                .filter_map(|k| k.chars().nth(1)),
        );
        let p = args::parse(c.args(), &with_arg, w.long_with_arg);
        let of = |keys: &[&str]| -> Vec<String> {
            let short: Vec<&str> = keys
                .iter()
                .filter(|k| one_letter(k))
                .map(|k| k.trim_start_matches('-'))
                .collect();
            let long: Vec<&str> = keys.iter().filter(|k| !one_letter(k)).copied().collect();
            let mut v: Vec<String> = p.values_of(&short).map(str::to_string).collect();
            v.extend(valued(&texts, &long).into_iter().map(|(_, v)| v));
            v
        };
        let mut targets: Vec<Field> = of(w.outputs).iter().map(|v| Field::lit(v)).collect();
        targets.extend(
            of(w.prefixes)
                .iter()
                .map(|v| Field::lit(&format!("{v}{UNKNOWN}"))),
        );
        let enabled = w.only_with.is_empty()
            || w.only_with.iter().any(|o| match o.strip_prefix("--") {
                Some(_) => p.long(o),
                None => p.short(o.trim_start_matches('-')),
            });
        let ops: Vec<Field> = p.operands.iter().map(|f| (*f).clone()).collect();
        match w.operands {
            _ if !enabled => {}
            Operands::None => {}
            Operands::At(i) => targets.extend(ops.get(i).cloned()),
            Operands::From(i) => targets.extend(ops.iter().skip(i).cloned()),
            Operands::Prefix(i) => targets.extend(ops.get(i).map(|f| Field {
                text: format!("{}{UNKNOWN}", f.text),
                known: false,
                ..f.clone()
            })),
        }
        for t in targets.iter().filter(|t| t.text != "-") {
            self.write_target(t, raw);
        }
    }

    /// `tar`: the archive it creates or extends (`-cf FILE`, also in the
    /// old bundled form `tar czf FILE`), the folder it extracts into
    /// (`-C DIR`, else the working directory) and the files
    /// `--remove-files` deletes.
    fn tar_files(&mut self, c: &Cmd<'_>) {
        let mut a: Vec<Field> = c.args().to_vec();
        if let Some(first) = a.first_mut()
            && !first.text.starts_with('-')
            && !first.text.is_empty()
            && first.text.chars().all(|ch| ch.is_ascii_alphabetic())
        {
            first.text.insert(0, '-');
        }
        let p = args::parse(
            &a,
            "fCbHKLNTVXg",
            &[
                "--file",
                "--directory",
                "--blocking-factor",
                "--format",
                "--starting-file",
                "--newer",
                "--files-from",
                "--label",
                "--exclude-from",
                "--listed-incremental",
                "--transform",
                "--exclude",
            ],
        );
        let raw = c.raw();
        let creates = p.short("cruA") || p.long("--create") || p.long("--append") || p.long("--update");
        let extracts = (p.short("x") || p.long("--extract") || p.long("--get"))
            && !(p.short("O") || p.long("--to-stdout") || p.long("--to-command"));
        if creates {
            let archives: Vec<Field> = p
                .values_of(&["f", "--file"])
                .filter(|v| *v != "-")
                .map(Field::lit)
                .collect();
            for f in &archives {
                self.write_target(f, raw);
            }
        }
        if extracts {
            let dirs: Vec<Field> = p.values_of(&["C", "--directory"]).map(Field::lit).collect();
            if dirs.is_empty() {
                self.write_target(&Field::lit("."), raw);
            }
            for d in &dirs {
                self.write_target(d, raw);
            }
        }
        if creates && p.long("--remove-files") {
            let ops: Vec<Field> = p.operands.iter().map(|f| (*f).clone()).collect();
            for f in &ops {
                self.removed_file(f, raw);
            }
        }
    }

    /// `unzip`: the folder it extracts into (`-d DIR`, else the working
    /// directory); listing and testing write nothing.
    fn unzip_files(&mut self, c: &Cmd<'_>) {
        let p = args::parse(c.args(), "dxP", &[]);
        if p.short("lptvZz") {
            return;
        }
        let dir = p.value(&["d"]).unwrap_or(".").to_string();
        self.write_target(&Field::lit(&dir), c.raw());
    }

    /// 7-Zip: `a`/`u`/`d` change the archive (the first operand after the
    /// subcommand), `x`/`e` extract into `-oDIR` or the working directory.
    fn sevenzip_files(&mut self, c: &Cmd<'_>) {
        let ops: Vec<&Field> = c.args().iter().filter(|f| !f.text.starts_with('-')).collect();
        let raw = c.raw();
        match ops.first().map(|f| f.text.as_str()) {
            Some("a" | "u" | "d" | "rn") => {
                if let Some(f) = ops.get(1).map(|f| (*f).clone()) {
                    self.write_target(&f, raw);
                }
            }
            Some("x" | "e") => {
                let dir = c
                    .args()
                    .iter()
                    .find_map(|f| f.text.strip_prefix("-o"))
                    .unwrap_or(".")
                    .to_string();
                self.write_target(&Field::lit(&dir), raw);
            }
            _ => {}
        }
    }

    /// `gzip FILE`, `xz -d FILE.xz`, ...: FILE is replaced (written and
    /// its original deleted) unless the program keeps it.
    fn compressed_in_place(&mut self, c: &Cmd<'_>) {
        let name = c.inv.name.as_str();
        let p = args::parse(
            c.args(),
            "SbBTLo",
            &["--suffix", "--threads", "--format", "--memlimit"],
        );
        let keeps = p.short("cktl")
            || p.long("--stdout")
            || p.long("--to-stdout")
            || p.long("--keep")
            || p.long("--test")
            || p.long("--list")
            || p.value(&["o"]).is_some();
        let removes = match name {
            "zstd" | "unzstd" | "lz4" => p.long("--rm"),
            _ => true,
        };
        if keeps || !removes {
            return;
        }
        let ops: Vec<Field> = p.operands.iter().map(|f| (*f).clone()).collect();
        for f in ops.iter().filter(|f| f.text != "-") {
            self.removed_file(f, c.raw());
        }
    }

    /// A file the command deletes as a side effect (a compressed
    /// original, `tar --remove-files`, `rsync --remove-source-files`):
    /// judged as written, and as removed for protected paths.
    pub(crate) fn removed_file(&mut self, f: &Field, raw: &str) {
        self.protected_touch(f, Touch::Remove, raw);
        self.write_target(f, raw);
    }
}
