//! Adversarial plugin: declares the directory `/data` and assumes it is
//! there. Granted, its tool works; not granted, it panics (an `expect` on
//! the read) where it should return a tool error naming what is missing.
use schemars::JsonSchema;
use serde::Deserialize;
use toolhost_sdk::ToolError;

toolhost_sdk::capabilities! {
    dirs: ["/data"],
}

/// Returns the text of /data/config.json.
#[derive(Deserialize, JsonSchema)]
struct ReadConfig {}

fn read_config(_: ReadConfig) -> Result<String, ToolError> {
    Ok(std::fs::read_to_string("/data/config.json").expect("/data is always granted"))
}

toolhost_sdk::plugin!(read_config(read_only));
