//! The long soak: the mixed workload of `toolhost-soak` (good calls,
//! every adversarial plugin, a bridged MCP server killed and restarted, a
//! corrupted compile cache, plugin files replaced under the host, clients
//! hanging up mid-call) for minutes, bounded in rounds and in time.
//!
//! ```text
//! cargo bench -p toolhost --bench soak                        # 5 minutes
//! SOAK_SECONDS=1800 SOAK_ROUNDS=100000 cargo bench -p toolhost --bench soak
//! ```
//!
//! Prints the report as JSON (calls made, calls lost, errors by code,
//! faults injected, resident memory and open file descriptors after the
//! first round and at the end) and exits 1 if a call was lost, an answer
//! had a code its action does not allow, or memory or descriptors grew
//! past their bounds.

mod common;

use toolhost_soak as soak;

use std::time::Duration;

fn main() {
    // `cargo bench` passes `--bench`; `cargo test --benches` too: run only
    // for a real benchmark run.
    if !std::env::args().any(|a| a == "--bench") {
        return;
    }
    let bounds = soak::Bounds {
        rounds: common::env_or::<u64>("SOAK_ROUNDS", 100_000) as usize,
        max_time: Duration::from_secs(common::env_or::<u64>("SOAK_SECONDS", 300)),
    };
    let rt = tokio::runtime::Builder::new_multi_thread()
        .enable_all()
        .build()
        .expect("a runtime");
    let report = rt.block_on(soak::run(bounds));
    println!("{}", serde_json::to_string_pretty(&report).expect("JSON"));
    match report.check() {
        Ok(()) => println!(
            "soak: {} rounds, {} calls in {:.0} s, none lost; resident memory {} -> {} MiB (bound +{} MiB; over the second half +{} MiB at most), open fds {} -> {} (bound +{})",
            report.rounds,
            report.calls,
            report.seconds,
            report.rss_start >> 20,
            report.rss_end >> 20,
            report.rss_bound >> 20,
            soak::RSS_TREND_BOUND >> 20,
            report.fds_start,
            report.fds_end,
            soak::FD_GROWTH_BOUND
        ),
        Err(problems) => {
            eprintln!("soak failed: {problems}");
            std::process::exit(1);
        }
    }
}
