//! Every error variant with realistic input, and the quality of the messages.

use crate::common::{err, err_with, ok, syntax};
use calc_eval::{CalcError, Limits, evaluate};

#[test]
fn syntax_missing_operand() {
    let text = syntax("2 +", 3, "ends right after '+'");
    assert!(text.contains("position 3"), "{text}");
    syntax("* 3", 0, "found '*'");
    syntax("2 + * 3", 4, "found '*'");
    syntax("2 ^", 3, "ends right after '^'");
    syntax("()", 1, "empty parentheses");
    syntax("", 0, "empty");
    syntax("   ", 3, "empty");
}

#[test]
fn syntax_parentheses() {
    syntax("2 * (3 + 4", 10, "missing ')' to close the '(' at position 4");
    syntax("(1 + 2))", 7, "unmatched ')'");
    syntax(")", 0, "found ')'");
    syntax("max(1, 2", 8, "argument list of max( at position 3");
    syntax("abs(1 2)", 6, "operator is missing");
}

#[test]
fn syntax_implicit_multiplication() {
    syntax("2(3)", 1, "implicit multiplication");
    syntax("2 3", 2, "operator is missing before '3'");
    syntax("2pi", 1, "write '*' explicitly");
    syntax("(1)(2)", 3, "implicit multiplication");
    syntax("2 x 3", 2, "not 'x'");
    syntax("2e", 1, "scientific notation");
    syntax("1e+", 1, "scientific notation");
}

#[test]
fn syntax_names() {
    let text = syntax("x + 1", 0, "unknown name 'x'");
    assert!(text.contains("sqrt") && text.contains("pi"), "{text}");
    syntax("foo(1)", 0, "unknown name 'foo'");
    syntax("sqrt 2", 5, "call it with its arguments in parentheses");
    syntax("sqrt", 4, "sqrt(2)");
    syntax("pi(2)", 2, "constant, not a function");
    syntax("round(1, 2, 3)", 0, "round takes 1 or 2 arguments");
    syntax("abs()", 0, "exactly 1 argument, but 0 were given");
    syntax("sqrt(1, 2)", 0, "exactly 1 argument, but 2 were given");
    syntax("max()", 0, "at least 1 argument");
}

#[test]
fn syntax_characters_and_separators() {
    syntax("2 × 3", 2, "use '*' for multiplication");
    syntax("6 ÷ 3", 2, "use '/' for division");
    syntax("5 − 3", 2, "ASCII '-'");
    syntax("1 + 1 = 2", 6, "without '='");
    syntax("[1 + 2]", 0, "'(' and ')'");
    syntax("5!", 1, "factorials");
    syntax("$5", 0, "currency");
    syntax("1,000", 1, "thousands separators");
    syntax("(1, 2)", 2, "thousands separators");
    syntax("1.2.3", 3, "only one '.'");
    syntax(".", 0, "at least one digit");
    syntax("2 ^^ 3", 3, "found '^'");
    syntax("2 * * 3", 4, "found '*'");
    syntax("1 + 😀", 4, "unexpected character '😀'");
}

#[test]
fn syntax_percent_hint() {
    syntax("50%", 3, "remainder operator, not percent");
    syntax("50% * 80", 4, "80*50/100");
}

#[test]
fn syntax_errors_win_over_evaluation_errors() {
    syntax("1/0 + (", 7, "ends right after '('");
    syntax("2^100000 )", 9, "unmatched ')'");
}

#[test]
fn number_out_of_range() {
    let error = err("1e29");
    assert_eq!(
        error,
        CalcError::NumberOutOfRange {
            position: 0,
            literal: "1e29".to_owned()
        }
    );
    assert!(error.to_string().contains("'1e29' at position 0"));
    assert_eq!(
        err("1 + 1e-40"),
        CalcError::NumberOutOfRange {
            position: 4,
            literal: "1e-40".to_owned()
        }
    );
    assert!(matches!(
        err("79228162514264337593543950336"),
        CalcError::NumberOutOfRange { position: 0, .. }
    ));
    assert!(matches!(
        err("2 ^ 1e999999999999999999999999999"),
        CalcError::NumberOutOfRange { position: 4, .. }
    ));
    // Long literals are quoted in shortened form.
    let long = format!("1{}", "0".repeat(200));
    let text = err(&long).to_string();
    assert!(text.contains('…') && text.len() < 600, "{text}");
}

#[test]
fn division_by_zero() {
    for expr in [
        "1/0",
        "1 // 0",
        "1 % 0",
        "0 ^ -1",
        "1/(1-1)",
        "5 / 0.000",
        "1 / -0",
    ] {
        assert_eq!(err(expr), CalcError::DivisionByZero, "{expr}");
    }
    assert!(err("1/0").to_string().contains("division by zero"));
}

#[test]
fn overflow() {
    for expr in [
        "79228162514264337593543950335 + 1",
        "-79228162514264337593543950335 - 1",
        "1e28 * 10",
        "2 ^ 96",
        "10 ^ 1000",
        "79228162514264337593543950335 / 0.5",
        "1e28 // 1e-28",
        "0.5 ^ -1000",
        "round(79228162514264337593543950335, -1)",
    ] {
        assert_eq!(err(expr), CalcError::Overflow, "{expr}");
    }
    assert!(err("2^96").to_string().contains("overflow"));
}

