//! Unit tests of `units` (units.rs).

use super::*;
use proptest::prelude::*;

#[test]
fn mem_suffixes() {
    let cases: &[(&str, u64)] = &[
        ("0", 0),
        ("1", 1),
        ("4096", 4096),
        ("007", 7),
        ("1500M", 1500),
        ("1500m", 1500),
        ("1500MB", 1500),
        ("1500mb", 1500),
        ("1500Mb", 1500),
        ("64G", 65536),
        ("64g", 65536),
        ("64GB", 65536),
        ("2T", 2 << 20),
        ("2tb", 2 << 20),
        ("1024K", 1),
        ("1025K", 2),
        ("1k", 1),
        ("0K", 0),
        ("2048kb", 2),
        (" 16G ", 16384),
        ("\t8\n", 8),
        ("18446744073709551615", u64::MAX),
        ("18446744073709551615K", u64::MAX.div_ceil(1024)),
        ("17592186044415T", 17592186044415 << 20),
    ];
    for &(input, want) in cases {
        assert_eq!(parse_mem_mib(input), Ok(want), "{input:?}");
    }
}

#[test]
fn mem_errors() {
    assert!(matches!(parse_mem_mib(""), Err(SizeError::Empty { .. })));
    assert!(matches!(parse_mem_mib("  "), Err(SizeError::Empty { .. })));
    assert!(matches!(
        parse_mem_mib("-1"),
        Err(SizeError::Negative { .. })
    ));
    assert!(matches!(
        parse_mem_mib("-1G"),
        Err(SizeError::Negative { .. })
    ));
    assert!(matches!(
        parse_mem_mib("1.5G"),
        Err(SizeError::Fraction { .. })
    ));
    assert!(matches!(
        parse_mem_mib("1."),
        Err(SizeError::Fraction { .. })
    ));
    assert!(matches!(
        parse_mem_mib(".5G"),
        Err(SizeError::Fraction { .. })
    ));
    assert!(matches!(parse_mem_mib("G"), Err(SizeError::Invalid { .. })));
    assert!(matches!(
        parse_mem_mib("+1G"),
        Err(SizeError::Invalid { .. })
    ));
    assert!(matches!(
        parse_mem_mib("abc"),
        Err(SizeError::Invalid { .. })
    ));
    assert!(matches!(
        parse_mem_mib("١٢"),
        Err(SizeError::Invalid { .. })
    ));
    for (input, suffix) in [
        ("1P", "P"),
        ("1KiB", "KiB"),
        ("1 G", " G"),
        ("1GG", "GG"),
        ("1B", "B"),
        ("1G5", "G5"),
        ("1,5G", ",5G"),
        ("12é", "é"),
    ] {
        assert_eq!(
            parse_mem_mib(input),
            Err(SizeError::UnknownSuffix {
                what: MEM.what,
                input: input.into(),
                suffix: suffix.into(),
                expected: MEM.expected,
            }),
            "{input:?}"
        );
    }
    for input in [
        "18446744073709551616",
        "18014398509481984G",
        "17592186044416T",
    ] {
        assert!(
            matches!(parse_mem_mib(input), Err(SizeError::Overflow { .. })),
            "{input:?}"
        );
    }
    let msg = parse_mem_mib("1.5G").map_err(|e| e.to_string());
    assert!(
        matches!(&msg, Err(m) if m.contains("\"1.5G\"") && m.contains("expected")),
        "{msg:?}"
    );
    let msg = parse_mem_mib("1X").map_err(|e| e.to_string());
    assert!(
        matches!(&msg, Err(m) if m.contains("\"1X\"") && m.contains("K, M, G or T")),
        "{msg:?}"
    );
}

