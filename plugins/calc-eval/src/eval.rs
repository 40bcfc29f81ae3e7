//! Evaluation of the syntax tree with checked decimal arithmetic.
//!
//! Every operation either succeeds or returns a [`CalcError`]; nothing here
//! can panic. The cost of each node is bounded: powers take at most about
//! `2·log2(max_exponent) + 2` multiplications and square roots a fixed
//! number of Newton steps.

use rust_decimal::prelude::{FromPrimitive, ToPrimitive};
use rust_decimal::{Decimal, RoundingStrategy};

use crate::error::CalcError;
use crate::parser::{BinOp, Func, Node};

/// Largest number of decimal places `round(x, n)` accepts in either direction.
const MAX_ROUND_PLACES: i64 = 28;
/// Upper bound on Newton steps in [`sqrt`]; from an `f64` estimate two or
/// three are enough, from the fallback estimate about a hundred.
const MAX_SQRT_STEPS: usize = 200;

/// Evaluates `node`, rejecting exponents larger than `max_exponent`.
pub(crate) fn eval(node: &Node, max_exponent: u32) -> Result<Decimal, CalcError> {
    match node {
        Node::Number(value) => Ok(*value),
        Node::Neg(inner) => Ok(negate(eval(inner, max_exponent)?)),
        Node::Chain { first, rest } => {
            let mut acc = eval(first, max_exponent)?;
            for (op, operand) in rest {
                let rhs = eval(operand, max_exponent)?;
                acc = binary(*op, acc, rhs)?;
            }
            Ok(acc)
        }
        Node::Power(operands) => {
            // Evaluate the operands left to right, then fold right to left.
            let values = operands
                .iter()
                .map(|operand| eval(operand, max_exponent))
                .collect::<Result<Vec<_>, _>>()?;
            let mut values = values.into_iter().rev();
            let mut acc = values.next().ok_or(CalcError::Overflow)?;
            for base in values {
                acc = pow(base, acc, max_exponent)?;
            }
            Ok(acc)
        }
        Node::Call { func, args } => {
            let args = args
                .iter()
                .map(|arg| eval(arg, max_exponent))
                .collect::<Result<Vec<_>, _>>()?;
            call(*func, &args)
        }
    }
}

/// `-x`, which is exact for every [`Decimal`].
fn negate(mut x: Decimal) -> Decimal {
    x.set_sign_negative(!x.is_sign_negative());
    x
}

/// Applies a left-associative binary operator.
fn binary(op: BinOp, a: Decimal, b: Decimal) -> Result<Decimal, CalcError> {
    match op {
        BinOp::Add => a.checked_add(b).ok_or(CalcError::Overflow),
        BinOp::Sub => a.checked_sub(b).ok_or(CalcError::Overflow),
        BinOp::Mul => mul(a, b),
        BinOp::Div => div(a, b),
        BinOp::FloorDiv => floor_div(a, b),
        BinOp::Rem => rem(a, b),
    }
}

/// `a * b`, reporting a nonzero product that rounds to zero as underflow.
fn mul(a: Decimal, b: Decimal) -> Result<Decimal, CalcError> {
    let product = a.checked_mul(b).ok_or(CalcError::Overflow)?;
    if product.is_zero() && !a.is_zero() && !b.is_zero() {
        return Err(CalcError::Underflow);
    }
    Ok(product)
}

/// `a / b`, rounded to the precision of [`Decimal`].
fn div(a: Decimal, b: Decimal) -> Result<Decimal, CalcError> {
    if b.is_zero() {
        return Err(CalcError::DivisionByZero);
    }
    let quotient = a.checked_div(b).ok_or(CalcError::Overflow)?;
    if quotient.is_zero() && !a.is_zero() {
        return Err(CalcError::Underflow);
    }
    Ok(quotient)
}

/// `a % b` with the sign of `b` (floored, as in Python), so that
/// `a == (a // b) * b + a % b`.
fn rem(a: Decimal, b: Decimal) -> Result<Decimal, CalcError> {
    let (truncated, crosses) = truncated_rem(a, b)?;
    if crosses {
        truncated.checked_add(b).ok_or(CalcError::Overflow)
    } else {
        Ok(truncated)
    }
}

/// `floor(a / b)`, computed from the exact remainder so that the rounding of
/// `a / b` cannot push the result across an integer.
fn floor_div(a: Decimal, b: Decimal) -> Result<Decimal, CalcError> {
    let (truncated, crosses) = truncated_rem(a, b)?;
    // `a - truncated` has the sign of `a`, is no larger in magnitude, and is
    // a multiple of `b`; so the quotient is an integer up to the rounding of
    // huge operands.
    let multiple = a.checked_sub(truncated).ok_or(CalcError::Overflow)?;
    let quotient = multiple
        .checked_div(b)
        .ok_or(CalcError::Overflow)?
        .round_dp_with_strategy(0, RoundingStrategy::MidpointNearestEven);
    if crosses {
        quotient.checked_sub(Decimal::ONE).ok_or(CalcError::Overflow)
    } else {
        Ok(quotient)
    }
}

