//! Slurm time formats.
//!
//! Slurm writes durations as `M`, `M:S`, `H:M:S`, `D-H`, `D-H:M` or
//! `D-H:M:S` (the grammar of `sbatch --time`), and prints them as `M:SS`,
//! `H:MM:SS` or `D-HH:MM:SS` (the `TIME` column of `squeue`).
//!
//! * [`parse_time_limit`] reads a time limit as `sbatch --time` does: the
//!   unlimited forms give `None` and seconds are rounded up to whole minutes.
//! * [`parse_duration_exact`] reads the same grammar as an exact duration.
//! * [`parse_elapsed`] reads `sacct`'s `Elapsed`-style output, which also
//!   accepts fractional seconds as in `TotalCPU` (`01:02.345`).
//! * [`format_duration`] and [`format_time_limit`] write durations the way
//!   `squeue` does.
//!
//! Fields are not range-checked, as in Slurm: `90` is ninety minutes and
//! `1:75` is two minutes and fifteen seconds.

/// A duration in whole seconds.
pub type Seconds = u64;

const MINUTE: Seconds = 60;
const HOUR: Seconds = 60 * MINUTE;
const DAY: Seconds = 24 * HOUR;

/// What the grammar accepts, for error messages.
const EXPECTED: &str = "M, M:S, H:M:S, D-H, D-H:M or D-H:M:S";

/// Why a time string could not be read. Every message quotes the input.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum TimeError {
    /// Nothing but whitespace.
    #[error("empty time {input:?}: expected {EXPECTED}")]
    Empty {
        /// The input as given.
        input: String,
    },
    /// A character other than digits, `-` and `:` (and `.` in fractional
    /// seconds for [`parse_elapsed`]).
    #[error(
        "invalid character {ch:?} in time {input:?}: expected digits, '-' and ':' as in {EXPECTED}"
    )]
    InvalidChar {
        /// The input as given.
        input: String,
        /// The first offending character.
        ch: char,
    },
    /// More than one `-`.
    #[error("too many '-' in time {input:?}: expected at most one, as in D-H:M:S")]
    TooManyDashes {
        /// The input as given.
        input: String,
    },
    /// More than two `:`.
    #[error("too many ':' in time {input:?}: expected at most two, as in H:M:S or D-H:M:S")]
    TooManyColons {
        /// The input as given.
        input: String,
    },
    /// A `:` before the `-`.
    #[error("':' before '-' in time {input:?}: expected the days first, as in D-H:M:S")]
    ColonBeforeDash {
        /// The input as given.
        input: String,
    },
    /// A field without digits, as in `1:`, `:5`, `-3` or `1-`.
    #[error("empty field in time {input:?}: expected digits in every field of {EXPECTED}")]
    EmptyField {
        /// The input as given.
        input: String,
    },
    /// The value does not fit in 64-bit seconds.
    #[error(
        "time {input:?} is too large: expected at most {} seconds",
        Seconds::MAX
    )]
    Overflow {
        /// The input as given.
        input: String,
    },
    /// `UNLIMITED`, `INFINITE` or `-1` where a finite duration is needed.
    #[error("time {input:?} is unlimited: expected a finite duration ({EXPECTED})")]
    Unlimited {
        /// The input as given.
        input: String,
    },
    /// A malformed fractional part, or fractional seconds on a form without
    /// seconds.
    #[error("invalid fractional seconds in time {input:?}: expected digits after '.' on the seconds field, as in M:S.fff")]
    InvalidFraction {
        /// The input as given.
        input: String,
    },
}

fn is_unlimited(s: &str) -> bool {
    s == "-1" || s.eq_ignore_ascii_case("UNLIMITED") || s.eq_ignore_ascii_case("INFINITE")
}

