//! Unit tests of the gresim-report crate root (lib.rs).

use super::*;

#[test]
fn writes_all_files_and_no_temp_dir() {
    let out = test_support::sample_output();
    let root = tempfile::tempdir().unwrap();
    let dir = root.path().join("results").join("tiny");
    let s = write_outputs(&out, "tiny", &dir).unwrap();
    assert_eq!(s, Summary::compute(&out, "tiny"));
    let mut names: Vec<String> = fs::read_dir(&dir)
        .unwrap()
        .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
        .collect();
    names.sort();
    assert_eq!(
        names,
        [
            "records.csv",
            "records.json",
            "run.json",
            "summary.json",
            "utilization.svg"
        ]
    );
    assert_eq!(
        fs::read_to_string(dir.join("records.csv")).unwrap(),
        records_csv(&job_records(&out))
    );
    assert_eq!(
        fs::read_to_string(dir.join("summary.json")).unwrap(),
        s.to_json()
    );
    assert!(fs::read_to_string(dir.join("utilization.svg"))
        .unwrap()
        .contains("<svg"));

    // Writing again replaces the files in place.
    let s2 = write_outputs(&out, "again", &dir).unwrap();
    assert!(fs::read_to_string(dir.join("summary.json"))
        .unwrap()
        .contains("\"again\""));
    assert_eq!(s2.scenario, "again");
    assert_eq!(fs::read_dir(&dir).unwrap().count(), 5);
    let rf = RunFile::load(&dir).unwrap();
    assert_eq!(rf.scenario, "again");
    assert_eq!(rf.jobs.len(), 3);
}

#[test]
fn failure_leaves_nothing_behind() {
    let out = test_support::sample_output();
    let root = tempfile::tempdir().unwrap();
    // `dir` is a file: nothing can be written under it.
    let dir = root.path().join("not-a-dir");
    fs::write(&dir, "x").unwrap();
    assert!(write_outputs(&out, "tiny", &dir).is_err());
    assert_eq!(fs::read_to_string(&dir).unwrap(), "x");

    // A name taken by a directory: refused before any file is moved, and
    // the temporary directory is removed.
    let dir = root.path().join("blocked");
    fs::create_dir_all(dir.join("summary.json").join("sub")).unwrap();
    assert!(write_outputs(&out, "tiny", &dir).is_err());
    let names: Vec<String> = fs::read_dir(&dir)
        .unwrap()
        .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
        .collect();
    assert_eq!(
        names,
        ["summary.json"],
        "no file moved, no temporary directory left"
    );
}
