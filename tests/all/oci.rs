//! Components through a real OCI registry (Debian's `docker-registry`, the
//! CNCF distribution server, on a loopback port): `toolhost push` and
//! `pull`, the CNCF Wasm layout, tampering refused, `source = "oci://…"`
//! entries with pins, the pull cache, and an unreachable registry.

use serde_json::{Value, json};

use crate::peers::{Registry, http_request, toolhost};
use crate::support;

fn plugin(name: &str) -> String {
    support::plugin_path(name).display().to_string()
}

/// Pushes plugin `name` to `reference`; returns the push report.
pub fn push(file: &str, reference: &str) -> Value {
    let (ok, out, err) = toolhost(&["push", file, reference], &[]);
    assert!(ok, "push {file} {reference} failed: {out} {err}");
    out
}

#[test]
fn push_and_pull_through_a_real_registry_in_the_cncf_wasm_layout() {
    let registry = Registry::start();
    let reference = registry.reference("tools/hello:v1");
    let pushed = push(&plugin("hello"), &reference);
    let hash = blake3_of(&support::plugin_bytes("hello"));
    assert_eq!(pushed["hash"], hash);
    let digest = pushed["digest"].as_str().unwrap().to_string();
    assert!(digest.starts_with("sha256:"), "{pushed}");

    // The manifest, as the registry serves it to any OCI client.
    let accept = [("Accept", "application/vnd.oci.image.manifest.v1+json")];
    let (status, body) =
        http_request(registry.addr, "GET", "/v2/tools/hello/manifests/v1", &accept, "").unwrap();
    assert_eq!(status, 200, "{body}");
    let manifest: Value = serde_json::from_str(&body).unwrap();
    assert_eq!(
        manifest["config"]["mediaType"],
        "application/vnd.wasm.config.v0+json"
    );
    assert_eq!(manifest["layers"].as_array().unwrap().len(), 1, "{manifest}");
    assert_eq!(manifest["layers"][0]["mediaType"], "application/wasm");
    let config_digest = manifest["config"]["digest"].as_str().unwrap();
    let (_, config) = http_request(
        registry.addr,
        "GET",
        &format!("/v2/tools/hello/blobs/{config_digest}"),
        &[],
        "",
    )
    .unwrap();
    let config: Value = serde_json::from_str(&config).unwrap();
    assert_eq!(config["architecture"], "wasm");
    assert_eq!(config["os"], "wasip2");
    assert_eq!(config["layerDigests"][0], manifest["layers"][0]["digest"]);
    assert!(
        config["component"]["exports"]
            .as_array()
            .unwrap()
            .iter()
            .any(|e| e.as_str().unwrap().starts_with("toolhost:plugin/tool")),
        "{config}"
    );

    // Pulled back by tag and by digest: the same bytes.
    let dir = tempfile::tempdir().unwrap();
    for (i, what) in [reference.clone(), pushed["pinned"].as_str().unwrap().to_string()]
        .iter()
        .enumerate()
    {
        let out_file = dir.path().join(format!("pulled{i}.wasm"));
        let (ok, out, err) = toolhost(&["pull", what, "-o", out_file.to_str().unwrap()], &[]);
        assert!(ok, "pull {what}: {out} {err}");
        assert_eq!(out["digest"], digest.as_str());
        assert_eq!(out["hash"], hash);
        assert_eq!(std::fs::read(&out_file).unwrap(), support::plugin_bytes("hello"));
    }
}

