//! toolhost-detector's integration tests: one binary, one module per area.

mod adversarial;
mod corpus;
