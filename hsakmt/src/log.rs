//! `HSAKMT_DEBUG_LEVEL`: logging to stderr the way the C library does.
//!
//! The level is read when the primary context is opened for the first
//! time; values 3 (errors) to 7 (debug) are accepted, anything else
//! leaves logging off. Messages go to stderr unadorned, as the C
//! library's `pr_err`/`pr_warn`/`pr_info`/`pr_debug` print them.

use std::fmt::Arguments;
use std::io::Write;
use std::sync::atomic::{AtomicI32, Ordering};

/// Errors (`pr_err`).
pub const LEVEL_ERR: i32 = 3;
/// Warnings (`pr_warn`).
pub const LEVEL_WARNING: i32 = 4;
/// Information (`pr_info`).
pub const LEVEL_INFO: i32 = 6;
/// Debug (`pr_debug`).
pub const LEVEL_DEBUG: i32 = 7;

static LEVEL: AtomicI32 = AtomicI32::new(-1);

/// Parses a `HSAKMT_DEBUG_LEVEL` value: the level, or -1 (off) when it
/// is not a number in 3..=7.
pub fn parse_level(v: &str) -> i32 {
    match v.trim().parse::<i32>() {
        Ok(l) if (LEVEL_ERR..=LEVEL_DEBUG).contains(&l) => l,
        _ => -1,
    }
}

/// Reads `HSAKMT_DEBUG_LEVEL` from the environment (done at first open).
pub fn init_from_env() {
    let level = std::env::var("HSAKMT_DEBUG_LEVEL")
        .map(|v| parse_level(&v))
        .unwrap_or(-1);
    LEVEL.store(level, Ordering::Relaxed);
}

/// The current level (-1: off).
pub fn level() -> i32 {
    LEVEL.load(Ordering::Relaxed)
}

/// Prints `args` to stderr if `level` is enabled.
pub fn print(level: i32, args: Arguments<'_>) {
    if level <= self::level() {
        let _ = std::io::stderr().write_fmt(args);
    }
}

/// `pr_err`.
pub fn err(args: Arguments<'_>) {
    print(LEVEL_ERR, args);
}

/// `pr_warn`.
pub fn warn(args: Arguments<'_>) {
    print(LEVEL_WARNING, args);
}

/// `pr_info`.
pub fn info(args: Arguments<'_>) {
    print(LEVEL_INFO, args);
}

/// `pr_debug`.
pub fn debug(args: Arguments<'_>) {
    print(LEVEL_DEBUG, args);
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn levels() {
        assert_eq!(parse_level("3"), 3);
        assert_eq!(parse_level(" 7 "), 7);
        assert_eq!(parse_level("2"), -1);
        assert_eq!(parse_level("8"), -1);
        assert_eq!(parse_level("x"), -1);
    }
}
