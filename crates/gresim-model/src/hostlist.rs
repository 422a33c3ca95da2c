//! Slurm hostlist expressions.
//!
//! A hostlist is how Slurm writes sets of node names compactly, for example in
//! `SLURM_JOB_NODELIST`, `scontrol show node` or the `NODELIST` column of
//! `squeue`/`sinfo`:
//!
//! * `gpu[01-08,10]` — a prefix followed by a bracketed list of ranges; the
//!   zero-padding width of a range is the number of digits written for its
//!   lower bound (`[01-10]` gives `01`..`10`, `[1-10]` gives `1`..`10`);
//! * `n[1-3]-ib` — text may follow a bracket group;
//! * `r[0-1]n[0-3]` — several bracket groups expand as a Cartesian product,
//!   the leftmost group varying slowest;
//! * `a,b c` — items are separated by commas, spaces, tabs or newlines
//!   outside brackets.
//!
//! [`expand`] turns an expression into names, [`compress`] turns names back
//! into an expression and [`natural_cmp`] is the order in which Slurm lists
//! nodes (`gpu2` before `gpu10`).

use std::cmp::Ordering;

/// The most names a single call to [`expand`] will produce.
pub const MAX_EXPANDED_NAMES: usize = 1_000_000;

/// The most bytes of names a single call to [`expand`] will produce, so that a
/// short expression with a very long prefix cannot exhaust memory either.
pub const MAX_EXPANDED_BYTES: usize = 64 * 1024 * 1024;

/// Why a hostlist expression could not be expanded.
///
/// Every message quotes the offending item (the part of the expression
/// between separators) and says what was expected.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum HostlistError {
    /// A `[` without its `]`.
    #[error("unclosed '[' in {item:?}: expected a matching ']'")]
    UnclosedBracket {
        /// The offending item.
        item: String,
    },
    /// A `]` without a `[` before it.
    #[error("unexpected ']' in {item:?}: expected a '[' before it")]
    UnmatchedBracket {
        /// The offending item.
        item: String,
    },
    /// A `[` inside brackets.
    #[error("nested '[' in {item:?}: brackets cannot be nested")]
    NestedBracket {
        /// The offending item.
        item: String,
    },
    /// `[]`, `[1,]`, `[,1]` or `[1,,2]`.
    #[error("empty range in {item:?}: expected a number or lo-hi between brackets and commas")]
    EmptyRange {
        /// The offending item.
        item: String,
    },
    /// A range that is not `lo` or `lo-hi` made of digits (this includes
    /// negative numbers and spaces).
    #[error("invalid range {range:?} in {item:?}: expected a number or lo-hi made of digits only")]
    InvalidRange {
        /// The offending range, as written between brackets.
        range: String,
        /// The offending item.
        item: String,
    },
    /// `lo-hi` with `lo > hi`.
    #[error("range {lo}-{hi} goes backwards in {item:?}: expected lo <= hi")]
    Backwards {
        /// The lower bound as written.
        lo: String,
        /// The upper bound as written.
        hi: String,
        /// The offending item.
        item: String,
    },
    /// A number that does not fit in 64 bits.
    #[error(
        "number {number:?} in {item:?} is too large: expected at most {}",
        u64::MAX
    )]
    NumberTooLarge {
        /// The number as written.
        number: String,
        /// The offending item.
        item: String,
    },
    /// The expression expands to more than [`MAX_EXPANDED_NAMES`] names.
    #[error("hostlist expands to more than {limit} names (limit exceeded at {item:?})")]
    TooManyNames {
        /// The limit, [`MAX_EXPANDED_NAMES`].
        limit: usize,
        /// The item at which the limit was exceeded.
        item: String,
    },
    /// The expression expands to more than [`MAX_EXPANDED_BYTES`] bytes of names.
    #[error("hostlist expands to more than {limit} bytes of names (limit exceeded at {item:?})")]
    TooLarge {
        /// The limit, [`MAX_EXPANDED_BYTES`].
        limit: usize,
        /// The item at which the limit was exceeded.
        item: String,
    },
}

/// One `lo[-hi]` range between brackets.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
struct Range {
    lo: u64,
    hi: u64,
    /// Zero-padding width: the number of digits written for `lo`.
    width: usize,
}

impl Range {
    fn len(&self) -> u128 {
        u128::from(self.hi - self.lo) + 1
    }

