//! Detached minisign signatures: compatible both ways with Debian's
//! `minisign` program, refused when tampered, required by the operator's
//! policy (globally or per plugin), and carried through the registry.

use std::path::Path;

use serde_json::Value;

use crate::oci::push;
use crate::peers::{Registry, minisign, minisign_keypair, toolhost};
use crate::support;

fn copy_plugin(name: &str, dir: &Path) -> String {
    let file = dir.join(format!("{name}.wasm"));
    std::fs::copy(support::plugin_path(name), &file).unwrap();
    file.display().to_string()
}

#[test]
fn a_signature_made_by_the_minisign_program_verifies_and_names_its_key() {
    let dir = tempfile::tempdir().unwrap();
    let (public, secret, id) = minisign_keypair(dir.path(), "release");
    let file = copy_plugin("hello", dir.path());
    minisign(dir.path(), &["-S", "-m", &file, "-s", secret.to_str().unwrap()]);
    let (ok, out, err) = toolhost(&["verify", &file, "--key", public.to_str().unwrap()], &[]);
    assert!(ok, "{out} {err}");
    assert_eq!(out["verified"], true);
    assert_eq!(out["signed_by"], id.as_str(), "the key ID as minisign prints it");
    assert!(
        out["trusted_comment"].as_str().unwrap().contains("hello.wasm"),
        "{out}"
    );

    // One byte changed after signing: refused.
    let mut bytes = std::fs::read(&file).unwrap();
    *bytes.last_mut().unwrap() ^= 1;
    std::fs::write(&file, &bytes).unwrap();
    let (ok, out, _) = toolhost(&["verify", &file, "--key", public.to_str().unwrap()], &[]);
    assert!(!ok);
    assert_eq!(out["error_code"], "untrusted", "{out}");
    assert!(
        out["error"].as_str().unwrap().contains("does not verify"),
        "{out}"
    );

    // Another key's public key: refused, naming both keys.
    let (other, _, other_id) = minisign_keypair(dir.path(), "other");
    std::fs::write(&file, support::plugin_bytes("hello")).unwrap();
    let (ok, out, _) = toolhost(&["verify", &file, "--key", other.to_str().unwrap()], &[]);
    assert!(!ok);
    let message = out["error"].as_str().unwrap();
    assert!(message.contains(&id) && message.contains(&other_id), "{message}");
}

#[test]
fn a_signature_made_by_toolhost_verifies_with_the_minisign_program() {
    let dir = tempfile::tempdir().unwrap();
    // A key made by minisign without a password (minisign 0.11 leaves its
    // checksum empty; toolhost still opens it).
    let (public, secret, id) = minisign_keypair(dir.path(), "release");
    let file = copy_plugin("hello", dir.path());
    let (ok, out, err) = toolhost(&["sign", &file, "--key", secret.to_str().unwrap()], &[]);
    assert!(ok, "{out} {err}");
    assert_eq!(out["signed_by"], id.as_str());
    let verified = minisign(dir.path(), &["-V", "-m", &file, "-p", public.to_str().unwrap()]);
    assert!(
        verified.contains("Signature and comment signature verified"),
        "{verified}"
    );

    // An encrypted key (minisign asks for its password; given on stdin):
    // toolhost takes the password from the environment only.
    let (enc_pub, enc_key) = (dir.path().join("enc.pub"), dir.path().join("enc.key"));
    let mut child = std::process::Command::new(crate::peers::program("minisign", "minisign"))
        .args([
            "-G",
            "-f",
            "-p",
            enc_pub.to_str().unwrap(),
            "-s",
            enc_key.to_str().unwrap(),
        ])
        .stdin(std::process::Stdio::piped())
        .stdout(std::process::Stdio::null())
        .stderr(std::process::Stdio::null())
        .spawn()
        .unwrap();
    use std::io::Write;
    child
        .stdin
        .take()
        .unwrap()
        .write_all(b"s3cret\ns3cret\n")
        .unwrap();
    assert!(child.wait().unwrap().success());
    let (ok, out, _) = toolhost(&["sign", &file, "--key", enc_key.to_str().unwrap()], &[]);
    assert!(!ok, "an encrypted key opened without its password: {out}");
    assert!(
        out["error"]
            .as_str()
            .unwrap()
            .contains("TOOLHOST_MINISIGN_PASSWORD"),
        "{out}"
    );
    let (ok, out, _) = toolhost(
        &["sign", &file, "--key", enc_key.to_str().unwrap()],
        &[("TOOLHOST_MINISIGN_PASSWORD", "wrong")],
    );
    assert!(!ok, "a wrong password was accepted: {out}");
    let (ok, out, err) = toolhost(
        &["sign", &file, "--key", enc_key.to_str().unwrap()],
        &[("TOOLHOST_MINISIGN_PASSWORD", "s3cret")],
    );
    assert!(ok, "{out} {err}");
    minisign(dir.path(), &["-V", "-m", &file, "-p", enc_pub.to_str().unwrap()]);
}

/// Writes a config that trusts `trusted` and lists `entries` (TOML
/// `[[plugins]]` bodies); returns `tools --status`.
fn status_with(dir: &Path, head: &str, entries: &[String]) -> Value {
    let mut text = head.to_string();
    for entry in entries {
        text.push_str("\n[[plugins]]\n");
        text.push_str(entry);
        text.push('\n');
    }
    let config = dir.join("toolhost.toml");
    std::fs::write(&config, text).unwrap();
    let (ok, out, err) = toolhost(&["tools", "--status", "--config", config.to_str().unwrap()], &[]);
    assert!(ok, "{out} {err}");
    out
}

