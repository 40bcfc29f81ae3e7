//! Tokenizer: turns the characters of an expression into tokens on demand.
//!
//! Positions are 0-based character offsets. Number literals are converted to
//! [`Decimal`] here, so that an out-of-range literal is reported at its own
//! position.

use std::str::FromStr;

use rust_decimal::Decimal;

use crate::error::CalcError;

/// Largest number of integer digits a [`Decimal`] can hold.
const MAX_INTEGER_DIGITS: i64 = 29;
/// Largest number of digits after the decimal point a [`Decimal`] can hold.
const MAX_SCALE: i64 = 28;

/// What a token is.
#[derive(Debug, Clone, PartialEq)]
pub(crate) enum TokenKind {
    /// A number literal, already converted.
    Number(Decimal),
    /// A name: a constant or a function.
    Ident(String),
    /// `+`
    Plus,
    /// `-`
    Minus,
    /// `*`
    Star,
    /// `**`
    DoubleStar,
    /// `/`
    Slash,
    /// `//`
    DoubleSlash,
    /// `%`
    Percent,
    /// `^`
    Caret,
    /// `(`
    LParen,
    /// `)`
    RParen,
    /// `,`
    Comma,
    /// The end of the input.
    End,
}

/// One token with its location and source text.
#[derive(Debug, Clone, PartialEq)]
pub(crate) struct Token {
    /// What the token is.
    pub(crate) kind: TokenKind,
    /// Character offset of the token's first character.
    pub(crate) position: usize,
    /// The token as written (empty for [`TokenKind::End`]).
    pub(crate) text: String,
}

/// An on-demand tokenizer over the characters of one expression.
pub(crate) struct Lexer {
    chars: Vec<char>,
    pos: usize,
}

impl Lexer {
    /// Creates a lexer over `input`.
    pub(crate) fn new(input: &str) -> Self {
        Self {
            chars: input.chars().collect(),
            pos: 0,
        }
    }

    /// Returns the character at offset `index`, if any.
    fn char_at(&self, index: usize) -> Option<char> {
        self.chars.get(index).copied()
    }

    /// Returns the character `ahead` places after the current one, if any.
    fn peek(&self, ahead: usize) -> Option<char> {
        self.char_at(self.pos.saturating_add(ahead))
    }

    /// Moves past the current character.
    fn bump(&mut self) {
        self.pos = self.pos.saturating_add(1);
    }

    /// The source text between two character offsets.
    fn text(&self, start: usize, end: usize) -> String {
        self.chars.get(start..end).unwrap_or_default().iter().collect()
    }

    /// Moves past a run of ASCII digits and returns them.
    fn digits(&mut self) -> String {
        let mut digits = String::new();
        while let Some(c) = self.peek(0).filter(char::is_ascii_digit) {
            digits.push(c);
            self.bump();
        }
        digits
    }

    /// Reads the next token, skipping whitespace.
    ///
    /// After [`TokenKind::End`] has been returned, every further call returns
    /// it again.
    pub(crate) fn next_token(&mut self) -> Result<Token, CalcError> {
        while self.peek(0).is_some_and(char::is_whitespace) {
            self.bump();
        }
        let start = self.pos;
        let Some(c) = self.peek(0) else {
            return Ok(Token {
                kind: TokenKind::End,
                position: start,
                text: String::new(),
            });
        };
        if c.is_ascii_digit() || c == '.' {
            return self.number(start);
        }
        if c.is_ascii_alphabetic() || c == '_' {
            while self
                .peek(0)
                .is_some_and(|c| c.is_ascii_alphanumeric() || c == '_')
            {
                self.bump();
            }
            let text = self.text(start, self.pos);
            return Ok(Token {
                kind: TokenKind::Ident(text.clone()),
                position: start,
                text,
            });
        }
        let (kind, len) = match (c, self.peek(1)) {
            ('*', Some('*')) => (TokenKind::DoubleStar, 2),
            ('/', Some('/')) => (TokenKind::DoubleSlash, 2),
            ('+', _) => (TokenKind::Plus, 1),
            ('-', _) => (TokenKind::Minus, 1),
            ('*', _) => (TokenKind::Star, 1),
            ('/', _) => (TokenKind::Slash, 1),
            ('%', _) => (TokenKind::Percent, 1),
            ('^', _) => (TokenKind::Caret, 1),
            ('(', _) => (TokenKind::LParen, 1),
            (')', _) => (TokenKind::RParen, 1),
            (',', _) => (TokenKind::Comma, 1),
            _ => {
                return Err(CalcError::Syntax {
                    position: start,
                    message: unexpected_char_message(c),
                });
            }
        };
        self.pos = self.pos.saturating_add(len);
        Ok(Token {
            kind,
            position: start,
            text: self.text(start, self.pos),
        })
    }

