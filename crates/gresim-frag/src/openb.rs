//! Readers for the Alibaba OpenB trace (cluster-trace-gpu-v2023) and for the
//! published FGD summary. Every error names the file and the line.
//!
//! Each reader takes the path of a `.csv`; when that file is absent and a
//! gzip-compressed `<path>.gz` is beside it, that is read instead (the
//! repository ships the trace compressed, under `data/`).

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

use crate::model::{NodeSpec, TaskSpec, TypeMask, MAX_GPUS, MAX_GPU_TYPES, MILLI};

/// A malformed or unreadable input file.
#[derive(Debug, thiserror::Error)]
pub enum InputError {
    #[error("{}: cannot read: {source}", path.display())]
    Io {
        path: PathBuf,
        source: std::io::Error,
    },
    #[error("{}:{line}: {msg}", path.display())]
    Bad {
        path: PathBuf,
        line: usize,
        msg: String,
    },
}

fn bad(path: &Path, line: usize, msg: impl Into<String>) -> InputError {
    InputError::Bad {
        path: path.to_path_buf(),
        line,
        msg: msg.into(),
    }
}

/// The cluster: its nodes and its GPU model table.
#[derive(Clone, Debug)]
pub struct Cluster {
    pub nodes: Vec<NodeSpec>,
    /// GPU model names; a node's `gpu_model` indexes this.
    pub models: Vec<String>,
}

impl Cluster {
    /// Total number of GPUs.
    pub fn total_gpus(&self) -> u64 {
        self.nodes.iter().map(|n| u64::from(n.num_gpu)).sum()
    }

    /// The mask of a `gpu_spec` value (`A|B|…`; empty = any model). Names
    /// that no node has are allowed but match nothing.
    pub fn spec_mask(&self, spec: &str) -> TypeMask {
        let mut mask = 0u64;
        let mut named = 0;
        for part in spec.split('|').map(str::trim).filter(|p| !p.is_empty()) {
            named += 1;
            if let Some(i) = self.models.iter().position(|m| m == part) {
                mask |= 1u64 << i;
            }
        }
        if named == 0 {
            TypeMask::ANY
        } else {
            TypeMask(mask)
        }
    }
}

/// `<path>.gz`.
fn gz_path(path: &Path) -> PathBuf {
    let mut s = path.as_os_str().to_owned();
    s.push(".gz");
    PathBuf::from(s)
}

/// The largest text a compressed file may expand to (the biggest OpenB file
/// is 0.7 MB): a corrupt or hostile `.gz` is refused, not inflated without end.
const MAX_TEXT: u64 = 1 << 30;

/// A file's text, gunzipped when its name ends in `.gz`.
fn read_text(path: &Path) -> std::io::Result<String> {
    if path.extension().is_some_and(|e| e == "gz") {
        use std::io::Read as _;
        let file = std::fs::File::open(path)?;
        let mut text = String::new();
        flate2::read::MultiGzDecoder::new(std::io::BufReader::new(file))
            .take(MAX_TEXT + 1)
            .read_to_string(&mut text)?;
        if text.len() as u64 > MAX_TEXT {
            return Err(std::io::Error::new(
                std::io::ErrorKind::InvalidData,
                format!("expands to more than {MAX_TEXT} bytes"),
            ));
        }
        Ok(text)
    } else {
        std::fs::read_to_string(path)
    }
}

/// One parsed CSV file: header and rows with their 1-based line numbers.
struct Csv {
    path: PathBuf,
    header: Vec<String>,
    rows: Vec<(usize, Vec<String>)>,
}

impl Csv {
    fn read(path: &Path) -> Result<Csv, InputError> {
        let gz = gz_path(path);
        let (path, text) = if path.exists() || !gz.exists() {
            (path, read_text(path))
        } else {
            (gz.as_path(), read_text(&gz))
        };
        let text = text.map_err(|source| InputError::Io {
            path: path.to_path_buf(),
            source,
        })?;
        Csv::parse(path, &text)
    }

