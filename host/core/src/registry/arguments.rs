//! # Argument validation
//!
//! The one check every path applies before a tool runs: the arguments
//! against the tool's parameter schema. Dispatch (and so MCP, `call-tool`
//! and nested calls) checks through its registry entries, and a component
//! called directly (`toolhost call`, `toolhost_runtime`'s
//! `LoadedComponent::call`) through its own; both use an
//! [`ArgumentValidator`], so a call is refused with the same code and
//! message whichever way it comes.
//!
//! ```
//! use serde_json::json;
//! use toolhost_core::registry::{ArgumentValidator, ToolSpec};
//!
//! let spec = ToolSpec::new("greet", "Greets.", json!({
//!     "type": "object",
//!     "properties": {"name": {"type": "string"}},
//!     "required": ["name"]
//! }));
//! let validator = ArgumentValidator::compile(&spec).unwrap();
//! assert!(validator.validate(&json!({"name": "Ada"})).is_ok());
//! let e = validator.validate(&json!({"name": 7})).unwrap_err();
//! assert_eq!(e.code(), toolhost_core::ErrorCode::InvalidArguments);
//! assert!(e.message().starts_with("invalid argument `/name`"), "{}", e.message());
//! ```

use serde_json::Value;

use super::tool::ToolSpec;
use crate::error::{Error, ErrorCode, Result};

/// A tool's parameter schema, compiled once.
pub struct ArgumentValidator {
    validator: jsonschema::Validator,
}

impl std::fmt::Debug for ArgumentValidator {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("ArgumentValidator")
    }
}

impl ArgumentValidator {
    /// Compiles `spec`'s parameter schema.
    ///
    /// # Errors
    ///
    /// `invalid_arguments` when it is not a valid JSON Schema.
    pub fn compile(spec: &ToolSpec) -> Result<ArgumentValidator> {
        let validator = jsonschema::validator_for(&spec.parameters).map_err(|e| {
            Error::new(
                ErrorCode::InvalidArguments,
                format!("tool `{}` has an invalid parameter schema: {e}", spec.name),
            )
        })?;
        Ok(ArgumentValidator { validator })
    }

    /// Checks `arguments` against the schema.
    ///
    /// # Errors
    ///
    /// `invalid_arguments`, naming the first failing field (its JSON
    /// pointer) and what is wrong with it.
    pub fn validate(&self, arguments: &Value) -> Result<()> {
        // The common case first: `is_valid` stops at the first failure and
        // builds no error.
        if self.validator.is_valid(arguments) {
            return Ok(());
        }
        let Some(error) = self.validator.iter_errors(arguments).next() else {
            return Ok(());
        };
        let path = error.instance_path().as_str();
        let message = if path.is_empty() {
            format!("invalid arguments: {error}")
        } else {
            format!("invalid argument `{path}`: {error}")
        };
        Err(Error::new(ErrorCode::InvalidArguments, message))
    }
}
