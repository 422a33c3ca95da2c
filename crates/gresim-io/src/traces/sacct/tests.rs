//! Unit tests of `sacct` (sacct.rs).

use super::*;

#[test]
fn tres_strings() {
    assert_eq!(
        parse_tres("billing=8,cpu=8,gres/gpu:a100=2,gres/gpu=2,mem=16G,node=1"),
        Ok(Tres {
            cpu: Some(8),
            mem: Some(16384),
            node: Some(1),
            gpu: Some(2),
            gpu_type: Some("a100".into())
        })
    );
    assert!(parse_tres("cpu=x").is_err());
    assert!(parse_tres("cpu").is_err());
}
