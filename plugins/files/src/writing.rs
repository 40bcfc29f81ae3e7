//! Changing the tree: `write_file`, `move_file` and `delete_file`.

use std::fs::{self, OpenOptions};
use std::io::{ErrorKind, Write};

use schemars::JsonSchema;
use serde::{Deserialize, Serialize};
use toolhost_sdk::ToolError;

use crate::workspace::{Kind, WsPath, follow_links, io_error, resolve};

/// The largest content one `write_file` call writes, in bytes.
pub(crate) const MAX_WRITE_BYTES: usize = 1 << 20;

/// Creates or overwrites a UTF-8 text file in the workspace (at most 1 MiB).
/// Missing parent folders are created unless `create_parents` is false; an
/// existing file is replaced unless `overwrite` is false.
#[derive(Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub(crate) struct WriteFile {
    /// The file, relative to the workspace root.
    path: String,
    /// The text to write.
    content: String,
    /// Replace the file if it exists. Default: true. With false, an existing
    /// file is an error and nothing is written.
    overwrite: Option<bool>,
    /// Create missing parent folders. Default: true.
    create_parents: Option<bool>,
}

/// What `write_file` did.
#[derive(Serialize)]
pub(crate) struct Written {
    path: String,
    /// Bytes written.
    bytes_written: usize,
    /// True if the file did not exist before.
    created: bool,
}

/// The root itself may not be written, moved or deleted.
fn not_root(path: &WsPath, what: &str) -> Result<(), ToolError> {
    if path.rel.is_empty() {
        return Err(ToolError::invalid_arguments(format!(
            "the workspace root itself cannot be {what}: name a path inside it"
        )));
    }
    Ok(())
}

/// Creates `path`'s parent folders if `create` is set.
fn parents(path: &WsPath, create: bool) -> Result<(), ToolError> {
    let Some(parent) = path.full.parent() else {
        return Ok(());
    };
    if create {
        fs::create_dir_all(parent).map_err(|e| io_error(path, e))?;
    } else if !parent.is_dir() {
        return Err(ToolError::invalid_arguments(format!(
            "the folder holding {} does not exist: create it first, or pass create_parents: true",
            path.shown()
        )));
    }
    Ok(())
}

/// Writes a file.
pub(crate) fn write_file(args: WriteFile) -> Result<Written, ToolError> {
    let asked = resolve(&args.path)?;
    not_root(&asked, "written")?;
    // Where the write lands, links followed: what exists (and so whether
    // it is `created`) is judged there, and a link out is refused by name.
    let path = follow_links(&asked)?;
    if args.content.len() > MAX_WRITE_BYTES {
        return Err(ToolError::invalid_arguments(format!(
            "the content is {} bytes, more than write_file's cap of {MAX_WRITE_BYTES} bytes",
            args.content.len()
        )));
    }
    let overwrite = args.overwrite.unwrap_or(true);
    let existed = match fs::symlink_metadata(&path.full) {
        Ok(meta) if meta.is_dir() => {
            return Err(ToolError::invalid_arguments(format!(
                "{} is a folder",
                path.shown()
            )));
        }
        Ok(_) if !overwrite => {
            return Err(ToolError::invalid_arguments(format!(
                "{} already exists: pass overwrite: true to replace it",
                path.shown()
            )));
        }
        Ok(_) => true,
        Err(_) => false,
    };
    parents(&path, args.create_parents.unwrap_or(true))?;
    let mut options = OpenOptions::new();
    options.write(true);
    if overwrite {
        options.create(true).truncate(true);
    } else {
        // Atomic with respect to a concurrent creator.
        options.create_new(true);
    }
    let mut file = options.open(&path.full).map_err(|e| match e.kind() {
        ErrorKind::AlreadyExists => ToolError::invalid_arguments(format!(
            "{} already exists: pass overwrite: true to replace it",
            path.shown()
        )),
        _ => io_error(&path, e),
    })?;
    file.write_all(args.content.as_bytes())
        .map_err(|e| io_error(&path, e))?;
    Ok(Written {
        path: asked.shown(),
        bytes_written: args.content.len(),
        created: !existed,
    })
}