    /// The longest name fragment this range produces.
    fn max_bytes(&self) -> usize {
        self.width.max(decimal_len(self.hi))
    }
}

/// A piece of an item: literal text or a bracket group.
#[derive(Debug, Clone, PartialEq, Eq)]
enum Segment<'a> {
    Literal(&'a str),
    Group(Vec<Range>),
}

fn is_separator(c: char) -> bool {
    matches!(c, ',' | ' ' | '\t' | '\n' | '\r')
}

/// Splits at separators outside brackets, skipping empty items. Bracket
/// errors are left for [`parse_item`], which reports them with the item.
fn split_items(expr: &str) -> Vec<&str> {
    let mut items = Vec::new();
    let mut depth = 0usize;
    let mut start = 0usize;
    for (i, c) in expr.char_indices() {
        match c {
            '[' => depth = depth.saturating_add(1),
            ']' => depth = depth.saturating_sub(1),
            c if depth == 0 && is_separator(c) => {
                if start < i {
                    items.push(&expr[start..i]);
                }
                start = i + c.len_utf8();
            }
            _ => {}
        }
    }
    if start < expr.len() {
        items.push(&expr[start..]);
    }
    items
}

fn parse_item(item: &str) -> Result<Vec<Segment<'_>>, HostlistError> {
    let is_bracket = |c: char| c == '[' || c == ']';
    let mut segments = Vec::new();
    let mut rest = item;
    loop {
        let Some(open) = rest.find(is_bracket) else {
            if !rest.is_empty() {
                segments.push(Segment::Literal(rest));
            }
            return Ok(segments);
        };
        if rest[open..].starts_with(']') {
            return Err(HostlistError::UnmatchedBracket {
                item: item.to_owned(),
            });
        }
        if open > 0 {
            segments.push(Segment::Literal(&rest[..open]));
        }
        let inside = &rest[open + 1..];
        let Some(close) = inside.find(is_bracket) else {
            return Err(HostlistError::UnclosedBracket {
                item: item.to_owned(),
            });
        };
        if inside[close..].starts_with('[') {
            return Err(HostlistError::NestedBracket {
                item: item.to_owned(),
            });
        }
        segments.push(Segment::Group(parse_group(&inside[..close], item)?));
        rest = &inside[close + 1..];
    }
}

fn parse_group(body: &str, item: &str) -> Result<Vec<Range>, HostlistError> {
    body.split(',')
        .map(|range| parse_range(range, item))
        .collect()
}

fn parse_range(range: &str, item: &str) -> Result<Range, HostlistError> {
    if range.is_empty() {
        return Err(HostlistError::EmptyRange {
            item: item.to_owned(),
        });
    }
    let invalid = || HostlistError::InvalidRange {
        range: range.to_owned(),
        item: item.to_owned(),
    };
    let (lo_text, hi_text) = match range.split_once('-') {
        Some((lo, hi)) => (lo, hi),
        None => (range, range),
    };
    let all_digits = |s: &str| !s.is_empty() && s.bytes().all(|b| b.is_ascii_digit());
    if !all_digits(lo_text) || !all_digits(hi_text) {
        return Err(invalid());
    }
    let number = |s: &str| {
        s.parse::<u64>().map_err(|_| HostlistError::NumberTooLarge {
            number: s.to_owned(),
            item: item.to_owned(),
        })
    };
    let lo = number(lo_text)?;
    let hi = number(hi_text)?;
    if lo > hi {
        return Err(HostlistError::Backwards {
            lo: lo_text.to_owned(),
            hi: hi_text.to_owned(),
            item: item.to_owned(),
        });
    }
    Ok(Range {
        lo,
        hi,
        width: lo_text.len(),
    })
}

