//! Unit tests of `variants` (variants.rs).

use super::*;

#[test]
fn slice_types_become_whole_gpu_types() {
    assert_eq!(whole_gpu_types("a100_1g.10gb"), "a100");
    assert_eq!(whole_gpu_types("gpu:a100_3g.40gb:2"), "gpu:a100:2");
    assert_eq!(
        whole_gpu_types("gpu:h100_1g.10gb:1,gpu:a100:2"),
        "gpu:h100:1,gpu:a100:2"
    );
    // Not a MIG profile: left alone.
    assert_eq!(whole_gpu_types("gpu:my_type:1"), "gpu:my_type:1");
    assert_eq!(whole_gpu_types("4"), "4");
}