/// Moves or renames a file or folder within the workspace. An existing
/// destination is an error unless `overwrite` is true (a folder is never
/// replaced). Missing parent folders of the destination are created.
#[derive(Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub(crate) struct MoveFile {
    /// The path to move, relative to the workspace root.
    source: String,
    /// The new path, relative to the workspace root.
    destination: String,
    /// Replace an existing destination file. Default: false.
    #[serde(default)]
    overwrite: bool,
}

/// What `move_file` did.
#[derive(Serialize)]
pub(crate) struct Moved {
    source: String,
    destination: String,
    kind: Kind,
    /// True if an existing destination file was replaced.
    replaced: bool,
}

/// Moves a path.
pub(crate) fn move_file(args: MoveFile) -> Result<Moved, ToolError> {
    let source = resolve(&args.source)?;
    let destination = resolve(&args.destination)?;
    not_root(&source, "moved")?;
    not_root(&destination, "replaced")?;
    let meta = fs::symlink_metadata(&source.full).map_err(|e| io_error(&source, e))?;
    let kind = Kind::of(&meta);
    if kind == Kind::Dir && format!("{}/", destination.rel).starts_with(&format!("{}/", source.rel)) {
        return Err(ToolError::invalid_arguments(format!(
            "cannot move {} into itself ({})",
            source.shown(),
            destination.shown()
        )));
    }
    let replaced = match fs::symlink_metadata(&destination.full) {
        Ok(dest) if dest.is_dir() => {
            return Err(ToolError::invalid_arguments(format!(
                "{} is an existing folder: name the full new path, e.g. {}/{}",
                destination.shown(),
                destination.shown(),
                source.rel.rsplit('/').next().unwrap_or_default()
            )));
        }
        Ok(_) if !args.overwrite => {
            return Err(ToolError::invalid_arguments(format!(
                "{} already exists: pass overwrite: true to replace it",
                destination.shown()
            )));
        }
        Ok(_) => true,
        Err(_) => false,
    };
    parents(&destination, true)?;
    fs::rename(&source.full, &destination.full).map_err(|e| io_error(&source, e))?;
    Ok(Moved {
        source: source.shown(),
        destination: destination.shown(),
        kind,
        replaced,
    })
}

/// Deletes a file (or symlink) from the workspace, permanently. A folder is
/// deleted only with `recursive: true`, and then with everything in it.
#[derive(Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub(crate) struct DeleteFile {
    /// The path to delete, relative to the workspace root.
    path: String,
    /// Allow deleting a folder and all its contents. Default: false.
    #[serde(default)]
    recursive: bool,
}

/// What `delete_file` did.
#[derive(Serialize)]
pub(crate) struct Deleted {
    path: String,
    /// What was deleted.
    kind: Kind,
    deleted: bool,
}

/// Deletes a path.
pub(crate) fn delete_file(args: DeleteFile) -> Result<Deleted, ToolError> {
    let path = resolve(&args.path)?;
    not_root(&path, "deleted")?;
    let meta = fs::symlink_metadata(&path.full).map_err(|e| io_error(&path, e))?;
    let kind = Kind::of(&meta);
    if kind == Kind::Dir {
        if !args.recursive {
            return Err(ToolError::invalid_arguments(format!(
                "{} is a folder: pass recursive: true to delete it and everything in it",
                path.shown()
            )));
        }
        fs::remove_dir_all(&path.full).map_err(|e| io_error(&path, e))?;
    } else {
        fs::remove_file(&path.full).map_err(|e| io_error(&path, e))?;
    }
    Ok(Deleted {
        path: path.shown(),
        kind,
        deleted: true,
    })
}