/// The remainder of `a / b` truncated towards zero (sign of `a`), and whether
/// it is nonzero with a sign different from `b`'s, so that the floored
/// quotient is one below the truncated one.
fn truncated_rem(a: Decimal, b: Decimal) -> Result<(Decimal, bool), CalcError> {
    if b.is_zero() {
        return Err(CalcError::DivisionByZero);
    }
    let r = a.checked_rem(b).ok_or(CalcError::Overflow)?;
    let crosses = !r.is_zero() && r.is_sign_negative() != b.is_sign_negative();
    Ok((r, crosses))
}

/// `base ^ exponent` for an integer `exponent` with `|exponent| <= max_exponent`.
fn pow(base: Decimal, exponent: Decimal, max_exponent: u32) -> Result<Decimal, CalcError> {
    if !exponent.is_integer() {
        return Err(CalcError::Domain {
            message: format!(
                "the exponent {} is not an integer; '^' and '**' support only integer exponents \
                 (use sqrt(x) for square roots)",
                exponent.normalize()
            ),
        });
    }
    let too_large = || CalcError::ExponentTooLarge {
        exponent: exponent.normalize().to_string(),
        limit: max_exponent,
    };
    if exponent.abs() > Decimal::from(max_exponent) {
        return Err(too_large());
    }
    let n = exponent.abs().to_u32().ok_or_else(too_large)?;
    if n == 0 {
        // Including 0^0, by the usual convention.
        return Ok(Decimal::ONE);
    }
    if base.is_zero() {
        return if exponent.is_sign_negative() {
            Err(CalcError::DivisionByZero)
        } else {
            Ok(Decimal::ZERO)
        };
    }
    let magnitude = base.abs();
    let result = if exponent.is_sign_negative() {
        if magnitude >= Decimal::ONE {
            // |base|^n >= 1; if it overflows, its reciprocal is below 1.3e-29.
            let p = pow_u32(magnitude, n).ok_or(CalcError::Underflow)?;
            div(Decimal::ONE, p)?
        } else {
            // 1/|base| >= 1 is at most 1e28, so it cannot overflow.
            let reciprocal = div(Decimal::ONE, magnitude)?;
            pow_u32(reciprocal, n).ok_or(CalcError::Overflow)?
        }
    } else {
        let p = pow_u32(magnitude, n).ok_or(CalcError::Overflow)?;
        if p.is_zero() {
            return Err(CalcError::Underflow);
        }
        p
    };
    let odd = n % 2 == 1;
    Ok(if base.is_sign_negative() && odd {
        negate(result)
    } else {
        result
    })
}

/// `base ^ n` by checked repeated squaring; `None` on overflow. Squares only
/// while higher exponent bits remain, so an overflowing square always means
/// an overflowing result.
fn pow_u32(base: Decimal, n: u32) -> Option<Decimal> {
    let mut result = Decimal::ONE;
    let mut square = base;
    let mut remaining = n;
    loop {
        if remaining & 1 == 1 {
            result = result.checked_mul(square)?;
        }
        remaining >>= 1;
        if remaining == 0 {
            return Some(result);
        }
        square = square.checked_mul(square)?;
    }
}

/// Applies a built-in function; the parser has checked the arity.
fn call(func: Func, args: &[Decimal]) -> Result<Decimal, CalcError> {
    let arity_error = || CalcError::Domain {
        message: format!("{} was called with the wrong number of arguments", func.name()),
    };
    let first = *args.first().ok_or_else(arity_error)?;
    match func {
        Func::Abs => Ok(first.abs()),
        Func::Ceil => Ok(first.ceil()),
        Func::Floor => Ok(first.floor()),
        Func::Sqrt => sqrt(first),
        Func::Round => round(first, args.get(1).copied().unwrap_or(Decimal::ZERO)),
        Func::Max => Ok(args.iter().copied().fold(first, Decimal::max)),
        Func::Min => Ok(args.iter().copied().fold(first, Decimal::min)),
    }
}

/// `round(x, places)`: rounds half away from zero to `places` decimal places;
/// a negative `places` rounds to tens, hundreds, ...
fn round(x: Decimal, places: Decimal) -> Result<Decimal, CalcError> {
    let invalid = || CalcError::Domain {
        message: format!(
            "round(x, n): n must be an integer from -{MAX_ROUND_PLACES} to {MAX_ROUND_PLACES} \
             (the number of decimal places to keep), but it is {}",
            places.normalize()
        ),
    };
    if !places.is_integer() {
        return Err(invalid());
    }
    let places = places
        .to_i64()
        .filter(|p| p.abs() <= MAX_ROUND_PLACES)
        .ok_or_else(invalid)?;
    let strategy = RoundingStrategy::MidpointAwayFromZero;
    if let Ok(places) = u32::try_from(places) {
        return Ok(x.round_dp_with_strategy(places, strategy));
    }
    // Negative: round x / 10^k to an integer and scale back.
    let k = u32::try_from(places.unsigned_abs()).map_err(|_| invalid())?;
    let factor = pow_u32(Decimal::TEN, k).ok_or(CalcError::Overflow)?;
    let scaled = x.checked_div(factor).ok_or(CalcError::Overflow)?;
    scaled
        .round_dp_with_strategy(0, strategy)
        .checked_mul(factor)
        .ok_or(CalcError::Overflow)
}