    /// Reads a number literal starting at `start`: `12`, `1.5`, `.5`, `5.`,
    /// `1e3`, `2.5E-2`, `1e+3`.
    fn number(&mut self, start: usize) -> Result<Token, CalcError> {
        let int_digits = self.digits();
        let mut frac_digits = String::new();
        if self.peek(0) == Some('.') {
            self.bump();
            frac_digits = self.digits();
        }
        if int_digits.is_empty() && frac_digits.is_empty() {
            return Err(CalcError::Syntax {
                position: start,
                message: "a '.' must be part of a number with at least one digit, such as 0.5 \
                          or .5"
                    .to_owned(),
            });
        }
        // An exponent is taken only if digits follow, so that `2e` stays the
        // number 2 followed by the name `e` (reported by the parser).
        let mut exponent: i64 = 0;
        let sign_len = usize::from(matches!(self.peek(1), Some('+' | '-')));
        let has_exponent = matches!(self.peek(0), Some('e' | 'E'))
            && self
                .peek(sign_len.saturating_add(1))
                .is_some_and(|c| c.is_ascii_digit());
        if has_exponent {
            let negative = self.peek(1) == Some('-');
            self.pos = self.pos.saturating_add(sign_len.saturating_add(1));
            for digit in self.digits().bytes() {
                exponent = exponent
                    .saturating_mul(10)
                    .saturating_add(i64::from(digit.saturating_sub(b'0')));
            }
            if negative {
                exponent = exponent.saturating_neg();
            }
        }
        if self.peek(0) == Some('.') {
            return Err(CalcError::Syntax {
                position: self.pos,
                message: "a number can contain only one '.', and it cannot be followed by another \
                          '.'; use '.' only as the decimal point (write 1234.5, not 1.234.5)"
                    .to_owned(),
            });
        }
        let text = self.text(start, self.pos);
        let frac_len = i64::try_from(frac_digits.len()).unwrap_or(i64::MAX);
        let digits = int_digits + &frac_digits;
        match literal_to_decimal(&digits, exponent.saturating_sub(frac_len)) {
            Some(value) => Ok(Token {
                kind: TokenKind::Number(value),
                position: start,
                text,
            }),
            None => Err(CalcError::NumberOutOfRange {
                position: start,
                literal: text,
            }),
        }
    }
}

/// Converts `digits × 10^exp10` to a [`Decimal`], where `digits` is a non-empty
/// run of ASCII digits.
///
/// Digits beyond the precision of [`Decimal`] are rounded (half away from
/// zero). Returns `None` if the value is too large, or nonzero but so small
/// that it would round to zero.
fn literal_to_decimal(digits: &str, exp10: i64) -> Option<Decimal> {
    let significant = digits.trim_start_matches('0');
    if significant.is_empty() {
        return Some(Decimal::ZERO);
    }
    let trimmed = significant.trim_end_matches('0');
    let trailing_zeros = i64::try_from(significant.len().saturating_sub(trimmed.len())).ok()?;
    let exp10 = exp10.saturating_add(trailing_zeros);
    let len = i64::try_from(trimmed.len()).ok()?;
    // The value is in [10^(magnitude-1), 10^magnitude).
    let magnitude = len.saturating_add(exp10);
    if !(-MAX_SCALE..=MAX_INTEGER_DIGITS).contains(&magnitude) {
        // Too large for 96 bits, or below 10^-29 which rounds to zero at
        // 28 decimal places.
        return None;
    }
    // Both bounds are small now, so the plain-notation text is short.
    let plain = if exp10 >= 0 {
        let zeros = usize::try_from(exp10).ok()?;
        format!("{trimmed}{}", "0".repeat(zeros))
    } else if magnitude > 0 {
        let split = usize::try_from(magnitude).ok()?;
        let (int_part, frac_part) = trimmed.split_at_checked(split)?;
        format!("{int_part}.{frac_part}")
    } else {
        let zeros = usize::try_from(magnitude.saturating_neg()).ok()?;
        format!("0.{}{trimmed}", "0".repeat(zeros))
    };
    Decimal::from_str(&plain).ok().filter(|d| !d.is_zero())
}

