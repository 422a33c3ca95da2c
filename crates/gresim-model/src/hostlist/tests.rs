//! Unit tests of `hostlist` (hostlist.rs).

use super::*;
use proptest::prelude::*;

fn ex(expr: &str) -> Vec<String> {
    match expand(expr) {
        Ok(names) => names,
        Err(e) => panic!("expand({expr:?}) failed: {e}"),
    }
}

#[test]
fn expands_plain_names_and_separators() {
    assert_eq!(ex("login"), ["login"]);
    assert_eq!(ex("a,b c\td\ne"), ["a", "b", "c", "d", "e"]);
    assert_eq!(ex(",, a ,,b,"), ["a", "b"]);
    assert_eq!(ex(""), Vec::<String>::new());
    assert_eq!(ex(" \t\n,"), Vec::<String>::new());
    assert_eq!(ex("a,a"), ["a", "a"]);
}

#[test]
fn expands_ranges_with_padding_of_lo() {
    assert_eq!(ex("gpu[01-03]"), ["gpu01", "gpu02", "gpu03"]);
    assert_eq!(
        ex("gpu[01-08,10]"),
        ["gpu01", "gpu02", "gpu03", "gpu04", "gpu05", "gpu06", "gpu07", "gpu08", "gpu10"]
    );
    assert_eq!(ex("n[8-10]"), ["n8", "n9", "n10"]);
    assert_eq!(ex("n[08-10]"), ["n08", "n09", "n10"]);
    assert_eq!(ex("n[001-3]"), ["n001", "n002", "n003"]);
    assert_eq!(ex("n[98-100]"), ["n98", "n99", "n100"]);
    assert_eq!(ex("n[5]"), ["n5"]);
    assert_eq!(ex("n[3-3]"), ["n3"]);
    assert_eq!(ex("n[01-02,5-6]"), ["n01", "n02", "n5", "n6"]);
    assert_eq!(ex("[1-3]"), ["1", "2", "3"]);
    assert_eq!(ex("n[3,1,3]"), ["n3", "n1", "n3"]);
}

#[test]
fn expands_suffixes_and_products() {
    assert_eq!(ex("n[1-3]-ib"), ["n1-ib", "n2-ib", "n3-ib"]);
    assert_eq!(
        ex("r[0-1]n[0-3]"),
        ["r0n0", "r0n1", "r0n2", "r0n3", "r1n0", "r1n1", "r1n2", "r1n3"]
    );
    assert_eq!(ex("a[1-2]b[7,9]c"), ["a1b7c", "a1b9c", "a2b7c", "a2b9c"]);
    assert_eq!(ex("[0-1][0-1]"), ["00", "01", "10", "11"]);
    assert_eq!(
        ex("gpu[1-2],login[1-2] x"),
        ["gpu1", "gpu2", "login1", "login2", "x"]
    );
}

#[test]
fn expands_extreme_numbers() {
    let max = u64::MAX;
    assert_eq!(
        ex(&format!("n[{}-{max}]", max - 1)),
        [format!("n{}", max - 1), format!("n{max}")]
    );
    assert_eq!(
        ex("n[0000000000000000000000001]"),
        ["n0000000000000000000000001"]
    );
}

#[test]
fn bracket_errors_name_the_item() {
    assert_eq!(
        expand("gpu[01-02"),
        Err(HostlistError::UnclosedBracket {
            item: "gpu[01-02".into()
        })
    );
    assert_eq!(
        expand("a,gpu[01-02,b"),
        Err(HostlistError::UnclosedBracket {
            item: "gpu[01-02,b".into()
        })
    );
    let msg = expand("gpu[01-02").map_err(|e| e.to_string());
    assert!(
        matches!(&msg, Err(m) if m.starts_with("unclosed '[' in \"gpu[01-02\"")),
        "{msg:?}"
    );
    assert_eq!(
        expand("gpu01]"),
        Err(HostlistError::UnmatchedBracket {
            item: "gpu01]".into()
        })
    );
    assert_eq!(
        expand("a[1]]"),
        Err(HostlistError::UnmatchedBracket {
            item: "a[1]]".into()
        })
    );
    assert_eq!(
        expand("a[1[2]]"),
        Err(HostlistError::NestedBracket {
            item: "a[1[2]]".into()
        })
    );
    assert!(matches!(
        expand("]["),
        Err(HostlistError::UnmatchedBracket { .. })
    ));
    assert!(matches!(
        expand("["),
        Err(HostlistError::UnclosedBracket { .. })
    ));
}

