//! Fuzz target `options`: [`pcn::fuzzing::option_parsers`] (see its docs for what the bytes are and
//! what is checked).
#![no_main]

libfuzzer_sys::fuzz_target!(|data: &[u8]| pcn::fuzzing::option_parsers(data));
