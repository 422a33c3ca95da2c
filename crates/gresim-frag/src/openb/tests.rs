//! Unit tests of `openb` (openb.rs).

use super::*;

#[test]
fn csv_quotes_and_errors() {
    assert_eq!(split_csv("a,\"b,c\",d").unwrap(), vec!["a", "b,c", "d"]);
    assert_eq!(split_csv("\"x\"\"y\"").unwrap(), vec!["x\"y"]);
    assert!(split_csv("\"open").is_err());
}

#[test]
fn malformed_rows_name_file_and_line() {
    let p = Path::new("nodes.csv");
    let csv = Csv::parse(
        p,
        "sn,cpu_milli,memory_mib,gpu,model\nn0,1000,10,1,T4\nn1,1,2\n",
    );
    let e = csv.err().unwrap().to_string();
    assert!(e.starts_with("nodes.csv:3:"), "{e}");
    let dir = std::env::temp_dir().join(format!("gresim-frag-openb-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let f = dir.join("n.csv");
    std::fs::write(&f, "sn,cpu_milli,memory_mib,gpu,model\nn0,lots,10,1,T4\n").unwrap();
    let e = read_nodes(&f).unwrap_err().to_string();
    assert!(e.contains("n.csv:2:") && e.contains("cpu_milli"), "{e}");
    std::fs::write(&f, "sn,cpu_milli,memory_mib,gpu,model\nn0,1000,10,99,T4\n").unwrap();
    assert!(read_nodes(&f).unwrap_err().to_string().contains("n.csv:2:"));
    let _ = std::fs::remove_dir_all(&dir);
}

#[test]
fn a_compressed_file_beside_the_csv_is_read_and_named_in_errors() {
    use std::io::Write as _;
    let dir = std::env::temp_dir().join(format!("gresim-frag-openb-gz-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let gz = |name: &str, text: &str| {
        let mut e = flate2::write::GzEncoder::new(Vec::new(), flate2::Compression::default());
        e.write_all(text.as_bytes()).unwrap();
        std::fs::write(dir.join(name), e.finish().unwrap()).unwrap();
    };
    gz(
        "n.csv.gz",
        "sn,cpu_milli,memory_mib,gpu,model\nn0,1000,10,1,T4\nn1,2000,10,2,P100\n",
    );
    let c = read_nodes(&dir.join("n.csv")).unwrap();
    assert_eq!((c.nodes.len(), c.total_gpus()), (2, 3));
    // The .gz named directly reads the same.
    assert_eq!(read_nodes(&dir.join("n.csv.gz")).unwrap().total_gpus(), 3);
    gz(
        "bad.csv.gz",
        "sn,cpu_milli,memory_mib,gpu,model\nn0,lots,10,1,T4\n",
    );
    let e = read_nodes(&dir.join("bad.csv")).unwrap_err().to_string();
    assert!(
        e.contains("bad.csv.gz:2:") && e.contains("cpu_milli"),
        "{e}"
    );
    // Not gzip: an error naming the file, no panic.
    std::fs::write(dir.join("junk.csv.gz"), b"sn,cpu_milli\n").unwrap();
    let e = read_nodes(&dir.join("junk.csv")).unwrap_err().to_string();
    assert!(e.contains("junk.csv.gz: cannot read"), "{e}");
    // Neither file: the .csv is named.
    let e = read_nodes(&dir.join("none.csv")).unwrap_err().to_string();
    assert!(e.contains("none.csv: cannot read"), "{e}");
    let _ = std::fs::remove_dir_all(&dir);
}

#[test]
fn spec_masks() {
    let c = Cluster {
        nodes: vec![],
        models: vec!["T4".into(), "P100".into()],
    };
    assert_eq!(c.spec_mask(""), TypeMask::ANY);
    assert_eq!(c.spec_mask("P100|T4"), TypeMask(0b11));
    assert_eq!(c.spec_mask("A100"), TypeMask(0));
}
