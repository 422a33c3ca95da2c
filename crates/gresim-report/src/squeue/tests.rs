//! Unit tests of `squeue` (squeue.rs).

use super::*;
use crate::run_file::RunMeta;
use crate::test_support::sample_output;

fn rf() -> RunFile {
    RunFile::from_output(&sample_output(), &RunMeta::new("tiny"))
}

fn opts(at: u64) -> SqueueOpts {
    SqueueOpts {
        at,
        format: None,
        states: None,
        no_header: false,
    }
}

#[test]
fn default_columns_at_t() {
    let got = squeue(&rf(), &opts(50)).unwrap();
    let want = [
        "             JOBID PARTITION     NAME     USER ST       TIME  NODES NODELIST(REASON)",
        "                 2       gpu eval, \"q      bob PD       0:00      1 (None)",
        "               3_4       gpu    sweep    carol PD       0:00      1 (Priority)",
        "                 1       gpu    train    alice  R       0:40      1 gpu01",
        "",
    ]
    .join("\n");
    assert_eq!(got, want);
}

#[test]
fn custom_format_and_states() {
    let o = SqueueOpts {
        at: 250,
        format: Some("%i|%T|%M|%l|%D|%R|%b|%P".into()),
        states: Some(parse_states("all").unwrap()),
        no_header: false,
    };
    let got = squeue(&rf(), &o).unwrap();
    let want = "\
JOBID|STATE|TIME|TIME_LIMIT|NODES|NODELIST(REASON)|TRES_PER_NODE|PARTITION
3_4|PENDING|0:00|UNLIMITED|1|(Priority)|N/A|gpu
2|RUNNING|0:50|1:40|1|gpu01|N/A|gpu
1|COMPLETED|1:40|1:00:00|1|gpu01|N/A|gpu
";
    assert_eq!(got, want);
    // Job 1 ended at 110: gone after MinJobAge.
    let o = SqueueOpts { at: 410, ..o };
    assert!(!squeue(&rf(), &o).unwrap().contains("\n1|"));
}

#[test]
fn arrays_collapse_and_reasons_carry_desc() {
    let mut r = rf();
    let mut t5 = r.jobs[2].clone();
    t5.task = Some(5);
    t5.id = "3_5".into();
    r.jobs.push(t5);
    r.jobs[2].throttle = Some(2);
    r.jobs[1].reasons = Some(vec![
        (5, "None".into(), None),
        (
            60,
            "ReqNodeNotAvail".into(),
            Some("UnavailableNodes:gpu01".into()),
        ),
    ]);
    let o = SqueueOpts {
        format: Some("%i %R".into()),
        no_header: true,
        ..opts(100)
    };
    let got = squeue(&r, &o).unwrap();
    assert_eq!(
        got,
        "2 (ReqNodeNotAvail, UnavailableNodes:gpu01)\n3_[4-5%2] (Priority)\n1 gpu01\n"
    );
}

#[test]
fn bad_format_and_states_are_errors() {
    let o = SqueueOpts {
        format: Some("%i %Z".into()),
        ..opts(0)
    };
    assert!(squeue(&rf(), &o).unwrap_err().contains("%Z"));
    assert!(parse_states("PD,bogus").is_err());
    assert_eq!(
        parse_states("pd,R,completed").unwrap(),
        vec![JobState::Pending, JobState::Running, JobState::Completed]
    );
}
