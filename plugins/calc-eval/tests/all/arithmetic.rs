//! Successful evaluations: precedence, associativity, unary operators,
//! decimal exactness, powers and functions.

use crate::common::{check, ok};

#[test]
fn precedence() {
    check("1 + 2 * 3", "7");
    check("(1 + 2) * 3", "9");
    check("2 * 3 ^ 2", "18");
    check("2 * 3 ** 2", "18");
    check("2 + 3 % 4", "5");
    check("2 * 3 % 4", "2");
    check("10 // 3 * 3", "9");
    check("1 + 10 // 3", "4");
    check("8 / 2 ^ 2", "2");
    check("2 ^ 2 * 3", "12");
    check("2 ^ -1 * 4", "2");
}

#[test]
fn left_associativity() {
    check("10 - 4 - 3", "3");
    check("100 / 10 / 5", "2");
    check("2 * 3 / 4", "1.5");
    check("100 // 7 // 2", "7");
    check("100 % 7 % 4", "2");
    check("1 - 2 + 3", "2");
}

#[test]
fn power_is_right_associative() {
    check("2 ^ 3 ^ 2", "512");
    check("2 ** 3 ** 2", "512");
    check("2 ^ 3 ** 2", "512");
    check("(2 ^ 3) ^ 2", "64");
    check("2 ^ 2 ^ 0", "2");
}

#[test]
fn unary_operators() {
    check("-2 ^ 2", "-4");
    check("-2 ** 2", "-4");
    check("(-2) ^ 2", "4");
    check("2 ^ -1", "0.5");
    check("2 ^ -3 ^ 2", "0.001953125");
    check("2 ^ +3", "8");
    check("-3", "-3");
    check("+3", "3");
    check("--3", "3");
    check("-+-3", "3");
    check("- (2 + 3)", "-5");
    check("1 - -1", "2");
    check("2 * -3", "-6");
    check("-3 // 2", "-2");
    check("-(-(-(1)))", "-1");
}

#[test]
fn whitespace_is_ignored_between_tokens() {
    check(" \t1\n+\r\n2 ", "3");
    check("(1+2)*3", "9");
    check("2**3", "8");
    check("7//2", "3");
    check("\u{3000}4\u{a0}*\u{2003}2", "8");
}

#[test]
fn number_literals() {
    check("42", "42");
    check("1.5", "1.5");
    check(".5", "0.5");
    check("5.", "5");
    check("1e3", "1000");
    check("1E+3", "1000");
    check("2.5E-2", "0.025");
    check("1e0", "1");
    check("007", "7");
    check("1.2500", "1.25");
    check("0e9999999999999999999999999", "0");
    check("0.0000000000000000000000000001", "0.0000000000000000000000000001");
    check("79228162514264337593543950335", "79228162514264337593543950335");
    check("-79228162514264337593543950335", "-79228162514264337593543950335");
    // Digits beyond the precision are rounded.
    check(
        "0.12345678901234567890123456789",
        "0.1234567890123456789012345679",
    );
}

#[test]
fn decimal_exactness() {
    check("0.1 + 0.2", "0.3");
    check("0.1 * 3", "0.3");
    check("1 - 0.9", "0.1");
    check("100 * 1.1", "110");
    check("1.10 + 2.20", "3.3");
    check("19.99 * 3", "59.97");
    check("0.07 * 100", "7");
    check("1234567.89 - 0.01", "1234567.88");
    check("10 / 4", "2.5");
    check("1 / 8", "0.125");
}

#[test]
fn division_keeps_28_significant_digits() {
    check("1/3", "0.3333333333333333333333333333");
    check("2/3", "0.6666666666666666666666666667");
    check("-1/3", "-0.3333333333333333333333333333");
    check("1/7", "0.1428571428571428571428571429");
    check("1/3*3", "0.9999999999999999999999999999");
    check("1/7*7", "1.0000000000000000000000000003");
    check("7*1/7", "1");
}

#[test]
fn results_are_normalized() {
    check("-0", "0");
    check("0 * -1", "0");
    check("-(0.000)", "0");
    check("ceil(-0.5)", "0");
    check("1.5 - 0.5", "1");
    check("2.50 * 2", "5");
    check("-1e-3", "-0.001");
    check("1e28", "10000000000000000000000000000");
}

#[test]
fn remainder_has_the_sign_of_the_divisor() {
    check("7 % 3", "1");
    check("-7 % 3", "2");
    check("7 % -3", "-2");
    check("-7 % -3", "-1");
    check("6 % 3", "0");
    check("-6 % 3", "0");
    check("5.5 % 2", "1.5");
    check("-5.5 % 2", "0.5");
    check("1 % 0.3", "0.1");
}