/// Reads the sbatch grammar exactly. `input` is the untrimmed text for error
/// messages, `s` the trimmed text to read. Returns the seconds and whether the
/// form ends with a seconds field.
fn parse_clock(input: &str, s: &str) -> Result<(Seconds, bool), TimeError> {
    let input = || input.to_owned();
    if s.is_empty() {
        return Err(TimeError::Empty { input: input() });
    }
    if let Some(ch) = s
        .chars()
        .find(|&c| !(c.is_ascii_digit() || c == '-' || c == ':'))
    {
        return Err(TimeError::InvalidChar { input: input(), ch });
    }
    if s.matches('-').count() > 1 {
        return Err(TimeError::TooManyDashes { input: input() });
    }
    if s.matches(':').count() > 2 {
        return Err(TimeError::TooManyColons { input: input() });
    }
    let (days, clock) = match s.split_once('-') {
        Some((days, _)) if days.contains(':') => {
            return Err(TimeError::ColonBeforeDash { input: input() })
        }
        Some((days, clock)) => (Some(days), clock),
        None => (None, s),
    };
    let field = |text: &str| -> Result<Seconds, TimeError> {
        if text.is_empty() {
            return Err(TimeError::EmptyField { input: input() });
        }
        // Only digits remain here, so a parse error can only be an overflow.
        text.parse()
            .map_err(|_| TimeError::Overflow { input: input() })
    };
    let mut fields = Vec::with_capacity(3);
    for text in clock.split(':') {
        fields.push(field(text)?);
    }
    // Units of the clock fields, from the first one.
    let units: &[Seconds] = match (days.is_some(), fields.len()) {
        (false, 1) => &[MINUTE],
        (false, 2) => &[MINUTE, 1],
        (false, _) => &[HOUR, MINUTE, 1],
        (true, 1) => &[HOUR],
        (true, 2) => &[HOUR, MINUTE],
        (true, _) => &[HOUR, MINUTE, 1],
    };
    let has_seconds = units.last() == Some(&1);
    let overflow = || TimeError::Overflow { input: input() };
    let mut total: Seconds = match days {
        Some(days) => field(days)?.checked_mul(DAY).ok_or_else(overflow)?,
        None => 0,
    };
    for (value, unit) in fields.iter().zip(units) {
        let part = value.checked_mul(*unit).ok_or_else(overflow)?;
        total = total.checked_add(part).ok_or_else(overflow)?;
    }
    Ok((total, has_seconds))
}

/// Reads a time limit as `sbatch --time` does.
///
/// Accepts `M`, `M:S`, `H:M:S`, `D-H`, `D-H:M` and `D-H:M:S` (surrounding
/// whitespace is ignored). `UNLIMITED`, `INFINITE` (any case) and `-1` give
/// `None`. Seconds are rounded up to whole minutes, because Slurm keeps
/// limits in minutes, so the result is always a multiple of 60; a limit of
/// zero minutes (`0`, `0:00`) means unlimited, as `--time=0` does in Slurm.
///
/// ```
/// use gresim_model::slurm_time::parse_time_limit;
/// assert_eq!(parse_time_limit("1-12"), Ok(Some(36 * 3600)));
/// assert_eq!(parse_time_limit("1:01"), Ok(Some(120)));
/// assert_eq!(parse_time_limit("UNLIMITED"), Ok(None));
/// assert_eq!(parse_time_limit("0"), Ok(None));
/// ```
pub fn parse_time_limit(s: &str) -> Result<Option<Seconds>, TimeError> {
    let trimmed = s.trim();
    if is_unlimited(trimmed) {
        return Ok(None);
    }
    let (secs, _) = parse_clock(s, trimmed)?;
    let minutes = secs.div_ceil(MINUTE);
    let rounded = minutes
        .checked_mul(MINUTE)
        .ok_or_else(|| TimeError::Overflow {
            input: s.to_owned(),
        })?;
    Ok((rounded != 0).then_some(rounded))
}

/// Reads a duration in the `sbatch --time` grammar, exactly.
///
/// Same forms as [`parse_time_limit`] (a bare number is minutes), but seconds
/// are kept as they are, zero is zero, and the unlimited forms are errors.
///
/// ```
/// use gresim_model::slurm_time::parse_duration_exact;
/// assert_eq!(parse_duration_exact("1-02:03:04"), Ok(93784));
/// assert_eq!(parse_duration_exact("03:04"), Ok(184));
/// assert_eq!(parse_duration_exact("5"), Ok(300));
/// ```
pub fn parse_duration_exact(s: &str) -> Result<Seconds, TimeError> {
    let trimmed = s.trim();
    if is_unlimited(trimmed) {
        return Err(TimeError::Unlimited {
            input: s.to_owned(),
        });
    }
    parse_clock(s, trimmed).map(|(secs, _)| secs)
}

