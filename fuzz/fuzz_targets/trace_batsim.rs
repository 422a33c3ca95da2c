#![no_main]
//! Fuzz target: gresim_io::fuzzing::trace_batsim (docs/reliability.md).
use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| gresim_io::fuzzing::trace_batsim(data));