/// A message for a character that cannot start any token, with a hint for
/// common look-alikes of supported syntax.
fn unexpected_char_message(c: char) -> String {
    let hint = match c {
        '×' | '·' | '⋅' | '∙' | '✕' | '✖' => "use '*' for multiplication",
        '÷' | '∕' | '⁄' => "use '/' for division",
        '−' | '–' | '—' | '‐' | '‑' => "use the ASCII '-' for minus",
        '=' => "give only the expression, without '=', a result or a variable assignment",
        '[' | ']' | '{' | '}' => "use only '(' and ')' for grouping",
        '!' => "factorials are not supported; write the product out, e.g. 5*4*3*2*1",
        '√' => "use sqrt(x) for square roots",
        '²' | '³' => "use '^' for powers, e.g. 3^2",
        '$' | '€' | '£' | '¥' => "leave out currency symbols and write only the numbers",
        '\'' | '"' | '`' => "write plain numbers without quotes or digit separators",
        _ => {
            "allowed are digits, '.', the operators + - * / // % ^ **, parentheses, ',' between \
             function arguments, and the names of constants and functions"
        }
    };
    format!("unexpected character '{c}'; {hint}")
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used, clippy::indexing_slicing)]

    use super::*;

    fn kinds(input: &str) -> Vec<TokenKind> {
        let mut lexer = Lexer::new(input);
        let mut out = Vec::new();
        loop {
            let token = lexer.next_token().unwrap();
            if token.kind == TokenKind::End {
                return out;
            }
            out.push(token.kind);
        }
    }

    fn num(s: &str) -> TokenKind {
        TokenKind::Number(Decimal::from_str(s).unwrap())
    }

    #[test]
    fn operators_and_punctuation() {
        use TokenKind::*;
        assert_eq!(
            kinds("+ - * ** / // % ^ ( ) ,"),
            vec![
                Plus,
                Minus,
                Star,
                DoubleStar,
                Slash,
                DoubleSlash,
                Percent,
                Caret,
                LParen,
                RParen,
                Comma
            ]
        );
        assert_eq!(kinds("***"), vec![DoubleStar, Star]);
    }

    #[test]
    fn number_forms() {
        assert_eq!(kinds("12"), vec![num("12")]);
        assert_eq!(kinds("1.5"), vec![num("1.5")]);
        assert_eq!(kinds(".5"), vec![num("0.5")]);
        assert_eq!(kinds("5."), vec![num("5")]);
        assert_eq!(kinds("1e3"), vec![num("1000")]);
        assert_eq!(kinds("1E+3"), vec![num("1000")]);
        assert_eq!(kinds("2.5E-2"), vec![num("0.025")]);
        assert_eq!(kinds("000123.4500"), vec![num("123.45")]);
        assert_eq!(kinds("0e999999999999999999999"), vec![num("0")]);
    }

    #[test]
    fn exponent_needs_digits() {
        assert_eq!(kinds("2e"), vec![num("2"), TokenKind::Ident("e".to_owned())]);
        assert_eq!(
            kinds("2e+"),
            vec![num("2"), TokenKind::Ident("e".to_owned()), TokenKind::Plus]
        );
    }

    #[test]
    fn positions_count_characters_not_bytes() {
        let mut lexer = Lexer::new("  ×");
        let err = lexer.next_token().unwrap_err();
        assert_eq!(err.position(), Some(2));
        let mut lexer = Lexer::new("é");
        assert_eq!(lexer.next_token().unwrap_err().position(), Some(0));
        let mut lexer = Lexer::new("\u{3000}7");
        assert_eq!(lexer.next_token().unwrap().position, 1);
    }

    #[test]
    fn literal_range() {
        let max = "79228162514264337593543950335";
        assert_eq!(
            literal_to_decimal(max, 0).map(|d| d.to_string()),
            Some(max.to_owned())
        );
        assert_eq!(literal_to_decimal("79228162514264337593543950336", 0), None);
        assert_eq!(literal_to_decimal("1", 29), None);
        assert_eq!(literal_to_decimal("1", i64::MAX), None);
        assert_eq!(literal_to_decimal("1", i64::MIN), None);
        assert_eq!(
            literal_to_decimal("1", -28).map(|d| d.to_string()),
            Some("0.0000000000000000000000000001".to_owned())
        );
        // 5e-29 rounds up to 1e-28; 4e-29 would round to zero.
        assert_eq!(
            literal_to_decimal("5", -29).map(|d| d.to_string()),
            Some("0.0000000000000000000000000001".to_owned())
        );
        assert_eq!(literal_to_decimal("4", -29), None);
        // Excess precision is rounded.
        assert_eq!(
            literal_to_decimal("12345678901234567890123456789012", -32).map(|d| d.to_string()),
            Some("0.1234567890123456789012345679".to_owned())
        );
    }

    #[test]
    fn malformed_numbers_are_syntax_errors() {
        let mut lexer = Lexer::new(".");
        assert!(matches!(
            lexer.next_token(),
            Err(CalcError::Syntax { position: 0, .. })
        ));
        let mut lexer = Lexer::new("1.2.3");
        assert!(matches!(
            lexer.next_token(),
            Err(CalcError::Syntax { position: 3, .. })
        ));
    }
}
