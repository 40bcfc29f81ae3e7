//! Command-line clients of services (databases and datastores, code
//! forges, clouds and hosting platforms) whose subcommands delete what
//! they name: `dropdb app`, `influx bucket delete`, `gh repo delete`,
//! `glab release delete`, `gcloud compute instances delete`, `heroku
//! apps:destroy`, `gh api -X DELETE ...`.
//!
//! Every client is one row of [`CLIENTS`]. A command deletes when one of
//! its leading command words (the words before the first option, after
//! any global options) is a deleting verb ([`DELETING`]), also as the
//! last part of `topic:verb` or the first of `verb-resource`; words
//! further on are names and option values (`gh issue list --search
//! delete`). Reading commands (`gh repo view`, `gh pr list`) stay benign.
//! Clients with their own grammar (`aws`, `gsutil`, `kubectl`, `docker`,
//! SQL shells) keep their rules elsewhere.

use super::{Cmd, args};
use crate::analyze::Analyzer;
use crate::verdict::Category;

/// Verbs that delete the resource named after them.
const DELETING: &[&str] = &[
    "delete", "del", "destroy", "drop", "purge", "rb", "remove", "rm", "erase", "wipe", "flushall",
    "flushdb", "truncate", "nuke",
];

/// Prefixes of verbs joined to their resource (`delete-asset`,
/// `destroy-cluster`).
const DELETING_PREFIXES: &[&str] = &["delete-", "destroy-", "remove-", "purge-", "terminate-", "drop-"];

/// Global options of these clients that take a value (so that the value
/// is not taken for a command word).
const GLOBAL_WITH_ARG: &[&str] = &[
    "--project",
    "--region",
    "--zone",
    "--profile",
    "--output",
    "--resource-group",
    "--subscription",
    "--context",
    "--config",
    "--account",
    "--org",
    "--host",
    "--token",
    "--repo",
    "--endpoints",
    "--user",
    "--password",
    "--address",
    "--namespace",
    "--configuration",
    "--format",
];

/// A service client.
#[derive(Debug)]
struct Client {
    /// Its program names.
    programs: &'static [&'static str],
    /// What deleting with it destroys.
    category: Category,
    /// The reason given.
    what: &'static str,
    /// Short global options that take a value.
    with_arg: &'static str,
    /// Extra deleting verbs of this client (`vault secrets disable`).
    verbs: &'static [&'static str],
    /// Whether every run deletes (`dropdb NAME`).
    always: bool,
    /// Whether `api -X DELETE` (the client's raw HTTP access) deletes.
    api: bool,
}

const fn client(programs: &'static [&'static str], category: Category, what: &'static str) -> Client {
    Client {
        programs,
        category,
        what,
        with_arg: "",
        verbs: &[],
        always: false,
        api: false,
    }
}

const DATASTORE: &str = "deletes a database, its users or its data";
const FORGE: &str = "deletes a repository, release or other resource of a code forge";
const CLOUD: &str = "deletes cloud or hosted infrastructure or data";

const CLIENTS: &[Client] = &[
    Client {
        always: true,
        ..client(
            &["dropdb", "dropuser", "dropuser.exe", "pg_dropcluster"],
            Category::SqlDestructive,
            DATASTORE,
        )
    },
    Client {
        with_arg: "uhPS",
        ..client(
            &["mysqladmin", "mariadb-admin"],
            Category::SqlDestructive,
            DATASTORE,
        )
    },
    client(&["influx"], Category::SqlDestructive, DATASTORE),
    client(&["etcdctl"], Category::SqlDestructive, DATASTORE),
    client(&["consul"], Category::SqlDestructive, DATASTORE),
    Client {
        verbs: &["disable"],
        ..client(&["vault"], Category::SqlDestructive, DATASTORE)
    },
    Client {
        with_arg: "R",
        api: true,
        ..client(&["gh"], Category::InfrastructureDestroy, FORGE)
    },
    Client {
        with_arg: "R",
        api: true,
        ..client(&["glab"], Category::InfrastructureDestroy, FORGE)
    },
    client(&["tea", "berg", "fj"], Category::InfrastructureDestroy, FORGE),
    Client {
        api: true,
        ..client(&["hub"], Category::InfrastructureDestroy, FORGE)
    },
    client(
        &[
            "gcloud",
            "az",
            "doctl",
            "hcloud",
            "linode-cli",
            "oci",
            "exo",
            "scw",
            "flyctl",
            "fly",
            "vercel",
            "heroku",
            "netlify",
            "firebase",
            "supabase",
            "wrangler",
            "railway",
            "openstack",
            "ibmcloud",
            "civo",
            "vultr-cli",
        ],
        Category::InfrastructureDestroy,
        CLOUD,
    ),
];