    fn parse(path: &Path, text: &str) -> Result<Csv, InputError> {
        let mut lines = text
            .lines()
            .enumerate()
            .map(|(i, l)| (i + 1, l.trim_end_matches('\r')));
        let (hline, h) = lines
            .by_ref()
            .find(|(_, l)| !l.trim().is_empty())
            .ok_or_else(|| bad(path, 1, "empty file, expected a CSV header"))?;
        let header = split_csv(h).map_err(|m| bad(path, hline, m))?;
        let mut rows = Vec::new();
        for (n, l) in lines {
            if l.trim().is_empty() {
                continue;
            }
            let fields = split_csv(l).map_err(|m| bad(path, n, m))?;
            if fields.len() != header.len() {
                return Err(bad(
                    path,
                    n,
                    format!(
                        "expected {} fields as in the header, found {}",
                        header.len(),
                        fields.len()
                    ),
                ));
            }
            rows.push((n, fields));
        }
        Ok(Csv {
            path: path.to_path_buf(),
            header,
            rows,
        })
    }

    fn col(&self, name: &str) -> Result<usize, InputError> {
        self.header
            .iter()
            .position(|h| h.trim() == name)
            .ok_or_else(|| bad(&self.path, 1, format!("missing column '{name}'")))
    }

    fn opt_col(&self, name: &str) -> Option<usize> {
        self.header.iter().position(|h| h.trim() == name)
    }
}

/// Splits one CSV line (RFC 4180 quoting).
fn split_csv(line: &str) -> Result<Vec<String>, String> {
    let mut out = Vec::new();
    let mut cur = String::new();
    let mut chars = line.chars().peekable();
    let mut quoted = false;
    let mut was_quoted = false;
    while let Some(c) = chars.next() {
        if quoted {
            if c == '"' {
                if chars.peek() == Some(&'"') {
                    cur.push('"');
                    chars.next();
                } else {
                    quoted = false;
                }
            } else {
                cur.push(c);
            }
        } else if c == '"' && cur.is_empty() && !was_quoted {
            quoted = true;
            was_quoted = true;
        } else if c == ',' {
            out.push(std::mem::take(&mut cur));
            was_quoted = false;
        } else {
            cur.push(c);
        }
    }
    if quoted {
        return Err("unterminated quoted field".into());
    }
    out.push(cur);
    Ok(out)
}

/// Parses a non-negative integer, accepting an integral decimal like `12.0`.
fn parse_uint(path: &Path, line: usize, col: &str, v: &str) -> Result<u64, InputError> {
    let t = v.trim();
    if let Ok(n) = t.parse::<u64>() {
        return Ok(n);
    }
    match t.parse::<f64>() {
        Ok(f) if f.is_finite() && f >= 0.0 && f.fract() == 0.0 && f < 9.0e15 => Ok(f as u64),
        _ => Err(bad(
            path,
            line,
            format!("column '{col}': expected a non-negative integer, found '{t}'"),
        )),
    }
}

/// Reads a node list (`sn,cpu_milli,memory_mib,gpu,model`).
pub fn read_nodes(path: &Path) -> Result<Cluster, InputError> {
    let csv = Csv::read(path)?;
    // The file read (`<path>.gz` when only that exists) names the errors.
    let path = csv.path.as_path();
    let (c_sn, c_cpu, c_mem, c_gpu, c_model) = (
        csv.col("sn")?,
        csv.col("cpu_milli")?,
        csv.col("memory_mib")?,
        csv.col("gpu")?,
        csv.col("model")?,
    );
    let mut models: Vec<String> = Vec::new();
    let mut nodes = Vec::new();
    for (line, f) in &csv.rows {
        let gpus = parse_uint(path, *line, "gpu", &f[c_gpu])?;
        if gpus > MAX_GPUS as u64 {
            return Err(bad(
                path,
                *line,
                format!("column 'gpu': at most {MAX_GPUS} GPUs per node, found {gpus}"),
            ));
        }
        let model = f[c_model].trim();
        let model_idx = if gpus == 0 || model.is_empty() {
            // CPU-only nodes get an unnamed model that no constraint names.
            ""
        } else {
            model
        };
        let idx = match models.iter().position(|m| m == model_idx) {
            Some(i) => i,
            None => {
                if models.len() == MAX_GPU_TYPES {
                    return Err(bad(
                        path,
                        *line,
                        format!("more than {MAX_GPU_TYPES} GPU models"),
                    ));
                }
                models.push(model_idx.to_string());
                models.len() - 1
            }
        };
        nodes.push(NodeSpec {
            name: f[c_sn].trim().to_string(),
            cpu_milli: parse_uint(path, *line, "cpu_milli", &f[c_cpu])?,
            memory_mib: parse_uint(path, *line, "memory_mib", &f[c_mem])?,
            num_gpu: gpus as u8,
            gpu_model: idx as u8,
        });
    }
    if nodes.is_empty() {
        return Err(bad(path, 1, "no nodes"));
    }
    Ok(Cluster { nodes, models })
}

