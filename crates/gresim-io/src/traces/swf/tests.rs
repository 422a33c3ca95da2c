//! Tests of the SWF reader's field parsing against `str::parse::<f64>`.

use proptest::prelude::*;

use super::number;

/// What the reader took before its integer path: `parse::<f64>`, finite.
fn by_float(x: &str) -> Option<f64> {
    x.parse::<f64>().ok().filter(|x| x.is_finite())
}

/// Equal as bits, so that `-0` and `0` differ.
fn same(a: Option<f64>, b: Option<f64>) -> bool {
    a.map(f64::to_bits) == b.map(f64::to_bits)
}

#[test]
fn integers_and_others_read_as_the_float_parser_reads_them() {
    for x in [
        "0",
        "-0",
        "-1",
        "17",
        "007",
        "999999999999999",
        "9999999999999999",
        "123456789012345678901234567890",
        "-123456789012345678901",
        "1.5",
        "-2.5e3",
        "+4",
        "-",
        "",
        "1e400",
        "inf",
        "NaN",
        "12a",
        "--1",
    ] {
        assert!(
            same(number(x), by_float(x)),
            "{x:?}: {:?} against {:?}",
            number(x),
            by_float(x)
        );
    }
    assert_eq!(number("-1"), Some(-1.0));
    assert_eq!(number("1e400"), None);
}

proptest! {
    #[test]
    fn any_field_reads_as_the_float_parser_reads_it(x in "[-+]?[0-9]{0,22}(\\.[0-9]{0,3})?(e-?[0-9]{1,3})?") {
        prop_assert!(same(number(&x), by_float(&x)), "{:?}: {:?} against {:?}", x, number(&x), by_float(&x));
    }
}