impl Analyzer {
    /// The rule for service clients.
    pub(crate) fn clients(&mut self, c: &Cmd<'_>) {
        let name = c.inv.name.as_str();
        let Some(cl) = CLIENTS.iter().find(|cl| cl.programs.contains(&name)) else {
            return;
        };
        let a = c.args();
        // (`-h` is a host for some: `dropdb -h HOST NAME`.)
        let help = a
            .iter()
            .any(|f| matches!(f.text.as_str(), "--help" | "--version"))
            || !cl.always && a.first().is_some_and(|f| f.text == "help");
        if help {
            return;
        }
        let deletes = if cl.always {
            true
        } else {
            let words = command_words(a.iter().map(|f| f.text.as_str()), cl.with_arg);
            let api = cl.api && words.first().is_some_and(|w| w == "api") && api_deletes(c);
            api || words.iter().any(|w| deleting(w, cl.verbs))
        };
        if deletes {
            self.add(cl.category, c.raw(), cl.what);
        }
    }
}

/// The leading command words: after global options (and their values),
/// the words up to the next option, at most five.
fn command_words<'a>(args: impl Iterator<Item = &'a str>, with_arg: &str) -> Vec<String> {
    let mut words = Vec::new();
    let mut skip_value = false;
    for t in args {
        if skip_value {
            skip_value = false;
            continue;
        }
        if t.starts_with('-') && t.len() > 1 {
            if !words.is_empty() {
                break;
            }
            let long_valued = GLOBAL_WITH_ARG.contains(&t);
            let short_valued = t.len() == 2 && t.chars().nth(1).is_some_and(|l| with_arg.contains(l));
            skip_value = long_valued || short_valued;
            continue;
        }
        words.push(t.to_ascii_lowercase());
        if words.len() == 5 {
            break;
        }
    }
    words
}

/// Whether a command word is a deleting verb.
fn deleting(word: &str, extra: &[&str]) -> bool {
    let verb = word.rsplit(':').next().unwrap_or(word);
    DELETING.contains(&verb) || extra.contains(&verb) || DELETING_PREFIXES.iter().any(|p| verb.starts_with(p))
}

/// Whether a forge client's `api` call uses the DELETE method (`-X
/// DELETE`, `-XDELETE`, `--method DELETE`, `--method=delete`).
fn api_deletes(c: &Cmd<'_>) -> bool {
    let p = args::parse(
        c.args(),
        "XfFHRqtp",
        &[
            "--method",
            "--field",
            "--raw-field",
            "--header",
            "--jq",
            "--template",
            "--input",
            "--hostname",
            "--cache",
            "--preview",
        ],
    );
    p.values_of(&["X", "--method"])
        .any(|m| m.eq_ignore_ascii_case("delete"))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn command_words_stop_at_options() {
        let w = command_words(
            [
                "--project",
                "p",
                "compute",
                "instances",
                "delete",
                "x",
                "--zone",
                "z",
            ]
            .into_iter(),
            "",
        );
        assert_eq!(w, vec!["compute", "instances", "delete", "x"]);
        let w = command_words(["issue", "list", "--search", "delete"].into_iter(), "R");
        assert_eq!(w, vec!["issue", "list"]);
        assert!(deleting("apps:destroy", &[]) && deleting("delete-asset", &[]));
        assert!(!deleting("deleted", &[]) && !deleting("view", &[]));
    }
}
