//! The short soak (`toolhost_soak`): a mixed workload under faults, no
//! call lost.

use std::time::Duration;

use toolhost_soak::{Bounds, run};

/// The short soak the suite runs (CI too): three rounds, the first a
/// warm-up. Prints its report.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_short_soak_loses_no_call() {
    let report = run(Bounds {
        rounds: 3,
        max_time: Duration::from_secs(600),
    })
    .await;
    println!("{}", serde_json::to_string_pretty(&report).unwrap());
    assert_eq!(report.rounds, 3);
    assert!(report.calls > 300, "{report:?}");
    for fault in [
        "bridged server killed",
        "cache entry corrupted",
        "plugin file replaced",
        "client hung up mid-call",
    ] {
        assert!(
            report.faults.get(fault).copied().unwrap_or(0) > 0,
            "no {fault}: {report:?}"
        );
    }
    if let Err(problems) = report.check() {
        panic!("{problems}\n{report:#?}");
    }
}
