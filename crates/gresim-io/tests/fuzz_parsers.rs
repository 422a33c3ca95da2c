//! The stable-Rust stand-in for the cargo-fuzz targets in `fuzz/`: every
//! parser entry point of `gresim_io::fuzzing` gets random bytes and
//! structured mutations of valid inputs (the fuzz seed corpus), and must not
//! panic. `FUZZ_CASES` changes the number of cases per target (default
//! 2000); docs/reliability.md has the figures.

use std::path::{Path, PathBuf};

use gresim_io::fuzzing::TARGETS;
use proptest::prelude::*;
use proptest::test_runner::{Config, TestCaseError, TestRunner};

fn cases() -> u32 {
    std::env::var("FUZZ_CASES")
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(2000)
}

/// The seed corpus of a target: `fuzz/seeds/<target>/*`, plus a few inline seeds.
fn seeds(target: &str) -> Vec<Vec<u8>> {
    let root = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../../fuzz/seeds");
    let mut out: Vec<Vec<u8>> = Vec::new();
    if let Ok(rd) = std::fs::read_dir(root.join(target)) {
        let mut paths: Vec<PathBuf> = rd.filter_map(|e| e.ok().map(|e| e.path())).collect();
        paths.sort();
        for p in paths {
            if let Ok(b) = std::fs::read(&p) {
                out.push(b);
            }
        }
    }
    let extra: &[&str] = match target {
        "hostlist" => &["gpu[01-16]", "a[1-3]b[2-4],c", "n[000-010,099]"],
        "slurm_time" => &["1-02:03:04", "UNLIMITED", "90", "0", "now+2hours"],
        "sizes" => &["512G", "4096", "1.5T"],
        "topo_m" => &[
            "\tGPU0\tGPU1\tCPU Affinity\tNUMA Affinity\nGPU0\t X \tNV12\t0-15\t0\nGPU1\tNV12\t X \t0-15\t0\n",
            "\tGPU0\tGPU1\nGPU0\t X \tSYS\nGPU1\tSYS\t X \n",
        ],
        "slurm_opts" => &["gpu:a100:2", "0-15:2%4", "afterok:job1", "a100:4"],
        _ => &[],
    };
    out.extend(extra.iter().map(|s| s.as_bytes().to_vec()));
    if out.is_empty() {
        out.push(b"{}".to_vec());
    }
    out
}

/// One edit of a seed.
#[derive(Debug, Clone)]
enum Edit {
    Flip(usize, u8),
    Insert(usize, Vec<u8>),
    Delete(usize, usize),
    /// Copies a slice of the input elsewhere (duplicates structure).
    Splice(usize, usize, usize),
    Truncate(usize),
}

/// Tokens that matter to the parsers, inserted whole.
const TOKENS: &[&str] = &[
    "[",
    "]",
    "{",
    "}",
    ",",
    "-",
    ":",
    "=",
    "\"",
    "\n",
    "#SBATCH ",
    "--gres=gpu:",
    "--time=",
    "0",
    "-1",
    "99999999999999999999",
    "1e308",
    "NaN",
    "null",
    "\"nodes\":",
    "\0",
    "%",
    "?",
    "UNLIMITED",
    "NodeName=",
    "Gres=gpu:",
    "Name=gpu",
    "File=/dev/nvidia[0-7]",
    "Cores=",
    "Links=",
    "mig",
    "\"failures\":",
    "\"mtbf\":",
    "\"weibull\"",
    "\"shape\":",
    "\"vram\":",
];

fn edit() -> impl Strategy<Value = Edit> {
    prop_oneof![
        (any::<usize>(), any::<u8>()).prop_map(|(p, b)| Edit::Flip(p, b)),
        (
            any::<usize>(),
            prop_oneof![
                proptest::collection::vec(any::<u8>(), 1..8),
                proptest::sample::select(TOKENS).prop_map(|t| t.as_bytes().to_vec()),
            ]
        )
            .prop_map(|(p, b)| Edit::Insert(p, b)),
        (any::<usize>(), 1usize..16).prop_map(|(p, n)| Edit::Delete(p, n)),
        (any::<usize>(), 1usize..64, any::<usize>()).prop_map(|(a, n, b)| Edit::Splice(a, n, b)),
        any::<usize>().prop_map(Edit::Truncate),
    ]
}

