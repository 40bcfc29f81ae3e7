//! # Bindings of the released WIT worlds
//!
//! One module per released version of the `toolhost:plugin` world, generated
//! by wasmtime's `bindgen!` from `wit/<version>/` (the model is Zed's
//! extension host):
//!
//! | version | module | what it holds |
//! |---|---|---|
//! | `0.1.0` | [`v0_1_0`] | frozen bindings; its host functions adapt into 0.3.0's |
//! | `0.2.0` | [`v0_2_0`] | frozen bindings; its host functions adapt into 0.3.0's |
//! | `0.3.0`, `0.3.1` | [`v0_3`] (= [`latest`]), generated from `wit/0.3.1` | the host functions' logic |
//!
//! Released versions are frozen. Only the newest holds logic: an older
//! version's imports call the newest's implementation and convert the
//! answer, and its exports' results are converted into the newest's types
//! by [`Plugin`], so the rest of the runtime sees one world.
//!
//! A patch release only adds (0.3.1 adds functions and types to `client`),
//! so one binding serves the whole 0.3 line: wasmtime matches names
//! semver-compatibly, both ways. The linker defines the `@0.3.1` interfaces,
//! and a 0.3.0 component's `toolhost:plugin/client@0.3.0` import is satisfied
//! by them (it uses fewer functions; the types are structurally equal); its
//! `toolhost:plugin/tool@0.3.0` export is found under the `@0.3.1` name the
//! bindings look for. The frozen 0.3.0 components in `tests/data/frozen`
//! hold that to account.
//!
//! A component is of the version whose `toolhost:plugin/tool` interface it
//! exports ([`WorldVersion::from_export`]); a component of a version this host
//! does not serve (a newer one, or a patch release it does not know) is
//! refused at load, naming the versions served.

pub mod v0_1_0;
pub mod v0_2_0;
pub mod v0_3;

/// The newest world version's bindings, whose types the runtime uses.
pub use v0_3 as latest;

use wasmtime::Store;
use wasmtime::component::{ComponentExportIndex, InstancePre, TypedFunc};

use crate::sandbox::SandboxState;

/// The `toolhost:plugin` world versions this host serves.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash)]
#[non_exhaustive]
pub enum WorldVersion {
    /// `toolhost:plugin/plugin@0.1.0`.
    V0_1_0,
    /// `toolhost:plugin/plugin@0.2.0`: capability declaration, structured
    /// output with text, output schemas, progress, concurrent nested calls.
    V0_2_0,
    /// `toolhost:plugin@0.3.0` (`plugin` and `server` worlds): results as
    /// MCP content, MCP log levels, elicitation and sampling, prompts and
    /// resources, tool titles.
    V0_3_0,
    /// `toolhost:plugin@0.3.1`: 0.3.0 and the client's roots, several
    /// questions in one round, what the client can be asked.
    V0_3_1,
}

impl WorldVersion {
    /// Every served version, newest last.
    pub const ALL: &'static [WorldVersion] = &[
        WorldVersion::V0_1_0,
        WorldVersion::V0_2_0,
        WorldVersion::V0_3_0,
        WorldVersion::V0_3_1,
    ];

    /// The newest served version (what the SDK targets).
    pub const LATEST: WorldVersion = WorldVersion::V0_3_1;

    /// The version number, e.g. `0.1.0`.
    pub fn version(self) -> &'static str {
        match self {
            WorldVersion::V0_1_0 => "0.1.0",
            WorldVersion::V0_2_0 => "0.2.0",
            WorldVersion::V0_3_0 => "0.3.0",
            WorldVersion::V0_3_1 => "0.3.1",
        }
    }

    /// The name of the interface a component of this version exports, e.g.
    /// `toolhost:plugin/tool@0.1.0`.
    pub fn tool_export(self) -> &'static str {
        match self {
            WorldVersion::V0_1_0 => "toolhost:plugin/tool@0.1.0",
            WorldVersion::V0_2_0 => "toolhost:plugin/tool@0.2.0",
            WorldVersion::V0_3_0 => "toolhost:plugin/tool@0.3.0",
            WorldVersion::V0_3_1 => "toolhost:plugin/tool@0.3.1",
        }
    }

    /// The full name of the version's tools-only world, e.g.
    /// `toolhost:plugin/plugin@0.1.0`.
    pub fn world_name(self) -> &'static str {
        match self {
            WorldVersion::V0_1_0 => "toolhost:plugin/plugin@0.1.0",
            WorldVersion::V0_2_0 => "toolhost:plugin/plugin@0.2.0",
            WorldVersion::V0_3_0 => "toolhost:plugin/plugin@0.3.0",
            WorldVersion::V0_3_1 => "toolhost:plugin/plugin@0.3.1",
        }
    }

    /// The `toolhost:plugin` interfaces this version's world imports, by
    /// name without the package and version (`host`, `tools`, ...).
    pub fn imports(self) -> &'static [&'static str] {
        match self {
            WorldVersion::V0_1_0 => &["host", "tools", "types"],
            WorldVersion::V0_2_0 => &["host", "progress", "tools", "types"],
            WorldVersion::V0_3_0 | WorldVersion::V0_3_1 => &["client", "host", "progress", "tools", "types"],
        }
    }

    /// The version whose tool interface is exported under `name`, if any
    /// (the exact name: `toolhost:plugin/tool@0.1.1` is no served version).
    pub fn from_export(name: &str) -> Option<WorldVersion> {
        WorldVersion::ALL
            .iter()
            .copied()
            .find(|v| v.tool_export() == name)
    }

    /// Every served version's number, for messages: `0.1.0, 0.2.0, 0.3.0,
    /// 0.3.1`.
    pub fn served() -> String {
        WorldVersion::ALL
            .iter()
            .map(|v| v.version())
            .collect::<Vec<_>>()
            .join(", ")
    }
}

