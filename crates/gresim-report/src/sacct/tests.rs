//! Unit tests of `sacct` (sacct.rs).

use super::*;
use crate::run_file::RunMeta;
use crate::test_support::sample_output;

fn rf() -> RunFile {
    RunFile::from_output(&sample_output(), &RunMeta::new("tiny"))
}

#[test]
fn default_fields() {
    let got = sacct(&rf(), &SacctOpts::default()).unwrap();
    let want = [
        "JobID           JobName  Partition    Account  AllocCPUS      State ExitCode ",
        "------------ ---------- ---------- ---------- ---------- ---------- -------- ",
        "1                 train        gpu                     4  COMPLETED      0:0 ",
        "2            eval, \"qu+        gpu                     2    TIMEOUT     0:15 ",
        "3_4               sweep        gpu                     0    PENDING      0:0 ",
        "",
    ]
    .join("\n");
    assert_eq!(got, want);
}

#[test]
fn duplicates_parsable() {
    let o = SacctOpts {
        format: Some("jobid,state,elapsed,start,end,submit,nodelist,alloctres".into()),
        parsable: true,
        duplicates: true,
        no_header: false,
    };
    let got = sacct(&rf(), &o).unwrap();
    let want = [
        "JobID|State|Elapsed|Start|End|Submit|NodeList|AllocTRES",
        "1|COMPLETED|00:01:40|1970-01-01T00:00:10|1970-01-01T00:01:50|1970-01-01T00:00:00|gpu01|billing=4,cpu=4,gres/gpu:a100=2,gres/gpu=2,mem=1000M,node=1",
        "2|REQUEUED|00:00:40|1970-01-01T00:01:50|1970-01-01T00:02:30|1970-01-01T00:00:05|gpu01|billing=2,cpu=2,gres/gpu:a100=1,gres/gpu=1,mem=500M,node=1",
        "2|TIMEOUT|00:01:40|1970-01-01T00:03:20|1970-01-01T00:05:00|1970-01-01T00:02:30|gpu01|billing=2,cpu=2,gres/gpu:a100=1,gres/gpu=1,mem=500M,node=1",
        "3_4|PENDING|00:00:00|Unknown|Unknown|1970-01-01T00:00:20|None assigned|",
        "",
    ]
    .join("\n");
    assert_eq!(got, want);
    // Without -D only the last run of job 2.
    let o = SacctOpts {
        duplicates: false,
        ..o
    };
    let got = sacct(&rf(), &o).unwrap();
    assert_eq!(got.lines().filter(|l| l.starts_with("2|")).count(), 1);
    assert!(got.contains("2|TIMEOUT|"));
}

#[test]
fn bad_fields() {
    assert!(parse_fields("JobID,Bogus").unwrap_err().contains("Bogus"));
    assert!(parse_fields("JobID%x").is_err());
    assert_eq!(
        parse_fields("jobid%20,state").unwrap(),
        vec![("JobID", -20), ("State", 10)]
    );
}
