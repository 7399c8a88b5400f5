//! Fuzz target for the schema and type parsers: any input is an error or a schema/type whose
//! printed form parses back to the same text (printing settles after one round).

#![no_main]

use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    let Ok(text) = std::str::from_utf8(data) else {
        return;
    };
    if let Ok(s) = ts_core::FunctionSchema::parse(text) {
        let printed = s.to_string();
        if let Ok(again) = ts_core::FunctionSchema::parse(&printed) {
            assert_eq!(again.to_string(), printed, "schema printing is not stable");
        }
    }
    if let Ok(t) = ts_core::parse_annotation(text, None) {
        let _ = t.annotation_str();
        let _ = t.to_string();
    }
});