impl std::fmt::Display for WorldVersion {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.world_name())
    }
}

/// A component linked and type-checked against its world version, ready to
/// instantiate.
#[derive(Clone)]
pub(crate) struct PluginPre {
    bindings: Bindings,
    call_tool: CallTool,
}

/// The generated bindings of the component's version.
#[derive(Clone)]
enum Bindings {
    V0_1_0(v0_1_0::PluginPre<SandboxState>),
    V0_2_0(v0_2_0::PluginPre<SandboxState>),
    /// 0.3.0 and 0.3.1 alike (see the module documentation).
    V0_3(v0_3::Exports),
}

/// A component's `call-tool`: where it is among the component's exports
/// (found once, at load) and how to call it in a fresh instance.
///
/// The generated bindings' instantiation type-checks every export of the
/// world (`list-tools`, `declare`, ...) on each instance, which a call of
/// `call-tool` does not need: this looks up and type-checks `call-tool`
/// alone (most of the instructions the bindings spend on a `greet` call:
/// `BENCHMARKS.md` has the callgrind count). The bare floor
/// ([`crate::floor`]) calls the same way.
#[derive(Clone, Copy)]
pub(crate) struct CallTool {
    version: WorldVersion,
    index: ComponentExportIndex,
}

impl CallTool {
    /// `call-tool` of a `version` component.
    pub(crate) fn find(
        component: &wasmtime::component::Component,
        version: WorldVersion,
    ) -> wasmtime::Result<Self> {
        let index = component
            .get_export_index(None, version.tool_export())
            .and_then(|tool| component.get_export_index(Some(&tool), "call-tool"))
            .ok_or_else(|| wasmtime::format_err!("no `call-tool` in `{}`", version.tool_export()))?;
        Ok(CallTool { version, index })
    }

    /// Calls `call-tool` in a fresh instance of `pre` in `store`, answering
    /// in the newest version's types.
    pub(crate) async fn call<T: Send>(
        self,
        pre: &InstancePre<T>,
        store: &mut Store<T>,
        name: &str,
        arguments: &str,
    ) -> wasmtime::Result<Result<latest::ToolOutput, latest::ToolError>> {
        let instance = pre.instantiate_async(&mut *store).await?;
        let func = instance
            .get_func(&mut *store, self.index)
            .ok_or_else(|| wasmtime::format_err!("the instance has no `call-tool`"))?;
        Ok(match self.version {
            WorldVersion::V0_1_0 => {
                type Call<'a> = TypedFunc<
                    (&'a str, &'a str),
                    (Result<String, v0_1_0::toolhost::plugin::types::ToolError>,),
                >;
                let call: Call<'_> = func.typed(&*store)?;
                let (result,) = call.call_async(&mut *store, (name, arguments)).await?;
                result
                    .map(|json| latest::ToolOutput {
                        structured: Some(json),
                        content: Vec::new(),
                    })
                    .map_err(Into::into)
            }
            WorldVersion::V0_2_0 => {
                type Call<'a> =
                    TypedFunc<(&'a str, &'a str), (Result<v0_2_0::ToolOutput, v0_2_0::ToolError>,)>;
                let call: Call<'_> = func.typed(&*store)?;
                let (result,) = call.call_async(&mut *store, (name, arguments)).await?;
                result.map(Into::into).map_err(Into::into)
            }
            WorldVersion::V0_3_0 | WorldVersion::V0_3_1 => {
                type Call<'a> =
                    TypedFunc<(&'a str, &'a str), (Result<latest::ToolOutput, latest::ToolError>,)>;
                let call: Call<'_> = func.typed(&*store)?;
                call.call_async(&mut *store, (name, arguments)).await?.0
            }
        })
    }
}

