//! # The `memory` plugin
//!
//! Persistent memories for an agent: notes with a title, content and tags,
//! kept as one JSON file per record in a granted directory, which the guest
//! sees at `/memory`. Each call runs in a fresh instance, so every bit of
//! state lives in those files.
//!
//! | module | tools |
//! |---|---|
//! | [`records`] | `memory_create`, `memory_update`, `memory_get`, `memory_delete` |
//! | [`search`] | `memory_search`, `memory_list_titles` |
//! | [`store`] | the files: layout, ids, atomic writes |
//!
//! Writes are atomic (temp file, `fsync`, then link or rename into place),
//! so a host stopped mid-write loses at most the record being written, never
//! an existing one, and never leaves a torn record. Ids come from the clock
//! and WASI randomness, and a new record is linked into place only if its id
//! is free, so concurrent calls in separate instances cannot collide.
//!
//! ## Capabilities
//!
//! Declares the directory `/memory`, which must be granted read-write:
//!
//! ```toml
//! [plugins.grants]
//! dirs = [{ host = "/var/lib/toolhost/memory", guest = "/memory", mode = "rw" }]
//! ```
//!
//! Without a grant the plugin still loads; its tools fail, naming the missing
//! grant.

mod records;
mod search;
mod store;

use records::{memory_create, memory_delete, memory_get, memory_update};
use search::{memory_list_titles, memory_search};

toolhost_sdk::capabilities! {
    dirs: ["/memory"]
}

toolhost_sdk::plugin!(
    memory_create,
    memory_update(idempotent),
    memory_get(read_only, idempotent),
    memory_search(read_only, idempotent),
    memory_delete(destructive),
    memory_list_titles(read_only, idempotent),
);
