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
mod tests;
