//! gres.conf: the GPU devices of each node.
//!
//! The reader follows `man gres.conf` (Slurm 22.05): parameter names are
//! case-insensitive, `#` starts a comment, a line ending in `\` continues on
//! the next, `Include FILE` reads another file. A line applies to the nodes of
//! its `NodeName=` hostlist, or to every node when it has none. The keys:
//!
//! * `Name` (GRES name; only `gpu` is modelled, others are reported),
//!   `Type` (`a100`, `h100`, MIG types such as `a100_3g.20gb`);
//! * `File` — device files, with numeric ranges (`/dev/nvidia[0-3]`), one
//!   GRES device per file; `MultipleFiles` — several files that are one
//!   device (MIG); the two are exclusive;
//! * `Count` — defaults to the number of files, else 1 (`K`/`M`/`G` suffixes);
//! * `Cores` — logical core ids (`0-15,32`), used at socket granularity;
//! * `Links` — link counts to devices 0, 1, …, `-1` for the device itself; a
//!   line with `Links` holds one device;
//! * `AutoDetect` (alone on a line it applies to every line; gresim cannot
//!   probe hardware, see [`crate::slurmconf::build_cluster`]) and `Flags`.
//!
//! The order of device lines for a node is the GRES index order (bit `i` of
//! `SLURM_JOB_GPUS`). Unknown keys are warnings with their line number.

use std::path::Path;

use gresim_model::hostlist;
use gresim_model::units::parse_count;

use crate::conf_lines::{logical_lines, words, ConfLine, Warning};
use crate::error::InputError;

/// A parsed gres.conf.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct GresConf {
    /// Device lines in file order.
    pub lines: Vec<GresLine>,
    /// A global `AutoDetect=` (a line with no other key).
    pub autodetect: Option<String>,
}

/// One device line of gres.conf.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct GresLine {
    /// Where it was read (line 0: made in code, e.g. from a conformance case).
    pub file: std::path::PathBuf,
    pub line: usize,
    /// The nodes (expanded hostlist); `None` is every node.
    pub nodes: Option<Vec<String>>,
    /// GRES name as written (`gpu`).
    pub name: String,
    /// `Type=`.
    pub ty: Option<String>,
    /// `File=`, expanded: one device per file.
    pub files: Vec<String>,
    /// `MultipleFiles=`, expanded: all of them are one device.
    pub multiple_files: Vec<String>,
    /// `Count=` as written.
    pub count: Option<u64>,
    /// `Cores=` as inclusive ranges of logical core ids.
    pub cores: Option<Vec<(u32, u32)>>,
    /// `Links=`: link counts to devices 0, 1, …; -1 is the device itself.
    pub links: Option<Vec<i32>>,
    /// A node-specific `AutoDetect=`.
    pub autodetect: Option<String>,
    /// `Flags=`, comma-separated.
    pub flags: Vec<String>,
}

impl GresLine {
    /// How many GRES devices this line describes.
    pub fn devices(&self) -> u64 {
        if !self.files.is_empty() {
            self.files.len() as u64
        } else if !self.multiple_files.is_empty() {
            1
        } else {
            self.count.unwrap_or(1)
        }
    }

    /// Whether the line applies to node `name`.
    pub fn applies_to(&self, name: &str) -> bool {
        self.nodes
            .as_ref()
            .is_none_or(|v| v.iter().any(|n| n == name))
    }

    /// Whether this is a GPU line.
    pub fn is_gpu(&self) -> bool {
        self.name.eq_ignore_ascii_case("gpu")
    }

    /// The physical GPU a `MultipleFiles` device belongs to: the number of
    /// its first `/dev/nvidiaN` file.
    pub fn parent_gpu(&self) -> Option<u32> {
        self.multiple_files.iter().find_map(|f| {
            f.strip_prefix("/dev/nvidia")
                .filter(|n| !n.is_empty() && n.bytes().all(|b| b.is_ascii_digit()))
                .and_then(|n| n.parse().ok())
        })
    }
}

/// Flags gres.conf knows (22.05 and 23.11).
const KNOWN_FLAGS: &[&str] = &[
    "countonly",
    "explicit",
    "one_sharing",
    "all_sharing",
    "nvidia_gpu_env",
    "amd_gpu_env",
    "intel_gpu_env",
    "opencl_env",
    "no_gpu_env",
];

/// The most devices one line may describe (Slurm limits `File` counts to 1024).
const MAX_LINE_DEVICES: u64 = 1024;

/// Reads gres.conf from a file.
pub fn read_gres_conf(path: &Path) -> Result<(GresConf, Vec<Warning>), InputError> {
    let text = std::fs::read_to_string(path)
        .map_err(|e| InputError::new(path, format!("cannot read gres.conf: {e}")))?;
    parse_gres_conf(path, &text)
}

/// Parses gres.conf text; `path` names it in messages and anchors `Include`.
pub fn parse_gres_conf(path: &Path, text: &str) -> Result<(GresConf, Vec<Warning>), InputError> {
    let mut warnings = Vec::new();
    let lines = logical_lines(path, text, &mut warnings)?;
    let mut conf = GresConf::default();
    for l in &lines {
        parse_line(l, &mut conf, &mut warnings)?;
    }
    Ok((conf, warnings))
}