#[test]
fn mem_format() {
    assert_eq!(format_mem_mib(0), "0M");
    assert_eq!(format_mem_mib(1), "1M");
    assert_eq!(format_mem_mib(1500), "1500M");
    assert_eq!(format_mem_mib(1024), "1G");
    assert_eq!(format_mem_mib(131072), "128G");
    assert_eq!(format_mem_mib(1536 * 1024), "1536G");
    assert_eq!(format_mem_mib(1 << 20), "1T");
    assert_eq!(format_mem_mib(3 << 20), "3T");
    assert_eq!(format_mem_mib(u64::MAX), format!("{}M", u64::MAX));
}

#[test]
fn counts() {
    let cases: &[(&str, u64)] = &[
        ("0", 0),
        ("2", 2),
        (" 8 ", 8),
        ("1k", 1024),
        ("1K", 1024),
        ("2m", 2 << 20),
        ("2M", 2 << 20),
        ("3g", 3 << 30),
        ("1t", 1 << 40),
        ("1p", 1 << 50),
        ("16383P", 16383 << 50),
        ("18446744073709551615", u64::MAX),
    ];
    for &(input, want) in cases {
        assert_eq!(parse_count(input), Ok(want), "{input:?}");
    }
}

#[test]
fn count_errors() {
    assert!(matches!(
        parse_count(""),
        Err(SizeError::Empty { what: "count", .. })
    ));
    assert!(matches!(parse_count("-2"), Err(SizeError::Negative { .. })));
    assert!(matches!(
        parse_count("1.5k"),
        Err(SizeError::Fraction { .. })
    ));
    assert!(matches!(parse_count("k"), Err(SizeError::Invalid { .. })));
    assert!(matches!(
        parse_count("gpu:2"),
        Err(SizeError::Invalid { .. })
    ));
    assert!(matches!(
        parse_count("16384P"),
        Err(SizeError::Overflow { .. })
    ));
    assert!(matches!(
        parse_count("99999999999999999999"),
        Err(SizeError::Overflow { .. })
    ));
    for (input, suffix) in [("1kb", "kb"), ("1x", "x"), ("1 k", " k"), ("1e3", "e3")] {
        assert_eq!(
            parse_count(input),
            Err(SizeError::UnknownSuffix {
                what: COUNT.what,
                input: input.into(),
                suffix: suffix.into(),
                expected: COUNT.expected,
            }),
            "{input:?}"
        );
    }
    let msg = parse_count("-2").map_err(|e| e.to_string());
    assert!(
        matches!(&msg, Err(m) if m.starts_with("negative count \"-2\": expected")),
        "{msg:?}"
    );
}

proptest! {
    #[test]
    fn mem_round_trip(mib in any::<u64>()) {
        prop_assert_eq!(parse_mem_mib(&format_mem_mib(mib)), Ok(mib));
    }

    #[test]
    fn mem_round_trip_units(n in 0u64..1 << 20, unit in 0u32..3) {
        let mib = n << (10 * unit);
        prop_assert_eq!(parse_mem_mib(&format_mem_mib(mib)), Ok(mib));
    }

    #[test]
    fn mem_suffix_scaling(n in 0u64..1 << 40, suffix in prop::sample::select(vec!["", "M", "G", "T", "K"])) {
        let got = parse_mem_mib(&format!("{n}{suffix}"));
        let want = match suffix {
            "K" => Some(n.div_ceil(1024)),
            "G" => n.checked_mul(1 << 10),
            "T" => n.checked_mul(1 << 20),
            _ => Some(n),
        };
        prop_assert_eq!(got.ok(), want);
    }

    #[test]
    fn count_scaling(n in any::<u64>(), (suffix, shift) in prop::sample::select(vec![
        ("", 0u32), ("k", 10), ("M", 20), ("g", 30), ("T", 40), ("p", 50),
    ])) {
        let got = parse_count(&format!("{n}{suffix}"));
        prop_assert_eq!(got.ok(), n.checked_mul(1u64 << shift));
    }

    #[test]
    fn parsers_never_panic(s in "\\PC{0,16}") {
        let _ = parse_mem_mib(&s);
        let _ = parse_count(&s);
    }
}
