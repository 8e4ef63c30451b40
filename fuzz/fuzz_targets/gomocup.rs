//! Fuzz target `gomocup`: [`pcn::fuzzing::gomocup_session`] (see its docs for what the bytes are and
//! what is checked).
#![no_main]

libfuzzer_sys::fuzz_target!(|data: &[u8]| pcn::fuzzing::gomocup_session(data));