/// Reads a duration as `sacct` prints it in `Elapsed` or `Timelimit`:
/// `MM:SS`, `HH:MM:SS` or `D-HH:MM:SS`.
///
/// This is [`parse_duration_exact`] (so a bare number is minutes and
/// `UNLIMITED` is an error), extended with the fractional seconds `sacct`
/// prints in its CPU-time fields (`TotalCPU` = `01:02.345`): a `.` and digits
/// after a seconds field, rounded down to whole seconds.
///
/// ```
/// use gresim_model::slurm_time::parse_elapsed;
/// assert_eq!(parse_elapsed("2-01:02:03"), Ok(176523));
/// assert_eq!(parse_elapsed("00:05.250"), Ok(5));
/// ```
pub fn parse_elapsed(s: &str) -> Result<Seconds, TimeError> {
    let trimmed = s.trim();
    if is_unlimited(trimmed) {
        return Err(TimeError::Unlimited {
            input: s.to_owned(),
        });
    }
    let clock = match trimmed.split_once('.') {
        None => trimmed,
        Some((clock, fraction)) => {
            if clock.is_empty()
                || fraction.is_empty()
                || !fraction.bytes().all(|b| b.is_ascii_digit())
            {
                return Err(TimeError::InvalidFraction {
                    input: s.to_owned(),
                });
            }
            clock
        }
    };
    let (secs, has_seconds) = parse_clock(s, clock)?;
    if clock.len() != trimmed.len() && !has_seconds {
        return Err(TimeError::InvalidFraction {
            input: s.to_owned(),
        });
    }
    Ok(secs)
}

/// Writes a duration as `squeue`'s `TIME` column does: `M:SS` under an hour,
/// `H:MM:SS` under a day, `D-HH:MM:SS` from a day on.
///
/// ```
/// use gresim_model::slurm_time::format_duration;
/// assert_eq!(format_duration(5), "0:05");
/// assert_eq!(format_duration(3723), "1:02:03");
/// assert_eq!(format_duration(176523), "2-01:02:03");
/// ```
pub fn format_duration(secs: Seconds) -> String {
    let days = secs / DAY;
    let hours = secs % DAY / HOUR;
    let minutes = secs % HOUR / MINUTE;
    let seconds = secs % MINUTE;
    if days > 0 {
        format!("{days}-{hours:02}:{minutes:02}:{seconds:02}")
    } else if hours > 0 {
        format!("{hours}:{minutes:02}:{seconds:02}")
    } else {
        format!("{minutes}:{seconds:02}")
    }
}

/// Writes a time limit like [`format_duration`], and `None` as `UNLIMITED`.
///
/// `Some(0)` is written `0:00`, which [`parse_time_limit`] reads back as
/// unlimited (Slurm's `--time=0`).
///
/// ```
/// use gresim_model::slurm_time::format_time_limit;
/// assert_eq!(format_time_limit(None), "UNLIMITED");
/// assert_eq!(format_time_limit(Some(2 * 86400)), "2-00:00:00");
/// ```
pub fn format_time_limit(limit: Option<Seconds>) -> String {
    match limit {
        Some(secs) => format_duration(secs),
        None => "UNLIMITED".to_owned(),
    }
}

/// Days since 1970-01-01 to a civil date (proleptic Gregorian): year,
/// month 1–12, day 1–31. Simulated seconds are read as a Unix time (UTC).
pub fn civil_from_days(days: i64) -> (i64, u32, u32) {
    let z = days + 719_468;
    let era = z.div_euclid(146_097);
    let doe = z.rem_euclid(146_097);
    let yoe = (doe - doe / 1460 + doe / 36_524 - doe / 146_096) / 365;
    let y = yoe + era * 400;
    let doy = doe - (365 * yoe + yoe / 4 - yoe / 100);
    let mp = (5 * doy + 2) / 153;
    let d = (doy - (153 * mp + 2) / 5 + 1) as u32;
    let m = if mp < 10 { mp + 3 } else { mp - 9 } as u32;
    (if m <= 2 { y + 1 } else { y }, m, d)
}

/// A civil date to days since 1970-01-01 (the inverse of [`civil_from_days`]).
pub fn days_from_civil(y: i64, m: u32, d: u32) -> i64 {
    let y = if m <= 2 { y - 1 } else { y };
    let era = y.div_euclid(400);
    let yoe = y.rem_euclid(400);
    let mp = i64::from((m + 9) % 12);
    let doy = (153 * mp + 2) / 5 + i64::from(d) - 1;
    let doe = yoe * 365 + yoe / 4 - yoe / 100 + doy;
    era * 146_097 + doe - 719_468
}

#[cfg(test)]
mod tests {
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
}
