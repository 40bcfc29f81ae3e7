//! A long JSON string written and read by toolhost-json, beside serde_json
//! doing the same in the same run: the passes a large tool argument or
//! result takes on the host (the arguments written for the guest, the
//! answer written for MCP; a request read).
//!
//! ```text
//! cargo bench -p toolhost-json --bench strings
//! ```
//!
//! On x86-64 with AVX2, toolhost-json scans runs of 256 bytes or more with
//! its AVX2 build; elsewhere with the baseline's vectors (SSE2 on x86-64).

use std::hint::black_box;

use criterion::{Criterion, criterion_group, criterion_main};

/// 16 KiB of plain text, and the same with a character to escape every
/// KiB (a quote), as JSON string contents.
fn texts() -> [(&'static str, String); 2] {
    let plain = "x".repeat(16 << 10);
    let mut escaped = String::new();
    for _ in 0..16 {
        escaped.push_str(&"y".repeat(1023));
        escaped.push('"');
    }
    [("plain", plain), ("escaped", escaped)]
}

fn strings(c: &mut Criterion) {
    for (name, text) in texts() {
        let json = serde_json::to_string(&text).expect("a string serializes");
        let mut group = c.benchmark_group(format!("json/16KiB-{name}"));
        group.throughput(criterion::Throughput::Bytes(text.len() as u64));
        group.bench_function("write/toolhost-json", |b| {
            b.iter(|| toolhost_json::to_string(black_box(&text)))
        });
        group.bench_function("write/serde_json", |b| {
            b.iter(|| serde_json::to_string(black_box(&text)))
        });
        // Read as the MCP server reads a request's strings: borrowed from
        // the text when there is no escape to undo (a scan, no copy), else
        // unescaped into a new string. (Reading the plain text into a
        // `String` too would mostly time the allocator: glibc gives the
        // heap's top back and takes it again around a 16 KiB block, several
        // microseconds of page faults, depending on what ran before.)
        if name == "plain" {
            group.bench_function("read/toolhost-json", |b| {
                b.iter(|| toolhost_json::from_str::<&str>(black_box(&json)).map(str::len))
            });
            group.bench_function("read/serde_json", |b| {
                b.iter(|| serde_json::from_str::<&str>(black_box(&json)).map(str::len))
            });
        } else {
            group.bench_function("read/toolhost-json", |b| {
                b.iter(|| toolhost_json::from_str::<String>(black_box(&json)))
            });
            group.bench_function("read/serde_json", |b| {
                b.iter(|| serde_json::from_str::<String>(black_box(&json)))
            });
        }
        group.finish();
    }
}

criterion_group!(benches, strings);
criterion_main!(benches);