#[test]
fn a_tampered_artifact_is_refused_naming_both_digests() {
    let registry = Registry::start();
    let reference = registry.reference("tools/hello:v1");
    let pushed = push(&plugin("hello"), &reference);
    let (_, body) = http_request(
        registry.addr,
        "GET",
        "/v2/tools/hello/manifests/v1",
        &[("Accept", "application/vnd.oci.image.manifest.v1+json")],
        "",
    )
    .unwrap();
    let manifest: Value = serde_json::from_str(&body).unwrap();
    let layer = manifest["layers"][0]["digest"].as_str().unwrap();
    // Someone with write access to the registry's storage swaps the bytes,
    // keeping their length: both digests are named.
    let mut tampered = support::plugin_bytes("hello");
    let last = tampered.len() - 1;
    tampered[last] ^= 0xff;
    std::fs::write(registry.blob_file(layer), &tampered).unwrap();
    let out_file = tempfile::tempdir().unwrap().path().join("x.wasm");
    let (ok, out, _) = toolhost(&["pull", &reference, "-o", out_file.to_str().unwrap()], &[]);
    assert!(!ok, "a tampered layer was accepted: {out}");
    assert_eq!(out["error_code"], "hash_mismatch", "{out}");
    let message = out["error"].as_str().unwrap();
    assert!(message.contains(layer), "the expected digest is named: {message}");
    assert!(
        message.contains(&sha256_of(&tampered)),
        "the actual digest is named: {message}"
    );
    assert!(!out_file.exists());
    // Other bytes of another length are refused by their length, before
    // they are read.
    std::fs::write(registry.blob_file(layer), support::plugin_bytes("calc")).unwrap();
    let (ok, out, _) = toolhost(&["pull", &reference, "-o", out_file.to_str().unwrap()], &[]);
    assert!(!ok, "a tampered layer was accepted: {out}");
    assert_eq!(out["error_code"], "hash_mismatch", "{out}");
    let message = out["error"].as_str().unwrap();
    assert!(
        message.contains(layer) && message.contains("declares"),
        "{message}"
    );
    assert!(!out_file.exists());
    assert!(pushed["digest"].is_string());
}

#[test]
fn a_source_entry_is_pulled_pinned_and_served_from_the_cache_when_the_registry_is_down() {
    let mut registry = Registry::start();
    let hello = push(&plugin("hello"), &registry.reference("tools/hello:v1"));
    push(&plugin("calc"), &registry.reference("tools/calc:v1"));
    let time = push(&plugin("time"), &registry.reference("tools/time:v1"));
    let dir = tempfile::tempdir().unwrap();
    let calc_hash = blake3_of(&support::plugin_bytes("calc"));
    let wrong = hello["hash"].as_str().unwrap().to_string();
    let config = dir.path().join("toolhost.toml");
    std::fs::write(
        &config,
        format!(
            "[[plugins]]\nsource = \"{}\"\nhash = \"{}\"\n\n[[plugins]]\nsource = \"{}\"\nhash = \"{wrong}\"\n\n[[plugins]]\nsource = \"{}\"\n\n[[plugins]]\nsource = \"{}\"\n",
            registry.reference("tools/hello:v1"),
            hello["hash"].as_str().unwrap(),
            registry.reference("tools/calc:v1"),
            time["pinned"].as_str().unwrap(),
            registry.reference("tools/never-pushed:v1"),
        ),
    )
    .unwrap();
    let status = || {
        let (ok, out, err) = toolhost(&["tools", "--status", "--config", config.to_str().unwrap()], &[]);
        assert!(ok, "{out} {err}");
        out
    };
    let first = status();
    let plugins = first["plugins"].as_array().unwrap();
    assert_eq!(plugins[0]["status"], "loaded", "{first}");
    assert_eq!(plugins[0]["origin"], json!({"from": "registry"}));
    assert_eq!(plugins[0]["tools"], json!(["greet"]));
    // A hash pin that does not match: refused, naming both values.
    assert_eq!(plugins[1]["status"], "failed");
    assert_eq!(plugins[1]["error_code"], "hash_mismatch");
    let message = plugins[1]["error"].as_str().unwrap();
    assert!(message.contains(&wrong), "the pin is named: {message}");
    assert!(
        message.contains(&calc_hash),
        "the bytes' hash is named: {message}"
    );
    // By digest: loaded (its digest checked by the pull).
    assert_eq!(plugins[2]["status"], "loaded", "{first}");
    assert_eq!(plugins[2]["digest"], time["digest"]);
    // Nothing at that reference: this entry fails, the others serve.
    assert_eq!(plugins[3]["status"], "failed");
    assert_eq!(plugins[3]["error_code"], "unavailable", "{first}");

    // The registry goes away: the cached copies serve, and the status says so.
    registry.stop();
    let second = status();
    let plugins = second["plugins"].as_array().unwrap();
    assert_eq!(plugins[0]["status"], "loaded", "{second}");
    assert_eq!(plugins[0]["origin"]["from"], "cache");
    assert!(
        plugins[0]["origin"]["reason"]
            .as_str()
            .unwrap()
            .contains("cannot be reached"),
        "{second}"
    );
    assert_eq!(plugins[0]["hash"], hello["hash"]);
    // A digest reference already cached is not even asked for.
    assert_eq!(plugins[2]["status"], "loaded");
    assert_eq!(plugins[2]["origin"], json!({"from": "cache"}));
    let warnings = second["warnings"].as_array().unwrap();
    assert!(
        warnings
            .iter()
            .any(|w| w.as_str().unwrap().contains("serving the cached copy")),
        "{second}"
    );
    // Never pulled, registry down: a clear error for that entry only.
    assert_eq!(plugins[3]["status"], "failed");
    assert!(
        plugins[3]["error"].as_str().unwrap().contains("no cached copy"),
        "{second}"
    );
}

