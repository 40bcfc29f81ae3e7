//! # Toolsets
//!
//! A toolset is a named bundle of tools. Three kinds exist side by side:
//!
//! - **dynamic** toolsets come from the registry: every entry names its
//!   toolset (a built-in's group, `mcp-SERVER` for an MCP server, the
//!   component's toolset for a WASM plugin);
//! - **defined** toolsets ([`ToolsetDef`]) list tools and may include other
//!   toolsets (composites); a cycle is an error naming it;
//! - **presets**: [`PRESET_CLI`] (every tool) and [`PRESET_PUBLIC`] (every
//!   tool registered public).
//!
//! Old names ending in `_tools` (`web_tools`) map to their current names
//! (`web`). A [`ToolsetSelection`] resolves by the three rules: only the
//! enabled toolsets when some are given; otherwise all toolsets minus the
//! disabled ones; otherwise all. Availability filtering comes after, in
//! [`Registry::definitions`]. An unknown name is an error listing the known
//! ones, never an empty set.
//!
//! ```
//! use serde_json::json;
//! use toolhost_core::registry::{FnTool, Registration, Registry, ToolOutput, ToolSpec};
//! use toolhost_core::toolsets::{ToolsetDef, ToolsetSelection, Toolsets};
//!
//! let tool = |n: &str, set: &str| Registration::new(FnTool::new(
//!     ToolSpec::new(n, "t", json!({"type": "object"})),
//!     |_, _| async { Ok(ToolOutput::json_text("null")) },
//! )).toolset(set);
//! let mut registry = Registry::new();
//! registry.register(tool("fetch", "http")).unwrap();
//! registry.register(tool("now", "time")).unwrap();
//! registry.register(tool("ls", "files")).unwrap();
//!
//! let mut toolsets = Toolsets::new();
//! toolsets.define("web", ToolsetDef::includes(["http", "time"])).unwrap();
//! let web = toolsets.select(&ToolsetSelection::enabled(["web"]), &registry).unwrap();
//! assert_eq!(web.into_iter().collect::<Vec<_>>(), ["fetch", "now"]);
//! let legacy = toolsets.select(&ToolsetSelection::enabled(["files_tools"]), &registry).unwrap();
//! assert!(legacy.contains("ls"));
//! assert!(toolsets.select(&ToolsetSelection::enabled(["nope"]), &registry).is_err());
//! ```
//!
//! [`Registry::definitions`]: crate::registry::Registry::definitions

use std::collections::{BTreeMap, BTreeSet};

use serde::{Deserialize, Serialize};

use crate::error::{Error, ErrorCode, Result};
use crate::registry::{CheckCache, Registry, ToolAudience};

/// The preset with every registered tool (the CLI's default).
pub const PRESET_CLI: &str = "toolhost-cli";
/// The preset with every tool registered public.
pub const PRESET_PUBLIC: &str = "toolhost-public";

/// A defined toolset: listed tools plus included toolsets.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct ToolsetDef {
    /// What the toolset is for (display).
    #[serde(default)]
    pub description: String,
    /// Tools in it, by name.
    #[serde(default)]
    pub tools: Vec<String>,
    /// Toolsets whose tools it includes.
    #[serde(default)]
    pub includes: Vec<String>,
    /// For presets: every tool a turn of this audience may use.
    #[serde(skip)]
    pub everything: Option<ToolAudience>,
}

impl ToolsetDef {
    /// A toolset of the tools `names`.
    pub fn tools<I: IntoIterator<Item = S>, S: Into<String>>(names: I) -> Self {
        ToolsetDef {
            tools: names.into_iter().map(Into::into).collect(),
            ..Default::default()
        }
    }

    /// A composite of the toolsets `names`.
    pub fn includes<I: IntoIterator<Item = S>, S: Into<String>>(names: I) -> Self {
        ToolsetDef {
            includes: names.into_iter().map(Into::into).collect(),
            ..Default::default()
        }
    }
}

/// Which toolsets a session uses.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct ToolsetSelection {
    /// When set, only these toolsets (rule 1).
    pub enabled: Option<Vec<String>>,
    /// Otherwise, all toolsets minus these (rule 2); with neither, all (rule 3).
    pub disabled: Vec<String>,
}

impl ToolsetSelection {
    /// Only the toolsets `names`.
    pub fn enabled<I: IntoIterator<Item = S>, S: Into<String>>(names: I) -> Self {
        ToolsetSelection {
            enabled: Some(names.into_iter().map(Into::into).collect()),
            disabled: Vec::new(),
        }
    }

