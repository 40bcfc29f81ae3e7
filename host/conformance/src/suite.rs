//! The suite: its settings and the order the checks run in.

use std::path::Path;
use std::time::Instant;

use toolhost_core::limits::LimitsOverride;
use toolhost_runtime::capabilities::Grants;
use toolhost_runtime::{Engine, EngineConfig, LoadOptions};

use crate::checks::{CheckId, artifact, calls, capabilities, catalog, listing};
use crate::report::{CheckReport, Report};

/// How many fresh instances `list-tools` runs in for `deterministic`.
const LISTINGS: usize = 3;

/// The conformance suite, with its settings: the engine it loads components
/// into, the limits they run under (the host's defaults unless set) and the
/// grants they get (none unless set).
///
/// ```no_run
/// use toolhost_conformance::Suite;
///
/// let report = Suite::new().run("target/wasm32-wasip2/release/my_plugin.wasm");
/// assert!(report.passed(), "{}", report.to_human());
/// ```
#[derive(Debug, Clone, Default)]
pub struct Suite {
    engine: Option<Engine>,
    limits: LimitsOverride,
    grants: Grants,
}

impl Suite {
    /// The suite with the host's default limits, no grants, and an engine of
    /// its own (with no compile cache).
    pub fn new() -> Self {
        Suite::default()
    }

    /// Loads components into `engine` (to share its compile cache).
    pub fn engine(mut self, engine: Engine) -> Self {
        self.engine = Some(engine);
        self
    }

    /// Runs components under `limits` (on top of the engine's defaults), as
    /// a plugin's `[plugins.limits]` would.
    pub fn limits(mut self, limits: LimitsOverride) -> Self {
        self.limits = limits;
        self
    }

    /// Grants components `grants`, as a plugin's `[plugins.grants]` would.
    /// The `no-grants` check still runs without them. Grant only scratch
    /// directories: the suite calls every tool, writing ones included.
    pub fn grants(mut self, grants: Grants) -> Self {
        self.grants = grants;
        self
    }

    /// Runs every check on the component in `path` and returns the report.
    /// Blocks; runs on a thread of its own, so it may be called from
    /// `#[test]`, `#[tokio::test]` or plain code alike. Never panics on a
    /// bad component: everything wrong is in the report.
    pub fn run(&self, path: impl AsRef<Path>) -> Report {
        let path = path.as_ref();
        std::thread::scope(|scope| {
            let worker = scope.spawn(|| {
                let runtime = tokio::runtime::Builder::new_multi_thread()
                    .worker_threads(2)
                    .enable_all()
                    .build();
                match runtime {
                    Ok(runtime) => runtime.block_on(self.run_async(path)),
                    Err(e) => Report::unrunnable(path, &format!("cannot start an async runtime: {e}")),
                }
            });
            match worker.join() {
                Ok(report) => report,
                Err(panic) => std::panic::resume_unwind(panic),
            }
        })
    }