/// The number of names and an upper bound on their total bytes.
fn item_size(segments: &[Segment<'_>]) -> (u128, u128) {
    let mut count: u128 = 1;
    let mut name_bytes: u128 = 0;
    for segment in segments {
        match segment {
            Segment::Literal(text) => name_bytes = name_bytes.saturating_add(text.len() as u128),
            Segment::Group(ranges) => {
                let group_count = ranges
                    .iter()
                    .fold(0u128, |acc, r| acc.saturating_add(r.len()));
                let widest = ranges.iter().map(Range::max_bytes).max().unwrap_or(0);
                count = count.saturating_mul(group_count);
                name_bytes = name_bytes.saturating_add(widest as u128);
            }
        }
    }
    (count, count.saturating_mul(name_bytes))
}

fn expand_item(segments: &[Segment<'_>], out: &mut Vec<String>) {
    let mut names = vec![String::new()];
    for segment in segments {
        match segment {
            Segment::Literal(text) => names.iter_mut().for_each(|n| n.push_str(text)),
            Segment::Group(ranges) => {
                let mut next = Vec::new();
                for name in &names {
                    for range in ranges {
                        for value in range.lo..=range.hi {
                            next.push(format!("{name}{value:0width$}", width = range.width));
                        }
                    }
                }
                names = next;
            }
        }
    }
    out.append(&mut names);
}

/// Expands a hostlist expression into node names, in the order written.
///
/// Duplicates are kept. An empty expression (or one made only of separators)
/// expands to no names.
///
/// ```
/// use gresim_model::hostlist::expand;
/// assert_eq!(expand("gpu[01-02,10],login").unwrap(), ["gpu01", "gpu02", "gpu10", "login"]);
/// assert_eq!(expand("r[0-1]n[0-1]").unwrap(), ["r0n0", "r0n1", "r1n0", "r1n1"]);
/// assert!(expand("gpu[01-02").is_err());
/// ```
pub fn expand(expr: &str) -> Result<Vec<String>, HostlistError> {
    let items = split_items(expr);
    let mut parsed = Vec::with_capacity(items.len());
    let mut total_names: u128 = 0;
    let mut total_bytes: u128 = 0;
    for item in items {
        let segments = parse_item(item)?;
        let (names, bytes) = item_size(&segments);
        total_names = total_names.saturating_add(names);
        total_bytes = total_bytes.saturating_add(bytes);
        if total_names > MAX_EXPANDED_NAMES as u128 {
            return Err(HostlistError::TooManyNames {
                limit: MAX_EXPANDED_NAMES,
                item: item.to_owned(),
            });
        }
        if total_bytes > MAX_EXPANDED_BYTES as u128 {
            return Err(HostlistError::TooLarge {
                limit: MAX_EXPANDED_BYTES,
                item: item.to_owned(),
            });
        }
        parsed.push(segments);
    }
    // Both totals are bounded by the checks above, so the conversion holds.
    let mut out = Vec::with_capacity(usize::try_from(total_names).unwrap_or(0));
    for segments in &parsed {
        expand_item(segments, &mut out);
    }
    Ok(out)
}

/// The number of decimal digits of `n` written without padding.
fn decimal_len(n: u64) -> usize {
    n.checked_ilog10().map_or(1, |l| l as usize + 1)
}

/// Splits `gpu017` into `("gpu", "017", 17)`; `None` without a trailing
/// digit run or when it does not fit in 64 bits.
fn split_numbered(name: &str) -> Option<(&str, &str, u64)> {
    let digits_start = name
        .bytes()
        .rposition(|b| !b.is_ascii_digit())
        .map_or(0, |p| p + 1);
    let (prefix, digits) = name.split_at(digits_start);
    if digits.is_empty() {
        return None;
    }
    let value = digits.parse().ok()?;
    Some((prefix, digits, value))
}

/// A run of consecutive numbers written with the same padding.
struct Run<'a> {
    lo_digits: &'a str,
    hi_digits: &'a str,
    hi: u64,
}

impl Run<'_> {
    /// Whether `value` written as `digits` continues this run, that is
    /// whether expanding `lo-value` would write it as `digits`.
    fn continued_by(&self, digits: &str, value: u64) -> bool {
        self.hi.checked_add(1) == Some(value)
            && digits.len() == self.lo_digits.len().max(decimal_len(value))
    }
}

enum Group<'a> {
    Plain(&'a str),
    Numbered { prefix: &'a str, runs: Vec<Run<'a>> },
}

