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
mod tests;