#[test]
fn range_errors() {
    for expr in ["n[]", "n[1,]", "n[,1]", "n[1,,2]"] {
        assert_eq!(
            expand(expr),
            Err(HostlistError::EmptyRange { item: expr.into() }),
            "{expr}"
        );
    }
    for (expr, range) in [
        ("n[-1]", "-1"),
        ("n[-1-3]", "-1-3"),
        ("n[1-]", "1-"),
        ("n[1-2-3]", "1-2-3"),
        ("n[a-b]", "a-b"),
        ("n[1 ]", "1 "),
        ("n[ 1]", " 1"),
        ("n[+1]", "+1"),
        ("n[1.5]", "1.5"),
        ("n[１]", "１"),
    ] {
        assert_eq!(
            expand(expr),
            Err(HostlistError::InvalidRange {
                range: range.into(),
                item: expr.into()
            }),
            "{expr}"
        );
    }
    assert_eq!(
        expand("n[5-3]"),
        Err(HostlistError::Backwards {
            lo: "5".into(),
            hi: "3".into(),
            item: "n[5-3]".into()
        })
    );
    let msg = expand("n[5-3]").map_err(|e| e.to_string());
    assert!(
        matches!(&msg, Err(m) if m.starts_with("range 5-3 goes backwards in")),
        "{msg:?}"
    );
    assert_eq!(
        expand("n[1-18446744073709551616]"),
        Err(HostlistError::NumberTooLarge {
            number: "18446744073709551616".into(),
            item: "n[1-18446744073709551616]".into()
        })
    );
}

#[test]
fn caps_expansion() {
    assert_eq!(ex("n[1-1000000]").len(), MAX_EXPANDED_NAMES);
    assert!(matches!(
        expand("n[1-1000001]"),
        Err(HostlistError::TooManyNames {
            limit: MAX_EXPANDED_NAMES,
            ..
        })
    ));
    assert!(matches!(
        expand("n[1-500000],m[1-500001]"),
        Err(HostlistError::TooManyNames { item, .. }) if item == "m[1-500001]"
    ));
    assert!(matches!(
        expand("n[0-18446744073709551615]"),
        Err(HostlistError::TooManyNames { .. })
    ));
    assert!(matches!(
        expand(&"[0-18446744073709551615]".repeat(20)),
        Err(HostlistError::TooManyNames { .. })
    ));
    let long_prefix = "x".repeat(1000);
    assert!(matches!(
        expand(&format!("{long_prefix}[1-100000]")),
        Err(HostlistError::TooLarge {
            limit: MAX_EXPANDED_BYTES,
            ..
        })
    ));
}

#[test]
fn natural_order() {
    use Ordering::*;
    assert_eq!(natural_cmp("gpu2", "gpu10"), Less);
    assert_eq!(natural_cmp("gpu10", "gpu2"), Greater);
    assert_eq!(natural_cmp("gpu10", "gpu10"), Equal);
    assert_eq!(natural_cmp("a20", "a100"), Less);
    assert_eq!(natural_cmp("n01", "n1"), Less);
    assert_eq!(natural_cmp("n1", "n01"), Greater);
    assert_eq!(natural_cmp("n01", "n2"), Less);
    assert_eq!(natural_cmp("n", "n1"), Less);
    assert_eq!(natural_cmp("n1", "n1-ib"), Less);
    assert_eq!(natural_cmp("r2n0", "r10n0"), Less);
    assert_eq!(natural_cmp("r1n10", "r1n9"), Greater);
    assert_eq!(natural_cmp("", ""), Equal);
    assert_eq!(natural_cmp("", "a"), Less);
    assert_eq!(
        natural_cmp("99999999999999999999999", "100000000000000000000000"),
        Less
    );
    assert_eq!(natural_cmp("gpu", "gpu0"), Less);
    let mut names = vec!["n10", "n9", "n1", "login", "n01", "gpu100", "gpu20"];
    names.sort_by(|a, b| natural_cmp(a, b));
    assert_eq!(
        names,
        ["gpu20", "gpu100", "login", "n01", "n1", "n9", "n10"]
    );
}

#[test]
fn compresses_slurm_style() {
    assert_eq!(compress::<&str>(&[]), "");
    assert_eq!(compress(&["gpu01"]), "gpu01");
    assert_eq!(compress(&["gpu01", "gpu02"]), "gpu[01-02]");
    assert_eq!(compress(&["gpu02", "gpu01", "gpu02"]), "gpu[01-02]");
    assert_eq!(compress(&["n10", "n9"]), "n[9-10]");
    assert_eq!(compress(&["gpu09", "gpu10", "gpu11"]), "gpu[09-11]");
    assert_eq!(
        compress(&["gpu01", "gpu02", "gpu03", "gpu05", "gpu10"]),
        "gpu[01-03,05,10]"
    );
    assert_eq!(compress(&["n1", "n2", "n01", "n02"]), "n[01,1,02,2]");
    assert_eq!(compress(&["n001", "n002", "n3"]), "n[001-002,3]");
    assert_eq!(
        compress(&["login", "gpu1", "gpu2", "cpu7"]),
        "cpu7,gpu[1-2],login"
    );
    assert_eq!(
        compress(&["r1n0", "r1n1", "r1n2", "r1n3", "r2n0"]),
        "r1n[0-3],r2n0"
    );
    assert_eq!(compress(&["n1-ib", "n2-ib"]), "n1-ib,n2-ib");
    assert_eq!(compress(&["gpu1", "gpu1a", "gpu2"]), "gpu1,gpu1a,gpu2");
    assert_eq!(compress(&["1", "2", "3"]), "[1-3]");
    assert_eq!(compress(&["", "a", ""]), "a");
    let big = "n99999999999999999999999";
    assert_eq!(compress(&[big, "n1"]), format!("n1,{big}"));
    let owned: Vec<String> = vec!["x2".into(), "x1".into()];
    assert_eq!(compress(&owned), "x[1-2]");
}

