//! Unit tests of `golden` (golden.rs).

use super::first_difference;

#[test]
fn the_first_differing_line_is_named() {
    assert_eq!(first_difference("a\nb\nc", "a\nx\nc"), (2, "b", "x"));
    assert_eq!(first_difference("a\nb", "a"), (2, "b", "<end of file>"));
    assert_eq!(first_difference("a", "a\nz"), (2, "<end of file>", "z"));
}
