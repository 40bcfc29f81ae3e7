//! toolhost-distribution's integration tests: the pull against a fake,
//! hostile registry (tests/all/fake.rs), and the pull cache over it.
//!
//! Each refusal is checked for its error kind and for stopping early: the
//! fake counts the body bytes it managed to send (bounded by the cap plus
//! the sockets' buffers, far below what it offered), or the test checks
//! that the blob was never requested. No test asserts a tight wall-clock
//! time: a deadline test only checks that the pull ended well within its
//! own overall timeout.

mod cache;
mod fake;
mod pull;
mod registry;
