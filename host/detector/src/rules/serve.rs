//! Serving a folder over the network: `python3 -m http.server`, `php -S`,
//! `ruby -run -e httpd`, `busybox httpd`, `http-server`, `caddy
//! file-server`, `socat` listening with a file. Serving the home folder,
//! `/`, a folder holding home folders or a credential folder lets anyone
//! who can reach the port download keys and credentials:
//! `secret_exfiltration`.
//!
//! The folder served is the one the command names, else its working
//! directory (known from the caller's [`Context`](crate::Context) or a
//! `cd`). Serving a project folder (`python3 -m http.server -d build`)
//! stays benign.

use super::{Cmd, args};
use crate::analyze::Analyzer;
use crate::paths;
use crate::verdict::Category;

/// Static file servers run as programs: (name, short options that take a
/// value, options naming the folder served). Without such an option the
/// first operand is the folder, else the working directory.
const SERVERS: &[(&str, &str, &[&str])] = &[
    ("http-server", "pacetCKPUb", &[]),
    ("serve", "lpc", &[]),
    ("live-server", "", &[]),
    ("miniserve", "pibucqa", &[]),
    ("darkhttpd", "", &[]),
    ("static-web-server", "pdagw", &["-d", "--root"]),
    ("webfsd", "prbfn", &["-r"]),
    ("caddy", "", &["--root", "-r"]),
];

/// Python modules that serve the working directory (or `-d DIR`).
const PYTHON_SERVERS: &[&str] = &[
    "http.server",
    "SimpleHTTPServer",
    "uploadserver",
    "RangeHTTPServer",
];

impl Analyzer {
    /// The rule for programs that serve a folder.
    pub(crate) fn servers(&mut self, c: &Cmd<'_>) {
        let name = c.inv.name.as_str();
        let a = c.args();
        let texts: Vec<&str> = a.iter().map(|f| f.text.as_str()).collect();
        let served: Option<String> = if name.starts_with("python") || name.starts_with("pypy") {
            python_served(&texts)
        } else if name.starts_with("php") {
            let p = args::parse(a, "rfdcBRFEzSt", &[]);
            p.value(&["S"])
                .map(|_| p.value(&["t"]).unwrap_or(".").to_string())
        } else if name == "ruby" && texts.contains(&"-run") && texts.contains(&"httpd") {
            // `ruby -run -e httpd [DIR] [-p PORT]`
            let pos = texts.iter().position(|t| *t == "httpd").unwrap_or(0);
            let after = args::parse(
                a.get(pos + 1..).unwrap_or_default(),
                "pb",
                &["--port", "--bind-address"],
            );
            Some(after.operands.first().map_or(".".to_string(), |f| f.text.clone()))
        } else if name == "httpd" && c.inv.wrappers.contains(&"busybox") {
            let p = args::parse(a, "hpcrmeiu", &[]);
            Some(p.value(&["h"]).unwrap_or(".").to_string())
        } else if name == "caddy" && texts.first() != Some(&"file-server") {
            None
        } else if let Some((_, with_arg, dir_opts)) = SERVERS.iter().find(|(n, ..)| *n == name) {
            let longs: Vec<&str> = dir_opts.iter().copied().filter(|o| o.starts_with("--")).collect();
            let mut with_arg = with_arg.to_string();
            with_arg.extend(
                dir_opts
                    .iter()
                    .filter(|o| o.len() == 2)
                    .filter_map(|o| o.chars().nth(1)),
            );
            let p = args::parse(a, &with_arg, &longs);
            let keys: Vec<&str> = dir_opts.iter().map(|o| o.trim_start_matches('-')).collect();
            let by_option = p
                .values
                .iter()
                .find(|(k, _)| keys.contains(&k.trim_start_matches('-')))
                .map(|(_, v)| v.clone());
            let operand = p
                .operands
                .iter()
                .map(|f| f.text.as_str())
                .find(|t| *t != "file-server");
            Some(by_option.unwrap_or_else(|| operand.unwrap_or(".").to_string()))
        } else if name == "socat" {
            self.socat_serves(c);
            None
        } else {
            None
        };
        let Some(dir) = served else { return };
        if let Some(shown) = self.exposes_secrets(&dir) {
            self.add(
                Category::SecretExfiltration,
                c.raw(),
                format!(
                    "serves {shown} over the network: its keys and credentials can be downloaded by anyone who reaches the port"
                ),
            );
        }
    }

    /// `socat TCP-LISTEN:... FILE:path` (or `OPEN:`/`GOPEN:`) serves a
    /// file.
    fn socat_serves(&mut self, c: &Cmd<'_>) {
        let texts: Vec<String> = c.args().iter().map(|f| f.text.to_ascii_lowercase()).collect();
        let listens = texts
            .iter()
            .any(|t| t.contains("-listen:") || t.starts_with("tcp-l:"));
        if !listens {
            return;
        }
        for f in c.args() {
            let t = f.text.as_str();
            let lower = t.to_ascii_lowercase();
            let path = ["file:", "open:", "gopen:"]
                .iter()
                .find(|p| lower.starts_with(**p))
                .and_then(|p| t.get(p.len()..))
                .map(|rest| rest.split(',').next().unwrap_or_default().to_string());
            if let Some(path) = path
                && (paths::is_secret_path(&path) || self.exposes_secrets(&path).is_some())
            {
                self.add(
                    Category::SecretExfiltration,
                    c.raw(),
                    format!("serves {path} on a listening socket"),
                );
            }
        }
    }

    /// How `dir` is shown when serving or archiving it exposes secrets:
    /// the filesystem root, the home folder or a folder holding it, or a
    /// credential folder (`~/.ssh`, `~/.aws`, `~/.config`, `/etc`).
    pub(crate) fn exposes_secrets(&self, dir: &str) -> Option<String> {
        let p = self.path(&crate::expand::Field::lit(dir))?;
        let home_parent = match self.host.home() {
            Some(h) => paths::under(h, &p) && p != h,
            None => matches!(p.as_str(), "/home" | "/Users" | "/root"),
        };
        let credentials = paths::is_secret_path(&p)
            || ["~/.config", "~/.local", "/etc", "/root", "/var/lib"]
                .iter()
                .any(|d| paths::under(&p, d));
        let exposes = p == "/" || p == "~" || home_parent || credentials;
        exposes.then(|| {
            if p == "~" {
                "the home folder".to_string()
            } else {
                p
            }
        })
    }
}

/// The folder `python -m http.server [-d DIR]` serves: `-d`/`--directory`,
/// else the working directory; `None` for other modules.
fn python_served(texts: &[&str]) -> Option<String> {
    let pos = texts
        .iter()
        .position(|t| *t == "-m" || t.starts_with("-m") && t.len() > 2)?;
    let module = match texts.get(pos).copied()? {
        "-m" => texts.get(pos + 1).copied()?,
        t => t.get(2..)?,
    };
    if !PYTHON_SERVERS.contains(&module) {
        return None;
    }
    let rest = texts.get(pos + 1 + usize::from(texts.get(pos) == Some(&"-m"))..)?;
    let mut it = rest.iter();
    while let Some(t) = it.next() {
        if *t == "-d" || *t == "--directory" {
            return it.next().map(|d| d.to_string());
        }
        if let Some(d) = t
            .strip_prefix("--directory=")
            .or_else(|| t.strip_prefix("-d").filter(|d| !d.is_empty()))
        {
            return Some(d.to_string());
        }
    }
    Some(".".to_string())
}
