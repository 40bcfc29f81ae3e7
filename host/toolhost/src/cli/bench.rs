//! `toolhost bench FILE TOOL JSON [--calls N] [--concurrency 1,8,64] [--json]`:
//! a tool measured the way the host runs it, beside the bare-wasmtime
//! floor (see `toolhost::internal::bench`).

use super::{outln, outp};
use std::io::IsTerminal;
use std::path::PathBuf;
use std::process::ExitCode;

use clap::Args;
use toolhost::internal::bench::{BenchOptions, BenchReport, Beside, CallStats, Progress};
use toolhost::{EngineConfig, Error};

use super::args::ComponentArgs;

#[derive(Debug, Args)]
pub(crate) struct BenchArgs {
    /// The component file.
    file: PathBuf,
    /// The tool to call.
    tool: String,
    /// The arguments, a JSON object.
    #[arg(default_value = "{}")]
    json_args: String,
    /// Calls per concurrency level, on each side (toolhost and the floor).
    #[arg(long, default_value_t = 2000)]
    calls: usize,
    /// Concurrency levels: calls in flight at once, comma-separated.
    #[arg(long, value_delimiter = ',', default_value = "1,8,64")]
    concurrency: Vec<usize>,
    /// Cold loads (compiles) to time.
    #[arg(long, default_value_t = 3)]
    cold_loads: usize,
    /// Warm loads (from the compile cache) to time.
    #[arg(long, default_value_t = 20)]
    warm_loads: usize,
    /// Print the report as JSON (for machines) instead of a table.
    #[arg(long)]
    json: bool,
    #[command(flatten)]
    component: ComponentArgs,
}

pub(crate) async fn run(args: BenchArgs) -> anyhow::Result<ExitCode> {
    match bench(&args).await {
        Ok(report) => {
            if args.json {
                outln!("{}", serde_json::to_string_pretty(&report)?);
            } else {
                outp!("{}", table(&report));
            }
            Ok(ExitCode::SUCCESS)
        }
        Err(e) => Ok(super::print_error(&e)),
    }
}

async fn bench(args: &BenchArgs) -> Result<BenchReport, Error> {
    let arguments = super::args::json_object(&args.json_args)?.to_string();
    let bytes = super::read_file(&args.file)?;
    let options = BenchOptions {
        calls: args.calls,
        concurrency: args.concurrency.clone(),
        cold_loads: args.cold_loads,
        warm_loads: args.warm_loads,
        engine: EngineConfig::default(),
        load: args.component.load_options()?,
    };
    // A progress bar on a terminal; nothing otherwise (stderr stays clean
    // for scripts and logs).
    let bar = if std::io::stderr().is_terminal() {
        let bar = indicatif::ProgressBar::new(0);
        bar.set_style(
            indicatif::ProgressStyle::with_template("{msg:>14} [{bar:40}] {pos}/{len} ({eta})")
                .map_err(|e| Error::internal(e.to_string()))?
                .progress_chars("=> "),
        );
        bar
    } else {
        indicatif::ProgressBar::hidden()
    };
    let progress = |p: Progress| {
        bar.set_length(p.total);
        bar.set_position(p.done);
        bar.set_message(p.stage);
    };
    let report = toolhost::internal::bench::run(bytes, &args.tool, &arguments, &options, &progress).await;
    bar.finish_and_clear();
    report
}

/// The report as a table, each figure beside its floor.
fn table(r: &BenchReport) -> String {
    let mut out = format!(
        "toolhost bench: {} ({}, world {}), {} threads\n\n",
        r.tool, r.component, r.world, r.threads
    );
    let ratio = |b: &Beside| format!("{:.2}x", b.ratio);
    out.push_str(&format!(
        "{:<12} {:>12} {:>14} {:>8}\n",
        "load", "toolhost", "bare wasmtime", "ratio"
    ));
    for (name, b) in [("cold", &r.load.cold_ms), ("warm", &r.load.warm_ms)] {
        out.push_str(&format!(
            "{name:<12} {:>9.2} ms {:>11.2} ms {:>8}\n",
            b.toolhost,
            b.floor,
            ratio(b)
        ));
    }
    out.push_str(&format!(
        "warm load is {:.0}x faster than cold\n\n",
        r.load.warm_speedup
    ));
    out.push_str(&format!(
        "{:<12} {:>10} {:>10} {:>10} {:>7} | {:>10} {:>10} {:>10} | {:>6} {:>8}\n",
        "in flight",
        "p50 us",
        "p99 us",
        "calls/s",
        "errors",
        "floor p50",
        "floor p99",
        "calls/s",
        "p50",
        "calls/s"
    ));
    for level in &r.levels {
        let t = &level.toolhost;
        let floor = |f: fn(&CallStats) -> f64| {
            level
                .floor
                .as_ref()
                .map_or("-".to_string(), |s| format!("{:.1}", f(s)))
        };
        let times = |x: Option<f64>| x.map_or("-".to_string(), |x| format!("{x:.2}x"));
        out.push_str(&format!(
            "{:<12} {:>10.1} {:>10.1} {:>10.0} {:>7} | {:>10} {:>10} {:>10} | {:>6} {:>8}\n",
            level.concurrency,
            t.p50_us,
            t.p99_us,
            t.calls_per_sec,
            t.errors,
            floor(|s| s.p50_us),
            floor(|s| s.p99_us),
            floor(|s| s.calls_per_sec),
            times(level.p50_ratio),
            times(level.throughput_ratio),
        ));
    }
    if let Some(level) = r.levels.first() {
        let t = &level.toolhost;
        let (fuel, memory) = level.floor.as_ref().map_or(("-".into(), "-".into()), |f| {
            (f.fuel_per_call.to_string(), mib(f.peak_memory_bytes))
        });
        out.push_str(&format!(
            "\nper call: fuel {} (floor {fuel}), peak memory {} (floor {memory})\n",
            t.fuel_per_call,
            mib(t.peak_memory_bytes)
        ));
        if let Some(f) = &level.floor
            && let Some(initial) = f.initial_memory_bytes
            && f.peak_memory_bytes > initial
        {
            out.push_str(&format!(
                "calls grow their memory from {} to {}: each growth costs the host page-table work; a Rust plugin can start with heap room (sdk/docs/rust.md, --initial-heap)\n",
                mib(initial),
                mib(f.peak_memory_bytes)
            ));
        }
    }
    for level in &r.levels {
        if !level.toolhost.errors_by_code.is_empty() {
            out.push_str(&format!(
                "errors at {} in flight: {:?}\n",
                level.concurrency, level.toolhost.errors_by_code
            ));
        }
    }
    if let Some(why) = &r.floor_unavailable {
        out.push_str(&format!("no floor: {why}\n"));
    }
    out.push_str("ratios: toolhost over the floor (latency), the floor over toolhost (throughput)\n");
    out
}

fn mib(bytes: u64) -> String {
    format!("{:.2} MiB", bytes as f64 / f64::from(1 << 20))
}
