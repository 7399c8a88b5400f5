//! Fuzz target for the IR text parser: any input either fails with an error or yields a graph
//! that prints without panicking; a graph that also verifies prints to text that parses back and
//! prints identically. Seed with `cp ../../shared/corpus/ir*/*.ir corpus/ir_parser/`.

#![no_main]

use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    let Ok(text) = std::str::from_utf8(data) else {
        return;
    };
    let Ok(graph) = ts_ir::parse_ir(text) else {
        return;
    };
    let printed = graph.to_string();
    if ts_ir::verify(&graph).is_err() {
        return;
    }
    let again = match ts_ir::parse_ir(&printed) {
        Ok(g) => g,
        Err(e) => panic!("a verified graph printed text that does not parse: {e}\n{printed}"),
    };
    assert_eq!(again.to_string(), printed, "printing is not stable");
});