    /// As [`Suite::run`], for async code (needs a tokio runtime with time
    /// enabled).
    pub async fn run_async(&self, path: &Path) -> Report {
        let started = Instant::now();
        let file = path.display().to_string();
        let engine = match &self.engine {
            Some(engine) => engine.clone(),
            None => match Engine::new(EngineConfig::default()) {
                Ok(engine) => engine,
                Err(e) => return Report::unrunnable(path, &format!("cannot create the engine: {e}")),
            },
        };
        let bytes =
            toolhost_runtime::component::read_component_file(path, engine.config().max_component_bytes).await;
        let hash = bytes
            .as_ref()
            .ok()
            .map(|b| toolhost_core::identity::ComponentHash::of(b).to_string());
        let mut checks = Vec::with_capacity(CheckId::ALL.len());
        let mut timed = |report: CheckReport, since: Instant| checks.push(report.took(since.elapsed()));

        let t = Instant::now();
        let (report, artifact) = artifact::component(&bytes);
        timed(report, t);
        let t = Instant::now();
        let (report, world) = artifact::world(artifact.as_ref());
        timed(report, t);
        let t = Instant::now();
        timed(artifact::imports(artifact.as_ref(), world), t);
        // `capabilities` is reported before `loads`, but a 0.2.0
        // component's `declare` answer comes with the listings.
        let bytes = bytes.unwrap_or_default();
        let t = Instant::now();
        let loaded = if artifact.is_some() {
            listing::loads(
                &engine,
                bytes.clone(),
                self.options(self.grants.clone()),
                &self.setting(),
                LISTINGS,
            )
            .await
        } else {
            listing::Loaded {
                report: CheckReport::skipped(CheckId::Loads, "the file is not a readable component"),
                listings: Vec::new(),
                component: None,
            }
        };
        let loading = t.elapsed();
        let t = Instant::now();
        let (report, declared) = capabilities::check(&bytes, artifact.as_ref(), loaded.declare_answer());
        timed(report, t);
        timed(
            loaded.report.clone(),
            Instant::now().checked_sub(loading).unwrap_or_else(Instant::now),
        );
        let tools = loaded.tools();
        let tool_names = tools
            .map(|t| t.iter().map(|t| t.name.clone()).collect())
            .unwrap_or_default();
        let t = Instant::now();
        timed(listing::deterministic(&loaded.listings), t);
        let t = Instant::now();
        timed(listing::names(tools), t);
        let t = Instant::now();
        timed(listing::descriptions(tools), t);
        let t = Instant::now();
        timed(listing::schemas(tools), t);

        let t = Instant::now();
        let exercised = match &loaded.component {
            Some(component) => Some(calls::exercise(component).await),
            None => None,
        };
        let not_loaded = "the host does not load the component (see `loads`)";
        let (arguments, results) = match (&loaded.component, &exercised) {
            (Some(component), Some(exercised)) => (
                calls::arguments(component, exercised),
                calls::results(component, exercised),
            ),
            _ => (
                CheckReport::skipped(CheckId::Arguments, not_loaded),
                CheckReport::skipped(CheckId::Results, not_loaded),
            ),
        };
        timed(arguments, t);
        timed(results, Instant::now());
        let t = Instant::now();
        timed(catalog::catalog(loaded.component.as_deref()).await, t);
        let t = Instant::now();
        let no_grants = match (&declared, &exercised) {
            (None, _) => CheckReport::skipped(
                CheckId::NoGrants,
                "its declaration could not be read (see `capabilities`)",
            ),
            (Some(d), _) if d.is_empty() => CheckReport::skipped(
                CheckId::NoGrants,
                "it declares no capabilities, so none of its calls depends on a grant",
            ),
            (Some(_), Some(exercised)) if self.grants == Grants::default() => {
                calls::no_grants_from(exercised)
            }
            (Some(_), _) if self.grants != Grants::default() => {
                let ungranted = engine.load(bytes.clone(), self.options(Grants::default())).await;
                calls::no_grants_loaded(ungranted).await
            }
            _ => CheckReport::skipped(CheckId::NoGrants, not_loaded),
        };
        timed(no_grants, t);
        let t = Instant::now();
        timed(calls::stdout(&loaded.listings, exercised.as_ref()), t);

        Report {
            file,
            hash,
            world: world.map(|w| w.world_name().to_string()),
            tools: tool_names,
            checks,
            elapsed_ms: u64::try_from(started.elapsed().as_millis()).unwrap_or(u64::MAX),
        }
    }

    fn options(&self, grants: Grants) -> LoadOptions {
        LoadOptions {
            expected_hash: None,
            limits: self.limits,
            grants,
            ..LoadOptions::default()
        }
    }

    /// The limits and grants, for `loads`' "tried".
    fn setting(&self) -> String {
        let limits = if self.limits == LimitsOverride::default() {
            "under the default limits".to_string()
        } else {
            format!("under the default limits with {}", describe_limits(&self.limits))
        };
        let grants = if self.grants == Grants::default() {
            "no grants".to_string()
        } else {
            let g = &self.grants;
            let mut parts: Vec<String> = g.dirs.iter().map(|d| format!("dir {}", d.guest)).collect();
            parts.extend(g.env.iter().map(|e| format!("env {e}")));
            parts.extend(g.tools.iter().map(|t| format!("tool {t}")));
            if !g.http.is_empty() {
                parts.push(format!("{} http grants", g.http.len()));
            }
            if !g.secrets.is_empty() {
                parts.push(format!("{} secrets", g.secrets.len()));
            }
            format!("grants: {}", parts.join(", "))
        };
        format!("{limits} and {grants}")
    }
}

/// The overrides that are set, as `fuel = 1000, timeout_ms = 500`.
fn describe_limits(limits: &LimitsOverride) -> String {
    match serde_json::to_value(limits) {
        Ok(serde_json::Value::Object(map)) => map
            .iter()
            .filter(|(_, v)| !v.is_null())
            .map(|(k, v)| format!("{k} = {v}"))
            .collect::<Vec<_>>()
            .join(", "),
        _ => format!("{limits:?}"),
    }
}

impl Report {
    /// The report of a run that could not start: every check skipped but
    /// `component`, failed with `why`.
    fn unrunnable(path: &Path, why: &str) -> Report {
        let mut checks = vec![CheckReport::ran(
            CheckId::Component,
            "start the suite",
            vec![crate::report::Problem::component(
                why,
                "fix the environment the suite runs in",
            )],
        )];
        checks.extend(
            CheckId::ALL[1..]
                .iter()
                .map(|id| CheckReport::skipped(*id, "the suite could not start")),
        );
        Report {
            file: path.display().to_string(),
            hash: None,
            world: None,
            tools: Vec::new(),
            checks,
            elapsed_ms: 0,
        }
    }
}
