//! Memory sizes and counts with Slurm's suffixes.
//!
//! * [`parse_mem_mib`] reads a memory size as `sbatch --mem` does
//!   (`4096`, `64G`, `512k`) and returns MiB.
//! * [`format_mem_mib`] writes MiB back in the largest whole unit.
//! * [`parse_count`] reads a count with binary suffixes, as in GRES
//!   specifications (`gpu:2`, `shard:1k`).
//!
//! All suffixes are powers of 1024, as in Slurm. Fractions (`1.5G`) are
//! rejected, as Slurm does.

/// Why a size or count could not be read. Every message names the input and
/// what was expected.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum SizeError {
    /// Nothing but whitespace.
    #[error("empty {what} {input:?}: expected {expected}")]
    Empty {
        /// What was being read ("memory size" or "count").
        what: &'static str,
        /// The input as given.
        input: String,
        /// The accepted forms.
        expected: &'static str,
    },
    /// A leading `-`.
    #[error("negative {what} {input:?}: expected {expected}")]
    Negative {
        /// What was being read.
        what: &'static str,
        /// The input as given.
        input: String,
        /// The accepted forms.
        expected: &'static str,
    },
    /// A decimal point.
    #[error("fractional {what} {input:?}: expected a whole number, {expected}")]
    Fraction {
        /// What was being read.
        what: &'static str,
        /// The input as given.
        input: String,
        /// The accepted forms.
        expected: &'static str,
    },
    /// No leading digits.
    #[error("invalid {what} {input:?}: expected {expected}")]
    Invalid {
        /// What was being read.
        what: &'static str,
        /// The input as given.
        input: String,
        /// The accepted forms.
        expected: &'static str,
    },
    /// Digits followed by something that is not a known suffix.
    #[error("unknown suffix {suffix:?} in {what} {input:?}: expected {expected}")]
    UnknownSuffix {
        /// What was being read.
        what: &'static str,
        /// The input as given.
        input: String,
        /// The text after the digits.
        suffix: String,
        /// The accepted forms.
        expected: &'static str,
    },
    /// The value does not fit in 64 bits.
    #[error("{what} {input:?} is too large: expected at most {max} {unit}")]
    Overflow {
        /// What was being read.
        what: &'static str,
        /// The input as given.
        input: String,
        /// The largest value, in `unit`.
        max: u64,
        /// The unit of the result ("MiB" or "").
        unit: &'static str,
    },
}

/// What [`parse_mem_mib`] and [`parse_count`] read.
struct Grammar {
    what: &'static str,
    expected: &'static str,
    unit: &'static str,
}

const MEM: Grammar = Grammar {
    what: "memory size",
    expected: "digits with an optional suffix K, M, G or T (or KB, MB, GB, TB), \
               e.g. 4096 (MiB) or 64G",
    unit: "MiB",
};

const COUNT: Grammar = Grammar {
    what: "count",
    expected: "digits with an optional suffix k, m, g, t or p (powers of 1024), e.g. 2 or 1k",
    unit: "",
};

/// Splits `64G` into `(64, "G")`, rejecting what is not a whole
/// non-negative number.
fn split_number<'a>(
    input: &str,
    s: &'a str,
    grammar: &Grammar,
) -> Result<(u64, &'a str), SizeError> {
    let input = || input.to_owned();
    let digits_end = s
        .bytes()
        .position(|b| !b.is_ascii_digit())
        .unwrap_or(s.len());
    let (digits, suffix) = s.split_at(digits_end);
    if s.is_empty() {
        return Err(SizeError::Empty {
            what: grammar.what,
            input: input(),
            expected: grammar.expected,
        });
    }
    if s.starts_with('-') {
        return Err(SizeError::Negative {
            what: grammar.what,
            input: input(),
            expected: grammar.expected,
        });
    }
    if suffix.starts_with('.') {
        return Err(SizeError::Fraction {
            what: grammar.what,
            input: input(),
            expected: grammar.expected,
        });
    }
    if digits.is_empty() {
        return Err(SizeError::Invalid {
            what: grammar.what,
            input: input(),
            expected: grammar.expected,
        });
    }
    let overflow = || SizeError::Overflow {
        what: grammar.what,
        input: input(),
        max: u64::MAX,
        unit: grammar.unit,
    };
    let value = digits.parse().map_err(|_| overflow())?;
    Ok((value, suffix))
}

