#![no_main]
//! Any text as a stored baseline: an error or a baseline that writes back
//! to text that parses again, never a panic.

use std::path::Path;

use libfuzzer_sys::fuzz_target;
use rgate::baseline::Baseline;

fuzz_target!(|data: &[u8]| {
    let Ok(text) = std::str::from_utf8(data) else {
        return;
    };
    let path = Path::new("baselines/r.json");
    if let Ok(b) = Baseline::parse(path, text) {
        let again = b.to_json_text();
        Baseline::parse(path, &again).expect("a parsed baseline's own text parses");
    }
});
