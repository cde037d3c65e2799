#![no_main]
//! Any text as `rgate.yaml`: an error or a validated config, never a panic.

use std::path::Path;

use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    let Ok(text) = std::str::from_utf8(data) else {
        return;
    };
    if let Ok(c) = rgate::config::Config::parse(Path::new("config/rgate.yaml"), text) {
        let _ = c.depth();
        let _ = c.select(&[]);
    }
});
