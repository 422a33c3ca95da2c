//! Unit tests of `slurm_time` (slurm_time.rs).

use super::*;
use proptest::prelude::*;

#[test]
fn time_limit_forms() {
    let cases: &[(&str, Seconds)] = &[
        ("5", 5 * MINUTE),
        ("90", 90 * MINUTE),
        ("5:00", 5 * MINUTE),
        ("1:01", 2 * MINUTE),
        ("0:30", MINUTE),
        ("0:01", MINUTE),
        ("0:60", MINUTE),
        ("0:61", 2 * MINUTE),
        ("1:02:03", HOUR + 3 * MINUTE),
        ("1:02:00", HOUR + 2 * MINUTE),
        ("2-0", 2 * DAY),
        ("1-12", DAY + 12 * HOUR),
        ("1-12:30", DAY + 12 * HOUR + 30 * MINUTE),
        ("1-12:30:01", DAY + 12 * HOUR + 31 * MINUTE),
        ("0-0:0:1", MINUTE),
        ("007", 7 * MINUTE),
        ("  15  ", 15 * MINUTE),
        ("\t1-0\n", DAY),
    ];
    for &(input, want) in cases {
        assert_eq!(parse_time_limit(input), Ok(Some(want)), "{input:?}");
    }
}

#[test]
fn time_limit_unlimited_forms() {
    for input in [
        "UNLIMITED",
        "unlimited",
        "Unlimited",
        "INFINITE",
        "infinite",
        "-1",
        " -1 ",
        "0",
        "0:00",
        "0:0:0",
        "0-0",
        "0-00:00:00",
        "000",
    ] {
        assert_eq!(parse_time_limit(input), Ok(None), "{input:?}");
    }
}

#[test]
fn time_limit_errors() {
    let input = |s: &str| s.to_owned();
    assert_eq!(
        parse_time_limit(""),
        Err(TimeError::Empty { input: input("") })
    );
    assert_eq!(
        parse_time_limit("   "),
        Err(TimeError::Empty {
            input: input("   ")
        })
    );
    assert_eq!(
        parse_time_limit("1h"),
        Err(TimeError::InvalidChar {
            input: input("1h"),
            ch: 'h'
        })
    );
    assert_eq!(
        parse_time_limit("+5"),
        Err(TimeError::InvalidChar {
            input: input("+5"),
            ch: '+'
        })
    );
    assert_eq!(
        parse_time_limit("1 2"),
        Err(TimeError::InvalidChar {
            input: input("1 2"),
            ch: ' '
        })
    );
    assert_eq!(
        parse_time_limit("1.5"),
        Err(TimeError::InvalidChar {
            input: input("1.5"),
            ch: '.'
        })
    );
    assert_eq!(
        parse_time_limit("unlimitedx"),
        Err(TimeError::InvalidChar {
            input: input("unlimitedx"),
            ch: 'u'
        })
    );
    assert_eq!(
        parse_time_limit("1-2-3"),
        Err(TimeError::TooManyDashes {
            input: input("1-2-3")
        })
    );
    assert_eq!(
        parse_time_limit("--1"),
        Err(TimeError::TooManyDashes {
            input: input("--1")
        })
    );
    assert_eq!(
        parse_time_limit("1:2:3:4"),
        Err(TimeError::TooManyColons {
            input: input("1:2:3:4")
        })
    );
    assert_eq!(
        parse_time_limit("1-2:3:4:5"),
        Err(TimeError::TooManyColons {
            input: input("1-2:3:4:5")
        })
    );
    assert_eq!(
        parse_time_limit("1:2-3"),
        Err(TimeError::ColonBeforeDash {
            input: input("1:2-3")
        })
    );
    for bad in [
        "1:", ":1", "1::2", "-5", "-0", "1-", "1-:2", "1-2:", ":", "-", "1-2::3",
    ] {
        assert_eq!(
            parse_time_limit(bad),
            Err(TimeError::EmptyField { input: input(bad) }),
            "{bad:?}"
        );
    }
    for big in [
        "18446744073709551616",
        "307445734561825861",
        "213503982334602-0",
        "99999999999999999999-0",
        "0:18446744073709551615",
    ] {
        assert_eq!(
            parse_time_limit(big),
            Err(TimeError::Overflow { input: input(big) }),
            "{big:?}"
        );
    }
    let msg = parse_time_limit("1h").map_err(|e| e.to_string());
    assert!(
        matches!(&msg, Err(m) if m.contains("\"1h\"") && m.contains("expected")),
        "{msg:?}"
    );
}

