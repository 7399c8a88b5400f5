//! Helpers shared by the tsrs integration tests.

pub mod canon;