#[test]
fn compresses_at_u64_max() {
    let max = u64::MAX;
    let names = [format!("n{}", max - 1), format!("n{max}")];
    let compressed = compress(&names);
    assert_eq!(compressed, format!("n[{}-{max}]", max - 1));
    assert_eq!(ex(&compressed), names);
}

fn naturally_sorted(names: &[String]) -> Vec<String> {
    let mut sorted = names.to_vec();
    sorted.sort_by(|a, b| natural_cmp(a, b));
    sorted.dedup();
    sorted
}

fn node_name() -> impl Strategy<Value = String> {
    (
        prop::sample::select(vec!["gpu", "node", "n", "r1n"]),
        prop::option::of((0u64..2000, 0usize..5)),
    )
        .prop_map(|(prefix, number)| match number {
            Some((n, width)) => format!("{prefix}{n:0width$}"),
            None => prefix.to_owned(),
        })
}

proptest! {
    #[test]
    fn round_trip_node_names(names in prop::collection::vec(node_name(), 0..60)) {
        let compressed = compress(&names);
        prop_assert_eq!(expand(&compressed), Ok(naturally_sorted(&names)), "{}", compressed);
    }

    #[test]
    fn round_trip_dense_ranges(
        prefix in prop::sample::select(vec!["gpu", "node", "n", "r1n"]),
        width in 0usize..4,
        numbers in prop::collection::btree_set(0u64..60, 0..60),
    ) {
        let names: Vec<String> =
            numbers.iter().map(|n| format!("{prefix}{n:0width$}")).collect();
        let compressed = compress(&names);
        prop_assert_eq!(expand(&compressed), Ok(naturally_sorted(&names)), "{}", compressed);
        prop_assert!(compressed.matches(',').count() < names.len().max(1));
    }

    #[test]
    fn round_trip_arbitrary_safe_names(
        names in prop::collection::vec("[a-z0-9_.-]{0,8}", 0..30),
    ) {
        let compressed = compress(&names);
        let expected: Vec<String> =
            naturally_sorted(&names).into_iter().filter(|n| !n.is_empty()).collect();
        prop_assert_eq!(expand(&compressed), Ok(expected), "{}", compressed);
    }

    #[test]
    fn compress_of_expand_is_stable(expr in "[a-c]{0,2}(\\[[0-9]{1,2}(-[0-9]{1,2})?\\])?[a-c]?") {
        if let Ok(names) = expand(&expr) {
            let once = compress(&names);
            let twice = compress(&expand(&once).unwrap_or_default());
            prop_assert_eq!(once, twice);
        }
    }

    #[test]
    fn expand_never_panics(expr in "\\PC{0,40}") {
        let _ = expand(&expr);
    }

    #[test]
    fn expand_never_panics_on_bracket_soup(expr in "[a-b0-9\\[\\],\\- ]{0,30}") {
        if let Ok(names) = expand(&expr) {
            prop_assert!(names.len() <= MAX_EXPANDED_NAMES);
        }
    }

    #[test]
    fn natural_cmp_is_a_total_order(
        a in "[a-b0-2]{0,5}",
        b in "[a-b0-2]{0,5}",
        c in "[a-b0-2]{0,5}",
    ) {
        prop_assert_eq!(natural_cmp(&a, &b), natural_cmp(&b, &a).reverse());
        prop_assert_eq!(natural_cmp(&a, &b) == Ordering::Equal, a == b);
        if natural_cmp(&a, &b) != Ordering::Greater && natural_cmp(&b, &c) != Ordering::Greater {
            prop_assert_ne!(natural_cmp(&a, &c), Ordering::Greater);
        }
    }

    #[test]
    fn natural_cmp_orders_numbers_by_value(p in "[a-z]{0,3}", x in 0u64..100_000, y in 0u64..100_000) {
        prop_assert_eq!(natural_cmp(&format!("{p}{x}"), &format!("{p}{y}")), x.cmp(&y));
    }
}
