//! The generator's job keys: `key_of` writes what `format!("syn{i}")` does.

use super::key_of;

#[test]
fn keys_as_formatted() {
    for i in [0, 1, 9, 10, 99, 100, 12_345, 999_999, 1_000_000, u64::MAX] {
        assert_eq!(key_of(i), format!("syn{i}"));
    }
}
