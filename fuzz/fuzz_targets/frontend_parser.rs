//! Fuzz target for the TorchScript lexer, parser and emitter: any input compiles or gives a
//! `CompileError` that renders with its highlighted source; never a panic or stack overflow.
//! Seed with the conformance programs: `cp ../../shared/conformance/cases/*/program.py
//! corpus/frontend_parser/`.

#![no_main]

use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    let Ok(text) = std::str::from_utf8(data) else {
        return;
    };
    let src = ts_core::Source::new(text, Some("fuzz.py".to_string()), 1);
    if let Err(e) = ts_frontend::parse_program(&src) {
        let _ = e.to_string();
        return;
    }
    if let Err(e) = ts_frontend::compile_source(&src) {
        let _ = e.to_string();
    }
});
