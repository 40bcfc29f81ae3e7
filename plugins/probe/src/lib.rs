//! Test plugin: reports what it can reach, so tests can prove that a
//! capability is usable only when declared and granted.
use schemars::JsonSchema;
use serde::Deserialize;
use toolhost_sdk::ToolError;

toolhost_sdk::capabilities! {
    dirs: ["/data"],
    env: ["PROBE_VISIBLE", "PROBE_UNGRANTED"],
}

/// Reads a file and returns its text.
#[derive(Deserialize, JsonSchema)]
struct ReadPath {
    /// The path, as the guest sees it.
    path: String,
}

fn read_path(args: ReadPath) -> Result<String, ToolError> {
    Ok(std::fs::read_to_string(&args.path)?)
}

/// Writes `text` to a file.
#[derive(Deserialize, JsonSchema)]
struct WritePath {
    /// The path, as the guest sees it.
    path: String,
    /// What to write.
    text: String,
}

fn write_path(args: WritePath) -> Result<(), ToolError> {
    Ok(std::fs::write(&args.path, args.text)?)
}

/// Returns the value of an environment variable, or null.
#[derive(Deserialize, JsonSchema)]
struct GetEnv {
    /// The variable's name.
    name: String,
}

fn get_env(args: GetEnv) -> Result<Option<String>, ToolError> {
    Ok(std::env::var(&args.name).ok())
}

/// Lists every environment variable name the plugin can see.
#[derive(Deserialize, JsonSchema)]
struct ListEnv {}

fn list_env(_: ListEnv) -> Result<Vec<String>, ToolError> {
    Ok(std::env::vars().map(|(k, _)| k).collect())
}

toolhost_sdk::plugin!(
    read_path(read_only),
    write_path,
    get_env(read_only),
    list_env(read_only)
);
