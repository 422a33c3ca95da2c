//! Unit tests of `taskenv` (taskenv.rs).

use super::*;

#[test]
fn counts_compress_like_slurm() {
    assert_eq!(compress_counts(&[2, 2, 2, 1]), "2(x3),1");
    assert_eq!(compress_counts(&[4]), "4");
    assert_eq!(compress_counts(&[1, 2, 1]), "1,2,1");
    assert_eq!(compress_counts(&[]), "");
}
