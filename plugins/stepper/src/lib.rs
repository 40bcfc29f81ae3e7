//! Test plugin: a long call that reports its progress, written with the SDK.
use std::time::Duration;

use schemars::JsonSchema;
use serde::Deserialize;
use toolhost_sdk::{Output, ToolError};

/// Works through `count` steps, reporting progress after each, and answers
/// how many it did.
#[derive(Deserialize, JsonSchema)]
struct Steps {
    /// How many steps.
    count: u32,
    /// How long each step takes, in milliseconds (default 0).
    #[serde(default)]
    pause_ms: u64,
}

fn steps(args: Steps) -> Result<Output, ToolError> {
    let total = f64::from(args.count);
    for step in 1..=args.count {
        std::thread::sleep(Duration::from_millis(args.pause_ms));
        let message = format!("step {step} of {}", args.count);
        toolhost_sdk::progress(f64::from(step), Some(total), Some(&message));
    }
    Ok(Output::new(serde_json::json!({ "steps": args.count })).text(format!("Did {} steps.", args.count)))
}

toolhost_sdk::plugin!(steps(read_only));
