//! One way in (`toolhost::admission`): every rule, against every door a
//! plugin can come in by. Each case starts a host from a config of its own,
//! offers it a candidate through one door, and checks the refusal's code,
//! that none of the candidate's tools is served, and that the host goes on
//! serving its other plugin. A valid candidate, through every door, loads:
//! the harness can tell the two apart.

use std::path::{Path, PathBuf};
use std::time::Duration;

use serde_json::{Value, json};
use toolhost::ErrorCode;
use toolhost::admission::PluginRequest;
use toolhost::config::{Config, PluginsDirConfig, Started};
use toolhost::internal::capabilities::{DirGrant, DirMode, Grants};
use toolhost::internal::dispatch::{DispatchContext, Session};
use toolhost::internal::registry::Registry;

use crate::peers::{Registry as OciRegistry, minisign_keypair, new_version};
use crate::support;

/// The doors.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Door {
    /// A `[[plugins]]` entry at start.
    Config,
    /// The same entry again after a reload (`SIGHUP`, the OCI poll).
    Reload,
    /// A file put in the watched plugins folder.
    Folder,
    /// A `source = "oci://…"` entry, pulled at start and on a poll.
    Oci,
    /// `toolhost__load_component`.
    Admin,
    /// `LivePlugins::load`.
    Library,
}

const DOORS: [Door; 6] = [
    Door::Config,
    Door::Reload,
    Door::Folder,
    Door::Oci,
    Door::Admin,
    Door::Library,
];

/// The rules.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Rule {
    /// A named pipe where a component file should be.
    NotRegular,
    /// More bytes than `[admission] max_component_bytes`.
    TooLarge,
    /// Bytes that are not the pinned ones.
    Pin,
    /// Unsigned, where a signature is required.
    Unsigned,
    /// Tool descriptions longer than the plugin's limits allow.
    Claims,
    /// A read-write grant of the folder holding the config file.
    Grant,
    /// A grant of another plugin's storage.
    Storage,
    /// Bytes that are not a component.
    Compile,
    /// A tool name another plugin has.
    Register,
}

const RULES: [Rule; 9] = [
    Rule::NotRegular,
    Rule::TooLarge,
    Rule::Pin,
    Rule::Unsigned,
    Rule::Claims,
    Rule::Grant,
    Rule::Storage,
    Rule::Compile,
    Rule::Register,
];

impl Rule {
    /// The refusal's code.
    fn code(self) -> ErrorCode {
        match self {
            Rule::NotRegular => ErrorCode::Io,
            Rule::TooLarge => ErrorCode::TooLarge,
            Rule::Pin => ErrorCode::HashMismatch,
            Rule::Unsigned => ErrorCode::Untrusted,
            Rule::Claims | Rule::Compile => ErrorCode::InvalidComponent,
            Rule::Grant | Rule::Storage => ErrorCode::Config,
            Rule::Register => ErrorCode::DuplicateTool,
        }
    }

    /// Whether `door` can express the rule's case at all: the admin tool
    /// takes no grants or limits; an OCI source is never a pipe, and a
    /// registry refuses what is not a component; the plugins folder pins
    /// only through grants given by hash.
    fn applies_to(self, door: Door) -> bool {
        !matches!(
            (self, door),
            (Rule::Claims | Rule::Grant | Rule::Storage, Door::Admin)
                | (Rule::NotRegular | Rule::Compile, Door::Oci)
                | (Rule::Pin, Door::Folder)
        )
    }
}

/// What is offered: its bytes (none: a named pipe), and on what terms.
struct Candidate {
    bytes: Option<Vec<u8>>,
    pin: Option<String>,
    /// A `dirs` grant: (host, guest, read-write).
    dir: Option<(String, String, bool)>,
    /// `description_bytes` for its calls' claims.
    description_bytes: Option<u64>,
}

/// A project: its folder, config text and the candidate.
struct Case {
    dir: tempfile::TempDir,
    /// What comes before the door's own part in `toolhost.toml`.
    head: String,
    candidate: Candidate,
    registry: Option<OciRegistry>,
}

fn plugin(name: &str) -> String {
    support::plugin_path(name).display().to_string()
}

/// `counter` serves in every case: the host must go on serving it.
fn base() -> String {
    format!("[[plugins]]\npath = \"{}\"\n", plugin("counter"))
}

