//! Text helpers shared by the Slurm-style views: squeue's `-o` format
//! strings and field padding, sacct's column padding, timestamps.

/// One piece of a parsed `-o` format.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Piece {
    Literal(String),
    Field {
        code: char,
        /// 0: no width (the value as is).
        width: usize,
        /// `%.N`: right-justified.
        right: bool,
    },
}

/// Parses a squeue-style format: `%[.][width]code` and literal text; `%%` is
/// a percent sign. Codes outside `codes` are an error.
pub fn parse_format(fmt: &str, codes: &str) -> Result<Vec<Piece>, String> {
    let mut out = Vec::new();
    let mut lit = String::new();
    let mut it = fmt.chars().peekable();
    while let Some(ch) = it.next() {
        if ch != '%' {
            lit.push(ch);
            continue;
        }
        if it.peek() == Some(&'%') {
            it.next();
            lit.push('%');
            continue;
        }
        let mut right = false;
        if it.peek() == Some(&'.') {
            right = true;
            it.next();
        }
        let mut digits = String::new();
        while let Some(d) = it.peek().copied().filter(char::is_ascii_digit) {
            digits.push(d);
            it.next();
        }
        let width = if digits.is_empty() {
            0
        } else {
            digits
                .parse::<usize>()
                .ok()
                .filter(|w| *w <= 1000)
                .ok_or_else(|| format!("bad field width '{digits}' in format '{fmt}'"))?
        };
        let Some(code) = it.next() else {
            return Err(format!("format '{fmt}' ends with an unfinished field"));
        };
        if !codes.contains(code) {
            return Err(format!(
                "unknown field '%{code}' in format '{fmt}'; known: {}",
                codes
                    .chars()
                    .map(|c| format!("%{c}"))
                    .collect::<Vec<_>>()
                    .join(" ")
            ));
        }
        if !lit.is_empty() {
            out.push(Piece::Literal(std::mem::take(&mut lit)));
        }
        out.push(Piece::Field { code, width, right });
    }
    if !lit.is_empty() {
        out.push(Piece::Literal(lit));
    }
    Ok(out)
}

/// Pads `s` as squeue's `_print_str` does: right-justified fields (`%.N`)
/// are padded on the left and cut to N characters when `cut`; left-justified
/// fields (`%N`) are cut to N and padded on the right; width 0 prints as is.
pub fn pad(s: &str, width: usize, right: bool, cut: bool) -> String {
    if width == 0 {
        return s.to_string();
    }
    let n = s.chars().count();
    let body: String = if cut || !right {
        s.chars().take(width).collect()
    } else {
        s.to_string()
    };
    let bn = body.chars().count().min(n);
    if right {
        format!("{}{body}", " ".repeat(width.saturating_sub(bn)))
    } else {
        format!("{body}{}", " ".repeat(width.saturating_sub(bn)))
    }
}

/// sacct's column: a value longer than the column is cut with a trailing `+`;
/// `right` columns are right-justified. Each column is followed by a space.
pub fn sacct_col(s: &str, width: usize, right: bool) -> String {
    let n = s.chars().count();
    let body: String = if n > width && width > 0 {
        let mut b: String = s.chars().take(width - 1).collect();
        b.push('+');
        b
    } else {
        s.to_string()
    };
    if right {
        format!("{body:>width$} ")
    } else {
        format!("{body:<width$} ")
    }
}

/// A simulated time as sacct prints dates (`%FT%T`). Simulated time 0 is
/// printed as 1970-01-01T00:00:00: simulated seconds are read as a Unix time.
pub fn timestamp(t: u64) -> String {
    let t = t.min(253_402_300_799); // 9999-12-31T23:59:59
    let days = (t / 86_400) as i64;
    let s = t % 86_400;
    let (y, m, d) = gresim_model::slurm_time::civil_from_days(days);
    format!(
        "{y:04}-{m:02}-{d:02}T{:02}:{:02}:{:02}",
        s / 3600,
        s % 3600 / 60,
        s % 60
    )
}

/// sacct's Elapsed and Timelimit: `HH:MM:SS`, `D-HH:MM:SS` from a day on.
pub fn sacct_duration(secs: u64) -> String {
    let (d, h, m, s) = (
        secs / 86_400,
        secs % 86_400 / 3600,
        secs % 3600 / 60,
        secs % 60,
    );
    if d > 0 {
        format!("{d}-{h:02}:{m:02}:{s:02}")
    } else {
        format!("{h:02}:{m:02}:{s:02}")
    }
}

/// Parses a time given on the command line: seconds (`3600`), or Slurm's
/// duration forms (`1:00:00`, `2-00:00:00`, `90:00`).
pub fn parse_at(s: &str) -> Result<u64, String> {
    let s = s.trim();
    if let Ok(v) = s.parse::<u64>() {
        return Ok(v);
    }
    gresim_model::slurm_time::parse_elapsed(s)
        .map_err(|e| format!("bad time '{s}': {e}; expected seconds or [D-]HH:MM:SS"))
}

#[cfg(test)]
mod tests;
