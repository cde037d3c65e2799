//! The gold and run readers take a path (they detect the format from the
//! extension, then the content), so their targets write each input to a
//! per-process scratch file.

use std::path::PathBuf;

/// A scratch file `input.EXT` in a directory private to this process.
pub fn scratch(ext: &str, data: &[u8]) -> PathBuf {
    let dir = std::env::temp_dir().join(format!("rgate-fuzz-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let path = dir.join(format!("input.{ext}"));
    std::fs::write(&path, data).unwrap();
    path
}

/// The first byte picks the extension, so every reader path is reached
/// (an unknown extension makes the reader sniff the content).
pub fn split<'a>(data: &'a [u8], exts: &[&'static str]) -> Option<(&'static str, &'a [u8])> {
    let (first, rest) = data.split_first()?;
    Some((exts[*first as usize % exts.len()], rest))
}
