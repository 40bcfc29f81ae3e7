//! The `time` plugin, as built: the current time in UTC, in named zones and
//! at fixed offsets, strftime formats, bad arguments, and the `TZ` grant.

use std::process::Command;
use std::time::{SystemTime, UNIX_EPOCH};

use serde_json::{Value, json};
use toolhost::ErrorCode;

use crate::{call_json, load, support};

fn unix_now() -> i64 {
    SystemTime::now().duration_since(UNIX_EPOCH).unwrap().as_secs() as i64
}

async fn now(args: Value) -> Value {
    let c = load("time").await;
    call_json(&c, "current_datetime", args.clone())
        .await
        .unwrap_or_else(|e| panic!("current_datetime({args}): {e}"))
}

#[tokio::test]
async fn the_default_is_utc_now_in_rfc3339() {
    let t = now(json!({})).await;
    assert!(
        (t["unix_seconds"].as_i64().unwrap() - unix_now()).abs() <= 5,
        "{t}"
    );
    assert_eq!(t["timezone"], "UTC");
    assert_eq!(t["utc_offset"], "+00:00");
    let iso = t["iso8601"].as_str().unwrap();
    assert!(iso.ends_with('Z') && iso.len() == 20, "{iso}");
    assert_eq!(t["datetime"], t["iso8601"]);
    assert!(t["weekday"].as_str().unwrap().ends_with("day"));
    let millis = t["unix_millis"].as_i64().unwrap();
    assert_eq!(millis / 1000, t["unix_seconds"].as_i64().unwrap());
}

#[tokio::test]
async fn named_zones_and_fixed_offsets_shift_the_wall_time_not_the_instant() {
    let kolkata = now(json!({"timezone": "Asia/Kolkata"})).await;
    assert_eq!(kolkata["utc_offset"], "+05:30");
    assert!(kolkata["iso8601"].as_str().unwrap().ends_with("+05:30"));
    assert!((kolkata["unix_seconds"].as_i64().unwrap() - unix_now()).abs() <= 5);
    for (zone, offset) in [
        ("-0300", "-03:00"),
        ("UTC+2", "+02:00"),
        ("+05:45", "+05:45"),
        ("utc", "+00:00"),
    ] {
        let t = now(json!({ "timezone": zone })).await;
        assert_eq!(t["utc_offset"], offset, "{zone}");
        assert_eq!(t["timezone"], zone);
    }
    // A zone with daylight saving time has one of its two offsets.
    let ny = now(json!({"timezone": "America/New_York"})).await;
    assert!(
        ["-05:00", "-04:00"].contains(&ny["utc_offset"].as_str().unwrap()),
        "{ny}"
    );
}

#[tokio::test]
async fn strftime_formats_are_applied() {
    let t = now(json!({"format": "%Y|%%|%H:%M", "timezone": "UTC"})).await;
    let text = t["datetime"].as_str().unwrap();
    let year = 1970 + unix_now() / 31_556_952;
    let parts: Vec<&str> = text.split('|').collect();
    assert_eq!(parts.len(), 3, "{text}");
    assert!((parts[0].parse::<i64>().unwrap() - year).abs() <= 1, "{text}");
    assert_eq!(parts[1], "%");
    assert_eq!(parts[2].len(), 5);
    let zoned = now(json!({"format": "%z", "timezone": "Asia/Kolkata"})).await;
    assert_eq!(zoned["datetime"], "+0530");
}

#[tokio::test]
async fn bad_zones_and_formats_are_invalid_arguments() {
    let c = load("time").await;
    for args in [
        json!({"timezone": "Mars/Olympus"}),
        json!({"timezone": "+25:00"}),
        json!({"format": "%Q"}),
        json!({"format": "%"}),
        json!({"format": "%Y".repeat(101)}),
        json!({"zone": "UTC"}),
    ] {
        let e = call_json(&c, "current_datetime", args.clone()).await.unwrap_err();
        assert_eq!(e.code(), ErrorCode::InvalidArguments, "{args}: {e}");
    }
}

/// Runs `toolhost call` on the time plugin with `TZ` set in its environment.
fn call_with_tz(tz: &str, grant: bool) -> Value {
    let mut cmd = Command::new(env!("CARGO_BIN_EXE_toolhost"));
    cmd.arg("call")
        .arg(support::plugin_path("time"))
        .arg("current_datetime")
        .arg("--cache-dir")
        .arg(
            support::workspace_root()
                .join("target")
                .join("test-compile-cache"),
        )
        .env("TZ", tz);
    if grant {
        cmd.args(["--env", "TZ"]);
    }
    let out = cmd.output().unwrap();
    assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stdout));
    serde_json::from_slice(&out.stdout).unwrap()
}

#[test]
fn a_granted_tz_is_the_default_zone_and_an_ungranted_one_is_ignored() {
    let granted = call_with_tz("Asia/Kolkata", true);
    assert_eq!(granted["timezone"], "Asia/Kolkata");
    assert_eq!(granted["utc_offset"], "+05:30");
    let ungranted = call_with_tz("Asia/Kolkata", false);
    assert_eq!(ungranted["timezone"], "UTC");
    // An unusable TZ falls back to UTC rather than failing.
    let bogus = call_with_tz("Nowhere/Special", true);
    assert_eq!(bogus["timezone"], "UTC");
}

#[tokio::test]
async fn it_loads_and_works_without_any_grant() {
    let c = load("time").await;
    assert_eq!(c.declared().env, ["TZ"]);
    assert!(c.declared().dirs.is_empty());
    assert_eq!(now(json!({})).await["timezone"], "UTC");
}
