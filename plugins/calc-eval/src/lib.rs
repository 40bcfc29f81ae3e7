//! Bounded decimal arithmetic for the `calculate_expression` tool.
//!
//! `calc-eval` evaluates an arithmetic expression written by an LLM agent
//! (or anyone else) and returns the result as a decimal string. It is meant to
//! be exposed to untrusted input:
//!
//! - it never panics, whatever the input (all arithmetic is checked, and the
//!   crate denies `unwrap`, `expect`, indexing and unchecked arithmetic);
//! - its cost is bounded by [`Limits`]: input length, nesting depth (which
//!   also bounds recursion, so deep nesting cannot overflow the stack), and
//!   the size of exponents, which is checked before any power is computed;
//! - it uses decimal, not binary floating point, arithmetic: `0.1 + 0.2` is
//!   exactly `0.3`;
//! - it has no I/O, threads or `unsafe`, and builds for `wasm32-wasip2`.
//!
//! Every error is a [`CalcError`] whose `Display` text tells the agent what
//! is wrong, where (as a 0-based character offset) and what to change.
//!
//! # Example
//!
//! ```
//! use calc_eval::{CalcError, Limits, evaluate};
//!
//! let limits = Limits::default();
//! assert_eq!(evaluate("0.1 + 0.2", &limits)?, "0.3");
//! assert_eq!(evaluate("(1 + 2) * 3 ^ 2", &limits)?, "27");
//! assert_eq!(evaluate("-2^2", &limits)?, "-4");
//! assert_eq!(evaluate("1/3", &limits)?, "0.3333333333333333333333333333");
//! assert_eq!(evaluate("round(sqrt(2), 4)", &limits)?, "1.4142");
//! assert_eq!(evaluate("7 // 2 + 7 % 2", &limits)?, "4");
//!
//! let err = evaluate("2 * (3 + 4", &limits).unwrap_err();
//! assert_eq!(err.position(), Some(10));
//! assert!(err.to_string().contains("missing ')'"));
//! assert_eq!(evaluate("1 / (2 - 2)", &limits), Err(CalcError::DivisionByZero));
//! # Ok::<(), CalcError>(())
//! ```
//!
//! # Language
//!
//! Operators, from highest to lowest precedence:
//!
//! | syntax | meaning |
//! | --- | --- |
//! | `12`, `1.5`, `.5`, `5.`, `1e3`, `2.5E-2` | numbers (no digit separators or other bases) |
//! | `pi`, `e` | constants, rounded to 28 decimal places |
//! | `( ... )`, `f( ... )` | grouping, function calls (below) |
//! | `x ^ y`, `x ** y` | power; right-associative, integer exponents only |
//! | `-x`, `+x` | unary minus and plus; bind looser than `^`, so `-2^2` is `-4` and `2^-1` is `0.5` |
//! | `x * y`, `x / y`, `x // y`, `x % y` | multiplication, division, floor division (the largest integer not above `x / y`), remainder with the sign of `y` (so `x == (x // y) * y + x % y`, as in Python) |
//! | `x + y`, `x - y` | addition, subtraction |
//!
//! Binary operators of one level other than `^`/`**` are left-associative.
//! Whitespace is allowed between tokens. Implicit multiplication (`2pi`,
//! `2(3)`) is not supported and is reported with a hint.
//!
//! Functions (names, like constants, are matched ignoring ASCII case):
//!
//! | function | result |
//! | --- | --- |
//! | `abs(x)` | absolute value |
//! | `floor(x)`, `ceil(x)` | `x` rounded down, up, to an integer |
//! | `round(x)`, `round(x, n)` | `x` rounded half away from zero to `n` decimal places (default 0), `-28 <= n <= 28`; a negative `n` rounds to tens, hundreds, ... |
//! | `min(x, ...)`, `max(x, ...)` | smallest, largest of one or more arguments |
//! | `sqrt(x)` | square root of `x >= 0` |
//!
//! # Numbers and precision
//!
//! Values are [`rust_decimal`] decimals: a 96-bit integer mantissa with up to
//! 28 digits after the decimal point, so magnitudes up to about 7.9e28 and a
//! finest resolution of 1e-28. Sums, differences and products of short
//! numbers are exact. A result that needs more digits than fit is rounded to
//! the precision available (`1/3` is `0.3333333333333333333333333333`, 28
//! digits); powers with fractional bases and square roots can therefore be
//! off in the last digit. Intermediate results are rounded too, so
//! `1/7*7` is `1.0000000000000000000000000003` while `7*1/7` is `1`: multiply
//! before dividing where the last digit matters. A result beyond the range is
//! [`CalcError::Overflow`]; a nonzero product, quotient or power that would
//! round to zero is [`CalcError::Underflow`] rather than a silent `0`.
//!
//! Results are returned normalized: no exponent notation, no trailing zeros
//! after the decimal point, no trailing point, and never `-0`.

