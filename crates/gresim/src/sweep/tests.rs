//! Unit tests of `sweep` (sweep.rs).

use super::*;

#[test]
fn parameter_names() {
    let t = |s: &str| match parse_target(s) {
        Ok(Target::Json(v)) => v,
        other => panic!("{s}: {other:?}"),
    };
    let k = |s: &str| Seg::Key(s.into());
    assert_eq!(t("bf_window"), vec![k("scheduler"), k("bf_window")]);
    assert_eq!(
        t("cluster.nodes[1].names"),
        vec![k("cluster"), k("nodes"), Seg::Index(1), k("names")]
    );
    assert_eq!(
        t("workload.synthetic.mix.0.weight"),
        vec![
            k("workload"),
            k("synthetic"),
            k("mix"),
            Seg::Index(0),
            k("weight")
        ]
    );
    assert!(matches!(parse_target("load_scale"), Ok(Target::LoadScale)));
    assert!(parse_target("policy").is_err());
    assert!(parse_target("seed").is_err());
    assert!(parse_target("a..b").is_err());
    assert!(parse_target("a[x]").is_err());
}

#[test]
fn set_json_creates_fields_and_checks_lists() {
    let mut v = serde_json::json!({"a": {"b": [1, 2]}});
    set_json(
        &mut v,
        &[Seg::Key("s".into()), Seg::Key("x".into())],
        5.into(),
    )
    .unwrap();
    assert_eq!(v["s"]["x"], 5);
    set_json(
        &mut v,
        &[Seg::Key("a".into()), Seg::Key("b".into()), Seg::Index(1)],
        9.into(),
    )
    .unwrap();
    assert_eq!(v["a"]["b"][1], 9);
    let e = set_json(
        &mut v,
        &[Seg::Key("a".into()), Seg::Key("b".into()), Seg::Index(5)],
        9.into(),
    )
    .unwrap_err();
    assert!(e.contains("a.b has 2 entries"), "{e}");
    let e = set_json(
        &mut v,
        &[
            Seg::Key("a".into()),
            Seg::Key("b".into()),
            Seg::Key("c".into()),
        ],
        1.into(),
    )
    .unwrap_err();
    assert!(e.contains("is a list, not an object"), "{e}");
}

#[test]
fn grid_order_first_parameter_slowest() {
    let a = vec![Value::from(1), Value::from(2)];
    let b = vec![Value::from("x"), Value::from("y"), Value::from("z")];
    let c = cartesian(&[&a, &b]);
    assert_eq!(c.len(), 6);
    assert_eq!(c[0], vec![Value::from(1), Value::from("x")]);
    assert_eq!(c[1], vec![Value::from(1), Value::from("y")]);
    assert_eq!(c[3], vec![Value::from(2), Value::from("x")]);
    assert_eq!(cartesian(&[]), vec![Vec::<Value>::new()]);
}

#[test]
fn csv_quotes_what_needs_it() {
    assert_eq!(csv_field("gpu[01-04]"), "gpu[01-04]");
    assert_eq!(csv_field("a,b"), "\"a,b\"");
    assert_eq!(csv_field("say \"hi\""), "\"say \"\"hi\"\"\"");
}