fn case(rule: Rule) -> Case {
    let dir = tempfile::tempdir().unwrap();
    let hello = new_version(&support::plugin_bytes("hello"), "candidate");
    let mut head = base();
    let mut candidate = Candidate {
        bytes: Some(hello.clone()),
        pin: None,
        dir: None,
        description_bytes: None,
    };
    match rule {
        Rule::NotRegular => candidate.bytes = None,
        Rule::TooLarge => {
            // Past the cap by far; `counter`, serving, is well within it.
            head = format!("[admission]\nmax_component_bytes = 524288\n{head}");
            candidate.bytes = Some(new_version(&hello, &"x".repeat(1 << 20)));
        }
        Rule::Pin => candidate.pin = Some(format!("blake3:{}", "0".repeat(64))),
        Rule::Unsigned => {
            let (public, _, _) = minisign_keypair(dir.path(), "release");
            head = format!(
                "[signatures]\ntrusted_keys = [\"{}\"]\nrequire_signature = true\n{head}",
                public.display()
            );
            // The plugin already serving is signed by nobody either.
            head = head.replace("[[plugins]]\n", "[[plugins]]\nrequire_signature = false\n");
        }
        Rule::Claims => candidate.description_bytes = Some(1),
        Rule::Grant => {
            candidate.bytes = Some(new_version(&support::plugin_bytes("files"), "candidate"));
            let project = dir.path().display().to_string();
            candidate.dir = Some((project, "/workspace".into(), true));
        }
        Rule::Storage => {
            head.push_str(&format!(
                "[[plugins]]\npath = \"{}\"\n[plugins.grants]\ndirs = [{{ host = \".toolhost/memory\", guest = \"/memory\", mode = \"rw\" }}]\n",
                plugin("memory")
            ));
            candidate.bytes = Some(new_version(&support::plugin_bytes("files"), "candidate"));
            candidate.dir = Some((".toolhost/memory".into(), "/workspace".into(), false));
        }
        Rule::Compile => candidate.bytes = Some(b"\0asm\x0d\0\x01\0 not a component".to_vec()),
        Rule::Register => {
            // `greet` is served already, by another version of hello.
            head.push_str(&format!("[[plugins]]\npath = \"{}\"\n", plugin("hello")));
        }
    }
    Case {
        dir,
        head,
        candidate,
        registry: None,
    }
}

/// A valid candidate: a new version of hello, nothing asked.
fn valid() -> Case {
    Case {
        dir: tempfile::tempdir().unwrap(),
        head: base(),
        candidate: Candidate {
            bytes: Some(new_version(&support::plugin_bytes("hello"), "valid")),
            pin: None,
            dir: None,
            description_bytes: None,
        },
        registry: None,
    }
}

impl Case {
    /// Writes the candidate as `name` in `folder`: its bytes, or a pipe.
    fn write(&self, folder: &Path, name: &str) -> PathBuf {
        let path = folder.join(name);
        match &self.candidate.bytes {
            Some(bytes) => {
                let hidden = folder.join(format!(".{name}.tmp"));
                std::fs::write(&hidden, bytes).unwrap();
                std::fs::rename(&hidden, &path).unwrap();
            }
            None => {
                let made = std::process::Command::new("mkfifo").arg(&path).status().unwrap();
                assert!(made.success());
            }
        }
        path
    }

    /// The `[[plugins]]` keys of the candidate's terms.
    fn entry_terms(&self) -> String {
        let mut terms = String::new();
        if let Some(pin) = &self.candidate.pin {
            terms.push_str(&format!("hash = \"{pin}\"\n"));
        }
        if let Some(bytes) = self.candidate.description_bytes {
            terms.push_str(&format!("[plugins.limits]\ndescription_bytes = {bytes}\n"));
        }
        if let Some((host, guest, rw)) = &self.candidate.dir {
            let mode = if *rw { "rw" } else { "ro" };
            terms.push_str(&format!(
                "[plugins.grants]\ndirs = [{{ host = \"{host}\", guest = \"{guest}\", mode = \"{mode}\" }}]\n"
            ));
        }
        terms
    }

    /// The candidate's terms as the library takes them.
    fn request(&self, path: PathBuf) -> PluginRequest {
        let mut request = PluginRequest::file(path);
        request.pin = self.candidate.pin.as_ref().map(|p| p.parse().unwrap());
        request.limits.description_bytes = self.candidate.description_bytes;
        if let Some((host, guest, rw)) = &self.candidate.dir {
            request.grants = Grants {
                dirs: vec![DirGrant {
                    host: host.into(),
                    guest: guest.clone(),
                    mode: if *rw { DirMode::Rw } else { DirMode::Ro },
                }],
                ..Grants::default()
            };
        }
        request
    }

    async fn start(&self, config: &str) -> Started {
        let path = self.dir.path().join("toolhost.toml");
        std::fs::write(&path, format!("{}{config}", self.head)).unwrap();
        Config::load(&path)
            .unwrap()
            .start(crate::fixtures::engine(), Registry::new(), None)
            .await
            .unwrap()
    }
}

