//! Recursive-descent parser producing a small syntax tree.
//!
//! Grammar (lowest precedence first):
//!
//! ```text
//! expr    = term  (("+" | "-") term)*
//! term    = unary (("*" | "/" | "//" | "%") unary)*
//! unary   = ("+" | "-")* power
//! power   = primary (("^" | "**") (primary | unary))*     right-associative
//! primary = number | constant | function "(" [expr ("," expr)*] ")" | "(" expr ")"
//! ```
//!
//! Recursion happens only through parentheses, function calls and unary
//! signs, and each of them adds one level of depth that is checked against
//! the limit before recursing; left-associative chains and `^` chains are
//! collected in vectors. Both the parser's stack use and the depth of the
//! resulting tree are therefore bounded by the depth limit.

use rust_decimal::Decimal;

use crate::error::{CalcError, shorten};
use crate::lexer::{Lexer, Token, TokenKind};

/// π rounded to 28 decimal places: 3.1415926535897932384626433833.
const PI: Decimal = Decimal::from_parts(1_102_470_953, 185_874_565, 1_703_060_790, false, 28);
/// Euler's number rounded to 28 decimal places: 2.7182818284590452353602874714.
const E: Decimal = Decimal::from_parts(2_239_425_882, 3_958_169_141, 1_473_583_531, false, 28);

/// Names of the constants, for error messages.
const CONSTANT_NAMES: &str = "pi, e";
/// Names of the functions, for error messages.
const FUNCTION_NAMES: &str = "abs, ceil, floor, max, min, round, sqrt";

/// A left-associative binary operator.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum BinOp {
    /// `+`
    Add,
    /// `-`
    Sub,
    /// `*`
    Mul,
    /// `/`
    Div,
    /// `//`: floor division.
    FloorDiv,
    /// `%`: remainder with the sign of the divisor.
    Rem,
}

/// A built-in function.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Func {
    /// `abs(x)`
    Abs,
    /// `ceil(x)`
    Ceil,
    /// `floor(x)`
    Floor,
    /// `max(x, ...)`
    Max,
    /// `min(x, ...)`
    Min,
    /// `round(x)` or `round(x, n)`
    Round,
    /// `sqrt(x)`
    Sqrt,
}

impl Func {
    /// Looks a function up by its (ASCII case-insensitive) name.
    fn from_name(name: &str) -> Option<Self> {
        Some(match name.to_ascii_lowercase().as_str() {
            "abs" => Self::Abs,
            "ceil" => Self::Ceil,
            "floor" => Self::Floor,
            "max" => Self::Max,
            "min" => Self::Min,
            "round" => Self::Round,
            "sqrt" => Self::Sqrt,
            _ => return None,
        })
    }

    /// The canonical name.
    pub(crate) fn name(self) -> &'static str {
        match self {
            Self::Abs => "abs",
            Self::Ceil => "ceil",
            Self::Floor => "floor",
            Self::Max => "max",
            Self::Min => "min",
            Self::Round => "round",
            Self::Sqrt => "sqrt",
        }
    }

    /// Whether `count` arguments are accepted; otherwise the usage to show.
    fn check_arity(self, count: usize) -> Result<(), &'static str> {
        match (self, count) {
            (Self::Abs | Self::Ceil | Self::Floor | Self::Sqrt, 1)
            | (Self::Round, 1 | 2)
            | (Self::Max | Self::Min, 1..) => Ok(()),
            (Self::Abs, _) => Err("abs(x) takes exactly 1 argument"),
            (Self::Ceil, _) => Err("ceil(x) takes exactly 1 argument"),
            (Self::Floor, _) => Err("floor(x) takes exactly 1 argument"),
            (Self::Sqrt, _) => Err("sqrt(x) takes exactly 1 argument"),
            (Self::Round, _) => Err(
                "round takes 1 or 2 arguments: round(x) rounds to an integer, round(x, n) to n \
                 decimal places",
            ),
            (Self::Max | Self::Min, _) => Err("min and max take at least 1 argument"),
        }
    }
}

/// A node of the syntax tree.
#[derive(Debug, Clone, PartialEq)]
pub(crate) enum Node {
    /// A literal or a constant.
    Number(Decimal),
    /// Unary minus.
    Neg(Box<Node>),
    /// A left-associative chain: `first op1 x1 op2 x2 ...`.
    Chain {
        /// The leftmost operand.
        first: Box<Node>,
        /// The operators and the operands to their right, in order.
        rest: Vec<(BinOp, Node)>,
    },
    /// A right-associative power chain `x0 ^ (x1 ^ (x2 ...))`; at least two
    /// operands.
    Power(Vec<Node>),
    /// A function call with its arguments.
    Call {
        /// The function.
        func: Func,
        /// The arguments, in order.
        args: Vec<Node>,
    },
}

