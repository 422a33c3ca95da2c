//! Tests of `cargo xtask hashes`: the reference file's format and reading
//! bench_run's output.

use super::*;

#[test]
fn the_reference_file_parses_and_has_long_rows() {
    let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("..");
    let text = std::fs::read_to_string(root.join("benches/reference-hashes.txt")).unwrap();
    let rows = parse(&text).unwrap();
    assert!(rows.iter().any(|r| !r.long));
    assert!(rows.iter().any(|r| r.long));
    assert!(rows.iter().all(|r| r.hash.len() == 16));
}

#[test]
fn bad_lines_name_their_number() {
    let e = parse("# c\n0123456789abcdef 100\nxyz 100\n").unwrap_err();
    assert!(e.to_string().contains("line 3"), "{e}");
    let e = parse("0123456789abcdef\n").unwrap_err();
    assert!(e.to_string().contains("no bench_run arguments"), "{e}");
}

#[test]
fn the_hash_is_read_from_bench_runs_output() {
    let out = "jobs/s  10\nresult hash         0626ddbfabcd068b\n";
    assert_eq!(result_hash(out), Some("0626ddbfabcd068b"));
    assert_eq!(result_hash("nothing"), None);
}
