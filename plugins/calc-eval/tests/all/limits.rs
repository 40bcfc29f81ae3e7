//! Input length and nesting limits, and robustness against hostile input.

use crate::common::{err, err_with, ok, ok_with};
use calc_eval::{CalcError, Limits, MAX_SUPPORTED_DEPTH, evaluate};

#[test]
fn default_limits() {
    assert_eq!(
        Limits::default(),
        Limits {
            max_input_len: 1000,
            max_depth: 32,
            max_result_digits: 100,
            max_exponent: 1000,
        }
    );
}

#[test]
fn input_length_limit() {
    // "1+1+...+1 " is exactly 1000 characters.
    let exact = format!("1{} ", "+1".repeat(499));
    assert_eq!(exact.chars().count(), 1000);
    assert_eq!(ok(&exact), "500");
    let too_long = format!("{exact} ");
    assert_eq!(
        err(&too_long),
        CalcError::InputTooLong {
            length: 1001,
            limit: 1000
        }
    );
    let text = err(&too_long).to_string();
    assert!(text.contains("1001 characters") && text.contains("at most 1000"));
}

#[test]
fn input_length_counts_characters_not_bytes() {
    // 600 characters but 1200 bytes: not too long, but a syntax error.
    let input = "é".repeat(600);
    assert!(matches!(err(&input), CalcError::Syntax { position: 0, .. }));
    let spaced = format!("{}1", "\u{a0}".repeat(999));
    assert_eq!(spaced.chars().count(), 1000);
    assert_eq!(ok(&spaced), "1");
    assert!(matches!(
        err(&format!("\u{a0}{spaced}")),
        CalcError::InputTooLong { length: 1001, .. }
    ));
}

#[test]
fn nesting_limit_parentheses() {
    let nested = |depth: usize| format!("{}1{}", "(".repeat(depth), ")".repeat(depth));
    assert_eq!(ok(&nested(32)), "1");
    assert_eq!(
        err(&nested(33)),
        CalcError::TooDeep {
            position: 32,
            limit: 32
        }
    );
}

#[test]
fn nesting_limit_unary_signs_and_calls() {
    assert_eq!(ok(&format!("{}1", "-".repeat(32))), "1");
    assert_eq!(
        err(&format!("{}1", "-".repeat(33))),
        CalcError::TooDeep {
            position: 32,
            limit: 32
        }
    );
    let calls = |depth: usize| format!("{}1{}", "abs(".repeat(depth), ")".repeat(depth));
    assert_eq!(ok(&calls(32)), "1");
    assert_eq!(
        err(&calls(33)),
        CalcError::TooDeep {
            position: 131,
            limit: 32
        }
    );
    // Signs and parentheses add up: 16 of each is 32 levels, one more is too deep.
    assert_eq!(ok(&format!("{}1{}", "-(".repeat(16), ")".repeat(16))), "1");
    assert!(matches!(
        err(&format!("-{}1{}", "-(".repeat(16), ")".repeat(16))),
        CalcError::TooDeep { .. }
    ));
}

#[test]
fn long_flat_chains_are_not_nesting() {
    // Long operator chains are iterated, not nested.
    let limits = Limits {
        max_input_len: 100_000,
        ..Limits::default()
    };
    let sum = format!("1{}", "+1".repeat(20_000));
    assert_eq!(ok_with(&sum, &limits), "20001");
    let product = format!("1{}", "*1".repeat(20_000));
    assert_eq!(ok_with(&product, &limits), "1");
    let tower = format!("1{}", "^1".repeat(20_000));
    assert_eq!(ok_with(&tower, &limits), "1");
}