/// Parses `input` into a syntax tree, allowing at most `max_depth` levels of
/// nesting.
pub(crate) fn parse(input: &str, max_depth: usize) -> Result<Node, CalcError> {
    let mut parser = Parser::new(input, max_depth)?;
    let node = parser.expr(0)?;
    match parser.current.kind {
        TokenKind::End => Ok(node),
        _ => Err(parser.unexpected_after_operand(None)),
    }
}

/// An open parenthesis that is waiting for its `)`.
#[derive(Clone, Copy)]
struct Open {
    /// Character offset of the `(`.
    position: usize,
    /// The function whose argument list it opens, if any.
    func: Option<Func>,
}

/// Parser state: the lexer and a one-token lookahead.
struct Parser {
    /// Source of further tokens.
    lexer: Lexer,
    /// The token being looked at.
    current: Token,
    /// The token before `current`, for error messages.
    previous: Option<Token>,
    /// The effective nesting limit.
    max_depth: usize,
}

impl Parser {
    /// Starts parsing `input`, reading its first token.
    fn new(input: &str, max_depth: usize) -> Result<Self, CalcError> {
        let mut lexer = Lexer::new(input);
        let current = lexer.next_token()?;
        Ok(Self {
            lexer,
            current,
            previous: None,
            max_depth,
        })
    }

    /// Moves to the next token.
    ///
    /// Kept out of line, like the error builders below, so that lexing and
    /// message formatting do not enlarge the frames of the recursive
    /// functions.
    #[inline(never)]
    fn advance(&mut self) -> Result<(), CalcError> {
        let next = self.lexer.next_token()?;
        self.previous = Some(std::mem::replace(&mut self.current, next));
        Ok(())
    }

    /// Returns `depth + 1`, or [`CalcError::TooDeep`] at the current token if
    /// that exceeds the limit.
    fn deeper(&self, depth: usize) -> Result<usize, CalcError> {
        let deeper = depth.saturating_add(1);
        if deeper > self.max_depth {
            Err(self.too_deep())
        } else {
            Ok(deeper)
        }
    }

    /// The error for exceeding the depth limit at the current token.
    #[cold]
    #[inline(never)]
    fn too_deep(&self) -> CalcError {
        CalcError::TooDeep {
            position: self.current.position,
            limit: self.max_depth,
        }
    }

    /// `expr = term (("+" | "-") term)*`
    fn expr(&mut self, depth: usize) -> Result<Node, CalcError> {
        let first = self.term(depth)?;
        let mut rest = Vec::new();
        loop {
            let op = match self.current.kind {
                TokenKind::Plus => BinOp::Add,
                TokenKind::Minus => BinOp::Sub,
                _ => break,
            };
            self.advance()?;
            rest.push((op, self.term(depth)?));
        }
        Ok(chain(first, rest))
    }

    /// `term = unary (("*" | "/" | "//" | "%") unary)*`
    fn term(&mut self, depth: usize) -> Result<Node, CalcError> {
        let first = self.unary(depth)?;
        let mut rest = Vec::new();
        loop {
            let op = match self.current.kind {
                TokenKind::Star => BinOp::Mul,
                TokenKind::Slash => BinOp::Div,
                TokenKind::DoubleSlash => BinOp::FloorDiv,
                TokenKind::Percent => BinOp::Rem,
                _ => break,
            };
            self.advance()?;
            rest.push((op, self.unary(depth)?));
        }
        Ok(chain(first, rest))
    }

    /// `unary = ("+" | "-")* power`; each sign is one level of depth.
    fn unary(&mut self, depth: usize) -> Result<Node, CalcError> {
        let mut depth = depth;
        let mut negate = false;
        loop {
            match self.current.kind {
                TokenKind::Plus => {}
                TokenKind::Minus => negate = !negate,
                _ => break,
            }
            depth = self.deeper(depth)?;
            self.advance()?;
        }
        let node = self.power(depth)?;
        Ok(if negate { Node::Neg(Box::new(node)) } else { node })
    }

    /// `power = primary (("^" | "**") (primary | unary))*`, right-associative.
    ///
    /// An exponent that starts with a sign is a whole `unary`, which also
    /// takes the rest of the chain: `2^-3^2` is `2^(-(3^2))`.
    fn power(&mut self, depth: usize) -> Result<Node, CalcError> {
        let mut operands = vec![self.primary(depth)?];
        while matches!(self.current.kind, TokenKind::Caret | TokenKind::DoubleStar) {
            self.advance()?;
            if matches!(self.current.kind, TokenKind::Plus | TokenKind::Minus) {
                operands.push(self.unary(depth)?);
                break;
            }
            operands.push(self.primary(depth)?);
        }
        if operands.len() == 1
            && let Some(single) = operands.pop()
        {
            return Ok(single);
        }
        Ok(Node::Power(operands))
    }