#[test]
fn a_digest_mismatch_on_a_source_is_refused_naming_both() {
    let registry = Registry::start();
    let hello = push(&plugin("hello"), &registry.reference("tools/hello:v1"));
    let digest = hello["digest"].as_str().unwrap();
    // The manifest's bytes in the registry's storage are changed (its
    // digest is the file's name, not its content).
    let manifest_file = registry.blob_file(digest);
    let text = std::fs::read_to_string(&manifest_file).unwrap();
    std::fs::write(
        &manifest_file,
        text.replacen("\"schemaVersion\":2", "\"schemaVersion\":2 ", 1),
    )
    .unwrap();
    let dir = tempfile::tempdir().unwrap();
    let config = dir.path().join("toolhost.toml");
    std::fs::write(
        &config,
        format!(
            "[[plugins]]\nsource = \"{}\"\n",
            hello["pinned"].as_str().unwrap()
        ),
    )
    .unwrap();
    let (ok, out, err) = toolhost(&["tools", "--status", "--config", config.to_str().unwrap()], &[]);
    assert!(ok, "{out} {err}");
    let entry = &out["plugins"][0];
    assert_eq!(entry["status"], "failed", "{out}");
    assert_eq!(entry["error_code"], "hash_mismatch", "{out}");
    let message = entry["error"].as_str().unwrap();
    assert!(message.contains(digest), "the pinned digest is named: {message}");
    assert!(
        message.contains(&sha256_of(&std::fs::read(&manifest_file).unwrap())),
        "the actual digest is named: {message}"
    );
}

#[test]
fn a_reference_without_a_registry_host_is_a_config_error() {
    let dir = tempfile::tempdir().unwrap();
    let config = dir.path().join("toolhost.toml");
    std::fs::write(&config, "[[plugins]]\nsource = \"oci://tools/hello:v1\"\n").unwrap();
    let (ok, out, _) = toolhost(&["tools", "--status", "--config", config.to_str().unwrap()], &[]);
    assert!(!ok);
    assert_eq!(out["error_code"], "config", "{out}");
    assert!(out["error"].as_str().unwrap().contains("oci://HOST"), "{out}");
    std::fs::write(
        &config,
        "[[plugins]]\npath = \"a.wasm\"\nsource = \"oci://127.0.0.1:1/a:v1\"\n",
    )
    .unwrap();
    let (ok, out, _) = toolhost(&["tools", "--status", "--config", config.to_str().unwrap()], &[]);
    assert!(!ok);
    assert!(
        out["error"].as_str().unwrap().contains("exactly one of `path`"),
        "{out}"
    );
}

pub fn blake3_of(bytes: &[u8]) -> String {
    toolhost::ComponentHash::of(bytes).to_string()
}

fn sha256_of(bytes: &[u8]) -> String {
    // The registry names blobs by sha256: ask the shell's sha256sum, an
    // independent implementation.
    let dir = tempfile::tempdir().unwrap();
    let file = dir.path().join("f");
    std::fs::write(&file, bytes).unwrap();
    let out = std::process::Command::new("sha256sum")
        .arg(&file)
        .output()
        .unwrap();
    format!(
        "sha256:{}",
        String::from_utf8_lossy(&out.stdout)
            .split_whitespace()
            .next()
            .unwrap()
    )
}