/// The square root of `x`, to the precision of [`Decimal`]; exact when the
/// root is a decimal with few enough digits (`sqrt(152.2756)` is `12.34`).
fn sqrt(x: Decimal) -> Result<Decimal, CalcError> {
    if x.is_zero() {
        return Ok(Decimal::ZERO);
    }
    if x.is_sign_negative() {
        return Err(CalcError::Domain {
            message: format!(
                "sqrt of a negative number ({}) is not a real number; only real results are \
                 supported",
                x.normalize()
            ),
        });
    }
    // Start from the f64 estimate (about 15 correct digits), falling back to
    // an estimate that is at least the root: max(x, 1).
    let mut y = x
        .to_f64()
        .map(f64::sqrt)
        .and_then(Decimal::from_f64)
        .filter(|g| g.is_sign_positive() && !g.is_zero())
        .unwrap_or_else(|| x.max(Decimal::ONE));
    let mut previous = Decimal::ZERO;
    for _ in 0..MAX_SQRT_STEPS {
        // y/2 + (x/y)/2 instead of (y + x/y)/2, which could overflow.
        let next = y
            .checked_div(Decimal::TWO)
            .zip(x.checked_div(y).and_then(|q| q.checked_div(Decimal::TWO)))
            .and_then(|(a, b)| a.checked_add(b))
            .ok_or(CalcError::Overflow)?;
        if next == y {
            break;
        }
        if next == previous {
            // Rounding makes the iteration alternate between two
            // neighbours; keep the smaller one.
            y = y.min(next);
            break;
        }
        previous = y;
        y = next;
    }
    // Prefer the shortest decimal whose square is exactly x.
    for places in 0..=y.scale() {
        let candidate = y.round_dp(places);
        if candidate.checked_mul(candidate) == Some(x) {
            return Ok(candidate);
        }
    }
    Ok(y)
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]

    use std::str::FromStr;

    use super::*;

    fn d(s: &str) -> Decimal {
        Decimal::from_scientific(s)
            .or_else(|_| Decimal::from_str(s))
            .unwrap()
    }

    #[test]
    fn pow_u32_is_exact_for_integers_and_detects_overflow() {
        assert_eq!(pow_u32(d("2"), 95), Some(d("39614081257132168796771975168")));
        assert_eq!(pow_u32(d("2"), 96), None);
        assert_eq!(pow_u32(d("7"), 0), Some(Decimal::ONE));
        assert_eq!(pow_u32(d("1"), u32::MAX), Some(Decimal::ONE));
        assert_eq!(pow_u32(d("-1"), u32::MAX), Some(d("-1")));
    }

    #[test]
    fn pow_signs_and_reciprocals() {
        assert_eq!(pow(d("-2"), d("3"), 1000).unwrap(), d("-8"));
        assert_eq!(pow(d("-2"), d("-2"), 1000).unwrap(), d("0.25"));
        assert_eq!(pow(d("0.5"), d("-3"), 1000).unwrap(), d("8"));
        assert_eq!(pow(d("0"), d("0"), 1000).unwrap(), Decimal::ONE);
        assert_eq!(pow(d("0"), d("-1"), 1000), Err(CalcError::DivisionByZero));
        assert_eq!(pow(d("2"), d("-100"), 1000), Err(CalcError::Underflow));
        assert_eq!(pow(d("0.5"), d("-100"), 1000), Err(CalcError::Overflow));
        assert_eq!(pow(d("0.1"), d("100"), 1000), Err(CalcError::Underflow));
    }

    #[test]
    fn sqrt_is_precise() {
        assert_eq!(sqrt(d("2")).unwrap(), d("1.4142135623730950488016887242"));
        assert_eq!(sqrt(d("152.2756")).unwrap(), d("12.34"));
        assert_eq!(sqrt(d("1e-28")).unwrap(), d("0.00000000000001"));
        // MAX = 2^96 - 1, so its root is just below 2^48.
        assert_eq!(
            sqrt(Decimal::MAX).unwrap(),
            d("281474976710655.99999999999999822")
        );
    }

    #[test]
    fn floor_div_does_not_round_across_integers() {
        // 2 / 2.0000000000000000000000000001 rounds to 1, but the floor is 0.
        let b = d("2.0000000000000000000000000001");
        assert_eq!(floor_div(d("2"), b).unwrap(), Decimal::ZERO);
        assert_eq!(rem(d("2"), b).unwrap(), d("2"));
    }
}