/// What became of the candidate: `Ok(())` when it loaded, else its
/// refusal's code and message. Also checks that the host still serves
/// `count`, and that a refused candidate's `greet`/`read_file` is served
/// only when another plugin already served it.
async fn admit(door: Door, mut case: Case) -> Result<(), (ErrorCode, String)> {
    let folder = case.dir.path().join("candidates");
    std::fs::create_dir(&folder).unwrap();
    let (started, outcome) = match door {
        Door::Config | Door::Reload => {
            let path = case.write(&folder, "cand.wasm");
            let entry = format!(
                "[[plugins]]\npath = \"{}\"\n{}",
                path.display(),
                case.entry_terms()
            );
            let started = case.start(&entry).await;
            let mut outcome = entry_outcome(&started);
            if door == Door::Reload {
                let report = started.live.reload().await;
                let again = entry_outcome(&started);
                match (&outcome, report.failed.first()) {
                    (Ok(()), None) => assert!(report.swapped.is_empty(), "{report:?}"),
                    (Err(_), Some(failed)) => {
                        let code: ErrorCode = serde_json::from_value(failed["error_code"].clone()).unwrap();
                        outcome = Err((code, failed["error"].as_str().unwrap_or_default().into()));
                    }
                    other => panic!("the reload disagrees with the start: {other:?} {report:?}"),
                }
                assert_eq!(again.is_ok(), outcome.is_ok(), "{again:?} {outcome:?}");
            }
            (started, outcome)
        }
        Door::Folder => {
            let live = case.dir.path().join("live");
            std::fs::create_dir(&live).unwrap();
            let mut config = String::from("[plugins_dir]\npath = \"live\"\nsettle_ms = 50\n");
            if let Some(bytes) = case.candidate.description_bytes {
                config.push_str(&format!("[plugins_dir.limits]\ndescription_bytes = {bytes}\n"));
            }
            if let Some((host, guest, rw)) = &case.candidate.dir {
                let mode = if *rw { "rw" } else { "ro" };
                config.push_str(&format!(
                    "[plugins_dir.grants.cand]\ndirs = [{{ host = \"{host}\", guest = \"{guest}\", mode = \"{mode}\" }}]\n"
                ));
            }
            let started = case.start(&config).await;
            let watch = started
                .live
                .watch_folder(
                    started
                        .live
                        .config()
                        .plugins_dir
                        .clone()
                        .unwrap_or_else(|| PluginsDirConfig::new("live")),
                )
                .await
                .unwrap();
            case.write(&live, "cand.wasm");
            let outcome = folder_outcome(&started).await;
            drop(watch);
            (started, outcome)
        }
        Door::Oci => {
            let registry = OciRegistry::start();
            let file = case.write(&folder, "cand.wasm");
            let reference = registry.reference("tools/cand:v1");
            crate::oci::push(&file.display().to_string(), &reference);
            case.registry = Some(registry);
            let entry = format!("[[plugins]]\nsource = \"{reference}\"\n{}", case.entry_terms());
            let started = case.start(&entry).await;
            let outcome = entry_outcome(&started);
            // The poll admits it again, by the same rules.
            let report = started.live.reload().await;
            assert_eq!(
                report.failed.is_empty(),
                outcome.is_ok(),
                "{report:?} {outcome:?}"
            );
            (started, outcome)
        }
        Door::Admin => {
            let path = case.write(&folder, "cand.wasm");
            let started = case.start("").await;
            toolhost::internal::admin::add_admin_tools(&started.live).unwrap();
            let mut args = json!({"path": path});
            if let Some(pin) = &case.candidate.pin {
                args["hash"] = json!(pin);
            }
            let result = call(&started, toolhost::internal::admin::LOAD_TOOL, args).await;
            let outcome = match result.error_code {
                None => Ok(()),
                Some(code) => Err((code, result.content.clone())),
            };
            (started, outcome)
        }
        Door::Library => {
            let path = case.write(&folder, "cand.wasm");
            let started = case.start("").await;
            let outcome = started
                .live
                .load(case.request(path))
                .await
                .map(drop)
                .map_err(|e| (e.code(), e.message().to_string()));
            (started, outcome)
        }
    };
    let count = call(&started, "count", json!({})).await;
    assert_eq!(
        count.error_code, None,
        "{door:?}: the host stopped serving count: {}",
        count.content
    );
    outcome
}

async fn call(started: &Started, tool: &str, args: Value) -> toolhost::internal::dispatch::ToolResult {
    let ctx = DispatchContext::new(Session::trusted("operator"));
    started.dispatcher.dispatch(tool, args, &ctx).await
}

