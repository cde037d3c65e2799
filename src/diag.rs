//! Diagnostics shared by every command: warnings collected while loading
//! inputs (so reports can list them), and errors that carry a `hint:` line.
//!
//! Loaders never print: they return warnings, and the command decides whether
//! they go to stderr, into a report, or both. That keeps stdout clean for data.

use std::fmt;
use std::path::Path;

/// A problem the user can fix, with the next step spelled out (uv's habit:
/// every error ends with what to do).
#[derive(Debug)]
pub struct UserError {
    pub message: String,
    pub hint: Option<String>,
}

impl fmt::Display for UserError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.message)?;
        if let Some(h) = &self.hint {
            write!(f, "\nhint: {h}")?;
        }
        Ok(())
    }
}

impl std::error::Error for UserError {}

/// An error located in a file, optionally at a line (1-based).
pub fn input_error(path: &Path, line: Option<usize>, msg: impl fmt::Display) -> anyhow::Error {
    anyhow::Error::new(UserError {
        message: match line {
            Some(l) => format!("{}:{l}: {msg}", path.display()),
            None => format!("{}: {msg}", path.display()),
        },
        hint: None,
    })
}

/// Like [`input_error`], with a hint line.
pub fn input_error_hint(
    path: &Path,
    line: Option<usize>,
    msg: impl fmt::Display,
    hint: impl Into<String>,
) -> anyhow::Error {
    anyhow::Error::new(UserError {
        message: match line {
            Some(l) => format!("{}:{l}: {msg}", path.display()),
            None => format!("{}: {msg}", path.display()),
        },
        hint: Some(hint.into()),
    })
}

/// An error not tied to a file (usage, configuration values).
pub fn usage_error(msg: impl Into<String>, hint: impl Into<String>) -> anyhow::Error {
    anyhow::Error::new(UserError {
        message: msg.into(),
        hint: Some(hint.into()),
    })
}

/// Warnings gathered while loading and evaluating, in the order found.
#[derive(Debug, Default, Clone, PartialEq)]
pub struct Warnings(pub Vec<String>);

impl Warnings {
    pub fn push(&mut self, w: impl Into<String>) {
        self.0.push(w.into());
    }
    pub fn iter(&self) -> impl Iterator<Item = &String> {
        self.0.iter()
    }
    pub fn is_empty(&self) -> bool {
        self.0.is_empty()
    }
    /// Writes each warning to stderr as `warning: ...`, unless quiet.
    pub fn emit(&self, quiet: bool) {
        if quiet {
            return;
        }
        for w in &self.0 {
            eprintln!("warning: {}", crate::escape::terminal(w));
        }
    }
}

/// Lists up to `max` names, then how many more: keeps a warning about 5,000
/// missing queries readable.
pub fn name_some(names: &[&str], max: usize) -> String {
    let mut s = names
        .iter()
        .take(max)
        .map(|n| format!("`{n}`"))
        .collect::<Vec<_>>()
        .join(", ");
    if names.len() > max {
        s.push_str(&format!(" and {} more", names.len() - max));
    }
    s
}

/// `1 query`, `2 queries`: a count with its noun in the right number.
pub fn count(n: usize, one: &str, many: &str) -> String {
    format!("{n} {}", if n == 1 { one } else { many })
}

/// The 1-based line number of byte offset `pos` in `text`.
pub fn line_of(text: &[u8], pos: usize) -> usize {
    memchr::memchr_iter(b'\n', &text[..pos.min(text.len())]).count() + 1
}

/// Edit distance, for "did you mean" suggestions on unknown names.
pub fn levenshtein(a: &str, b: &str) -> usize {
    let b: Vec<char> = b.chars().collect();
    let mut prev: Vec<usize> = (0..=b.len()).collect();
    for (i, ca) in a.chars().enumerate() {
        let mut cur = vec![i + 1; b.len() + 1];
        for (j, cb) in b.iter().enumerate() {
            let cost = usize::from(ca != *cb);
            cur[j + 1] = (prev[j] + cost).min(prev[j + 1] + 1).min(cur[j] + 1);
        }
        prev = cur;
    }
    prev[b.len()]
}

/// The candidate nearest to `name`, when it is near enough to be a typo.
pub fn suggest<'a>(name: &str, candidates: &[&'a str]) -> Option<&'a str> {
    let lower = name.to_ascii_lowercase();
    candidates
        .iter()
        .map(|c| (levenshtein(&lower, &c.to_ascii_lowercase()), *c))
        .filter(|(d, c)| *d <= (c.len() / 3).max(2))
        .min_by_key(|(d, _)| *d)
        .map(|(_, c)| c)
}

/// serde says "unknown field `x`, expected one of `a`, `b`"; users want the
/// nearest valid key.
pub fn unknown_key_hint(msg: &str) -> Option<String> {
    let rest = msg.split("unknown field `").nth(1)?;
    let name = rest.split('`').next()?;
    let expected: Vec<&str> = rest
        .split("expected ")
        .nth(1)?
        .split('`')
        .enumerate()
        .filter(|(i, _)| i % 2 == 1)
        .map(|(_, s)| s)
        .collect();
    Some(match suggest(name, &expected) {
        Some(s) => format!("did you mean `{s}`? Valid keys here: {}", expected.join(", ")),
        None => format!("valid keys here: {}", expected.join(", ")),
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn suggestions_catch_typos_only() {
        assert_eq!(suggest("relevent", &["relevant", "stratum"]), Some("relevant"));
        assert_eq!(suggest("zzz", &["relevant", "stratum"]), None);
    }

    #[test]
    fn lines_are_one_based() {
        assert_eq!(line_of(b"a\nb\nc", 0), 1);
        assert_eq!(line_of(b"a\nb\nc", 2), 2);
        assert_eq!(line_of(b"a\nb\nc", 4), 3);
    }

    #[test]
    fn counts_agree_in_number() {
        assert_eq!(count(1, "query", "queries"), "1 query");
        assert_eq!(count(0, "query", "queries"), "0 queries");
        assert_eq!(count(2, "stratum", "strata"), "2 strata");
    }

    #[test]
    fn long_lists_are_cut() {
        assert_eq!(name_some(&["a", "b", "c"], 2), "`a`, `b` and 1 more");
    }
}