    /// `primary = number | constant | call | "(" expr ")"`
    fn primary(&mut self, depth: usize) -> Result<Node, CalcError> {
        match &self.current.kind {
            TokenKind::Number(value) => {
                let value = *value;
                self.advance()?;
                Ok(Node::Number(value))
            }
            TokenKind::LParen => {
                let open = Open {
                    position: self.current.position,
                    func: None,
                };
                let inner_depth = self.deeper(depth)?;
                self.advance()?;
                let inner = self.expr(inner_depth)?;
                self.expect_close(open)?;
                Ok(inner)
            }
            TokenKind::Ident(name) => {
                let name = name.clone();
                self.name(&name, depth)
            }
            _ => Err(self.operand_expected()),
        }
    }

    /// A constant or a function call; the current token is the name.
    fn name(&mut self, name: &str, depth: usize) -> Result<Node, CalcError> {
        let name_position = self.current.position;
        let lower = name.to_ascii_lowercase();
        let constant = match lower.as_str() {
            "pi" => Some(PI),
            "e" => Some(E),
            _ => None,
        };
        if let Some(value) = constant {
            self.advance()?;
            if self.current.kind == TokenKind::LParen {
                return Err(CalcError::Syntax {
                    position: self.current.position,
                    message: format!(
                        "'{name}' is a constant, not a function; to multiply write {name}*(...)"
                    ),
                });
            }
            return Ok(Node::Number(value));
        }
        let Some(func) = Func::from_name(name) else {
            return Err(CalcError::Syntax {
                position: name_position,
                message: format!(
                    "unknown name '{name}'; variables and units are not supported, substitute \
                     their numeric values. Available constants: {CONSTANT_NAMES}; functions: \
                     {FUNCTION_NAMES}",
                    name = shorten(name)
                ),
            });
        };
        self.advance()?;
        if self.current.kind != TokenKind::LParen {
            return Err(CalcError::Syntax {
                position: self.current.position,
                message: format!(
                    "'{name}' is a function; call it with its arguments in parentheses, for \
                     example {}(2)",
                    func.name()
                ),
            });
        }
        let open = Open {
            position: self.current.position,
            func: Some(func),
        };
        let inner_depth = self.deeper(depth)?;
        self.advance()?;
        let mut args = Vec::new();
        if self.current.kind == TokenKind::RParen {
            self.advance()?;
        } else {
            loop {
                args.push(self.expr(inner_depth)?);
                if self.current.kind == TokenKind::Comma {
                    self.advance()?;
                    continue;
                }
                self.expect_close(open)?;
                break;
            }
        }
        func.check_arity(args.len()).map_err(|usage| CalcError::Syntax {
            position: name_position,
            message: format!("{usage}, but {} were given", args.len()),
        })?;
        Ok(Node::Call { func, args })
    }

    /// Consumes the `)` that closes `open`, or explains what is wrong.
    fn expect_close(&mut self, open: Open) -> Result<(), CalcError> {
        if self.current.kind == TokenKind::RParen {
            self.advance()
        } else {
            Err(self.unexpected_after_operand(Some(open)))
        }
    }

    /// The error for a missing operand at the current token.
    #[cold]
    #[inline(never)]
    fn operand_expected(&self) -> CalcError {
        let token = &self.current;
        let previous = self.previous.as_ref();
        let mut message = match (&token.kind, previous.map(|p| &p.kind)) {
            (TokenKind::End, None) => {
                "the expression is empty; write an arithmetic expression such as 2 * (3 + 4)".to_owned()
            }
            (TokenKind::End, Some(_)) => format!(
                "the expression ends right after '{}', where a number, constant, function call \
                 or '(' is expected; complete or remove the last operator",
                previous.map_or_else(String::new, |p| shorten(&p.text))
            ),
            (TokenKind::RParen, Some(TokenKind::LParen)) => {
                "empty parentheses '()'; put an expression inside them or remove them".to_owned()
            }
            _ => format!(
                "expected a number, constant, function call or '(' but found '{}'; check that \
                 every operator has an operand on both sides",
                shorten(&token.text)
            ),
        };
        if previous.is_some_and(|p| p.kind == TokenKind::Percent) {
            message.push_str(
                ". Note that '%' is the remainder operator, not percent: write 50% of 80 as \
                 80*50/100",
            );
        }
        CalcError::Syntax {
            position: token.position,
            message,
        }
    }