#[test]
fn require_signature_refuses_unsigned_components_and_unknown_keys_naming_them() {
    let dir = tempfile::tempdir().unwrap();
    let (trusted, trusted_secret, trusted_id) = minisign_keypair(dir.path(), "trusted");
    let (_, stranger_secret, stranger_id) = minisign_keypair(dir.path(), "stranger");
    let hello = copy_plugin("hello", dir.path());
    let calc = copy_plugin("calc", dir.path());
    let time = copy_plugin("time", dir.path());
    minisign(
        dir.path(),
        &["-S", "-m", &hello, "-s", trusted_secret.to_str().unwrap()],
    );
    minisign(
        dir.path(),
        &["-S", "-m", &time, "-s", stranger_secret.to_str().unwrap()],
    );
    let head = format!(
        "[signatures]\ntrusted_keys = [\"{}\"]\nrequire_signature = true\n",
        trusted.file_name().unwrap().to_str().unwrap()
    );
    let entries = [
        "path = \"hello.wasm\"",
        "path = \"calc.wasm\"",
        "path = \"time.wasm\"",
    ]
    .map(String::from);
    let out = status_with(dir.path(), &head, &entries);
    let plugins = out["plugins"].as_array().unwrap();
    assert_eq!(plugins[0]["status"], "loaded", "{out}");
    assert_eq!(plugins[0]["signed_by"], trusted_id.as_str());
    assert_eq!(plugins[1]["status"], "failed");
    assert_eq!(plugins[1]["error_code"], "untrusted");
    assert!(
        plugins[1]["error"].as_str().unwrap().contains("unsigned"),
        "{out}"
    );
    assert_eq!(plugins[2]["status"], "failed");
    let message = plugins[2]["error"].as_str().unwrap();
    assert!(
        message.contains(&stranger_id),
        "the unknown key is named: {message}"
    );
    assert!(
        message.contains(&trusted_id),
        "the trusted keys are named: {message}"
    );

    // A bad signature by a trusted key is refused even when not required.
    let head = format!("[signatures]\ntrusted_keys = [\"{}\"]\n", trusted.display());
    std::fs::copy(format!("{hello}.minisig"), format!("{calc}.minisig")).unwrap();
    let out = status_with(dir.path(), &head, &entries);
    let plugins = out["plugins"].as_array().unwrap();
    assert_eq!(plugins[0]["status"], "loaded", "{out}");
    assert_eq!(
        plugins[1]["status"], "failed",
        "calc carries hello's signature: {out}"
    );
    assert!(
        plugins[1]["error"].as_str().unwrap().contains("does not verify"),
        "{out}"
    );
    assert_eq!(
        plugins[2]["status"], "loaded",
        "not required: an unknown key is reported"
    );
    assert_eq!(plugins[2]["signature"], "unknown_keys");

    // Required for one plugin only.
    std::fs::remove_file(format!("{calc}.minisig")).unwrap();
    let entries = [
        "path = \"calc.wasm\"\nrequire_signature = true",
        "path = \"hello.wasm\"",
    ]
    .map(String::from);
    let out = status_with(dir.path(), &head, &entries);
    assert_eq!(out["plugins"][0]["status"], "failed", "{out}");
    assert_eq!(out["plugins"][1]["status"], "loaded", "{out}");
}

#[test]
fn signatures_travel_with_the_component_through_the_registry() {
    let registry = Registry::start();
    let dir = tempfile::tempdir().unwrap();
    let (trusted, secret, id) = minisign_keypair(dir.path(), "trusted");
    let hello = copy_plugin("hello", dir.path());
    minisign(dir.path(), &["-S", "-m", &hello, "-s", secret.to_str().unwrap()]);
    let pushed = push(&hello, &registry.reference("tools/hello:signed"));
    assert_eq!(pushed["signed_by"][0], id.as_str());
    // calc pushed with hello's signature: a bad signature in the registry.
    let calc = copy_plugin("calc", dir.path());
    std::fs::copy(format!("{hello}.minisig"), format!("{calc}.minisig")).unwrap();
    push(&calc, &registry.reference("tools/calc:forged"));
    let time = copy_plugin("time", dir.path());
    push(&time, &registry.reference("tools/time:unsigned"));

    // Pulled: the signature comes along as FILE.minisig, which minisign checks.
    let out_file = dir.path().join("pulled.wasm");
    let (ok, out, err) = toolhost(
        &[
            "pull",
            &registry.reference("tools/hello:signed"),
            "-o",
            out_file.to_str().unwrap(),
            "--key",
            trusted.to_str().unwrap(),
        ],
        &[],
    );
    assert!(ok, "{out} {err}");
    assert_eq!(out["verified"]["signed_by"], id.as_str());
    minisign(
        dir.path(),
        &[
            "-V",
            "-m",
            out_file.to_str().unwrap(),
            "-p",
            trusted.to_str().unwrap(),
        ],
    );

    let head = format!(
        "[signatures]\ntrusted_keys = [\"{}\"]\nrequire_signature = true\n",
        trusted.display()
    );
    let entries = [
        format!("source = \"{}\"", registry.reference("tools/hello:signed")),
        format!("source = \"{}\"", registry.reference("tools/calc:forged")),
        format!("source = \"{}\"", registry.reference("tools/time:unsigned")),
    ];
    let out = status_with(dir.path(), &head, &entries);
    let plugins = out["plugins"].as_array().unwrap();
    assert_eq!(plugins[0]["status"], "loaded", "{out}");
    assert_eq!(plugins[0]["signed_by"], id.as_str());
    assert_eq!(plugins[1]["status"], "failed");
    assert!(
        plugins[1]["error"].as_str().unwrap().contains("does not verify"),
        "{out}"
    );
    assert_eq!(plugins[2]["status"], "failed");
    assert!(
        plugins[2]["error"].as_str().unwrap().contains("unsigned"),
        "{out}"
    );
}
