#![no_main]

libfuzzer_sys::fuzz_target!(|data: &[u8]| kruise_fuzz::patch(data));
