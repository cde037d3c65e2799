//! The prompt a model grades with, and reading a grade out of its answer.
//!
//! The default prompt follows the shape of UMBRELA's (Upadhyay et al. 2024,
//! "UMBRELA: UMbrela is the (Open-source Reproduction of the) Bing RELevance
//! Assessor", arXiv:2406.06519; castorini/umbrela): a zero-shot request for
//! a 0-3 grade whose four levels are described, that asks the model to
//! weigh what the searcher wants, how well the passage meets it and how far
//! it can be trusted, and to end with one line `##final score: N`. UMBRELA's
//! grades tracked fully manual TREC 2024 RAG judgments closely. The wording
//! here is rgate's own, and adds one instruction UMBRELA lacks: a passage
//! that only repeats the query's words is not relevant (LLM judges are
//! fooled by exactly that: Alaofi et al. 2025; `--canary` measures it).

use sha2::{Digest, Sha256};

/// The default template; `{query}` and `{passage}` are filled in.
pub const DEFAULT: &str = "\
You judge search results. Below are a search query and one passage a search \
engine returned for it. Grade how well the passage serves the person who \
typed the query, on this scale:

3 = the passage is about the query and holds the answer, plainly stated.
2 = the passage holds an answer, but it is partial, vague, or buried among \
other material.
1 = the passage is on the query's topic but does not answer it.
0 = the passage has nothing to do with the query.

Work it out in steps, silently: first, what the person most likely wants; \
then how closely the passage meets that want; then whether the passage can \
be trusted. Weigh these and settle on one grade. A passage that merely \
repeats the query's words, without saying anything that answers it, is a 0. \
The length of a passage does not make it better or worse.

Query: {query}

Passage: {passage}

Reply with one line and nothing else, in exactly this form:
##final score: N
where N is 0, 1, 2 or 3.
";

/// The sha256 (hex) of a template's text: recorded with each grade and in
/// the cache key, so a grade is always traceable to the words that got it.
pub fn hash(template: &str) -> String {
    super::super::hex(&Sha256::digest(template.as_bytes()))
}

/// Why a template cannot be used.
pub fn check(template: &str) -> Result<(), String> {
    for p in ["{query}", "{passage}"] {
        if !template.contains(p) {
            return Err(format!("the prompt has no `{p}` placeholder"));
        }
    }
    Ok(())
}

/// The template with `{query}` and `{passage}` filled in, in one pass: a
/// query that itself contains `{passage}` is not expanded again.
pub fn render(template: &str, query: &str, passage: &str) -> String {
    let mut out = String::with_capacity(template.len() + query.len() + passage.len());
    let mut rest = template;
    loop {
        let q = rest.find("{query}");
        let p = rest.find("{passage}");
        let (at, len, with) = match (q, p) {
            (Some(q), Some(p)) if q < p => (q, "{query}".len(), query),
            (Some(q), None) => (q, "{query}".len(), query),
            (_, Some(p)) => (p, "{passage}".len(), passage),
            (None, None) => break,
        };
        out.push_str(&rest[..at]);
        out.push_str(with);
        rest = &rest[at + len..];
    }
    out.push_str(rest);
    out
}

/// The grade in a model's answer, or why none can be read.
///
/// Accepted, most explicit first: a JSON object with an integer `grade`,
/// `score` or `relevance`; a labeled number (`##final score: 2`, then
/// `Grade: 2`, `score = 2`, `relevance: 2`), where a `final score` label
/// outranks the others; an answer that is a bare number (`2`, `**2**`,
/// `2.`). Two labeled numbers of the same rank that differ, a number
/// outside 0..3, or prose with no label is refused: guessing would store a
/// grade the model did not give.
pub fn parse_grade(answer: &str) -> Result<i32, String> {
    let t = answer.trim();
    if t.starts_with('{') {
        if let Ok(serde_json::Value::Object(m)) = serde_json::from_str::<serde_json::Value>(t) {
            for k in ["grade", "score", "relevance", "final_score"] {
                if let Some(v) = m.get(k) {
                    let g = v
                        .as_i64()
                        .or_else(|| v.as_str().and_then(|s| s.trim().parse().ok()))
                        .ok_or_else(|| format!("`{k}` is not an integer"))?;
                    return in_range(g);
                }
            }
            return Err("a JSON answer without `grade`".into());
        }
    }
    let lower = t.to_lowercase();
    for labels in [&["final score"][..], &["grade", "score", "relevance"][..]] {
        let mut found: Vec<i64> = Vec::new();
        for label in labels {
            for (at, _) in lower.match_indices(label) {
                // A word of its own: "upgrade: 3" is not a grade.
                let before = lower[..at].chars().next_back();
                if before.is_some_and(|c| c.is_alphanumeric()) {
                    continue;
                }
                if label == &"score" && lower[..at].trim_end().ends_with("final") {
                    continue;
                }
                if let Some(n) = number_after(&lower[at + label.len()..]) {
                    found.push(n);
                }
            }
        }
        if let Some(&first) = found.first() {
            if found.iter().any(|&n| n != first) {
                return Err(format!(
                    "the answer gives different grades ({})",
                    found.iter().map(|n| n.to_string()).collect::<Vec<_>>().join(", ")
                ));
            }
            return in_range(first);
        }
    }
    let bare = t.trim_matches(|c: char| c == '*' || c == '.' || c == '`' || c == '"' || c.is_whitespace());
    if !bare.is_empty() && bare.bytes().all(|b| b.is_ascii_digit()) {
        return in_range(bare.parse().unwrap_or(i64::MAX));
    }
    Err("no grade found in the answer".into())
}

