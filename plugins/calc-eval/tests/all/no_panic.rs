//! Property-style tests: `evaluate` never panics, and its successes and
//! failures are well formed, on thousands of random and garbage inputs.
//!
//! A small deterministic PRNG keeps the runs reproducible without extra
//! dependencies; a failure message includes the offending input. Set
//! `CALC_FUZZ_SCALE=N` to run N times as many cases (for a longer soak, e.g.
//! `CALC_FUZZ_SCALE=100 cargo test --release --test no_panic`).

use std::panic::{AssertUnwindSafe, catch_unwind};

use calc_eval::{CalcError, Limits, evaluate};

/// `SplitMix64`: tiny, fast and good enough to drive input generation.
struct Rng(u64);

impl Rng {
    fn next(&mut self) -> u64 {
        self.0 = self.0.wrapping_add(0x9E37_79B9_7F4A_7C15);
        let mut z = self.0;
        z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
        z ^ (z >> 31)
    }

    /// A value in `0..bound` (`bound > 0`).
    fn below(&mut self, bound: usize) -> usize {
        usize::try_from(self.next() % u64::try_from(bound).unwrap()).unwrap()
    }

    fn pick<'a>(&mut self, items: &[&'a str]) -> &'a str {
        items[self.below(items.len())]
    }
}

/// Fragments for garbage input: every token kind, near-miss syntax, extreme
/// numbers and odd characters.
const FRAGMENTS: &[&str] = &[
    "0",
    "1",
    "2",
    "7",
    "9",
    ".",
    ".5",
    "1.",
    "e",
    "E",
    "e-",
    "e+",
    "1e3",
    "1e-3",
    "1e28",
    "1e29",
    "1e-28",
    "1e-29",
    "79228162514264337593543950335",
    "0.0000000000000000000000000001",
    "99999999999999999999999999999999",
    "+",
    "-",
    "*",
    "**",
    "/",
    "//",
    "%",
    "^",
    "(",
    ")",
    ",",
    " ",
    "\t",
    "\n",
    "pi",
    "e",
    "abs",
    "sqrt",
    "round",
    "min",
    "max",
    "floor",
    "ceil",
    "x",
    "_",
    "(",
    ")",
    "×",
    "÷",
    "−",
    "=",
    "!",
    "😀",
    "\u{0}",
    "é",
    "\u{300}",
    "1,000",
    "..",
    "sqrt(-",
    "^-",
    "**-",
    "1000",
    "-1000",
    "0.5",
    "3.14159",
    "round(",
    "max(",
    ",)",
    "()",
];

/// Numbers for structured input.
const NUMBERS: &[&str] = &[
    "0",
    "1",
    "2",
    "3",
    "10",
    "0.1",
    "0.5",
    "1.5",
    "-1",
    "7",
    "1000",
    "123.456",
    "1e-10",
    "1e10",
    "1e28",
    "1e-28",
    "79228162514264337593543950335",
    "0.0000000000000000000000000001",
    "999999999999999",
    "0.3333333333333333333333333333",
    "pi",
    "e",
    "1.0000000000000000000000000001",
];

const BINARY: &[&str] = &["+", "-", "*", "/", "//", "%", "^", "**"];
const UNARY_FUNCS: &[&str] = &["abs", "sqrt", "floor", "ceil", "round"];
const MULTI_FUNCS: &[&str] = &["min", "max", "round"];

/// A random, mostly well-formed expression.
fn expression(rng: &mut Rng, depth: usize) -> String {
    if depth == 0 {
        return rng.pick(NUMBERS).to_owned();
    }
    match rng.below(10) {
        0..=3 => format!(
            "{} {} {}",
            expression(rng, depth - 1),
            rng.pick(BINARY),
            expression(rng, depth - 1)
        ),
        4 => format!("-{}", expression(rng, depth - 1)),
        5 => format!("({})", expression(rng, depth - 1)),
        6 => format!("{}({})", rng.pick(UNARY_FUNCS), expression(rng, depth - 1)),
        7 => format!(
            "{}({}, {})",
            rng.pick(MULTI_FUNCS),
            expression(rng, depth - 1),
            rng.below(8)
        ),
        8 => format!(
            "{}^{}",
            expression(rng, depth - 1),
            rng.pick(&["2", "-1", "30", "0.5"])
        ),
        _ => rng.pick(NUMBERS).to_owned(),
    }
}

/// Random garbage built from [`FRAGMENTS`] and random characters.
fn garbage(rng: &mut Rng) -> String {
    let len = rng.below(60);
    let mut out = String::new();
    for _ in 0..len {
        if rng.below(8) == 0 {
            let code = u32::try_from(rng.next() % 0x11_0000).unwrap();
            out.push(char::from_u32(code).unwrap_or('\u{fffd}'));
        } else {
            out.push_str(rng.pick(FRAGMENTS));
        }
    }
    out
}

