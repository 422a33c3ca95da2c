//! `cargo xtask gen-swf`: writes a synthetic SWF workload made by
//! `gresim_io::swf_gen` (the model of the peer kit's `gen_swf.py`, with the
//! same options; seeded ChaCha8, so not byte-identical to `gen_swf.py`'s
//! file for the same seed).

use std::path::PathBuf;

use anyhow::{bail, Context, Result};
use gresim_io::swf_gen::SwfGen;

pub const GEN_OPTIONS: &str =
    "  -n, --jobs N              jobs [required for gen-swf; bench-peers: 10000]
  --seed S                  ChaCha8 seed [42]
  --capacity U              system size in units; caps the job size [1024]
  --load L                  target offered load; sets the arrival rate [none; bench-peers: 0.9]
  --mean-interarrival S     mean inter-arrival seconds without --load [60]
  --rt-mu M                 lognormal mu of the run time, ln(seconds) [7.0]
  --rt-sigma S              lognormal sigma [1.5]
  --min-runtime S           [1]
  --max-runtime S           [604800]
  --max-log2 K              largest size 2^K, capped by --capacity [7]
  --decay D                 P(size = 2^k) ~ D^k [0.6]
  --max-overestimate X      requested time = run time * U(1, X); 1 = exact [1.0]
  --users N                 [100]
  --unit LABEL              header comment only [processor]";

const USAGE_HEAD: &str = "usage: cargo xtask gen-swf -n N [-o FILE] [OPTIONS]
a synthetic SWF workload: Poisson arrivals, lognormal run times, power-of-two sizes
  -o, --output FILE         output file, written whole or not at all [stdout]";

fn num<T: std::str::FromStr>(flag: &str, v: &str, what: &str) -> Result<T> {
    v.parse()
        .ok()
        .with_context(|| format!("{flag}: expected {what}, got '{v}'"))
}

/// Applies one generator option `flag` with its `value` to `g`; false when
/// `flag` is not a generator option.
pub fn gen_option(g: &mut SwfGen, flag: &str, value: &str) -> Result<bool> {
    let real = "a number";
    let count = "a non-negative integer";
    match flag {
        "-n" | "--jobs" => g.jobs = num(flag, value, count)?,
        "--seed" => g.seed = num(flag, value, count)?,
        "--capacity" => g.capacity = num(flag, value, count)?,
        "--load" => g.load = Some(num(flag, value, real)?),
        "--mean-interarrival" => g.mean_interarrival = num(flag, value, real)?,
        "--rt-mu" => g.rt_mu = num(flag, value, real)?,
        "--rt-sigma" => g.rt_sigma = num(flag, value, real)?,
        "--min-runtime" => g.min_runtime = num(flag, value, count)?,
        "--max-runtime" => g.max_runtime = num(flag, value, count)?,
        "--max-log2" => g.max_log2 = num(flag, value, count)?,
        "--decay" => g.decay = num(flag, value, real)?,
        "--max-overestimate" => g.max_overestimate = num(flag, value, real)?,
        "--users" => g.users = num(flag, value, count)?,
        "--unit" => g.unit = value.to_string(),
        _ => return Ok(false),
    }
    Ok(true)
}

pub fn run(args: &[String]) -> Result<()> {
    let usage = format!("{USAGE_HEAD}\n{GEN_OPTIONS}");
    let mut g = SwfGen {
        jobs: 0,
        ..SwfGen::default()
    };
    let mut output: Option<PathBuf> = None;
    let mut it = args.iter();
    while let Some(flag) = it.next() {
        if flag == "-h" || flag == "--help" {
            println!("{usage}");
            return Ok(());
        }
        let value = it
            .next()
            .with_context(|| format!("{flag} needs a value\n{usage}"))?;
        if flag == "-o" || flag == "--output" {
            output = Some(value.into());
        } else if !gen_option(&mut g, flag, value)? {
            bail!("unknown argument '{flag}'\n{usage}");
        }
    }
    if g.jobs == 0 {
        bail!("-n: expected at least 1 job (-n is required)\n{usage}");
    }
    let w = g.generate()?;
    match output.filter(|o| o.as_os_str() != "-") {
        Some(path) => w
            .write_file(&path)
            .with_context(|| format!("writing {}", path.display()))?,
        None => {
            use std::io::Write;
            let stdout = std::io::stdout();
            let mut out = std::io::BufWriter::new(stdout.lock());
            w.write(&mut out)
                .and_then(|()| out.flush())
                .context("writing to stdout")?;
        }
    }
    Ok(())
}
