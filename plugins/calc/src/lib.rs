//! The `calc` plugin: `calculate_expression`, bounded decimal arithmetic.
//! The evaluator is the `calc-eval` crate; this file only exposes it as a tool.
use calc_eval::{CalcError, Limits, evaluate};
use schemars::JsonSchema;
use serde::{Deserialize, Serialize};
use toolhost_sdk::ToolError;

/// Evaluates an arithmetic expression exactly, in decimal (28 significant
/// digits), and returns the result as a string. Supports + - * / // (floor
/// division) % (remainder) ^ or ** (integer powers), parentheses, unary minus,
/// the constants pi and e, and abs, floor, ceil, round(x, n), min, max, sqrt.
/// Division by zero, overflow and over-long or over-nested input are errors.
#[derive(Deserialize, JsonSchema)]
struct CalculateExpression {
    /// The expression, e.g. "(1.5 + 2) * 3 ^ 2". At most 1000 characters.
    expression: String,
}

/// The result of a calculation.
#[derive(Serialize)]
struct Calculation {
    expression: String,
    result: String,
}

fn calculate_expression(args: CalculateExpression) -> Result<Calculation, ToolError> {
    match evaluate(&args.expression, &Limits::default()) {
        Ok(result) => Ok(Calculation {
            expression: args.expression,
            result,
        }),
        // Input the model can fix by writing a different expression.
        Err(e @ (CalcError::InputTooLong { .. } | CalcError::Syntax { .. } | CalcError::TooDeep { .. })) => {
            Err(ToolError::invalid_arguments(e.to_string()))
        }
        Err(e) => Err(ToolError::failed(e.to_string())),
    }
}

toolhost_sdk::plugin!(calculate_expression(read_only, idempotent));