/// A mutation of a valid expression: one character removed, duplicated or
/// replaced.
fn mutated(rng: &mut Rng) -> String {
    let mut chars: Vec<char> = expression(rng, 3).chars().collect();
    if chars.is_empty() {
        return String::new();
    }
    let at = rng.below(chars.len());
    match rng.below(3) {
        0 => {
            chars.remove(at);
        }
        1 => chars.insert(at, chars[at]),
        _ => chars[at] = rng.pick(FRAGMENTS).chars().next().unwrap_or(' '),
    }
    chars.into_iter().collect()
}

/// Whether `s` is a normalized decimal: optional '-', no leading zeros, no
/// trailing fractional zeros, never "-0".
fn is_normalized(s: &str) -> bool {
    let unsigned = s.strip_prefix('-').unwrap_or(s);
    let (int, frac) = unsigned.split_once('.').unwrap_or((unsigned, ""));
    let int_ok =
        !int.is_empty() && int.bytes().all(|b| b.is_ascii_digit()) && (int == "0" || !int.starts_with('0'));
    let frac_ok = frac.bytes().all(|b| b.is_ascii_digit())
        && (!unsigned.contains('.') || (!frac.is_empty() && !frac.ends_with('0')));
    int_ok && frac_ok && s != "-0"
}

/// Evaluates `input` under `limits`, checking every property.
fn check(input: &str, limits: &Limits) {
    let result = catch_unwind(AssertUnwindSafe(|| evaluate(input, limits)))
        .unwrap_or_else(|_| panic!("evaluate panicked on {input:?} with {limits:?}"));
    assert_eq!(result, evaluate(input, limits), "not deterministic: {input:?}");
    match result {
        Ok(value) => {
            assert!(is_normalized(&value), "{input:?} gave unnormalized {value:?}");
            // The output is itself a valid expression with the same value.
            let again = evaluate(&value, &Limits::default());
            assert_eq!(again.as_deref(), Ok(value.as_str()), "{input:?}");
        }
        Err(error) => check_error(input, &error),
    }
}

fn check_error(input: &str, error: &CalcError) {
    let text = error.to_string();
    assert!(!text.is_empty() && !text.contains('\n'), "{input:?}: {text:?}");
    if let Some(position) = error.position() {
        assert!(
            position <= input.chars().count(),
            "{input:?}: position {position} is past the end"
        );
    }
}

/// `base` times the factor in `CALC_FUZZ_SCALE` (default 1).
fn cases(base: usize) -> usize {
    let scale = std::env::var("CALC_FUZZ_SCALE")
        .ok()
        .and_then(|v| v.parse::<usize>().ok())
        .unwrap_or(1);
    base.saturating_mul(scale)
}

fn limit_sets() -> [Limits; 3] {
    [
        Limits::default(),
        Limits {
            max_input_len: 40,
            max_depth: 3,
            max_result_digits: 8,
            max_exponent: 5,
        },
        Limits {
            max_input_len: usize::MAX,
            max_depth: usize::MAX,
            max_result_digits: usize::MAX,
            max_exponent: u32::MAX,
        },
    ]
}

#[test]
fn garbage_never_panics() {
    let mut rng = Rng(0x5EED_0001);
    for _ in 0..cases(3000) {
        let input = garbage(&mut rng);
        for limits in &limit_sets() {
            check(&input, limits);
        }
    }
}

#[test]
fn random_expressions_never_panic() {
    let mut rng = Rng(0x5EED_0002);
    let mut successes = 0;
    for _ in 0..cases(3000) {
        let depth = rng.below(6);
        let input = expression(&mut rng, depth);
        for limits in &limit_sets() {
            check(&input, limits);
        }
        successes += usize::from(evaluate(&input, &Limits::default()).is_ok());
    }
    // The generator must exercise evaluation, not only error paths.
    assert!(successes > cases(1000), "only {successes} successes");
}

#[test]
fn mutated_expressions_never_panic() {
    let mut rng = Rng(0x5EED_0003);
    for _ in 0..cases(3000) {
        let input = mutated(&mut rng);
        for limits in &limit_sets() {
            check(&input, limits);
        }
    }
}

#[test]
fn random_bytes_never_panic() {
    let mut rng = Rng(0x5EED_0004);
    for _ in 0..cases(2000) {
        let len = rng.below(80);
        let bytes: Vec<u8> = (0..len).map(|_| rng.next().to_le_bytes()[0]).collect();
        let input = String::from_utf8_lossy(&bytes);
        check(&input, &Limits::default());
    }
}