fn apply(mut v: Vec<u8>, edits: &[Edit]) -> Vec<u8> {
    for e in edits {
        let len = v.len();
        match e {
            Edit::Flip(p, b) if len > 0 => v[p % len] ^= b | 1,
            Edit::Insert(p, b) => {
                let at = p % (len + 1);
                v.splice(at..at, b.iter().copied());
            }
            Edit::Delete(p, n) if len > 0 => {
                let a = p % len;
                v.drain(a..(a + n).min(len));
            }
            Edit::Splice(a, n, b) if len > 0 => {
                let a = a % len;
                let piece: Vec<u8> = v[a..(a + n).min(len)].to_vec();
                let at = b % (len + 1);
                v.splice(at..at, piece);
            }
            Edit::Truncate(p) if len > 0 => v.truncate(p % len),
            _ => {}
        }
    }
    v
}

fn run_target(name: &str, f: fn(&[u8]), n: u32) -> Result<(), String> {
    let corpus = seeds(name);
    let input = prop_oneof![
        1 => proptest::collection::vec(any::<u8>(), 0..512),
        4 => (0..corpus.len(), proptest::collection::vec(edit(), 1..8))
            .prop_map(move |(i, edits)| apply(corpus[i].clone(), &edits)),
    ];
    let mut runner = TestRunner::new_with_rng(
        Config {
            cases: n,
            failure_persistence: None,
            max_shrink_iters: 2000,
            ..Config::default()
        },
        proptest::test_runner::TestRng::deterministic_rng(
            proptest::test_runner::RngAlgorithm::ChaCha,
        ),
    );
    runner
        .run(&input, |bytes| {
            match std::panic::catch_unwind(|| f(&bytes)) {
                Ok(()) => Ok(()),
                Err(p) => {
                    let msg = p
                        .downcast_ref::<String>()
                        .cloned()
                        .or_else(|| p.downcast_ref::<&str>().map(|s| s.to_string()))
                        .unwrap_or_default();
                    Err(TestCaseError::fail(format!(
                        "{name} panicked: {msg}\ninput: {:?}",
                        String::from_utf8_lossy(&bytes)
                    )))
                }
            }
        })
        .map_err(|e| e.to_string())
}

#[test]
fn no_parser_panics_on_random_or_mutated_input() {
    // Panics are caught and reported with the input; keep the default hook quiet.
    std::panic::set_hook(Box::new(|_| {}));
    let n = cases();
    let mut failures = Vec::new();
    for (name, f) in TARGETS {
        if let Err(e) = run_target(name, f, n) {
            failures.push(e);
        }
    }
    let _ = std::panic::take_hook();
    assert!(failures.is_empty(), "{}", failures.join("\n\n"));
}

#[test]
fn every_target_has_a_seed_corpus_and_a_cargo_fuzz_binary() {
    let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("../../fuzz");
    let manifest = std::fs::read_to_string(root.join("Cargo.toml")).expect("fuzz/Cargo.toml");
    for (name, _) in TARGETS {
        assert!(
            manifest.contains(&format!("name = \"{name}\"")),
            "fuzz/Cargo.toml has no target {name}"
        );
        assert!(
            root.join("fuzz_targets")
                .join(format!("{name}.rs"))
                .is_file(),
            "no fuzz/fuzz_targets/{name}.rs"
        );
        assert!(
            root.join("seeds")
                .join(name)
                .read_dir()
                .is_ok_and(|mut d| d.next().is_some()),
            "no seed corpus for {name}"
        );
    }
}