#[test]
fn underflow() {
    for expr in [
        "1e-15 * 1e-15",
        "1e-28 / 3",
        "1 / 1e28 / 10",
        "0.1 ^ 29",
        "2 ^ -1000",
        "10 ^ -29",
    ] {
        assert_eq!(err(expr), CalcError::Underflow, "{expr}");
    }
    // Rounding to the finest resolution is not an underflow.
    assert_eq!(ok("1.5e-15 * 1e-13"), "0.0000000000000000000000000002");
    assert!(err("1e-28/3").to_string().contains("underflow"));
}

#[test]
fn result_too_large() {
    let limits = Limits {
        max_result_digits: 10,
        ..Limits::default()
    };
    assert_eq!(
        err_with("1/3", &limits),
        CalcError::ResultTooLarge {
            digits: 29,
            limit: 10
        }
    );
    assert_eq!(
        err_with("12345678901", &limits),
        CalcError::ResultTooLarge {
            digits: 11,
            limit: 10
        }
    );
    assert_eq!(evaluate("1234567890", &limits).as_deref(), Ok("1234567890"));
    assert_eq!(evaluate("round(1/3, 9)", &limits).as_deref(), Ok("0.333333333"));
    let text = err_with("1/3", &limits).to_string();
    assert!(
        text.contains("29 digits") && text.contains("round(x, n)"),
        "{text}"
    );
}

#[test]
fn exponent_too_large() {
    assert_eq!(
        err("2 ^ 1001"),
        CalcError::ExponentTooLarge {
            exponent: "1001".to_owned(),
            limit: 1000
        }
    );
    assert_eq!(
        err("2 ^ -5000"),
        CalcError::ExponentTooLarge {
            exponent: "-5000".to_owned(),
            limit: 1000
        }
    );
    assert!(matches!(err("1 ^ 1001"), CalcError::ExponentTooLarge { .. }));
    assert!(matches!(err("10 ^ 1001"), CalcError::ExponentTooLarge { .. }));
    assert!(matches!(
        err("2 ^ 79228162514264337593543950335"),
        CalcError::ExponentTooLarge { .. }
    ));
    // The exponent is checked before the (huge) power below it is computed.
    assert!(matches!(
        err("2 ^ 2 ^ 2 ^ 2 ^ 2"),
        CalcError::ExponentTooLarge { exponent, .. } if exponent == "65536"
    ));
    let tight = Limits {
        max_exponent: 10,
        ..Limits::default()
    };
    assert_eq!(
        err_with("2 ^ 11", &tight),
        CalcError::ExponentTooLarge {
            exponent: "11".to_owned(),
            limit: 10
        }
    );
    assert_eq!(evaluate("2 ^ 10", &tight).as_deref(), Ok("1024"));
    let text = err("2^1001").to_string();
    assert!(text.contains("-1000 to 1000"), "{text}");
}

#[test]
fn domain() {
    let cases = [
        ("sqrt(-1)", "sqrt of a negative number (-1)"),
        ("2 ^ 0.5", "exponent 0.5 is not an integer"),
        ("2 ** (1/3)", "not an integer"),
        ("round(1, 0.5)", "must be an integer"),
        ("round(1, 29)", "from -28 to 28"),
        ("round(1, -29)", "from -28 to 28"),
    ];
    for (expr, needle) in cases {
        let error = err(expr);
        let CalcError::Domain { message } = &error else {
            panic!("{expr}: expected a domain error, got {error:?}");
        };
        assert!(message.contains(needle), "{expr}: {message}");
        assert!(error.to_string().starts_with("math domain error"));
    }
}

#[test]
fn messages_are_single_line_and_explain_a_fix() {
    let errors = [
        err(&"1".repeat(1001)),
        err(&format!("{}1{}", "(".repeat(40), ")".repeat(40))),
        err("2 +"),
        err("1e99"),
        err("1/0"),
        err("2^96"),
        err("1e-28/3"),
        err("2^1001"),
        err("sqrt(-4)"),
        err_with(
            "1/3",
            &Limits {
                max_result_digits: 5,
                ..Limits::default()
            },
        ),
    ];
    for error in errors {
        let text = error.to_string();
        assert!(!text.contains('\n'), "{text}");
        assert!(text.len() > 40, "{text}");
        // Every message says what to do, after a ';' or ':'.
        assert!(text.contains(';') || text.contains(':'), "{text}");
        if let Some(position) = error.position() {
            assert!(text.contains(&format!("position {position}")), "{text}");
        }
    }
}

#[test]
fn errors_implement_std_error() {
    fn assert_error<E: std::error::Error + Send + Sync + 'static>(_: &E) {}
    let error = err("1/0");
    assert_error(&error);
    let boxed: Box<dyn std::error::Error> = Box::new(error.clone());
    assert_eq!(boxed.to_string(), error.to_string());
}
