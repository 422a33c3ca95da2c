//! Unit tests of `slurm_opts` (slurm_opts.rs).

use super::*;

#[test]
fn arrays() {
    let a = parse_array("0-15:4%2").unwrap();
    assert_eq!(a.indices, vec![0, 4, 8, 12]);
    assert_eq!((a.throttle, a.step), (Some(2), 4));
    assert_eq!(parse_array("1,3,5-6").unwrap().indices, vec![1, 3, 5, 6]);
    assert!(parse_array("5-3").is_err());
    assert!(parse_array("0-1001").is_err());
    assert!(parse_array("a-b").is_err());
    assert!(parse_array("1-3%0").is_err());
}

#[test]
fn segments() {
    assert_eq!(parse_segment("4"), Ok(Some(4)));
    assert_eq!(parse_segment(" 2 "), Ok(Some(2)));
    // 0 is Slurm's unset.
    assert_eq!(parse_segment("0"), Ok(None));
    assert_eq!(parse_segment("65533"), Ok(Some(65533)));
    for bad in ["65534", "-1", "2x", "", "1.5"] {
        let e = parse_segment(bad).unwrap_err();
        assert!(
            e.starts_with("Invalid --segment specification"),
            "{bad}: {e}"
        );
    }
}

#[test]
fn nodes() {
    assert_eq!(parse_nodes("2"), Ok((2, 2)));
    assert_eq!(parse_nodes("1-4"), Ok((1, 4)));
    assert!(parse_nodes("0").is_err());
    assert!(parse_nodes("4-1").is_err());
    assert!(parse_nodes("-1").is_err());
}

#[test]
fn dependencies() {
    let r = |id: &str| match id {
        "a" => Some((0, None)),
        "b_3" => Some((1, Some(3))),
        _ => None,
    };
    let d = parse_dependency("afterok:a:b_3,singleton", r).unwrap();
    assert!(!d.any);
    assert_eq!(d.terms.len(), 3);
    assert_eq!(
        d.terms[1],
        DepTerm {
            kind: DepKind::AfterOk,
            target: Some(1),
            task: Some(3)
        }
    );
    assert!(parse_dependency("afterok:zz", r).is_err());
    assert!(parse_dependency("afterok:a?afterany:a,singleton", r).is_err());
    assert!(parse_dependency("before:a", r).is_err());
    assert!(parse_dependency("afterany:a?afternotok:a", r).unwrap().any);
}
