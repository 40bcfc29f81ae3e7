//! Networking: shells bound to sockets and secrets sent off the machine.

use super::names::{NET_TOOLS, is_sender};
use super::{Cmd, args};
use crate::analyze::{Analyzer, Input};
use crate::paths::is_secret_path;
use crate::verdict::Category;

impl Analyzer {
    /// Rules for network programs.
    pub(crate) fn network(&mut self, c: &Cmd<'_>) {
        let name = c.inv.name.as_str();
        let raw = c.raw();
        let a = c.args();
        if NET_TOOLS.contains(&name) && name != "openssl" && name != "socat" {
            let p = args::parse(a, "pswiqWxXT", &["--exec", "--sh-exec", "--lua-exec"]);
            if p.short("ec") || p.long("--exec") || p.long("--sh-exec") || p.long("--lua-exec") {
                self.add(
                    Category::ReverseShell,
                    raw,
                    "binds a program to a network connection (nc -e)",
                );
            }
        }
        if name == "socat" {
            let bad = a.iter().any(|f| {
                let l = f.text.to_lowercase();
                l.starts_with("exec:")
                    || l.starts_with("system:")
                    || l.contains(",exec")
                    || l.contains("!!exec")
            });
            if bad {
                self.add(
                    Category::ReverseShell,
                    raw,
                    "binds a program to a network connection (socat exec)",
                );
            }
        }
        // openssl talks to the network only as a TLS client or server;
        // its other commands (`genrsa -out key.pem`) are local.
        let tls = a
            .first()
            .is_some_and(|f| matches!(f.text.as_str(), "s_client" | "s_server" | "s_time"));
        let sender = (is_sender(name) && (name != "openssl" || tls)) || c.inv.wrappers.contains(&"ssh");
        if !sender {
            return;
        }
        let stdin_secret = match c.stdin {
            Input::Pipe(p) | Input::Here(p) => p.secret,
            Input::File(w) => self.expand(&w.clone()).iter().any(|f| is_secret_path(&f.text)),
            Input::None => false,
        };
        let reads_stdin = match name {
            "curl" => a
                .iter()
                .any(|f| f.text.ends_with("@-") || f.text == "-" || f.text.ends_with("<-")),
            "wget" => a.iter().any(|f| f.text.ends_with("=-") || f.text == "-"),
            _ => true,
        };
        if stdin_secret && reads_stdin {
            self.add(
                Category::SecretExfiltration,
                raw,
                "sends secret data (keys, credentials or the environment) over the network",
            );
            return;
        }
        let uploads = match name {
            "curl" => {
                let p = args::parse(
                    a,
                    "dFTHo",
                    &[
                        "--data",
                        "--data-binary",
                        "--data-raw",
                        "--data-urlencode",
                        "--json",
                        "--form",
                        "--upload-file",
                        "--form-string",
                    ],
                );
                p.values.iter().any(|(k, v)| {
                    matches!(
                        k.as_str(),
                        "d" | "F"
                            | "T"
                            | "--data"
                            | "--data-binary"
                            | "--data-urlencode"
                            | "--json"
                            | "--form"
                            | "--upload-file"
                    ) && is_secret_path(v)
                })
            }
            "wget" => {
                let p = args::parse(a, "", &["--post-file", "--body-file"]);
                p.values_of(&["--post-file", "--body-file"]).any(is_secret_path)
            }
            "ssh" => false,
            // `-i KEY` authenticates; only the files copied are sent.
            "scp" | "sftp" => args::parse(a, "cFiJlmoPSDX", &[])
                .operands
                .iter()
                .any(|f| is_secret_path(&f.text)),
            _ => a
                .iter()
                .any(|f| !f.text.starts_with('-') && is_secret_path(&f.text)),
        };
        let substituted = self.provenance(c.simple).secret;
        if uploads || substituted {
            self.add(
                Category::SecretExfiltration,
                raw,
                "uploads a secret file (keys, credentials, .env) to another host",
            );
        }
    }
}
