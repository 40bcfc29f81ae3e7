//! One record at a time: `memory_create`, `memory_update`, `memory_get` and
//! `memory_delete`.

use schemars::JsonSchema;
use serde::{Deserialize, Serialize};
use toolhost_sdk::ToolError;

use crate::store::{self, Record};

/// The longest title, in characters.
const MAX_TITLE_CHARS: usize = 200;
/// The largest content, in bytes.
pub(crate) const MAX_CONTENT_BYTES: usize = 256 << 10;
/// The most tags on one record.
const MAX_TAGS: usize = 20;
/// The longest tag, in characters.
const MAX_TAG_CHARS: usize = 50;
/// How many fresh ids a create tries before giving up.
const ID_ATTEMPTS: usize = 8;

/// Saves a new persistent memory (a note about the user, a fact or a task)
/// and returns its id. Memories persist across conversations until deleted.
#[derive(Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub(crate) struct MemoryCreate {
    /// A short title that says what the memory is about (at most 200
    /// characters); memory_list_titles shows titles.
    title: String,
    /// The text to remember (at most 256 KiB).
    content: String,
    /// Optional tags to group and find memories by, e.g. ["travel", "family"].
    /// Lowercased; at most 20, each at most 50 characters.
    #[serde(default)]
    tags: Vec<String>,
}

/// Checks and normalizes a title.
fn title(title: &str) -> Result<String, ToolError> {
    let title = title.trim();
    if title.is_empty() {
        return Err(ToolError::invalid_arguments("the title must not be empty"));
    }
    if title.chars().count() > MAX_TITLE_CHARS {
        return Err(ToolError::invalid_arguments(format!(
            "the title is longer than {MAX_TITLE_CHARS} characters: shorten it and put the details in content"
        )));
    }
    Ok(title.to_string())
}

/// Checks the content's size.
fn content(content: String) -> Result<String, ToolError> {
    if content.len() > MAX_CONTENT_BYTES {
        return Err(ToolError::invalid_arguments(format!(
            "the content is {} bytes, more than the limit of {MAX_CONTENT_BYTES}",
            content.len()
        )));
    }
    Ok(content)
}

/// Checks and normalizes tags: trimmed, lowercased, empty ones and duplicates
/// dropped, order kept.
pub(crate) fn tags(tags: Vec<String>) -> Result<Vec<String>, ToolError> {
    let mut out: Vec<String> = Vec::new();
    for tag in tags {
        let tag = tag.trim().to_lowercase();
        if tag.is_empty() || out.contains(&tag) {
            continue;
        }
        if tag.chars().count() > MAX_TAG_CHARS {
            return Err(ToolError::invalid_arguments(format!(
                "the tag `{tag}` is longer than {MAX_TAG_CHARS} characters"
            )));
        }
        out.push(tag);
    }
    if out.len() > MAX_TAGS {
        return Err(ToolError::invalid_arguments(format!(
            "at most {MAX_TAGS} tags are allowed"
        )));
    }
    Ok(out)
}

/// What `memory_create` and `memory_update` return.
#[derive(Serialize)]
pub(crate) struct Saved {
    /// The memory's id, for memory_get, memory_update and memory_delete.
    id: String,
    title: String,
    tags: Vec<String>,
    created_at: String,
    updated_at: String,
}

impl From<Record> for Saved {
    fn from(r: Record) -> Saved {
        Saved {
            id: r.id,
            title: r.title,
            tags: r.tags,
            created_at: r.created_at,
            updated_at: r.updated_at,
        }
    }
}

/// Creates a record under a fresh id.
pub(crate) fn memory_create(args: MemoryCreate) -> Result<Saved, ToolError> {
    let now = store::now();
    let mut record = Record {
        id: String::new(),
        title: title(&args.title)?,
        content: content(args.content)?,
        tags: tags(args.tags)?,
        created_at: now.clone(),
        updated_at: now,
    };
    for _ in 0..ID_ATTEMPTS {
        record.id = store::new_id();
        if store::create(&record)? {
            return Ok(record.into());
        }
    }
    Err(ToolError::failed(
        "could not find a free id for the memory; try again",
    ))
}

/// Changes an existing memory. Only the fields given are changed; `tags`, if
/// given, replaces all of the memory's tags.
#[derive(Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub(crate) struct MemoryUpdate {
    /// The memory's id.
    id: String,
    /// A new title.
    title: Option<String>,
    /// New content, replacing the old.
    content: Option<String>,
    /// New tags, replacing the old ones (an empty list removes them all).
    tags: Option<Vec<String>>,
}

/// Updates a record.
pub(crate) fn memory_update(args: MemoryUpdate) -> Result<Saved, ToolError> {
    store::check_id(&args.id)?;
    if args.title.is_none() && args.content.is_none() && args.tags.is_none() {
        return Err(ToolError::invalid_arguments(
            "nothing to change: give at least one of title, content or tags",
        ));
    }
    let new_title = args.title.as_deref().map(title).transpose()?;
    let new_content = args.content.map(content).transpose()?;
    let new_tags = args.tags.map(tags).transpose()?;
    let mut record = store::load(&args.id)?;
    if let Some(t) = new_title {
        record.title = t;
    }
    if let Some(c) = new_content {
        record.content = c;
    }
    if let Some(t) = new_tags {
        record.tags = t;
    }
    record.updated_at = store::now();
    store::replace(&record)?;
    Ok(record.into())
}

/// Returns one memory in full: title, content, tags and timestamps.
#[derive(Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub(crate) struct MemoryGet {
    /// The memory's id.
    id: String,
}

/// Reads a record.
pub(crate) fn memory_get(args: MemoryGet) -> Result<Record, ToolError> {
    store::load(&args.id)
}

/// Deletes a memory permanently.
#[derive(Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub(crate) struct MemoryDelete {
    /// The memory's id.
    id: String,
}

/// What `memory_delete` returns.
#[derive(Serialize)]
pub(crate) struct Deleted {
    id: String,
    deleted: bool,
}

/// Deletes a record.
pub(crate) fn memory_delete(args: MemoryDelete) -> Result<Deleted, ToolError> {
    store::remove(&args.id)?;
    Ok(Deleted {
        id: args.id,
        deleted: true,
    })
}
