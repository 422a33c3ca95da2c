//! Unit tests of `slurmfmt` (slurmfmt.rs).

use super::*;

#[test]
fn formats_parse() {
    let p = parse_format("%.18i %P|%-x", "iPx");
    assert!(p.is_err(), "%-x: '-' is not a code");
    let p = parse_format("%.18i %9P%%", "iP").unwrap();
    assert_eq!(
        p,
        vec![
            Piece::Field {
                code: 'i',
                width: 18,
                right: true
            },
            Piece::Literal(" ".into()),
            Piece::Field {
                code: 'P',
                width: 9,
                right: false
            },
            Piece::Literal("%".into()),
        ]
    );
    assert!(parse_format("%", "i").is_err());
    assert!(parse_format("%q", "i")
        .unwrap_err()
        .contains("unknown field '%q'"));
    assert!(parse_format("%99999i", "i").is_err());
}

#[test]
fn padding_like_squeue() {
    assert_eq!(pad("123", 6, true, true), "   123");
    assert_eq!(pad("longname", 4, true, true), "long");
    assert_eq!(pad("ab", 4, false, true), "ab  ");
    assert_eq!(pad("abcdef", 4, false, true), "abcd");
    assert_eq!(pad("gpu[01-02]", 4, true, false), "gpu[01-02]");
    assert_eq!(pad("x", 0, true, true), "x");
    assert_eq!(sacct_col("abcdefghijkl", 10, true), "abcdefghi+ ");
    assert_eq!(sacct_col("7", 4, false), "7    ");
}

#[test]
fn dates_and_durations() {
    assert_eq!(timestamp(0), "1970-01-01T00:00:00");
    assert_eq!(timestamp(100), "1970-01-01T00:01:40");
    assert_eq!(timestamp(951_782_400), "2000-02-29T00:00:00");
    assert_eq!(timestamp(1_704_067_199), "2023-12-31T23:59:59");
    assert_eq!(timestamp(u64::MAX), "9999-12-31T23:59:59");
    assert_eq!(sacct_duration(100), "00:01:40");
    assert_eq!(sacct_duration(90_061), "1-01:01:01");
    assert_eq!(parse_at("3600"), Ok(3600));
    assert_eq!(parse_at("1:00:00"), Ok(3600));
    assert!(parse_at("soon").is_err());
}
