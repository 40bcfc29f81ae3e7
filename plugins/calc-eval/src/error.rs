//! The error type returned by [`evaluate`](crate::evaluate).

use std::fmt;

/// Longest literal text quoted verbatim in an error message; longer literals
/// are shortened with an ellipsis so that messages stay small.
const MAX_QUOTED_CHARS: usize = 40;

/// Why an expression could not be evaluated.
///
/// Every variant is a normal, expected outcome for untrusted input; none of
/// them indicates a bug. The [`Display`](fmt::Display) implementation renders
/// a single-line message written for an LLM agent: it says what is wrong,
/// where it is (as a 0-based character offset into the expression, when the
/// problem has a location), and what to change.
///
/// Positions count Unicode scalar values (`char`s), not bytes, starting at 0.
#[derive(Debug, Clone, PartialEq)]
#[non_exhaustive]
pub enum CalcError {
    /// The expression has more characters than [`Limits::max_input_len`](crate::Limits::max_input_len).
    InputTooLong {
        /// Length of the expression, in characters.
        length: usize,
        /// The limit that was exceeded, in characters.
        limit: usize,
    },
    /// Parentheses, function calls and unary signs are nested deeper than
    /// [`Limits::max_depth`](crate::Limits::max_depth) (or than
    /// [`MAX_SUPPORTED_DEPTH`](crate::MAX_SUPPORTED_DEPTH), whichever is smaller).
    TooDeep {
        /// Character offset of the token that went one level too deep.
        position: usize,
        /// The nesting limit that was in force.
        limit: usize,
    },
    /// The expression is not well formed: an unexpected or unsupported
    /// character or token, a missing operand or parenthesis, an unknown name,
    /// or a function called with the wrong number of arguments.
    Syntax {
        /// Character offset where the problem was detected.
        position: usize,
        /// What is wrong and how to fix it (without the position, which
        /// `Display` adds).
        message: String,
    },
    /// A number written in the expression is too large (above about 7.9e28)
    /// or so small that it would round to zero (below 5e-29).
    NumberOutOfRange {
        /// Character offset of the first character of the number.
        position: usize,
        /// The number as written in the expression.
        literal: String,
    },
    /// The right operand of `/`, `//` or `%` evaluated to zero, or zero was
    /// raised to a negative power.
    DivisionByZero,
    /// An intermediate or final result is larger in magnitude than the
    /// decimal type can represent (about 7.9e28).
    Overflow,
    /// A multiplication, division or power of nonzero numbers produced a
    /// nonzero value smaller in magnitude than 1e-28, which would have been
    /// silently rounded to zero.
    Underflow,
    /// The result has more digits than
    /// [`Limits::max_result_digits`](crate::Limits::max_result_digits).
    ResultTooLarge {
        /// Number of decimal digits in the normalized result.
        digits: usize,
        /// The limit that was exceeded.
        limit: usize,
    },
    /// The magnitude of an exponent of `^` or `**` is larger than
    /// [`Limits::max_exponent`](crate::Limits::max_exponent). Detected before
    /// any power is computed.
    ExponentTooLarge {
        /// The offending exponent, as a normalized decimal string.
        exponent: String,
        /// The limit that was exceeded.
        limit: u32,
    },
    /// An operation was applied outside its mathematical domain, for example
    /// the square root of a negative number, a non-integer exponent, or an
    /// invalid `round` precision.
    Domain {
        /// What is wrong and how to fix it.
        message: String,
    },
}

impl CalcError {
    /// Returns the 0-based character offset the error refers to, if it has one.
    ///
    /// Evaluation errors ([`DivisionByZero`](Self::DivisionByZero),
    /// [`Overflow`](Self::Overflow), ...) have no single location and return
    /// `None`.
    #[must_use]
    pub fn position(&self) -> Option<usize> {
        match self {
            Self::TooDeep { position, .. }
            | Self::Syntax { position, .. }
            | Self::NumberOutOfRange { position, .. } => Some(*position),
            _ => None,
        }
    }
}

impl fmt::Display for CalcError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Self::InputTooLong { length, limit } => write!(
                f,
                "the expression is {length} characters long but at most {limit} are allowed; \
                 shorten it or split the calculation into several smaller expressions"
            ),
            Self::TooDeep { position, limit } => write!(
                f,
                "the expression is nested too deeply at position {position} (0-based character \
                 offset): at most {limit} levels of parentheses, function calls and unary signs \
                 are allowed; remove redundant parentheses or signs, or split the calculation \
                 into several expressions"
            ),
            Self::Syntax { position, message } => write!(
                f,
                "syntax error at position {position} (0-based character offset): {message}"
            ),
            Self::NumberOutOfRange { position, literal } => write!(
                f,
                "the number '{}' at position {position} (0-based character offset) is out of \
                 range: numbers must be at most about 7.9e28 in magnitude and are kept to at \
                 most 28 digits after the decimal point, so nonzero numbers below 5e-29 cannot \
                 be represented; rescale the calculation (for example work in thousands or \
                 millionths) so the numbers fit",
                shorten(literal)
            ),
            Self::DivisionByZero => f.write_str(
                "division by zero: the right operand of '/', '//' or '%' evaluated to 0 (or 0 was \
                 raised to a negative power); check the divisor",
            ),
            Self::Overflow => f.write_str(
                "overflow: an intermediate or final result exceeds the representable range of \
                 about ±7.9e28 (29 significant digits); use smaller numbers or rescale the \
                 calculation (for example compute in millions)",
            ),
            Self::Underflow => f.write_str(
                "underflow: a multiplication, division or power produced a nonzero value smaller \
                 than 1e-28, the finest resolution available (28 digits after the decimal \
                 point); rescale the calculation (for example compute in millionths)",
            ),
            Self::ResultTooLarge { digits, limit } => write!(
                f,
                "the result has {digits} digits but at most {limit} are allowed; use round(x, n) \
                 to keep fewer decimal places, or rescale the calculation"
            ),
            Self::ExponentTooLarge { exponent, limit } => write!(
                f,
                "the exponent {} is too large: '^' and '**' accept integer exponents from -{limit} \
                 to {limit}; use a smaller exponent",
                shorten(exponent)
            ),
            Self::Domain { message } => write!(f, "math domain error: {message}"),
        }
    }
}

impl std::error::Error for CalcError {}

/// Quotes at most [`MAX_QUOTED_CHARS`] characters of `text`.
pub(crate) fn shorten(text: &str) -> String {
    if text.chars().count() <= MAX_QUOTED_CHARS {
        text.to_owned()
    } else {
        let mut short: String = text.chars().take(MAX_QUOTED_CHARS).collect();
        short.push('…');
        short
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn shorten_keeps_short_text_and_cuts_long_text() {
        assert_eq!(shorten("1e99"), "1e99");
        let long = "9".repeat(100);
        let short = shorten(&long);
        assert_eq!(short.chars().count(), MAX_QUOTED_CHARS + 1);
        assert!(short.ends_with('…'));
    }

    #[test]
    fn position_is_reported_only_for_located_errors() {
        let syntax = CalcError::Syntax {
            position: 3,
            message: "x".into(),
        };
        assert_eq!(syntax.position(), Some(3));
        assert_eq!(CalcError::Overflow.position(), None);
        assert_eq!(
            CalcError::TooDeep {
                position: 7,
                limit: 1
            }
            .position(),
            Some(7)
        );
    }
}