fn parse_line(
    l: &ConfLine,
    conf: &mut GresConf,
    warnings: &mut Vec<Warning>,
) -> Result<(), InputError> {
    let err = |msg: String| InputError::new(&l.file, msg).with_line(l.line, 0);
    let warn = |warnings: &mut Vec<Warning>, msg: String| {
        warnings.push(Warning::new(&l.file, l.line, msg));
    };
    let mut g = GresLine {
        file: l.file.clone(),
        line: l.line,
        ..GresLine::default()
    };
    let mut has_name = false;
    for (k, v) in words(l, warnings) {
        match k.to_ascii_lowercase().as_str() {
            "nodename" => {
                let names = hostlist::expand(&v)
                    .map_err(|e| err(format!("NodeName={v}: bad hostlist: {e}")))?;
                g.nodes = Some(names);
            }
            "name" => {
                if v.is_empty() {
                    return Err(err(
                        "Name= is empty; expected a GRES name such as gpu".into()
                    ));
                }
                g.name = v;
                has_name = true;
            }
            "type" => {
                if v.is_empty() || v.contains([':', ',']) {
                    return Err(err(format!("Type={v} is not a valid GRES type name")));
                }
                g.ty = Some(v);
            }
            "file" => g.files = expand_files(&v).map_err(|e| err(format!("File={v}: {e}")))?,
            "multiplefiles" => {
                g.multiple_files =
                    expand_files(&v).map_err(|e| err(format!("MultipleFiles={v}: {e}")))?
            }
            "count" => {
                let n = parse_count(&v).map_err(|e| err(format!("Count={v}: {e}")))?;
                g.count = Some(n);
            }
            "cores" | "cpus" => {
                g.cores = Some(parse_cores(&v).map_err(|e| err(format!("Cores={v}: {e}")))?)
            }
            "links" => g.links = Some(parse_links(&v).map_err(|e| err(format!("Links={v}: {e}")))?),
            "autodetect" => {
                let a = v.to_ascii_lowercase();
                if !["nvml", "rsmi", "oneapi", "nrt", "off"].contains(&a.as_str()) {
                    warn(
                        warnings,
                        format!("AutoDetect={v}: expected nvml, rsmi, oneapi, nrt or off"),
                    );
                }
                g.autodetect = Some(a);
            }
            "flags" => {
                for f in v.split(',').map(str::trim).filter(|f| !f.is_empty()) {
                    if !KNOWN_FLAGS.contains(&f.to_ascii_lowercase().as_str()) {
                        warn(warnings, format!("unknown gres.conf flag '{f}'"));
                    }
                    g.flags.push(f.to_string());
                }
            }
            _ => warn(warnings, format!("unknown gres.conf key '{k}' (ignored)")),
        }
    }
    if !has_name {
        if g.autodetect.is_some()
            && g.files.is_empty()
            && g.multiple_files.is_empty()
            && g.ty.is_none()
        {
            if g.nodes.is_none() {
                conf.autodetect = g.autodetect;
            } else {
                // A node-specific AutoDetect line without devices.
                conf.lines.push(g);
            }
            return Ok(());
        }
        return Err(err("expected Name= (e.g. Name=gpu) on a device line".into()));
    }
    if !g.files.is_empty() && !g.multiple_files.is_empty() {
        return Err(err("File and MultipleFiles are mutually exclusive".into()));
    }
    if let Some(c) = g.count {
        if !g.files.is_empty() && c != g.files.len() as u64 && g.is_gpu() {
            return Err(err(format!(
                "Count={c} but File= names {} device(s); Count must match the files or be left out",
                g.files.len()
            )));
        }
    }
    if g.is_gpu() && g.devices() > MAX_LINE_DEVICES {
        return Err(err(format!(
            "{} GPU devices on one line; at most {MAX_LINE_DEVICES}",
            g.devices()
        )));
    }
    if g.links.is_some() && g.devices() != 1 {
        return Err(err(format!(
            "Links= is given for a line of {} devices; a line with Links describes exactly one device",
            g.devices()
        )));
    }
    if g.is_gpu() && g.ty.is_some() && g.files.is_empty() && g.multiple_files.is_empty() {
        warn(
            warnings,
            "a typed gpu line without File= (Slurm requires File for typed GPUs); its devices are counted from Count".into(),
        );
    }
    conf.lines.push(g);
    Ok(())
}

/// Expands `/dev/nvidia[0-3]` and comma lists into file names.
pub fn expand_files(v: &str) -> Result<Vec<String>, String> {
    if v.trim().is_empty() {
        return Err("expected one or more device paths".into());
    }
    let files = hostlist::expand(v).map_err(|e| e.to_string())?;
    if files.len() as u64 > MAX_LINE_DEVICES {
        return Err(format!("more than {MAX_LINE_DEVICES} files"));
    }
    Ok(files)
}

/// Parses a core list `0-15,32` into inclusive ranges.
pub fn parse_cores(v: &str) -> Result<Vec<(u32, u32)>, String> {
    let mut out = Vec::new();
    for r in v.split(',') {
        let r = r.trim();
        let (a, b) = r.split_once('-').unwrap_or((r, r));
        let num = |x: &str| -> Result<u32, String> {
            let x = x.trim();
            if x.is_empty() || !x.bytes().all(|c| c.is_ascii_digit()) {
                return Err(format!("bad core range '{r}'; expected N or N-M"));
            }
            x.parse().map_err(|_| format!("core id '{x}' is too large"))
        };
        let (a, b) = (num(a)?, num(b)?);
        if b < a {
            return Err(format!("core range '{r}' goes backwards"));
        }
        out.push((a, b));
    }
    Ok(out)
}

/// Parses `Links=-1,2,0,1`.
pub fn parse_links(v: &str) -> Result<Vec<i32>, String> {
    v.split(',')
        .map(|x| {
            let x = x.trim();
            match x.parse::<i32>() {
                Ok(n) if n >= -1 => Ok(n),
                _ => Err(format!(
                    "'{x}' is not a link count; expected a number >= 0, or -1 for the device itself"
                )),
            }
        })
        .collect()
}

#[cfg(test)]
mod tests;
