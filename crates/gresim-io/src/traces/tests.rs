//! Unit tests of `traces` (mod.rs).

use super::*;

#[test]
fn datetimes() {
    assert_eq!(parse_datetime("1970-01-01T00:00:00"), Some(0));
    assert_eq!(parse_datetime("2020-04-01 00:00:03"), Some(1585699203));
    assert_eq!(
        parse_datetime("2023-03-01 08:00:00+08:00"),
        Some(1677628800)
    );
    assert_eq!(parse_datetime("2023-03-01T00:00:00.250Z"), Some(1677628800));
    assert_eq!(parse_datetime("1400749079"), Some(1400749079));
    assert_eq!(parse_datetime("Unknown"), None);
    assert_eq!(parse_datetime("2020-13-01 00:00:00"), None);
    assert_eq!(parse_datetime("2020-01-01 00:00"), None);
    assert_eq!(parse_datetime("2020-01-01é00:00:00"), None);
}

#[test]
fn formats_by_name() {
    for n in TraceFormat::NAMES {
        assert_eq!(TraceFormat::from_name(n).map(TraceFormat::name), Some(*n));
    }
    assert_eq!(TraceFormat::from_name("csv"), None);
}
