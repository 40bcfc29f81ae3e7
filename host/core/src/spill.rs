//! # Output spill
//!
//! A result larger than the spill threshold would crowd the model's
//! context. It is saved instead, as a file in the managed storage folder, and
//! replaced by a short preview plus the file's path, which the `files` tools
//! (`read_file`, `code_read`, `grep`) can read back:
//!
//! ```json
//! {"spilled": true, "path": ".toolhost/spill/1733150000000-42-grep.json",
//!  "bytes": 183422, "preview": "…first 2 KiB…",
//!  "note": "The full result (183422 bytes) was saved to .toolhost/spill/…; read it with read_file or code_read, or search it with grep."}
//! ```
//!
//! Errors are never spilled, and tools can be excluded by name. Files are
//! written atomically (temporary file, then rename) and the folder keeps the
//! most recent [`SpillConfig::keep`] files.

use std::path::PathBuf;

use serde::{Deserialize, Serialize};

use crate::error::{Error, Result};
use crate::text::truncate_utf8;

/// Where and when results are spilled (`[spill]` in the config).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields, default)]
pub struct SpillConfig {
    /// Results longer than this many bytes are spilled (default 32 KiB).
    pub threshold_bytes: usize,
    /// How much of a spilled result the preview keeps (default 2 KiB).
    pub preview_bytes: usize,
    /// The folder spilled results go to, on the host.
    pub dir: PathBuf,
    /// How the folder is named to the model: the path the `files` tools
    /// resolve it by (default: the same as `dir`).
    pub shown_as: Option<String>,
    /// Tools whose results are never spilled.
    pub exclude: Vec<String>,
    /// How many spilled files are kept (oldest removed first; default 200).
    pub keep: usize,
}

impl Default for SpillConfig {
    fn default() -> Self {
        SpillConfig {
            threshold_bytes: 32 << 10,
            preview_bytes: 2 << 10,
            dir: PathBuf::from(".toolhost/spill"),
            shown_as: None,
            exclude: Vec::new(),
            keep: 200,
        }
    }
}

impl SpillConfig {
    /// If `content` (a successful result of `tool`, call `call_id`) is over
    /// the threshold and the tool is not excluded, saves it and returns the
    /// replacement result; otherwise `None`.
    ///
    /// # Errors
    ///
    /// `io` when the file cannot be written (the caller should then return
    /// the result unspilled rather than lose it).
    pub fn spill(&self, tool: &str, call_id: u64, content: &str) -> Result<Option<String>> {
        if content.len() <= self.threshold_bytes || self.exclude.iter().any(|t| t == tool) {
            return Ok(None);
        }
        std::fs::create_dir_all(&self.dir).map_err(|e| {
            Error::io(
                format!("cannot create the spill folder {}", self.dir.display()),
                e,
            )
        })?;
        let millis = std::time::SystemTime::now()
            .duration_since(std::time::UNIX_EPOCH)
            .map(|d| d.as_millis())
            .unwrap_or(0);
        let safe_tool: String = tool
            .chars()
            .map(|c| {
                if c.is_ascii_alphanumeric() || c == '-' || c == '_' {
                    c
                } else {
                    '_'
                }
            })
            .collect();
        let name = format!("{millis}-{call_id}-{safe_tool}.json");
        let path = self.dir.join(&name);
        let tmp = self.dir.join(format!(".{name}.tmp"));
        let write = || -> std::io::Result<()> {
            std::fs::write(&tmp, content)?;
            std::fs::rename(&tmp, &path)
        };
        write().map_err(|e| {
            let _ = std::fs::remove_file(&tmp);
            Error::io(format!("cannot write {}", path.display()), e)
        })?;
        self.prune();
        let shown = match &self.shown_as {
            Some(prefix) => format!("{}/{name}", prefix.trim_end_matches('/')),
            None => path.display().to_string(),
        };
        let mut preview = content.to_string();
        truncate_utf8(&mut preview, self.preview_bytes);
        let replacement = serde_json::json!({
            "spilled": true,
            "path": shown,
            "bytes": content.len(),
            "preview": preview,
            "note": format!(
                "The full result ({} bytes) was saved to {shown}; read it with read_file or code_read, or search it with grep.",
                content.len()
            ),
        });
        Ok(Some(replacement.to_string()))
    }

    /// Removes the oldest spilled files beyond `keep`.
    fn prune(&self) {
        let Ok(entries) = std::fs::read_dir(&self.dir) else {
            return;
        };
        let mut files: Vec<(std::time::SystemTime, PathBuf)> = entries
            .filter_map(|e| e.ok())
            .filter(|e| e.file_name().to_string_lossy().ends_with(".json"))
            .filter_map(|e| Some((e.metadata().ok()?.modified().ok()?, e.path())))
            .collect();
        if files.len() <= self.keep {
            return;
        }
        files.sort();
        let excess = files.len() - self.keep;
        for (_, path) in files.into_iter().take(excess) {
            let _ = std::fs::remove_file(path);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn config(dir: &std::path::Path) -> SpillConfig {
        SpillConfig {
            threshold_bytes: 100,
            preview_bytes: 10,
            dir: dir.join("spill"),
            shown_as: Some(".toolhost/spill".into()),
            exclude: vec!["read_file".into()],
            keep: 3,
        }
    }

    #[test]
    fn large_results_are_saved_and_replaced_by_a_preview() {
        let tmp = tempfile::tempdir().unwrap();
        let cfg = config(tmp.path());
        let big = format!("\"{}\"", "é".repeat(200));
        let out: serde_json::Value =
            serde_json::from_str(&cfg.spill("grep", 7, &big).unwrap().unwrap()).unwrap();
        assert_eq!(out["spilled"], true);
        assert_eq!(out["bytes"], big.len());
        let shown = out["path"].as_str().unwrap();
        assert!(
            shown.starts_with(".toolhost/spill/") && shown.ends_with("-7-grep.json"),
            "{shown}"
        );
        let file = tmp.path().join("spill").join(shown.rsplit('/').next().unwrap());
        assert_eq!(std::fs::read_to_string(file).unwrap(), big);
        assert!(out["preview"].as_str().unwrap().len() <= 10 + '…'.len_utf8());
    }

    #[test]
    fn small_results_and_excluded_tools_are_left_alone() {
        let tmp = tempfile::tempdir().unwrap();
        let cfg = config(tmp.path());
        assert_eq!(cfg.spill("grep", 1, "\"small\"").unwrap(), None);
        assert_eq!(cfg.spill("read_file", 1, &"x".repeat(1000)).unwrap(), None);
    }

    #[test]
    fn only_the_newest_files_are_kept() {
        let tmp = tempfile::tempdir().unwrap();
        let cfg = config(tmp.path());
        for i in 0..6 {
            cfg.spill("grep", i, &"y".repeat(500)).unwrap().unwrap();
        }
        assert_eq!(std::fs::read_dir(tmp.path().join("spill")).unwrap().count(), 3);
    }
}
