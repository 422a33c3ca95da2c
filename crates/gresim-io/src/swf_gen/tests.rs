//! Unit tests of `swf_gen` (swf_gen.rs).

use super::*;

fn busy(n: u64, seed: u64) -> SwfGen {
    SwfGen {
        jobs: n,
        seed,
        load: Some(0.95),
        max_overestimate: 3.0,
        ..SwfGen::default()
    }
}

#[test]
fn same_seed_same_file_other_seed_other_file() {
    let a = busy(500, 7).generate().unwrap().to_swf();
    let b = busy(500, 7).generate().unwrap().to_swf();
    let c = busy(500, 8).generate().unwrap().to_swf();
    assert_eq!(a, b);
    assert_ne!(a, c);
}

#[test]
fn jobs_follow_the_model() {
    let p = busy(20_000, 42);
    let w = p.generate().unwrap();
    assert_eq!(w.jobs.len(), 20_000);
    let mut last = 0;
    let mut work = 0u128;
    for (i, j) in w.jobs.iter().enumerate() {
        assert_eq!(j.id, i as u64 + 1);
        assert!(j.submit >= last, "submit times are sorted");
        last = j.submit;
        assert!(j.procs.is_power_of_two() && j.procs <= 128);
        assert!((p.min_runtime..=p.max_runtime).contains(&j.run_time));
        assert!(j.req_time >= j.run_time);
        assert!(j.req_time as f64 <= (j.run_time as f64 * 3.0).ceil());
        assert!((1..=100).contains(&j.user));
        work += u128::from(j.procs * j.run_time);
    }
    // The offered load over the arrival span is near the target.
    let span = w.mean_interarrival * p.jobs as f64;
    let load = work as f64 / (1024.0 * span);
    assert!((load - 0.95).abs() < 1e-9, "load {load}");
    let realized = work as f64 / (1024.0 * last as f64);
    assert!((0.85..1.05).contains(&realized), "realized load {realized}");
    // Sizes are geometric with ratio 0.6: 1 is the most common, then 2.
    let ones = w.jobs.iter().filter(|j| j.procs == 1).count();
    let twos = w.jobs.iter().filter(|j| j.procs == 2).count();
    let r = twos as f64 / ones as f64;
    assert!((0.55..0.65).contains(&r), "P(2)/P(1) = {r}");
    // Median run time ~ e^7 = 1097 s.
    let mut rts: Vec<u64> = w.jobs.iter().map(|j| j.run_time).collect();
    rts.sort_unstable();
    let med = rts[rts.len() / 2];
    assert!((950..1250).contains(&med), "median run time {med}");
}

#[test]
fn exact_estimates_and_capped_sizes() {
    let p = SwfGen {
        jobs: 2_000,
        capacity: 10,
        ..SwfGen::default()
    };
    let w = p.generate().unwrap();
    assert!(w.jobs.iter().all(|j| j.req_time == j.run_time));
    assert!(w.jobs.iter().all(|j| j.procs <= 8));
    assert!(w.jobs.iter().any(|j| j.procs == 8));
    assert_eq!(w.mean_interarrival, 60.0);
}

#[test]
fn the_file_reads_back_as_swf() {
    let w = busy(50, 1).generate().unwrap();
    let text = w.to_swf();
    let lines: Vec<&str> = text.lines().filter(|l| !l.starts_with(';')).collect();
    assert_eq!(lines.len(), 50);
    for (l, j) in lines.iter().zip(&w.jobs) {
        let f: Vec<&str> = l.split_whitespace().collect();
        assert_eq!(f.len(), 18);
        assert_eq!(f[1].parse::<u64>().unwrap(), j.submit);
        assert_eq!(f[4], f[7]);
        assert_eq!(f[8].parse::<u64>().unwrap(), j.req_time);
    }
    assert!(text.contains("; MaxProcs: 1024\n"));
}

#[test]
fn bad_parameters_are_named() {
    let cases: Vec<(SwfGen, &str)> = vec![
        (
            SwfGen {
                jobs: 0,
                ..SwfGen::default()
            },
            "jobs",
        ),
        (
            SwfGen {
                capacity: 0,
                ..SwfGen::default()
            },
            "capacity",
        ),
        (
            SwfGen {
                load: Some(0.0),
                ..SwfGen::default()
            },
            "load",
        ),
        (
            SwfGen {
                load: Some(f64::NAN),
                ..SwfGen::default()
            },
            "load",
        ),
        (
            SwfGen {
                mean_interarrival: -1.0,
                ..SwfGen::default()
            },
            "mean-interarrival",
        ),
        (
            SwfGen {
                rt_sigma: -0.5,
                ..SwfGen::default()
            },
            "rt-sigma",
        ),
        (
            SwfGen {
                min_runtime: 10,
                max_runtime: 5,
                ..SwfGen::default()
            },
            "min-runtime",
        ),
        (
            SwfGen {
                max_log2: 64,
                ..SwfGen::default()
            },
            "max-log2",
        ),
        (
            SwfGen {
                decay: 0.0,
                ..SwfGen::default()
            },
            "decay",
        ),
        (
            SwfGen {
                max_overestimate: 0.5,
                ..SwfGen::default()
            },
            "max-overestimate",
        ),
        (
            SwfGen {
                max_overestimate: f64::INFINITY,
                ..SwfGen::default()
            },
            "max-overestimate",
        ),
        (
            SwfGen {
                users: 0,
                ..SwfGen::default()
            },
            "users",
        ),
    ];
    for (p, field) in cases {
        let e = p.generate().unwrap_err();
        assert_eq!(e.field, field, "{p:?}");
        assert!(e.to_string().starts_with(&format!("--{field}: expected")));
    }
}

#[test]
fn extreme_but_valid_parameters_do_not_panic() {
    let p = SwfGen {
        jobs: 300,
        rt_mu: 100.0,
        rt_sigma: 100.0,
        max_runtime: 1 << 40,
        max_log2: 40,
        capacity: u64::MAX,
        decay: 2.0,
        max_overestimate: 1e6,
        load: Some(1e-6),
        ..SwfGen::default()
    };
    let w = p.generate().unwrap();
    assert_eq!(w.jobs.len(), 300);
    assert!(w.to_swf().lines().count() > 300);
    let too_big = SwfGen {
        decay: 1e300,
        ..p.clone()
    };
    assert_eq!(too_big.generate().err().map(|e| e.field), Some("decay"));
    let too_small = SwfGen {
        load: Some(1e-300),
        ..p
    };
    assert_eq!(too_small.generate().err().map(|e| e.field), Some("load"));
}
