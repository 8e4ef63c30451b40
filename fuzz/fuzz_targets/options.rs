//! Fuzz target `options`: [`pcn::fuzzing::option_parsers`] (see its docs for what the bytes are and
//! what is checked).
#![no_main]

libfuzzer_sys::fuzz_target!(
    // Every rule's pattern table and one seed first, outside the timed inputs: the engine
    // builds its pattern, threat and evaluation tables lazily on first use, which takes
    // seconds under the sanitizer and would otherwise be reported as a hang of whichever
    // input comes first.
    init: {
        for rule in pcn::game::gomoku::Rule::ALL {
            let _ = pcn::game::gomoku::Gomoku::new(15, 15, rule);
        }
        pcn::fuzzing::option_parsers(include_bytes!("../corpus/options/gtp_gomoku_renju"))
    },
    |data: &[u8]| pcn::fuzzing::option_parsers(data)
);
