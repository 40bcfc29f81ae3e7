//! # The `files` plugin
//!
//! toolhost's standard file tools, working inside one granted directory, the
//! workspace, which the guest sees at `/workspace`. Every path a tool takes
//! is relative to it; absolute paths and `..` that would climb out of it are
//! refused as `invalid_arguments` (the host's capability handle blocks them,
//! and symlinks pointing out, on its side as well).
//!
//! | module | tools |
//! |---|---|
//! | [`listing`] | `list_files`, `file_info`, `glob_files` |
//! | [`reading`] | `read_file`, `code_read` |
//! | [`writing`] | `write_file`, `move_file`, `delete_file` |
//! | [`grep`] | `grep` |
//! | [`workspace`] | path checks, metadata and the bounded walk they share |
//!
//! Every result is a JSON object. Every listing and search is capped, and
//! says so (`truncated`) when the cap cut it short.
//!
//! ## Capabilities
//!
//! Declares the directory `/workspace`. Grant it in the plugin's config entry:
//!
//! ```toml
//! [plugins.grants]
//! dirs = [{ host = "/srv/agent/workspace", guest = "/workspace", mode = "rw" }]
//! ```
//!
//! With `mode = "ro"` the read-only tools work and the others fail. Without a
//! grant the plugin still loads; its tools fail, naming the missing grant.

mod grep;
mod listing;
mod reading;
mod workspace;
mod writing;

use grep::grep;
use listing::{file_info, glob_files, list_files};
use reading::{code_read, read_file};
use writing::{delete_file, move_file, write_file};

toolhost_sdk::capabilities! {
    dirs: ["/workspace"]
}

toolhost_sdk::plugin!(
    list_files(read_only, idempotent),
    file_info(read_only, idempotent),
    read_file(read_only, idempotent),
    code_read(read_only, idempotent),
    glob_files(read_only, idempotent),
    grep(read_only, idempotent),
    write_file(idempotent),
    move_file,
    delete_file(destructive),
);