/// The candidate entry's status (the last `[[plugins]]` entry).
fn entry_outcome(started: &Started) -> Result<(), (ErrorCode, String)> {
    let entries = started.live.entries();
    let status = entries.last().unwrap();
    match status.error_code {
        None => Ok(()),
        Some(code) => Err((code, status.error.clone().unwrap_or_default())),
    }
}

/// The folder candidate's status, once it has one.
async fn folder_outcome(started: &Started) -> Result<(), (ErrorCode, String)> {
    let deadline = tokio::time::Instant::now() + Duration::from_secs(60);
    loop {
        if let Some(status) = started
            .live
            .folder()
            .into_iter()
            .find(|s| s.path.as_ref().is_some_and(|p| p.as_os_str() == "cand.wasm"))
        {
            return match status.error_code {
                None => Ok(()),
                Some(code) => Err((code, status.error.unwrap_or_default())),
            };
        }
        assert!(
            tokio::time::Instant::now() < deadline,
            "the folder never looked at cand.wasm"
        );
        tokio::time::sleep(Duration::from_millis(25)).await;
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn every_rule_refuses_through_every_door() {
    let mut checked = 0;
    for rule in RULES {
        for door in DOORS {
            if !rule.applies_to(door) {
                continue;
            }
            let outcome = admit(door, case(rule)).await;
            let Err((code, message)) = outcome else {
                panic!("{rule:?} through {door:?}: admitted");
            };
            assert_eq!(code, rule.code(), "{rule:?} through {door:?}: {message}");
            checked += 1;
        }
    }
    // 9 rules by 6 doors, less the 6 cases a door cannot express.
    assert_eq!(checked, 48);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_valid_plugin_comes_in_through_every_door() {
    for door in DOORS {
        if let Err(refused) = admit(door, valid()).await {
            panic!("{door:?}: refused {refused:?}");
        }
    }
}

/// The outside review's example, through the real binary: a read-write
/// grant reaching the config is refused at start, and stays refused when
/// `SIGHUP` reloads the entry (it was once re-admitted, and the files
/// plugin then rewrote the config).
#[test]
fn a_grant_refused_at_start_stays_refused_after_sighup() {
    let dir = tempfile::tempdir().unwrap();
    let config = dir.path().join("toolhost.toml");
    let text = format!(
        "[[plugins]]\npath = \"{}\"\n[plugins.grants]\ndirs = [{{ host = \".\", guest = \"/workspace\", mode = \"rw\" }}]\n",
        plugin("files")
    );
    std::fs::write(&config, &text).unwrap();
    let config_arg = config.display().to_string();
    let hello = plugin("hello");
    let server =
        crate::mcp_server::HttpServer::start(&["--config", &config_arg, "--plugin", &hello, "--token", "t"]);
    let addr: std::net::SocketAddr = server.addr().parse().unwrap();
    let status = || -> Value {
        let (code, body) =
            crate::peers::http_request(addr, "GET", "/status", &[("Authorization", "Bearer t")], "")
                .expect("GET /status");
        assert_eq!(code, 200, "{body}");
        serde_json::from_str(&body).unwrap()
    };
    let refused = |status: &Value| {
        let entry = &status["plugins"][0];
        assert_eq!(entry["status"], "failed", "{status}");
        assert_eq!(entry["error_code"], "config", "{status}");
        assert!(entry["error"].as_str().unwrap().contains("reaches"), "{status}");
    };
    refused(&status());
    assert_eq!(status()["reloads"], 0);
    // SAFETY: a plain kill(2) of the server we started.
    assert_eq!(unsafe { libc::kill(server.pid() as i32, libc::SIGHUP) }, 0);
    let deadline = std::time::Instant::now() + Duration::from_secs(60);
    while status()["reloads"] == 0 {
        assert!(std::time::Instant::now() < deadline, "no reload after SIGHUP");
        std::thread::sleep(Duration::from_millis(50));
    }
    let after = status();
    refused(&after);
    assert_eq!(
        after["last_reload"]["failed"][0]["error_code"], "config",
        "{after}"
    );
    let session = crate::mcp_hostile::http_session(&server.addr(), "t");
    let list = crate::mcp_hostile::post(
        &server.addr(),
        "t",
        Some(&session),
        json!({"jsonrpc": "2.0", "id": 1, "method": "tools/list"})
            .to_string()
            .as_bytes(),
    );
    let listed = serde_json::to_string(&list.messages).unwrap();
    assert!(
        listed.contains("greet") && !listed.contains("write_file"),
        "{listed}"
    );
    assert_eq!(std::fs::read_to_string(&config).unwrap(), text);
}
