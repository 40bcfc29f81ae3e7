//! Helpers shared by the integration tests.

use calc_eval::{CalcError, Limits, evaluate};

/// Evaluates with default limits and panics with the error message on failure.
#[track_caller]
pub fn ok(expr: &str) -> String {
    ok_with(expr, &Limits::default())
}

/// Evaluates with `limits` and panics with the error message on failure.
#[track_caller]
pub fn ok_with(expr: &str, limits: &Limits) -> String {
    match evaluate(expr, limits) {
        Ok(value) => value,
        Err(err) => panic!("{expr:?} failed: {err}"),
    }
}

/// Evaluates with default limits and panics if it succeeds.
#[track_caller]
pub fn err(expr: &str) -> CalcError {
    err_with(expr, &Limits::default())
}

/// Evaluates with `limits` and panics if it succeeds.
#[track_caller]
pub fn err_with(expr: &str, limits: &Limits) -> CalcError {
    match evaluate(expr, limits) {
        Ok(value) => panic!("{expr:?} unexpectedly evaluated to {value}"),
        Err(err) => err,
    }
}

/// Asserts that `expr` evaluates to `expected` with default limits.
#[track_caller]
pub fn check(expr: &str, expected: &str) {
    assert_eq!(ok(expr), expected, "expression {expr:?}");
}

/// Asserts that `expr` fails with a syntax error at `position`, whose
/// message contains `needle`; returns the full `Display` text.
#[track_caller]
pub fn syntax(expr: &str, position: usize, needle: &str) -> String {
    let error = err(expr);
    let CalcError::Syntax {
        position: actual,
        message,
    } = &error
    else {
        panic!("{expr:?}: expected a syntax error, got {error:?}");
    };
    assert_eq!(*actual, position, "{expr:?}: {message}");
    assert!(
        message.contains(needle),
        "{expr:?}: message {message:?} lacks {needle:?}"
    );
    error.to_string()
}