/// Writes node names as a hostlist expression, Slurm style.
///
/// The names are sorted with [`natural_cmp`] and deduplicated; consecutive
/// names sharing the text before their trailing number go into one bracket
/// group, and consecutive numbers with the same zero-padding into one
/// `lo-hi` range. A group holding a single name is written without
/// brackets, names without a trailing number as they are, and empty names
/// are skipped.
///
/// For names free of separators and brackets,
/// `expand(&compress(names))` gives the names sorted naturally and
/// deduplicated.
///
/// ```
/// use gresim_model::hostlist::compress;
/// assert_eq!(compress(&["gpu03", "gpu01", "gpu02", "gpu10"]), "gpu[01-03,10]");
/// assert_eq!(compress(&["n10", "n9", "login"]), "login,n[9-10]");
/// assert_eq!(compress(&["gpu01"]), "gpu01");
/// ```
pub fn compress<S: AsRef<str>>(names: &[S]) -> String {
    let mut sorted: Vec<&str> = names
        .iter()
        .map(AsRef::as_ref)
        .filter(|n| !n.is_empty())
        .collect();
    sorted.sort_unstable_by(|a, b| natural_cmp(a, b));
    sorted.dedup();

    let mut groups: Vec<Group<'_>> = Vec::new();
    for name in sorted {
        let Some((prefix, digits, value)) = split_numbered(name) else {
            groups.push(Group::Plain(name));
            continue;
        };
        let new_run = Run {
            lo_digits: digits,
            hi_digits: digits,
            hi: value,
        };
        match groups.last_mut() {
            Some(Group::Numbered { prefix: p, runs }) if *p == prefix => match runs.last_mut() {
                Some(run) if run.continued_by(digits, value) => {
                    run.hi = value;
                    run.hi_digits = digits;
                }
                _ => runs.push(new_run),
            },
            _ => groups.push(Group::Numbered {
                prefix,
                runs: vec![new_run],
            }),
        }
    }

    let mut out = String::new();
    for group in &groups {
        if !out.is_empty() {
            out.push(',');
        }
        match group {
            Group::Plain(name) => out.push_str(name),
            Group::Numbered { prefix, runs } => {
                out.push_str(prefix);
                match runs.as_slice() {
                    [run] if run.lo_digits == run.hi_digits => out.push_str(run.lo_digits),
                    _ => {
                        out.push('[');
                        for (i, run) in runs.iter().enumerate() {
                            if i > 0 {
                                out.push(',');
                            }
                            out.push_str(run.lo_digits);
                            if run.hi_digits != run.lo_digits {
                                out.push('-');
                                out.push_str(run.hi_digits);
                            }
                        }
                        out.push(']');
                    }
                }
            }
        }
    }
    out
}

/// Compares two digit runs by numeric value, whatever their length.
fn cmp_digit_runs(a: &[u8], b: &[u8]) -> Ordering {
    let strip = |s: &[u8]| -> usize { s.iter().position(|&d| d != b'0').unwrap_or(s.len()) };
    let a = &a[strip(a)..];
    let b = &b[strip(b)..];
    a.len().cmp(&b.len()).then_with(|| a.cmp(b))
}

fn digit_run_end(s: &[u8], start: usize) -> usize {
    s[start..]
        .iter()
        .position(|b| !b.is_ascii_digit())
        .map_or(s.len(), |p| start + p)
}

/// Natural ("human") order of node names: digit runs compare by numeric
/// value, so `gpu2 < gpu10`; everything else compares byte by byte.
///
/// Names that are equal under this rule (`n01` and `n1`) are ordered by plain
/// byte comparison, so the order is total and `natural_cmp(a, b) == Equal`
/// exactly when `a == b`.
///
/// ```
/// use gresim_model::hostlist::natural_cmp;
/// use std::cmp::Ordering;
/// assert_eq!(natural_cmp("gpu2", "gpu10"), Ordering::Less);
/// assert_eq!(natural_cmp("a100", "a20"), Ordering::Greater);
/// assert_eq!(natural_cmp("n01", "n1"), Ordering::Less);
/// ```
pub fn natural_cmp(a: &str, b: &str) -> Ordering {
    let (x, y) = (a.as_bytes(), b.as_bytes());
    let (mut i, mut j) = (0, 0);
    while i < x.len() && j < y.len() {
        if x[i].is_ascii_digit() && y[j].is_ascii_digit() {
            let (end_i, end_j) = (digit_run_end(x, i), digit_run_end(y, j));
            match cmp_digit_runs(&x[i..end_i], &y[j..end_j]) {
                Ordering::Equal => (i, j) = (end_i, end_j),
                unequal => return unequal,
            }
        } else {
            match x[i].cmp(&y[j]) {
                Ordering::Equal => (i, j) = (i + 1, j + 1),
                unequal => return unequal,
            }
        }
    }
    (i < x.len()).cmp(&(j < y.len())).then_with(|| a.cmp(b))
}

#[cfg(test)]
mod tests;
