//! Program-name tables shared by the rules.

/// Shells: `-c` takes shell code; without a script they read code from
/// standard input.
pub(crate) const SHELLS: &[&str] = &[
    "sh", "bash", "dash", "zsh", "ksh", "ksh93", "mksh", "ash", "fish", "csh", "tcsh", "yash", "posh",
    "rbash", "lksh", "oksh", "pdksh",
];

/// Programs that mainly decode or transform data.
pub(crate) const DECODERS: &[&str] = &[
    "base64",
    "base32",
    "basenc",
    "xxd",
    "uudecode",
    "gunzip",
    "zcat",
    "gzip",
    "bzip2",
    "bunzip2",
    "bzcat",
    "xz",
    "unxz",
    "xzcat",
    "zstd",
    "unzstd",
    "zstdcat",
    "lz4",
    "openssl",
    "tr",
    "sed",
    "awk",
    "gawk",
    "mawk",
    "rev",
    "od",
    "gpg",
    "iconv",
    "uncompress",
];

/// Programs that read from or talk to the network as a raw stream.
pub(crate) const NET_TOOLS: &[&str] = &[
    "nc",
    "ncat",
    "netcat",
    "nc.traditional",
    "nc.openbsd",
    "socat",
    "telnet",
    "cryptcat",
    "openssl",
    "sbd",
    "pwncat",
];

/// Whether `name` fetches data from the network onto its output.
pub(crate) fn is_fetcher(name: &str) -> bool {
    matches!(
        name,
        "curl"
            | "wget"
            | "fetch"
            | "http"
            | "https"
            | "xh"
            | "xhs"
            | "httpie"
            | "aria2c"
            | "lwp-request"
            | "get"
            | "lynx"
            | "w3m"
            | "links"
            | "tftp"
            | "ftp"
            | "wget2"
            | "curlie"
    ) || NET_TOOLS.contains(&name)
}

/// Whether `name` sends data to another host.
pub(crate) fn is_sender(name: &str) -> bool {
    is_fetcher(name)
        || matches!(
            name,
            "scp" | "sftp" | "rsync" | "rclone" | "mail" | "mailx" | "sendmail" | "mutt" | "ssh"
        )
}

pub(crate) use super::langs::{Lang, interpreter};

/// SQL and datastore command-line clients.
pub(crate) const SQL_CLIENTS: &[&str] = &[
    "psql",
    "mysql",
    "mariadb",
    "sqlite3",
    "sqlite",
    "duckdb",
    "clickhouse-client",
    "clickhouse",
    "sqlcmd",
    "cqlsh",
    "mongo",
    "mongosh",
    "redis-cli",
    "cockroach",
    "pgcli",
    "mycli",
    "litecli",
    "usql",
    "valkey-cli",
    "keydb-cli",
];