/// The integer after a label: `: 2`, ` = 2`, `** 2`, ` is 2`; none if the
/// label is followed by other words.
///
/// A minus sign (`-` or `−`) right before the digits makes the number
/// negative (`##final score: -1` is -1, refused as outside 0..3, never
/// grade 1); a dash with a space after it is a separator (`Grade - 2`).
fn number_after(s: &str) -> Option<i64> {
    let sep = |c: char| c.is_whitespace() || matches!(c, ':' | '=' | '*' | '#' | '-' | '−' | '(');
    let t = s.trim_start_matches(sep);
    let (t, minus) = match t.strip_prefix("is ") {
        Some(rest) => (rest.trim_start(), false),
        None => (t, s[..s.len() - t.len()].ends_with(['-', '−'])),
    };
    let digits: String = t.chars().take_while(char::is_ascii_digit).collect();
    if digits.is_empty() {
        return None;
    }
    // "2.5" is not an integer grade; "2." ends a sentence.
    let after = &t[digits.len()..];
    if after.starts_with('.') && after[1..].starts_with(|c: char| c.is_ascii_digit()) {
        return Some(i64::MAX);
    }
    let n: i64 = digits.parse().unwrap_or(i64::MAX);
    // Any negative number is outside 0..3; i64::MAX stays "not an integer".
    Some(if minus { -n.min(i64::MAX - 1) } else { n })
}

fn in_range(g: i64) -> Result<i32, String> {
    if (0..=3).contains(&g) {
        Ok(g as i32)
    } else if g == i64::MAX {
        Err("the grade is not an integer 0..3".into())
    } else {
        Err(format!("grade {g} is outside 0..3"))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn reads_the_forms_models_answer_in() {
        for (answer, grade) in [
            ("##final score: 2", 2),
            ("M: 3, T: 2\n##final score: 1", 1),
            ("Grade: 2", 2),
            ("grade = 3", 3),
            ("**Score:** 0", 0),
            ("2", 2),
            ("**3**", 3),
            ("1.", 1),
            ("{\"grade\": 2}", 2),
            ("{\"score\": \"1\"}", 1),
            ("The passage is related. Relevance: 1", 1),
            // The final score outranks an intermediate "score".
            ("intent score: 3\ntrust score: 1\n##final score: 2", 2),
            // A dash then a space is a separator.
            ("Grade - 2", 2),
            ("##final score: 3 - clear answer", 3),
        ] {
            assert_eq!(parse_grade(answer), Ok(grade), "{answer:?}");
        }
    }

    #[test]
    fn refuses_what_it_would_have_to_guess() {
        for answer in [
            "",
            "I think it is fairly relevant",
            "Grade: 2\nGrade: 3",
            "##final score: 5",
            "7",
            "Grade: 2.5",
            "{\"verdict\": 2}",
            "{\"grade\": \"high\"}",
            "The passage has 2 pages",
            "upgrade: 3",
            // A minus sign is a sign, not a separator.
            "##final score: -1",
            "Grade: -3",
            "grade:-2",
            "Score: −1",
            "{\"grade\": -1}",
            "-1",
        ] {
            assert!(
                parse_grade(answer).is_err(),
                "{answer:?} -> {:?}",
                parse_grade(answer)
            );
        }
    }

    #[test]
    fn fills_placeholders_once() {
        assert_eq!(
            render("Q={query} P={passage} Q={query}", "a {passage}", "b"),
            "Q=a {passage} P=b Q=a {passage}"
        );
        assert!(check(DEFAULT).is_ok());
        assert!(check("no placeholders").unwrap_err().contains("{query}"));
    }

    #[test]
    fn the_hash_is_sha256_of_the_text() {
        // printf 'abc' | sha256sum
        assert_eq!(
            hash("abc"),
            "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad"
        );
    }
}
