//! The OTel adapter against the testkit's loopback OTLP/HTTP receiver.

// Test helpers outside #[test] functions: a failed unwrap is a failed test.
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]

#[cfg(feature = "otlp-http")]
mod export;
