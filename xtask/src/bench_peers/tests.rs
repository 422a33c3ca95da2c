//! Unit tests of `bench_peers` (bench_peers.rs).

use super::*;

fn args(a: &[&str]) -> Vec<String> {
    a.iter().map(|s| s.to_string()).collect()
}

fn err(a: &[&str]) -> String {
    match parse(&args(a)) {
        Ok(_) => panic!("{a:?} was accepted"),
        Err(e) => format!("{e:#}"),
    }
}

#[test]
fn options_reach_the_generator_and_the_run() {
    let o = parse(&args(&[
        "-n",
        "20000",
        "--load",
        "0.95",
        "--max-overestimate",
        "3.0",
        "--policies",
        "slurm, conservative",
        "--accasim",
        "none",
        "--runs",
        "1",
        "--warmup",
        "0",
    ]))
    .unwrap();
    assert_eq!(o.gen.jobs, 20_000);
    assert_eq!(o.gen.load, Some(0.95));
    assert_eq!(o.gen.max_overestimate, 3.0);
    assert_eq!(o.gen.capacity, 1024);
    assert_eq!(o.policies, ["slurm", "conservative"]);
    assert!(o.accasim.is_empty());
    assert_eq!((o.runs, o.warmup), (1, 0));
    let d = parse(&[]).unwrap();
    assert_eq!(d.policies, ["strict-fifo", "easy", "slurm", "conservative"]);
    assert_eq!(d.accasim, ["fifo", "easy"]);
    assert_eq!(
        (d.gen.jobs, d.gen.load, d.gen.seed),
        (10_000, Some(0.9), 42)
    );
}

#[test]
fn bad_options_are_named() {
    assert!(err(&["--policies", "slurm,nope"]).contains("unknown policy 'nope'"));
    assert!(err(&["--policies", ","]).contains("--policies: expected"));
    assert!(err(&["--accasim", "sjf"]).contains("--accasim: expected fifo, easy or none"));
    assert!(err(&["--capacity", "512"]).contains("--capacity: fixed at 1024"));
    assert!(err(&["--runs", "0"]).contains("--runs: expected at least 1"));
    assert!(err(&["--max-overestimate", "0.5"]).contains("--max-overestimate: expected"));
    assert!(err(&["-n", "x"]).contains("-n: expected"));
    assert!(err(&["--load"]).contains("--load needs a value"));
    assert!(err(&["--frobnicate", "1"]).contains("unknown argument '--frobnicate'"));
}

#[test]
fn fnv1a_is_the_64_bit_fnv_1a() {
    // Published test vectors of FNV-1a 64.
    assert_eq!(fnv1a(b""), 0xcbf2_9ce4_8422_2325);
    assert_eq!(fnv1a(b"a"), 0xaf63_dc4c_8601_ec8c);
    assert_eq!(fnv1a(b"foobar"), 0x8594_4171_f739_67e8);
}
