//! Fuzz target `sgf`: [`pcn::fuzzing::sgf_reader`] (see its docs for what the bytes are and
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
        pcn::fuzzing::sgf_reader(include_bytes!("../corpus/sgf/gomoku_variations"))
    },
    |data: &[u8]| pcn::fuzzing::sgf_reader(data)
);
