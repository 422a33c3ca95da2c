//! Unit tests of `sweep_cmd` (sweep_cmd.rs).

use super::*;

#[test]
fn shards_parse() {
    assert_eq!(parse_shard("1/3"), Ok(Shard { k: 1, n: 3 }));
    assert!(parse_shard("3/3").is_err());
    assert!(parse_shard("0/0").is_err());
    assert!(parse_shard("1").is_err());
    assert!(parse_shard("a/3").is_err());
}

fn env(pairs: &[(&str, &str)]) -> impl Fn(&str) -> Option<String> {
    let m: std::collections::BTreeMap<String, String> = pairs
        .iter()
        .map(|(k, v)| (k.to_string(), v.to_string()))
        .collect();
    move |k| m.get(k).cloned()
}

#[test]
fn shard_from_slurm_variables() {
    assert_eq!(shard_from_env(&env(&[])), Ok(None));
    let e = env(&[
        ("SLURM_ARRAY_TASK_ID", "2"),
        ("SLURM_ARRAY_TASK_COUNT", "4"),
    ]);
    assert_eq!(shard_from_env(&e), Ok(Some(Shard { k: 2, n: 4 })));
    // --array=1-4: ids start at SLURM_ARRAY_TASK_MIN.
    let e = env(&[
        ("SLURM_ARRAY_TASK_ID", "4"),
        ("SLURM_ARRAY_TASK_COUNT", "4"),
        ("SLURM_ARRAY_TASK_MIN", "1"),
    ]);
    assert_eq!(shard_from_env(&e), Ok(Some(Shard { k: 3, n: 4 })));
    // --array=0-6:2 has ids 0, 2, 4, 6.
    let e = env(&[
        ("SLURM_ARRAY_TASK_ID", "4"),
        ("SLURM_ARRAY_TASK_COUNT", "4"),
        ("SLURM_ARRAY_TASK_MIN", "0"),
        ("SLURM_ARRAY_TASK_STEP", "2"),
    ]);
    assert_eq!(shard_from_env(&e), Ok(Some(Shard { k: 2, n: 4 })));
    let e = env(&[
        ("SLURM_ARRAY_TASK_ID", "4"),
        ("SLURM_ARRAY_TASK_COUNT", "4"),
    ]);
    assert!(shard_from_env(&e).is_err());
    let e = env(&[("SLURM_ARRAY_TASK_ID", "1")]);
    assert!(shard_from_env(&e)
        .unwrap_err()
        .contains("SLURM_ARRAY_TASK_COUNT"));
}

#[test]
fn shell_quoting() {
    assert_eq!(sh_quote("/tmp/out"), "/tmp/out");
    assert_eq!(sh_quote("/tmp/my out"), "'/tmp/my out'");
    assert_eq!(sh_quote("it's"), "'it'\\''s'");
}