impl PluginPre {
    /// Type-checks `pre`'s exports against `version`'s world.
    pub(crate) fn new(version: WorldVersion, pre: InstancePre<SandboxState>) -> wasmtime::Result<Self> {
        // Looked up first, reported after: a component without `call-tool`
        // gets the generated bindings' own error, as before `CallTool`.
        let call_tool = CallTool::find(pre.component(), version);
        let bindings = match version {
            WorldVersion::V0_1_0 => Bindings::V0_1_0(v0_1_0::PluginPre::new(pre)?),
            WorldVersion::V0_2_0 => Bindings::V0_2_0(v0_2_0::PluginPre::new(pre)?),
            WorldVersion::V0_3_0 | WorldVersion::V0_3_1 => Bindings::V0_3(v0_3::Exports::new(pre)?),
        };
        Ok(PluginPre {
            bindings,
            call_tool: call_tool?,
        })
    }

    /// The linked component.
    pub(crate) fn instance_pre(&self) -> &InstancePre<SandboxState> {
        match &self.bindings {
            Bindings::V0_1_0(pre) => pre.instance_pre(),
            Bindings::V0_2_0(pre) => pre.instance_pre(),
            Bindings::V0_3(exports) => exports.instance_pre(),
        }
    }

    /// A fresh instance in `store`, every export type-checked.
    pub(crate) async fn instantiate_async(
        &self,
        store: &mut Store<SandboxState>,
    ) -> wasmtime::Result<Plugin> {
        Ok(match &self.bindings {
            Bindings::V0_1_0(pre) => Plugin::V0_1_0(pre.instantiate_async(store).await?),
            Bindings::V0_2_0(pre) => Plugin::V0_2_0(pre.instantiate_async(store).await?),
            Bindings::V0_3(exports) => Plugin::V0_3(exports.instantiate_async(store).await?),
        })
    }

    /// `call-tool` in a fresh instance in `store` (see [`CallTool`]).
    pub(crate) async fn call_tool(
        &self,
        store: &mut Store<SandboxState>,
        name: &str,
        arguments: &str,
    ) -> wasmtime::Result<Result<latest::ToolOutput, latest::ToolError>> {
        self.call_tool
            .call(self.instance_pre(), store, name, arguments)
            .await
    }
}

/// An instance of a plugin of any served version, whose exports answer in
/// the newest version's types.
pub(crate) enum Plugin {
    V0_1_0(v0_1_0::Plugin),
    V0_2_0(v0_2_0::Plugin),
    V0_3(v0_3::Instance),
}

impl Plugin {
    /// `list-tools`.
    pub(crate) async fn list_tools(
        &self,
        store: &mut Store<SandboxState>,
    ) -> wasmtime::Result<Vec<latest::ToolSpec>> {
        Ok(match self {
            Plugin::V0_1_0(p) => {
                let specs = p.toolhost_plugin_tool().call_list_tools(store).await?;
                specs.into_iter().map(Into::into).collect()
            }
            Plugin::V0_2_0(p) => {
                let specs = p.toolhost_plugin_tool().call_list_tools(store).await?;
                specs.into_iter().map(Into::into).collect()
            }
            Plugin::V0_3(p) => p.tool.call_list_tools(store).await?,
        })
    }

    /// `declare`: `None` for a version that has none (0.1.0 declares in its
    /// custom section only).
    pub(crate) async fn declare(
        &self,
        store: &mut Store<SandboxState>,
    ) -> wasmtime::Result<Option<latest::Capabilities>> {
        Ok(match self {
            Plugin::V0_1_0(_) => None,
            Plugin::V0_2_0(p) => Some(p.toolhost_plugin_tool().call_declare(store).await?.into()),
            Plugin::V0_3(p) => Some(p.tool.call_declare(store).await?),
        })
    }

