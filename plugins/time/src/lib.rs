//! # The `time` plugin
//!
//! One tool, `current_datetime`: the current date and time from WASI's wall
//! clock, in UTC or in a time zone (an IANA name such as `Europe/Lisbon`, or
//! a fixed offset such as `+05:30`), optionally formatted with a strftime
//! pattern. The time zone database is compiled in ([`chrono_tz`]), so the
//! plugin needs no files.
//!
//! ## Capabilities
//!
//! Declares the environment variable `TZ`. When granted and set to a zone
//! name or offset, it is the default zone; otherwise the default is UTC:
//!
//! ```toml
//! [plugins.grants]
//! env = ["TZ"]
//! ```

use std::fmt::Write;

use chrono::format::StrftimeItems;
use chrono::{DateTime, FixedOffset, Offset, SecondsFormat, TimeZone, Utc};
use schemars::JsonSchema;
use serde::{Deserialize, Serialize};
use toolhost_sdk::ToolError;

toolhost_sdk::capabilities! {
    env: ["TZ"]
}

/// The longest format string accepted, in bytes.
const MAX_FORMAT_BYTES: usize = 200;

/// Returns the current date and time. In UTC unless `timezone` is given (or
/// the host grants a `TZ` default); `format` takes a strftime pattern such as
/// "%Y-%m-%d %H:%M" or "%A, %d %B %Y". Besides the formatted `datetime`, the
/// result has the RFC 3339 form, the zone, its UTC offset, the weekday and
/// the Unix time.
#[derive(Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
struct CurrentDatetime {
    /// A strftime pattern, e.g. "%Y-%m-%d %H:%M:%S". Default: RFC 3339
    /// (e.g. "2025-05-01T14:03:00+01:00"). At most 200 characters.
    format: Option<String>,
    /// The time zone: an IANA name ("Europe/Lisbon", "America/New_York"),
    /// "UTC", or a UTC offset ("+02:00", "-0530"). Default: the host's TZ if
    /// granted, else UTC.
    timezone: Option<String>,
}

/// The current time.
#[derive(Serialize)]
struct Now {
    /// The time, formatted with `format` (RFC 3339 without one).
    datetime: String,
    /// The time in RFC 3339, to the second, in the requested zone.
    iso8601: String,
    /// The zone used, as given (or "UTC").
    timezone: String,
    /// The zone's offset from UTC at this moment, e.g. "+01:00".
    utc_offset: String,
    /// The day of the week, e.g. "Thursday".
    weekday: String,
    /// Seconds since 1970-01-01T00:00:00Z.
    unix_seconds: i64,
    /// Milliseconds since 1970-01-01T00:00:00Z.
    unix_millis: i64,
}

/// A zone the tool can convert into.
enum Zone {
    Named(chrono_tz::Tz),
    Fixed(FixedOffset),
}

/// Parses a zone name or offset.
fn parse_zone(text: &str) -> Option<Zone> {
    let text = text.trim();
    if text.eq_ignore_ascii_case("utc") || text == "Z" {
        return Some(Zone::Fixed(Utc.fix()));
    }
    if let Some(offset) = parse_offset(text) {
        return Some(Zone::Fixed(offset));
    }
    text.parse::<chrono_tz::Tz>().ok().map(Zone::Named)
}

/// Parses `+HH:MM`, `+HHMM` or `+HH` (also with `-`, and with a `UTC` or
/// `GMT` prefix).
fn parse_offset(text: &str) -> Option<FixedOffset> {
    let upper = text.to_ascii_uppercase();
    let rest = upper
        .strip_prefix("UTC")
        .or_else(|| upper.strip_prefix("GMT"))
        .unwrap_or(&upper);
    let (sign, digits) = match rest.as_bytes().first()? {
        b'+' => (1, &rest[1..]),
        b'-' => (-1, &rest[1..]),
        _ => return None,
    };
    let digits: String = digits.chars().filter(|c| *c != ':').collect();
    if !digits.bytes().all(|b| b.is_ascii_digit()) {
        return None;
    }
    let (hours, minutes) = match digits.len() {
        1 | 2 => (digits.parse::<i32>().ok()?, 0),
        4 => (digits[..2].parse::<i32>().ok()?, digits[2..].parse::<i32>().ok()?),
        _ => return None,
    };
    if hours > 23 || minutes > 59 {
        return None;
    }
    FixedOffset::east_opt(sign * (hours * 3600 + minutes * 60))
}

/// The zone to use: the argument, else a granted `TZ`, else UTC.
fn zone_of(arg: Option<&str>) -> Result<(Zone, String), ToolError> {
    if let Some(name) = arg {
        return parse_zone(name).map(|z| (z, name.trim().to_string())).ok_or_else(|| {
            ToolError::invalid_arguments(format!(
                "unknown time zone `{name}`: use an IANA name such as \"Europe/Lisbon\", \"UTC\", or an offset such as \"+02:00\""
            ))
        });
    }
    if let Ok(tz) = std::env::var("TZ") {
        // POSIX allows a leading ':' before a zone name.
        let name = tz.trim_start_matches(':');
        if let Some(zone) = parse_zone(name) {
            return Ok((zone, name.to_string()));
        }
    }
    Ok((Zone::Fixed(Utc.fix()), "UTC".to_string()))
}

/// Formats `time` with the strftime pattern `pattern`.
///
/// # Errors
///
/// `invalid_arguments` if the pattern is too long or has an unknown or
/// incomplete specifier.
fn format<Tz: TimeZone>(time: &DateTime<Tz>, pattern: &str) -> Result<String, ToolError>
where
    Tz::Offset: std::fmt::Display,
{
    if pattern.len() > MAX_FORMAT_BYTES {
        return Err(ToolError::invalid_arguments(format!(
            "the format is longer than {MAX_FORMAT_BYTES} bytes"
        )));
    }
    let items = StrftimeItems::new(pattern).parse().map_err(|_| {
        ToolError::invalid_arguments(format!(
            "`{pattern}` is not a valid strftime format (e.g. \"%Y-%m-%d %H:%M\"; write %% for a literal %)"
        ))
    })?;
    let mut out = String::new();
    write!(out, "{}", time.format_with_items(items.iter()))
        .map_err(|_| ToolError::invalid_arguments(format!("`{pattern}` cannot format this time")))?;
    Ok(out)
}

/// Builds the result for `time`.
fn describe<Tz: TimeZone>(time: DateTime<Tz>, zone: String, pattern: Option<&str>) -> Result<Now, ToolError>
where
    Tz::Offset: std::fmt::Display,
{
    let iso8601 = time.to_rfc3339_opts(SecondsFormat::Secs, true);
    let datetime = match pattern {
        Some(p) => format(&time, p)?,
        None => iso8601.clone(),
    };
    let offset = time.offset().fix();
    Ok(Now {
        datetime,
        iso8601,
        timezone: zone,
        utc_offset: offset.to_string(),
        weekday: time.format("%A").to_string(),
        unix_seconds: time.timestamp(),
        unix_millis: time.timestamp_millis(),
    })
}

/// Reports the current time.
fn current_datetime(args: CurrentDatetime) -> Result<Now, ToolError> {
    let (zone, name) = zone_of(args.timezone.as_deref())?;
    let now = Utc::now();
    let pattern = args.format.as_deref();
    match zone {
        Zone::Named(tz) => describe(now.with_timezone(&tz), name, pattern),
        Zone::Fixed(offset) => describe(now.with_timezone(&offset), name, pattern),
    }
}

toolhost_sdk::plugin!(current_datetime(read_only));