#[test]
fn time_limit_largest_values() {
    let max_minutes = Seconds::MAX / MINUTE;
    assert_eq!(
        parse_time_limit(&max_minutes.to_string()),
        Ok(Some(max_minutes * MINUTE))
    );
    // Exact seconds that fit, but do not once rounded up to a minute.
    assert!(matches!(
        parse_time_limit(&format!("0:{}", Seconds::MAX)),
        Err(TimeError::Overflow { .. })
    ));
}

#[test]
fn exact_durations() {
    assert_eq!(parse_duration_exact("0"), Ok(0));
    assert_eq!(parse_duration_exact("5"), Ok(300));
    assert_eq!(parse_duration_exact("1:01"), Ok(61));
    assert_eq!(parse_duration_exact("0:30"), Ok(30));
    assert_eq!(parse_duration_exact("03:04"), Ok(184));
    assert_eq!(parse_duration_exact("02:03:04"), Ok(7384));
    assert_eq!(parse_duration_exact("1-02:03:04"), Ok(93784));
    assert_eq!(
        parse_duration_exact("1-02:03"),
        Ok(DAY + 2 * HOUR + 3 * MINUTE)
    );
    assert_eq!(parse_duration_exact("1-02"), Ok(DAY + 2 * HOUR));
    assert_eq!(parse_duration_exact(" 0:59 "), Ok(59));
    assert_eq!(
        parse_duration_exact("0:18446744073709551615"),
        Ok(Seconds::MAX)
    );
    for unlimited in ["UNLIMITED", "infinite", "-1"] {
        assert_eq!(
            parse_duration_exact(unlimited),
            Err(TimeError::Unlimited {
                input: unlimited.into()
            })
        );
    }
    assert!(matches!(
        parse_duration_exact("1:2:3:4"),
        Err(TimeError::TooManyColons { .. })
    ));
    assert!(matches!(
        parse_duration_exact("1:00.5"),
        Err(TimeError::InvalidChar { .. })
    ));
    assert!(matches!(
        parse_duration_exact(""),
        Err(TimeError::Empty { .. })
    ));
}

#[test]
fn elapsed_values() {
    assert_eq!(parse_elapsed("00:00:00"), Ok(0));
    assert_eq!(parse_elapsed("03:04"), Ok(184));
    assert_eq!(parse_elapsed("02:03:04"), Ok(7384));
    assert_eq!(parse_elapsed("1-02:03:04"), Ok(93784));
    assert_eq!(parse_elapsed("12"), Ok(720));
    assert_eq!(parse_elapsed("00:05.250"), Ok(5));
    assert_eq!(parse_elapsed("01:00:05.999"), Ok(3605));
    assert_eq!(parse_elapsed("1-00:00:05.0"), Ok(DAY + 5));
    for bad in [
        "5.5",
        "1-02.5",
        "1-02:03.5",
        "1:02.",
        "1:02.x",
        "1:02.5.5",
        ".5",
        "1.:02",
    ] {
        assert!(
            matches!(
                parse_elapsed(bad),
                Err(TimeError::InvalidFraction { .. } | TimeError::InvalidChar { .. })
            ),
            "{bad:?}: {:?}",
            parse_elapsed(bad)
        );
    }
    assert_eq!(
        parse_elapsed("UNLIMITED"),
        Err(TimeError::Unlimited {
            input: "UNLIMITED".into()
        })
    );
    assert!(matches!(
        parse_elapsed("INVALID"),
        Err(TimeError::InvalidChar { .. })
    ));
    assert!(matches!(parse_elapsed(""), Err(TimeError::Empty { .. })));
}