/// Reads a pod list (`name,cpu_milli,memory_mib,num_gpu,gpu_milli[,gpu_spec,…]`).
/// As in the authors' converter, a GPU task's `gpu_milli` above 1000 becomes
/// 1000 and `gpu_spec` is ignored for tasks without GPUs.
pub fn read_tasks(path: &Path, cluster: &Cluster) -> Result<Vec<TaskSpec>, InputError> {
    let csv = Csv::read(path)?;
    // The file read (`<path>.gz` when only that exists) names the errors.
    let path = csv.path.as_path();
    let (c_name, c_cpu, c_mem, c_num, c_milli) = (
        csv.col("name")?,
        csv.col("cpu_milli")?,
        csv.col("memory_mib")?,
        csv.col("num_gpu")?,
        csv.col("gpu_milli")?,
    );
    let c_spec = csv.opt_col("gpu_spec");
    let mut tasks = Vec::with_capacity(csv.rows.len());
    for (line, f) in &csv.rows {
        let num = parse_uint(path, *line, "num_gpu", &f[c_num])?;
        if num > MAX_GPUS as u64 {
            return Err(bad(
                path,
                *line,
                format!("column 'num_gpu': at most {MAX_GPUS}, found {num}"),
            ));
        }
        let raw_milli = parse_uint(path, *line, "gpu_milli", &f[c_milli])?;
        let milli = if num == 0 {
            0
        } else {
            raw_milli.min(u64::from(MILLI)) as u32
        };
        if num > 1 && milli < MILLI && milli > 0 {
            return Err(bad(
                path,
                *line,
                format!(
                    "a task on {num} GPUs must take whole GPUs (gpu_milli 1000), found {milli}"
                ),
            ));
        }
        let spec = match c_spec {
            Some(c) if num > 0 => {
                let s = f[c].trim();
                if s.eq_ignore_ascii_case("nan") {
                    TypeMask::ANY
                } else {
                    cluster.spec_mask(s)
                }
            }
            _ => TypeMask::ANY,
        };
        tasks.push(TaskSpec {
            name: f[c_name].trim().to_string(),
            cpu_milli: parse_uint(path, *line, "cpu_milli", &f[c_cpu])?,
            memory_mib: parse_uint(path, *line, "memory_mib", &f[c_mem])?,
            num_gpu: num as u8,
            gpu_milli: milli,
            gpu_spec: spec,
        });
    }
    Ok(tasks)
}

/// One published figure: mean and standard deviation over seeds.
#[derive(Copy, Clone, Debug, PartialEq)]
pub struct Published {
    pub mean: f64,
    pub std: f64,
}

/// Key of a published figure: (metric, workload, upstream policy label, arrival %).
pub type PublishedKey = (String, String, String, u32);

/// Reads `fgd_summary_by_arrival.csv`
/// (`metric,workload,sc_policy,arrived_gpu_request_pct,mean,std,n_seeds`).
pub fn read_published(path: &Path) -> Result<BTreeMap<PublishedKey, Published>, InputError> {
    let csv = Csv::read(path)?;
    // The file read (`<path>.gz` when only that exists) names the errors.
    let path = csv.path.as_path();
    let cols = [
        csv.col("metric")?,
        csv.col("workload")?,
        csv.col("sc_policy")?,
        csv.col("arrived_gpu_request_pct")?,
        csv.col("mean")?,
        csv.col("std")?,
    ];
    let mut out = BTreeMap::new();
    for (line, f) in &csv.rows {
        let num = |i: usize, name: &str| -> Result<f64, InputError> {
            let t = f[cols[i]].trim();
            if t.is_empty() || t.eq_ignore_ascii_case("nan") {
                return Ok(f64::NAN);
            }
            t.parse::<f64>().map_err(|_| {
                bad(
                    path,
                    *line,
                    format!("column '{name}': expected a number, found '{t}'"),
                )
            })
        };
        let pct = parse_uint(path, *line, "arrived_gpu_request_pct", &f[cols[3]])?;
        let key = (
            f[cols[0]].trim().to_string(),
            f[cols[1]].trim().to_string(),
            f[cols[2]].trim().to_string(),
            pct as u32,
        );
        out.insert(
            key,
            Published {
                mean: num(4, "mean")?,
                std: num(5, "std")?,
            },
        );
    }
    Ok(out)
}

#[cfg(test)]
mod tests;
