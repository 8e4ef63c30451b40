//! Fuzz target `gtp`: [`pcn::fuzzing::gtp_session`] (see its docs for what the bytes are and
//! what is checked).
#![no_main]

libfuzzer_sys::fuzz_target!(|data: &[u8]| pcn::fuzzing::gtp_session(data));