#[test]
fn formats_like_squeue() {
    assert_eq!(format_duration(0), "0:00");
    assert_eq!(format_duration(5), "0:05");
    assert_eq!(format_duration(754), "12:34");
    assert_eq!(format_duration(3599), "59:59");
    assert_eq!(format_duration(3600), "1:00:00");
    assert_eq!(format_duration(3723), "1:02:03");
    assert_eq!(format_duration(DAY - 1), "23:59:59");
    assert_eq!(format_duration(DAY), "1-00:00:00");
    assert_eq!(format_duration(2 * DAY + 3723), "2-01:02:03");
    assert_eq!(format_duration(Seconds::MAX), "213503982334601-07:00:15");
    assert_eq!(format_time_limit(None), "UNLIMITED");
    assert_eq!(format_time_limit(Some(3600)), "1:00:00");
    assert_eq!(format_time_limit(Some(0)), "0:00");
}

proptest! {
    #[test]
    fn time_limit_round_trip(minutes in 1..=Seconds::MAX / MINUTE) {
        let limit = Some(minutes * MINUTE);
        prop_assert_eq!(parse_time_limit(&format_time_limit(limit)), Ok(limit));
    }

    #[test]
    fn time_limit_round_trip_small(minutes in 1..(3 * DAY / MINUTE)) {
        let limit = Some(minutes * MINUTE);
        prop_assert_eq!(parse_time_limit(&format_time_limit(limit)), Ok(limit));
    }

    #[test]
    fn unlimited_round_trip(_x in 0u8..1) {
        prop_assert_eq!(parse_time_limit(&format_time_limit(None)), Ok(None));
    }

    #[test]
    fn exact_round_trip(secs in any::<Seconds>()) {
        let text = format_duration(secs);
        prop_assert_eq!(parse_duration_exact(&text), Ok(secs));
        prop_assert_eq!(parse_elapsed(&text), Ok(secs));
    }

    #[test]
    fn limits_round_up_to_minutes(secs in 0..=Seconds::MAX - MINUTE) {
        let text = format_duration(secs);
        let want = secs.div_ceil(MINUTE) * MINUTE;
        prop_assert_eq!(parse_time_limit(&text), Ok((want != 0).then_some(want)));
    }

    #[test]
    fn parsers_never_panic(s in "\\PC{0,24}") {
        let _ = parse_time_limit(&s);
        let _ = parse_duration_exact(&s);
        let _ = parse_elapsed(&s);
    }

    #[test]
    fn parsers_never_panic_on_time_like_input(s in "[0-9:.\\-]{0,24}") {
        if let Ok(Some(limit)) = parse_time_limit(&s) {
            prop_assert_eq!(limit % MINUTE, 0);
            prop_assert!(limit > 0);
        }
        if let (Ok(exact), Ok(Some(limit))) = (parse_duration_exact(&s), parse_time_limit(&s)) {
            prop_assert!(limit >= exact && limit - exact < MINUTE);
        }
        let _ = parse_elapsed(&s);
    }
}

#[test]
fn civil_dates_round_trip() {
    assert_eq!(civil_from_days(0), (1970, 1, 1));
    assert_eq!(civil_from_days(59), (1970, 3, 1));
    assert_eq!(civil_from_days(11_016), (2000, 2, 29));
    for days in [-800_000, -1, 0, 31, 365, 11_016, 20_000, 2_932_896] {
        let (y, m, d) = civil_from_days(days);
        assert_eq!(days_from_civil(y, m, d), days, "{y}-{m}-{d}");
    }
}
