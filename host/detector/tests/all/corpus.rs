//! The approval corpus: every dangerous command flagged, at most two benign
//! ones flagged.

use toolhost_detector::detect;

/// The corpus file (the integrator may point this at `shared/`).
/// A copy of `shared/approval-corpus/commands.tsv`, kept in the repository so
/// the suite runs from a clean clone.
const CORPUS: &str = concat!(
    env!("CARGO_MANIFEST_DIR"),
    "/../../tests/data/approval-corpus.tsv"
);

fn load() -> Vec<(String, String, String)> {
    let text = std::fs::read_to_string(CORPUS).expect("read corpus");
    text.lines()
        .skip(1)
        .filter(|l| !l.trim().is_empty())
        .map(|l| {
            let mut cols = l.splitn(3, '\t');
            let verdict = cols.next().unwrap_or_default().to_string();
            let category = cols.next().unwrap_or_default().to_string();
            let command = cols.next().unwrap_or_default().replace("\\n", "\n");
            (verdict, category, command)
        })
        .collect()
}

#[test]
fn corpus_targets() {
    let rows = load();
    let dangerous: Vec<_> = rows.iter().filter(|r| r.0 == "dangerous").collect();
    let benign: Vec<_> = rows.iter().filter(|r| r.0 == "benign").collect();
    let mut missed = Vec::new();
    for (_, cat, cmd) in &dangerous {
        let v = detect(cmd);
        if !v.dangerous {
            missed.push(format!("{cat}: {cmd}"));
        }
    }
    let mut false_pos = Vec::new();
    for (_, _, cmd) in &benign {
        let v = detect(cmd);
        if v.dangerous {
            false_pos.push(format!("{cmd} -> {}", v.summary()));
        }
    }
    println!(
        "dangerous flagged {}/{}, benign flagged {}/{}",
        dangerous.len() - missed.len(),
        dangerous.len(),
        false_pos.len(),
        benign.len()
    );
    for m in &missed {
        println!("  missed: {m}");
    }
    for f in &false_pos {
        println!("  benign flagged: {f}");
    }
    assert_eq!(dangerous.len(), 116);
    assert_eq!(benign.len(), 80);
    assert!(missed.is_empty(), "dangerous commands not flagged: {missed:#?}");
    assert!(
        false_pos.len() <= 2,
        "too many benign commands flagged: {false_pos:#?}"
    );
}