    /// All toolsets but `names`.
    pub fn disabled<I: IntoIterator<Item = S>, S: Into<String>>(names: I) -> Self {
        ToolsetSelection {
            enabled: None,
            disabled: names.into_iter().map(Into::into).collect(),
        }
    }
}

/// The defined toolsets, presets and legacy names.
#[derive(Debug, Clone)]
pub struct Toolsets {
    defs: BTreeMap<String, ToolsetDef>,
    legacy: BTreeMap<String, String>,
}

impl Default for Toolsets {
    fn default() -> Self {
        Toolsets::new()
    }
}

impl Toolsets {
    /// The presets and the built-in legacy names, no defined toolsets.
    pub fn new() -> Self {
        let mut defs = BTreeMap::new();
        for (name, audience, description) in [
            (PRESET_CLI, ToolAudience::Trusted, "every tool (the CLI preset)"),
            (
                PRESET_PUBLIC,
                ToolAudience::Public,
                "every tool reviewed for public turns",
            ),
        ] {
            let def = ToolsetDef {
                description: description.into(),
                everything: Some(audience),
                ..Default::default()
            };
            defs.insert(name.to_string(), def);
        }
        let legacy = [
            ("terminal_tools", "terminal"),
            ("file_tools", "files"),
            ("web_tools", "web"),
        ]
        .into_iter()
        .map(|(a, b)| (a.to_string(), b.to_string()))
        .collect();
        Toolsets { defs, legacy }
    }

    /// Defines (or redefines) toolset `name`. A definition with the name of
    /// a dynamic toolset adds to it.
    ///
    /// # Errors
    ///
    /// `config` when `name` is a preset.
    pub fn define(&mut self, name: impl Into<String>, def: ToolsetDef) -> Result<()> {
        let name = name.into();
        if self.defs.get(&name).is_some_and(|d| d.everything.is_some()) {
            return Err(config(format!(
                "toolset `{name}` is a preset and cannot be redefined"
            )));
        }
        self.defs.insert(name, def);
        Ok(())
    }

    /// Maps the old toolset name `old` to `new`.
    pub fn add_legacy(&mut self, old: impl Into<String>, new: impl Into<String>) {
        self.legacy.insert(old.into(), new.into());
    }

    /// The current name for `name`: itself, its legacy mapping, or, for
    /// `X_tools`, `X` when `X` is known.
    pub fn canonical<'a>(&'a self, name: &'a str, registry: &Registry) -> &'a str {
        if self.is_known(name, registry) {
            return name;
        }
        if let Some(new) = self.legacy.get(name) {
            return new;
        }
        match name.strip_suffix("_tools") {
            Some(stem) if self.is_known(stem, registry) => stem,
            _ => name,
        }
    }

    fn is_known(&self, name: &str, registry: &Registry) -> bool {
        self.defs.contains_key(name) || registry.has_toolset(name)
    }

    fn unknown(&self, name: &str, registry: &Registry) -> Error {
        config(format!(
            "unknown toolset `{name}`; known toolsets: {}",
            self.known(registry).join(", ")
        ))
    }

    /// Every known toolset name: defined, presets and dynamic.
    pub fn known(&self, registry: &Registry) -> Vec<String> {
        let mut names: BTreeSet<String> = self.defs.keys().cloned().collect();
        names.extend(registry.toolset_names().into_iter().map(String::from));
        names.into_iter().collect()
    }

    /// The toolsets whose prompts and resources `selection` shows: by the
    /// same three rules as [`Toolsets::select`], a toolset counting as
    /// selected when it is named, included by a selected toolset, or (a
    /// preset) when the preset is selected.
    ///
    /// # Errors
    ///
    /// As [`Toolsets::select`].
    pub fn select_toolsets(
        &self,
        selection: &ToolsetSelection,
        registry: &Registry,
    ) -> Result<BTreeSet<String>> {
        let mut all: BTreeSet<String> = self.known(registry).into_iter().collect();
        let expand = |names: &[String]| -> Result<BTreeSet<String>> {
            let mut out = BTreeSet::new();
            for name in names {
                self.expand_sets(name, registry, &mut Vec::new(), &mut out)?;
            }
            Ok(out)
        };
        if let Some(enabled) = &selection.enabled {
            return expand(enabled);
        }
        let off = expand(&selection.disabled)?;
        all.retain(|n| !off.contains(n));
        Ok(all)
    }