#![forbid(unsafe_code)]
#![deny(missing_docs)]

mod error;
mod eval;
mod lexer;
mod parser;

pub use error::CalcError;

/// Nesting depth that [`evaluate`] supports at most, whatever
/// [`Limits::max_depth`] says; a larger [`Limits::max_depth`] acts as this
/// value.
///
/// Parsing and evaluation recurse once per level of nesting, so this caps
/// their stack use. Measured on x86-64, one level takes about 1.3 KiB of
/// stack in release builds and up to about 8 KiB in debug builds, so even at
/// this depth evaluation fits well within 1 MiB (the default stack of a
/// WebAssembly module) in release builds and within 2 MiB (the default stack
/// of a spawned Rust thread) in debug builds. The tests check this, and pass
/// as `wasm32-wasip2` components under Wasmtime in both profiles.
pub const MAX_SUPPORTED_DEPTH: usize = 128;

/// Limits of one evaluation.
///
/// Together they bound the time and memory [`evaluate`] can use: work is
/// roughly linear in the input length, with at most about
/// `2·log2(max_exponent) + 2` multiplications per power.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub struct Limits {
    /// Longest accepted expression, in characters (Unicode scalar values).
    /// Longer input is rejected with [`CalcError::InputTooLong`] before it is
    /// parsed. Default: 1000.
    pub max_input_len: usize,
    /// Deepest accepted nesting. Each enclosing pair of parentheses, function
    /// call and unary sign counts as one level, so `-(1)` has depth 2 and
    /// `abs((1))` depth 2. Deeper input is rejected with
    /// [`CalcError::TooDeep`]. Values above [`MAX_SUPPORTED_DEPTH`] act as
    /// that value. Default: 32.
    pub max_depth: usize,
    /// Most digits the result may have, counting the digits before and after
    /// the decimal point of the returned string (`"-12.5"` has 3). A longer
    /// result is [`CalcError::ResultTooLarge`]. A decimal result never has
    /// more than 29 digits, so only values below 29 have an effect.
    /// Default: 100.
    pub max_result_digits: usize,
    /// Largest accepted magnitude of an exponent of `^` or `**`. Larger
    /// exponents are rejected with [`CalcError::ExponentTooLarge`] before any
    /// power is computed. Default: 1000.
    pub max_exponent: u32,
}

impl Default for Limits {
    /// `max_input_len` 1000, `max_depth` 32, `max_result_digits` 100,
    /// `max_exponent` 1000.
    fn default() -> Self {
        Self {
            max_input_len: 1000,
            max_depth: 32,
            max_result_digits: 100,
            max_exponent: 1000,
        }
    }
}

/// Evaluates `expr` and returns the result as a normalized decimal string.
///
/// The string has no exponent notation, no trailing zeros after the decimal
/// point and no trailing point; zero is always `"0"`, never `"-0"`. Examples:
/// `"42"`, `"-0.125"`, `"0.3333333333333333333333333333"`.
///
/// The whole expression is parsed before anything is computed, so a syntax
/// error is reported even if an earlier part would fail to evaluate.
///
/// # Errors
///
/// Returns a [`CalcError`] if the input breaks one of the `limits`, is not a
/// well-formed expression, or cannot be evaluated (division by zero,
/// overflow, underflow, a domain error, a too-large exponent or result). This
/// function never panics.
pub fn evaluate(expr: &str, limits: &Limits) -> Result<String, CalcError> {
    // Cheap check first: the byte length bounds the character count.
    if expr.len() > limits.max_input_len {
        let length = expr.chars().count();
        if length > limits.max_input_len {
            return Err(CalcError::InputTooLong {
                length,
                limit: limits.max_input_len,
            });
        }
    }
    let max_depth = limits.max_depth.min(MAX_SUPPORTED_DEPTH);
    let tree = parser::parse(expr, max_depth)?;
    let value = eval::eval(&tree, limits.max_exponent)?;
    let text = if value.is_zero() {
        "0".to_owned()
    } else {
        value.normalize().to_string()
    };
    let digits = text.bytes().filter(u8::is_ascii_digit).count();
    if digits > limits.max_result_digits {
        return Err(CalcError::ResultTooLarge {
            digits,
            limit: limits.max_result_digits,
        });
    }
    Ok(text)
}