#[test]
fn floor_division() {
    check("7 // 2", "3");
    check("-7 // 2", "-4");
    check("7 // -2", "-4");
    check("-7 // -2", "3");
    check("7.5 // 2", "3");
    check("-0.5 // 1", "-1");
    check("6 // 3", "2");
    check("1 // 0.3", "3");
    // Operands at the edge of the range do not overflow.
    check(
        "-79228162514264337593543950335 // 7",
        "-11318308930609191084791992905",
    );
    check(
        "-79228162514264337593543950335 // 2",
        "-39614081257132168796771975168",
    );
    check("-79228162514264337593543950335 % 2", "1");
    // The rounded quotient would be 1, but the floor is 0.
    check("2 // 2.0000000000000000000000000001", "0");
}

#[test]
fn floor_division_and_remainder_are_consistent() {
    for (a, b) in [
        ("7", "3"),
        ("-7", "3"),
        ("7", "-3"),
        ("-7", "-3"),
        ("5.5", "2"),
        ("-5.5", "0.7"),
        ("123.456", "-0.01"),
    ] {
        let expr = format!("(({a}) // ({b})) * ({b}) + ({a}) % ({b})");
        assert_eq!(ok(&expr), ok(a), "{expr}");
    }
}

#[test]
fn integer_powers() {
    check("2 ^ 10", "1024");
    check("2 ^ 0", "1");
    check("0 ^ 0", "1");
    check("0 ^ 5", "0");
    check("(-2) ^ 3", "-8");
    check("(-1) ^ 1000", "1");
    check("(-1) ^ 999", "-1");
    check("1 ^ 1000", "1");
    check("1.5 ^ 2", "2.25");
    check("1.1 ^ 10", "2.5937424601");
    check("2 ^ -2", "0.25");
    check("(-2) ^ -3", "-0.125");
    check("0.5 ^ -3", "8");
    check("10 ^ -28", "0.0000000000000000000000000001");
    check("0.1 ^ 28", "0.0000000000000000000000000001");
    check("10 ^ 28", "10000000000000000000000000000");
    check("2 ^ 95", "39614081257132168796771975168");
    check("2 ^ (6 / 2)", "8");
    check("2 ^ 3.0", "8");
    check("3 ^ -1", "0.3333333333333333333333333333");
}

#[test]
fn functions() {
    check("abs(-3.5)", "3.5");
    check("abs(2)", "2");
    check("floor(-2.5)", "-3");
    check("floor(2.5)", "2");
    check("ceil(-2.5)", "-2");
    check("ceil(2.1)", "3");
    check("min(3, 1, 2)", "1");
    check("max(3, 1, 2)", "3");
    check("max(-1)", "-1");
    check("min(0.1 + 0.2, 0.3)", "0.3");
    check("sqrt(16)", "4");
    check("sqrt(0.25)", "0.5");
    check("sqrt(0)", "0");
    check("sqrt(2)", "1.4142135623730950488016887242");
    check("sqrt(152.2756)", "12.34");
    check("sqrt(1e-28)", "0.00000000000001");
    check("max(abs(-5), sqrt(16))", "5");
    check("abs(-2) ^ 2", "4");
    check("-abs(-2)", "-2");
}

#[test]
fn rounding() {
    check("round(2.5)", "3");
    check("round(-2.5)", "-3");
    check("round(2.4)", "2");
    check("round(3.14159, 2)", "3.14");
    check("round(2.675, 2)", "2.68");
    check("round(1/3, 5)", "0.33333");
    check("round(1.5, 0)", "2");
    check("round(1234.5, -2)", "1200");
    check("round(1250, -2)", "1300");
    check("round(-1250, -2)", "-1300");
    check("round(5, -1)", "10");
    check("round(4, -28)", "0");
    check("round(1, 28)", "1");
    check("round(2, 3.0)", "2");
}

#[test]
fn constants_and_case_insensitive_names() {
    check("pi", "3.1415926535897932384626433833");
    check("e", "2.7182818284590452353602874714");
    check("PI", "3.1415926535897932384626433833");
    check("2 * pi", "6.2831853071795864769252867666");
    check("SQRT(4)", "2");
    check("Max(1, 2)", "2");
    check("round(pi, 4)", "3.1416");
    // The square of e rounded to 28 places (the true e^2 ends in ...4606).
    check("e ^ 2", "7.3890560989306502272304274608");
}

#[test]
fn results_evaluate_to_themselves() {
    for expr in ["1/3", "-2/3", "pi", "2^95", "-1e-28", "sqrt(2)", "0.1+0.2"] {
        let value = ok(expr);
        assert_eq!(ok(&value), value, "{expr}");
    }
}