    /// The error for a token that cannot follow a complete operand, where
    /// either the end of input (`open` is `None`) or the `)` closing `open`
    /// was expected.
    #[cold]
    #[inline(never)]
    fn unexpected_after_operand(&self, open: Option<Open>) -> CalcError {
        let token = &self.current;
        let message = match (&token.kind, open) {
            (TokenKind::End, Some(open)) => match open.func {
                Some(func) => format!(
                    "missing ')' to close the argument list of {}( at position {}; add ')' after \
                     the last argument",
                    func.name(),
                    open.position
                ),
                None => format!(
                    "missing ')' to close the '(' at position {}; add ')' where the group ends",
                    open.position
                ),
            },
            (TokenKind::RParen, None) => {
                "unmatched ')': there is no '(' before it for it to close; remove it or add the \
                 missing '('"
                    .to_owned()
            }
            (TokenKind::Comma, open) if open.is_none_or(|o| o.func.is_none()) => {
                "',' is only allowed between function arguments, as in max(1, 2); write numbers \
                 without thousands separators (1000000, not 1,000,000) and use '.' as the \
                 decimal point"
                    .to_owned()
            }
            (TokenKind::Number(_) | TokenKind::Ident(_) | TokenKind::LParen, _) => {
                self.missing_operator_message()
            }
            (_, Some(Open { func: Some(func), .. })) => format!(
                "expected ',' or ')' in the arguments of {}( but found '{}'",
                func.name(),
                shorten(&token.text)
            ),
            (_, Some(_)) => format!("expected ')' but found '{}'", shorten(&token.text)),
            (_, None) => format!("unexpected '{}'", shorten(&token.text)),
        };
        CalcError::Syntax {
            position: token.position,
            message,
        }
    }

    /// The message for two operands next to each other, such as `2(3)`.
    #[cold]
    #[inline(never)]
    fn missing_operator_message(&self) -> String {
        let token = &self.current;
        let mut message = format!(
            "an operator is missing before '{}'; implicit multiplication is not supported, write \
             '*' explicitly (for example 2*(3+4) or 2*pi)",
            shorten(&token.text)
        );
        if let TokenKind::Ident(name) = &token.kind {
            let after_number = self.previous.as_ref().is_some_and(|p| {
                matches!(p.kind, TokenKind::Number(_))
                    && p.position.saturating_add(p.text.chars().count()) == token.position
            });
            if name.eq_ignore_ascii_case("x") {
                message.push_str("; use '*', not 'x', for multiplication");
            } else if after_number && name.starts_with(['e', 'E']) {
                message.push_str(
                    "; for scientific notation put the exponent digits right after 'e', as in \
                     1e3 or 2.5e-4",
                );
            }
        }
        message
    }
}

/// Builds a chain node, or returns `first` itself if there is no operator.
fn chain(first: Node, rest: Vec<(BinOp, Node)>) -> Node {
    if rest.is_empty() {
        first
    } else {
        Node::Chain {
            first: Box::new(first),
            rest,
        }
    }
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]

    use std::str::FromStr;

    use super::*;

    fn n(s: &str) -> Node {
        Node::Number(Decimal::from_str(s).unwrap())
    }

    #[test]
    fn constants_have_28_decimals() {
        assert_eq!(PI.to_string(), "3.1415926535897932384626433833");
        assert_eq!(E.to_string(), "2.7182818284590452353602874714");
    }

    #[test]
    fn chains_are_flat() {
        let node = parse("1 + 2 - 3", 32).unwrap();
        assert_eq!(
            node,
            Node::Chain {
                first: Box::new(n("1")),
                rest: vec![(BinOp::Add, n("2")), (BinOp::Sub, n("3"))],
            }
        );
    }

    #[test]
    fn power_chain_with_signed_exponent() {
        let node = parse("2^-3^2", 32).unwrap();
        assert_eq!(
            node,
            Node::Power(vec![
                n("2"),
                Node::Neg(Box::new(Node::Power(vec![n("3"), n("2")])))
            ])
        );
    }

    #[test]
    fn even_number_of_minus_signs_cancels() {
        assert_eq!(parse("--+1", 32).unwrap(), n("1"));
        assert_eq!(parse("-+-+-1", 32).unwrap(), Node::Neg(Box::new(n("1"))));
    }

    #[test]
    fn depth_counts_parentheses_calls_and_signs() {
        assert!(parse("((1))", 2).is_ok());
        assert!(matches!(
            parse("(((1)))", 2),
            Err(CalcError::TooDeep {
                position: 2,
                limit: 2
            })
        ));
        assert!(parse("abs(-1)", 2).is_ok());
        assert!(matches!(
            parse("abs(-(1))", 2),
            Err(CalcError::TooDeep { position: 5, .. })
        ));
        assert!(matches!(parse("1", 0), Ok(Node::Number(_))));
        assert!(matches!(parse("-1", 0), Err(CalcError::TooDeep { .. })));
    }
}