#[test]
fn credentials_come_from_the_environment_or_the_docker_config_file() {
    let registry = Registry::start_with_login("ada", "s3cret");
    let reference = registry.reference("tools/hello:v1");
    let hello = plugin("hello");
    let home = tempfile::tempdir().unwrap();
    let home_path = home.path().to_str().unwrap();
    // No credentials anywhere (an empty HOME, no DOCKER_CONFIG): refused,
    // saying where credentials come from.
    let anonymous = [("HOME", home_path), ("DOCKER_CONFIG", home_path)];
    let (ok, out, _) = toolhost(&["push", &hello, &reference], &anonymous);
    assert!(!ok, "an anonymous push was accepted: {out}");
    let message = out["error"].as_str().unwrap();
    assert!(
        message.contains("docker login") && message.contains("TOOLHOST_REGISTRY_USERNAME"),
        "{out}"
    );
    // From the environment.
    let env = [
        ("HOME", home_path),
        ("DOCKER_CONFIG", home_path),
        ("TOOLHOST_REGISTRY_USERNAME", "ada"),
        ("TOOLHOST_REGISTRY_PASSWORD", "s3cret"),
    ];
    let (ok, out, err) = toolhost(&["push", &hello, &reference], &env);
    assert!(ok, "{out} {err}");
    // From the Docker config file, as `docker login` writes it.
    let docker = home.path().join("docker");
    std::fs::create_dir(&docker).unwrap();
    std::fs::write(
        docker.join("config.json"),
        format!(
            r#"{{"auths": {{"{}": {{"auth": "YWRhOnMzY3JldA=="}}}}}}"#,
            registry.addr
        ),
    )
    .unwrap();
    let out_file = home.path().join("pulled.wasm");
    let (ok, out, err) = toolhost(
        &["pull", &reference, "-o", out_file.to_str().unwrap()],
        &[("HOME", home_path), ("DOCKER_CONFIG", docker.to_str().unwrap())],
    );
    assert!(ok, "{out} {err}");
    assert_eq!(std::fs::read(&out_file).unwrap(), support::plugin_bytes("hello"));
    // A wrong password in the environment wins over nothing and is refused.
    let wrong = [
        ("HOME", home_path),
        ("TOOLHOST_REGISTRY_USERNAME", "ada"),
        ("TOOLHOST_REGISTRY_PASSWORD", "nope"),
    ];
    let (ok, _, _) = toolhost(&["pull", &reference, "-o", out_file.to_str().unwrap()], &wrong);
    assert!(!ok);
}

#[test]
fn no_grant_reaches_the_pull_cache_or_a_component_and_its_signature() {
    let dir = tempfile::tempdir().unwrap();
    let files = plugin("files");
    let hello = dir.path().join("hello.wasm");
    std::fs::copy(support::plugin_path("hello"), &hello).unwrap();
    let config = dir.path().join("toolhost.toml");
    std::fs::write(
        &config,
        format!(
            "[[plugins]]\npath = \"{files}\"\n[plugins.grants]\ndirs = [{{ host = \".toolhost/oci\", guest = \"/workspace\" }}]\n\n\
             [[plugins]]\npath = \"hello.wasm\"\n\n\
             [[plugins]]\npath = \"{files}\"\ntoolset = \"again\"\n[plugins.grants]\ndirs = [{{ host = \"sub\", guest = \"/workspace\", mode = \"rw\" }}]\n"
        ),
    )
    .unwrap();
    std::fs::create_dir(dir.path().join("sub")).unwrap();
    let (ok, out, err) = toolhost(&["tools", "--status", "--config", config.to_str().unwrap()], &[]);
    assert!(ok, "{out} {err}");
    let plugins = out["plugins"].as_array().unwrap();
    assert_eq!(plugins[0]["status"], "failed", "{out}");
    assert!(
        plugins[0]["error"].as_str().unwrap().contains("the pull cache"),
        "{out}"
    );
    assert_eq!(plugins[1]["status"], "loaded", "{out}");
    // A read-write grant over the folder holding hello.wasm and its
    // signature would let a tool re-sign or replace it.
    std::fs::rename(&hello, dir.path().join("sub/hello.wasm")).unwrap();
    let text = std::fs::read_to_string(&config)
        .unwrap()
        .replace("path = \"hello.wasm\"", "path = \"sub/hello.wasm\"");
    std::fs::write(&config, text).unwrap();
    let (_, out, _) = toolhost(&["tools", "--status", "--config", config.to_str().unwrap()], &[]);
    let plugins = out["plugins"].as_array().unwrap();
    assert_eq!(plugins[2]["status"], "failed", "{out}");
    assert!(
        plugins[2]["error"].as_str().unwrap().contains("its signature"),
        "{out}"
    );
}