#[test]
fn depth_is_capped_at_max_supported_depth() {
    let limits = Limits {
        max_input_len: usize::MAX,
        max_depth: usize::MAX,
        ..Limits::default()
    };
    let nest = |open: &str, levels_per_open: usize| {
        let count = MAX_SUPPORTED_DEPTH / levels_per_open;
        format!("{}1{}", open.repeat(count), ")".repeat(count))
    };
    // The most stack-hungry shapes, at exactly the supported depth.
    let supported = [
        nest("(", 1),
        nest("abs(", 1),
        nest("max(1, ", 1),
        nest("(1^", 1),
        nest("-(", 2),
        nest("sqrt(-", 2),
    ];
    let hostile = format!("{}1{}", "(-".repeat(100_000), ")".repeat(100_000));
    let run = move |supported: &[String], hostile: &str| {
        let supported: Vec<_> = supported.iter().map(|expr| evaluate(expr, &limits)).collect();
        (supported, evaluate(hostile, &limits))
    };
    // Run on the stack the documentation promises: 1 MiB (the default of a
    // WebAssembly module) in release builds, 2 MiB (the default of a spawned
    // thread) in debug builds, whose frames are much larger. Where threads
    // are unsupported (wasm32-wasip2) run on the main stack, 1 MiB there.
    let stack_size = if cfg!(debug_assertions) { 2 << 20 } else { 1 << 20 };
    let spawned = std::thread::Builder::new().stack_size(stack_size).spawn({
        let (supported, hostile) = (supported.clone(), hostile.clone());
        move || run(&supported, &hostile)
    });
    let (supported, hostile) = match spawned {
        Ok(handle) => handle.join().unwrap_or_else(|_| panic!("evaluation panicked")),
        Err(_) => run(&supported, &hostile),
    };
    assert_eq!(supported[0].as_deref(), Ok("1"));
    assert_eq!(supported[1].as_deref(), Ok("1"));
    assert_eq!(supported[2].as_deref(), Ok("1"));
    assert_eq!(supported[3].as_deref(), Ok("1"));
    assert_eq!(supported[4].as_deref(), Ok("1"));
    assert!(matches!(supported[5], Err(CalcError::Domain { .. })));
    assert_eq!(
        hostile,
        Err(CalcError::TooDeep {
            position: MAX_SUPPORTED_DEPTH,
            limit: MAX_SUPPORTED_DEPTH
        })
    );
}

#[test]
fn zero_depth_allows_only_flat_expressions() {
    let limits = Limits {
        max_depth: 0,
        ..Limits::default()
    };
    assert_eq!(ok_with("1 + 2 * 3 ^ 2", &limits), "19");
    assert!(matches!(
        err_with("-1", &limits),
        CalcError::TooDeep {
            position: 0,
            limit: 0
        }
    ));
    assert!(matches!(
        err_with("(1)", &limits),
        CalcError::TooDeep {
            position: 0,
            limit: 0
        }
    ));
}

#[test]
fn huge_exponent_limit_is_still_cheap() {
    // Repeated squaring needs at most 64 multiplications for any u32.
    let limits = Limits {
        max_exponent: u32::MAX,
        ..Limits::default()
    };
    assert_eq!(ok_with("1 ^ 4294967295", &limits), "1");
    assert_eq!(ok_with("(-1) ^ 4294967295", &limits), "-1");
    assert_eq!(err_with("2 ^ 4294967295", &limits), CalcError::Overflow);
    assert_eq!(err_with("0.5 ^ 4294967295", &limits), CalcError::Underflow);
    assert!(matches!(
        err_with("2 ^ 4294967296", &limits),
        CalcError::ExponentTooLarge { .. }
    ));
    let near_one = ok_with("1.0000000000000000000000000001 ^ 4294967295", &limits);
    assert!(near_one.starts_with("1.0000000000000000004"), "{near_one}");
}

#[test]
fn absurd_inputs_fail_cleanly() {
    let limits = Limits {
        max_input_len: usize::MAX,
        ..Limits::default()
    };
    let inputs = [
        "9".repeat(100_000),
        format!("0.{}1", "0".repeat(100_000)),
        format!("1{}", "0".repeat(100_000)) + "e-100000",
        format!("1e{}", "9".repeat(10_000)),
        format!("1e-{}", "9".repeat(10_000)),
        "(".repeat(100_000),
        ")".repeat(100_000),
        "-".repeat(100_000),
        "^".repeat(100_000),
        "\0".repeat(1000),
        "sqrt(".repeat(10_000),
    ];
    for input in &inputs {
        // Any outcome is fine as long as it does not panic.
        let _ = evaluate(input, &limits);
    }
    assert_eq!(
        evaluate(&inputs[2], &limits).as_deref(),
        Ok("1"),
        "100000 trailing zeros scaled back by e-100000"
    );
}