    /// Its prompts, resources and templates: none before 0.3.0, nor for a
    /// component that does not export them.
    pub(crate) async fn list_catalog(
        &self,
        store: &mut Store<SandboxState>,
    ) -> wasmtime::Result<latest::CatalogListing> {
        match self {
            Plugin::V0_1_0(_) | Plugin::V0_2_0(_) => Ok(latest::CatalogListing::default()),
            Plugin::V0_3(p) => p.list_catalog(store).await,
        }
    }

    /// Its `prompts` export, or the error of asking a component without one.
    fn prompts(&self) -> wasmtime::Result<&v0_3::exports::toolhost::plugin::prompts::Guest> {
        match self {
            Plugin::V0_3(v0_3::Instance { prompts: Some(p), .. }) => Ok(p),
            _ => Err(wasmtime::format_err!("the component exports no prompts")),
        }
    }

    /// Its `resources` export, or the error of asking a component without
    /// one.
    fn resources(&self) -> wasmtime::Result<&v0_3::exports::toolhost::plugin::resources::Guest> {
        match self {
            Plugin::V0_3(v0_3::Instance {
                resources: Some(r), ..
            }) => Ok(r),
            _ => Err(wasmtime::format_err!("the component exports no resources")),
        }
    }

    /// `prompts.get-prompt`.
    pub(crate) async fn get_prompt(
        &self,
        store: &mut Store<SandboxState>,
        name: &str,
        arguments: &[(String, String)],
    ) -> wasmtime::Result<Result<latest::PromptResult, latest::ToolError>> {
        self.prompts()?.call_get_prompt(store, name, arguments).await
    }

    /// `prompts.complete`.
    pub(crate) async fn complete_prompt(
        &self,
        store: &mut Store<SandboxState>,
        name: &str,
        argument: &str,
        value: &str,
        context: &[(String, String)],
    ) -> wasmtime::Result<Result<latest::Completion, latest::ToolError>> {
        self.prompts()?
            .call_complete(store, name, argument, value, context)
            .await
    }

    /// `resources.read-resource`.
    pub(crate) async fn read_resource(
        &self,
        store: &mut Store<SandboxState>,
        uri: &str,
    ) -> wasmtime::Result<Result<Vec<latest::ResourceContents>, latest::ReadError>> {
        self.resources()?.call_read_resource(store, uri).await
    }

    /// `resources.complete`.
    pub(crate) async fn complete_resource(
        &self,
        store: &mut Store<SandboxState>,
        template: &str,
        argument: &str,
        value: &str,
        context: &[(String, String)],
    ) -> wasmtime::Result<Result<latest::Completion, latest::ToolError>> {
        self.resources()?
            .call_complete(store, template, argument, value, context)
            .await
    }
}

/// Adds every served version's `toolhost:plugin` imports to `linker`.
pub(crate) fn add_to_linker(linker: &mut wasmtime::component::Linker<SandboxState>) -> wasmtime::Result<()> {
    use wasmtime::component::HasSelf;
    v0_1_0::Plugin::add_to_linker::<SandboxState, HasSelf<SandboxState>>(linker, |s| s)?;
    v0_2_0::Plugin::add_to_linker::<SandboxState, HasSelf<SandboxState>>(linker, |s| s)?;
    // The 0.3.1 names, which 0.3.0 components' imports match by semver.
    v0_3::Server::add_to_linker::<SandboxState, HasSelf<SandboxState>>(linker, |s| s)?;
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn versions_are_found_by_their_exact_export() {
        assert_eq!(
            WorldVersion::from_export("toolhost:plugin/tool@0.1.0"),
            Some(WorldVersion::V0_1_0)
        );
        assert_eq!(
            WorldVersion::from_export("toolhost:plugin/tool@0.2.0"),
            Some(WorldVersion::V0_2_0)
        );
        assert_eq!(
            WorldVersion::from_export("toolhost:plugin/tool@0.3.0"),
            Some(WorldVersion::V0_3_0)
        );
        assert_eq!(
            WorldVersion::from_export("toolhost:plugin/tool@0.3.1"),
            Some(WorldVersion::V0_3_1)
        );
        for unknown in [
            "toolhost:plugin/tool@0.1.1",
            "toolhost:plugin/tool@0.3.2",
            "toolhost:plugin/tool@0.4.0",
            "toolhost:plugin/tool",
        ] {
            assert_eq!(WorldVersion::from_export(unknown), None, "{unknown}");
        }
        assert_eq!(WorldVersion::served(), "0.1.0, 0.2.0, 0.3.0, 0.3.1");
        assert_eq!(*WorldVersion::ALL.last().unwrap(), WorldVersion::LATEST);
    }
}