    fn expand_sets(
        &self,
        name: &str,
        registry: &Registry,
        path: &mut Vec<String>,
        out: &mut BTreeSet<String>,
    ) -> Result<()> {
        self.walk(name, registry, path, &mut |name, def| {
            out.insert(name.to_string());
            if def.is_some_and(|d| d.everything.is_some()) {
                // Audience is filtered apart, as for tools.
                out.extend(registry.toolset_names().into_iter().map(String::from));
            }
        })
    }

    /// The tool names in toolset `name`, composites expanded.
    ///
    /// # Errors
    ///
    /// `config` for an unknown name (listing the known ones) or a cycle of
    /// includes (naming it).
    pub fn resolve(&self, name: &str, registry: &Registry) -> Result<BTreeSet<String>> {
        let mut out = BTreeSet::new();
        self.expand(name, registry, &mut Vec::new(), &mut out)?;
        Ok(out)
    }

    fn expand(
        &self,
        name: &str,
        registry: &Registry,
        path: &mut Vec<String>,
        out: &mut BTreeSet<String>,
    ) -> Result<()> {
        self.walk(name, registry, path, &mut |name, def| {
            let dynamic = registry.entries().filter(|e| e.toolset() == name);
            out.extend(dynamic.map(|e| e.name().to_string()));
            let Some(def) = def else {
                return;
            };
            if let Some(audience) = def.everything {
                let all = registry.entries().filter(|e| audience.may_use(e.audience()));
                out.extend(all.map(|e| e.name().to_string()));
            }
            out.extend(def.tools.iter().cloned());
        })
    }

    /// Visits toolset `name` (by its canonical name, with its definition if
    /// it is defined) and every toolset it includes, depth first.
    ///
    /// # Errors
    ///
    /// `config` for an unknown name (listing the known ones) or a cycle of
    /// includes (naming it).
    fn walk(
        &self,
        name: &str,
        registry: &Registry,
        path: &mut Vec<String>,
        visit: &mut dyn FnMut(&str, Option<&ToolsetDef>),
    ) -> Result<()> {
        let name = self.canonical(name, registry);
        if let Some(start) = path.iter().position(|p| p == name) {
            let mut cycle = path[start..].to_vec();
            cycle.push(name.to_string());
            return Err(config(format!("toolset include cycle: {}", cycle.join(" -> "))));
        }
        if !self.is_known(name, registry) {
            return Err(self.unknown(name, registry));
        }
        let def = self.defs.get(name);
        visit(name, def);
        let Some(def) = def else {
            return Ok(());
        };
        path.push(name.to_string());
        for include in &def.includes {
            self.walk(include, registry, path, visit)?;
        }
        path.pop();
        Ok(())
    }

    /// Checks that every defined toolset resolves (no unknown include, no
    /// cycle).
    ///
    /// # Errors
    ///
    /// As [`Toolsets::resolve`].
    pub fn validate(&self, registry: &Registry) -> Result<()> {
        self.defs
            .keys()
            .try_for_each(|name| self.resolve(name, registry).map(drop))
    }

    /// The tool names `selection` picks, by the three rules (see the module
    /// documentation). Availability is not checked here.
    ///
    /// # Errors
    ///
    /// As [`Toolsets::resolve`], for any named toolset.
    pub fn select(&self, selection: &ToolsetSelection, registry: &Registry) -> Result<BTreeSet<String>> {
        if let Some(enabled) = &selection.enabled {
            let mut out = BTreeSet::new();
            for name in enabled {
                out.extend(self.resolve(name, registry)?);
            }
            return Ok(out);
        }
        let mut all: BTreeSet<String> = registry.names().into_iter().map(String::from).collect();
        for name in self.defs.keys() {
            all.extend(self.resolve(name, registry)?);
        }
        for name in &selection.disabled {
            for tool in self.resolve(name, registry)? {
                all.remove(&tool);
            }
        }
        Ok(all)
    }

    /// Whether toolset `name` has at least one registered tool, visible to
    /// `audience`, whose availability check passes.
    ///
    /// # Errors
    ///
    /// As [`Toolsets::resolve`].
    pub fn is_toolset_available(
        &self,
        name: &str,
        registry: &Registry,
        audience: ToolAudience,
    ) -> Result<bool> {
        let tools = self.resolve(name, registry)?;
        let mut cache = CheckCache::new();
        Ok(tools
            .iter()
            .filter_map(|t| registry.get(t))
            .filter(|e| audience.may_use(e.audience()))
            .any(|e| cache.passes(e.check())))
    }
}

fn config(message: String) -> Error {
    Error::new(ErrorCode::Config, message)
}