/// Reads a memory size as `sbatch --mem` takes it and returns MiB.
///
/// A whole number with an optional suffix `K`, `M`, `G` or `T` (or `KB`,
/// `MB`, `GB`, `TB`; any case; powers of 1024). Without a suffix the number
/// is MiB. Kibibytes are rounded up to whole MiB. Surrounding whitespace is
/// ignored. `0` gives 0 (which `--mem` reads as "all the node's memory";
/// that meaning is left to the caller).
///
/// ```
/// use gresim_model::units::parse_mem_mib;
/// assert_eq!(parse_mem_mib("4096"), Ok(4096));
/// assert_eq!(parse_mem_mib("64G"), Ok(65536));
/// assert_eq!(parse_mem_mib("1tb"), Ok(1 << 20));
/// assert_eq!(parse_mem_mib("1025K"), Ok(2));
/// assert!(parse_mem_mib("1.5G").is_err());
/// ```
pub fn parse_mem_mib(s: &str) -> Result<u64, SizeError> {
    let (value, suffix) = split_number(s, s.trim(), &MEM)?;
    let overflow = || SizeError::Overflow {
        what: MEM.what,
        input: s.to_owned(),
        max: u64::MAX,
        unit: MEM.unit,
    };
    match suffix.to_ascii_uppercase().as_str() {
        "K" | "KB" => Ok(value.div_ceil(1024)),
        "" | "M" | "MB" => Ok(value),
        "G" | "GB" => value.checked_mul(1 << 10).ok_or_else(overflow),
        "T" | "TB" => value.checked_mul(1 << 20).ok_or_else(overflow),
        _ => Err(SizeError::UnknownSuffix {
            what: MEM.what,
            input: s.to_owned(),
            suffix: suffix.to_owned(),
            expected: MEM.expected,
        }),
    }
}

/// Writes MiB in the largest whole unit: `1T` when divisible by 1024²,
/// `128G` when divisible by 1024, else `1500M` (and `0M` for zero).
///
/// [`parse_mem_mib`] reads the result back to the same value.
///
/// ```
/// use gresim_model::units::format_mem_mib;
/// assert_eq!(format_mem_mib(131072), "128G");
/// assert_eq!(format_mem_mib(1 << 20), "1T");
/// assert_eq!(format_mem_mib(1500), "1500M");
/// ```
pub fn format_mem_mib(mib: u64) -> String {
    // A multiple of 2^k has at least k trailing zero bits (zero has 64).
    if mib != 0 && mib.trailing_zeros() >= 20 {
        format!("{}T", mib >> 20)
    } else if mib != 0 && mib.trailing_zeros() >= 10 {
        format!("{}G", mib >> 10)
    } else {
        format!("{mib}M")
    }
}

/// Reads a count with Slurm's binary suffixes, as in GRES counts: `k` =
/// ×1024, `m` = ×1024², `g` = ×1024³, `t` = ×1024⁴, `p` = ×1024⁵ (any case).
/// Surrounding whitespace is ignored.
///
/// ```
/// use gresim_model::units::parse_count;
/// assert_eq!(parse_count("2"), Ok(2));
/// assert_eq!(parse_count("1k"), Ok(1024));
/// assert_eq!(parse_count("3M"), Ok(3 << 20));
/// assert!(parse_count("-1").is_err());
/// ```
pub fn parse_count(s: &str) -> Result<u64, SizeError> {
    let (value, suffix) = split_number(s, s.trim(), &COUNT)?;
    let shift = match suffix {
        "" => 0,
        "k" | "K" => 10,
        "m" | "M" => 20,
        "g" | "G" => 30,
        "t" | "T" => 40,
        "p" | "P" => 50,
        _ => {
            return Err(SizeError::UnknownSuffix {
                what: COUNT.what,
                input: s.to_owned(),
                suffix: suffix.to_owned(),
                expected: COUNT.expected,
            })
        }
    };
    value
        .checked_mul(1u64 << shift)
        .ok_or_else(|| SizeError::Overflow {
            what: COUNT.what,
            input: s.to_owned(),
            max: u64::MAX,
            unit: COUNT.unit,
        })
}

#[cfg(test)]
mod tests {
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
}
