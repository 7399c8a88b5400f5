//! Helpers shared by the tsrs integration tests.
// Each test binary compiles this module and uses only part of it.
#![allow(dead_code)]

pub mod canon;
pub mod scratch;

#[allow(unused_imports)]
pub use scratch::Scratch;
