//! Neutralisers for text rgate echoes from users' files (query ids and
//! texts, stratum and run names, notes, paths), one per output syntax.
//!
//! Reports are read in terminals, in CI logs and on pull-request pages, and a
//! gold set is data anyone with commit access can edit. Three threats:
//!
//! - **Terminal control.** ESC, CR, C1 controls and bidi overrides can clear
//!   a reviewer's screen, rewrite a line, or reorder what it shows. Every
//!   format here shows them as visible escapes (`\n`, `\u{1b}`), so a value
//!   stays on its one line and reads as what it is.
//! - **CI commands.** The GitHub Actions runner reads every line of a step's
//!   stdout and stderr as a possible workflow command: a line that starts
//!   with `::` after leading whitespace is trimmed, or that holds `##[`
//!   anywhere (the legacy form). See `ActionCommand.TryParseV2`/`TryParse`
//!   in actions/runner, `src/Runner.Common/ActionCommand.cs`. Each
//!   neutraliser breaks both, in its format's own escape where it has one
//!   (a zero-width space, U+200B, in plain text; `\[` in Markdown; `&#91;`
//!   in XML; `\u005b` in JSON).
//! - **Markup.** The Markdown report is rendered on pull-request pages:
//!   HTML, links, emphasis and table pipes in a query text are shown as
//!   text. XML 1.0 forbids most control characters even as references, so
//!   JUnit gets them as visible escapes.
//!
//! Every function is idempotent on its own output except [`markdown`] and
//! [`xml`], which escape their escape character: apply those once, where raw
//! text enters a renderer.

use std::borrow::Cow;
use std::fmt::Write as _;

const ZWSP: char = '\u{200B}';

/// Characters no report shows raw: C0 and C1 controls, DEL, the Unicode line
/// and paragraph separators, and the bidirectional controls (the "Trojan
/// Source" set, CVE-2021-42574).
pub fn is_hostile(c: char) -> bool {
    c.is_control()
        || matches!(
            c,
            '\u{2028}' | '\u{2029}' | '\u{061C}' | '\u{200E}' | '\u{200F}' | '\u{202A}'..='\u{202E}' | '\u{2066}'..='\u{2069}'
        )
}

/// The visible form of a hostile character: `\n`, `\r`, `\t`, else Rust's
/// `\u{..}`.
fn push_visible(out: &mut String, c: char) {
    match c {
        '\n' => out.push_str("\\n"),
        '\r' => out.push_str("\\r"),
        '\t' => out.push_str("\\t"),
        _ => {
            let _ = write!(out, "\\u{{{:x}}}", c as u32);
        }
    }
}

fn needs_plain(s: &str) -> bool {
    s.chars().any(is_hostile) || s.contains("##[") || s.trim_start().starts_with("::")
}

/// A value for plain text: tables, `trec` lines, CSV cells, stderr. Hostile
/// characters become visible escapes; `##[` and a leading `::` get a
/// zero-width space, which a reader does not see and the runner does not
/// trim.
pub fn terminal(s: &str) -> Cow<'_, str> {
    if !needs_plain(s) {
        return Cow::Borrowed(s);
    }
    let mut out = String::with_capacity(s.len() + 8);
    for c in s.chars() {
        if is_hostile(c) {
            push_visible(&mut out, c);
        } else {
            out.push(c);
        }
    }
    Cow::Owned(break_commands(&out))
}

/// Breaks `##[` everywhere and `::` at the start of `line`.
fn break_commands(line: &str) -> String {
    let mut out = line.replace("##[", "##\u{200B}[");
    let lead = out.len() - out.trim_start().len();
    if out[lead..].starts_with("::") {
        out.insert(lead, ZWSP);
    }
    out
}

/// Plain text of several lines, where the line breaks are the report's own:
/// each line is neutralised as by [`terminal`], the breaks are kept. Use it
/// on whole messages (errors with their `hint:` line) whose values could not
/// be escaped where they were put in.
pub fn terminal_lines(text: &str) -> Cow<'_, str> {
    if !text.split('\n').any(needs_plain) {
        return Cow::Borrowed(text);
    }
    Cow::Owned(text.split('\n').map(terminal).collect::<Vec<_>>().join("\n"))
}

/// A value as inline Markdown text (GitHub-flavoured): it renders as the
/// characters it holds. HTML-special characters become entities; the
/// characters that open links, images, emphasis, code, strikethrough, math
/// and table cells are backslash-escaped (`_` only where it could delimit
/// emphasis: between two word characters CommonMark never reads it so, and
/// `p_adj` stays readable). Hostile characters become visible escapes.
pub fn markdown(s: &str) -> String {
    let mut out = String::with_capacity(s.len() + 8);
    let chars: Vec<char> = s.chars().collect();
    let lead = chars.iter().take_while(|c| c.is_whitespace()).count();
    for (i, &c) in chars.iter().enumerate() {
        match c {
            '&' => out.push_str("&amp;"),
            '<' => out.push_str("&lt;"),
            '>' => out.push_str("&gt;"),
            '\\' | '`' | '*' | '[' | ']' | '|' | '~' | '$' => {
                out.push('\\');
                out.push(c);
            }
            '_' => {
                let word = |j: Option<&char>| j.is_some_and(|c| c.is_alphanumeric());
                let inner = i > 0 && word(chars.get(i - 1)) && word(chars.get(i + 1));
                if !inner {
                    out.push('\\');
                }
                out.push('_');
            }
            ':' if i == lead && chars.get(i + 1) == Some(&':') => out.push_str("\\:"),
            c if is_hostile(c) => push_visible(&mut out, c),
            c => out.push(c),
        }
    }
    out
}

/// A value as a Markdown code span, fenced with more backticks than it
/// holds in a row, so it cannot close the span early. Backslash escapes do
/// not work inside code, so `##[` gets a zero-width space instead. Not for
/// table cells (a `|` there ends the cell even inside code).
pub fn markdown_code(s: &str) -> String {
    let body = terminal(s);
    let mut longest = 0;
    let mut run = 0;
    for c in body.chars() {
        run = if c == '`' { run + 1 } else { 0 };
        longest = longest.max(run);
    }
    let fence = "`".repeat(longest + 1);
    if longest > 0 || body.is_empty() {
        // CommonMark strips one space on each side, so a value that starts
        // or ends with a backtick survives.
        format!("{fence} {body} {fence}")
    } else {
        format!("{fence}{body}{fence}")
    }
}

/// A value for XML 1.0 text or a double- or single-quoted attribute. Markup
/// characters become entities; hostile characters become visible escapes
/// (XML 1.0 forbids C0 controls even as `&#..;` references, and attribute
/// normalisation would turn tabs and newlines into spaces); the
/// non-characters U+FFFE and U+FFFF, also forbidden, become U+FFFD.
pub fn xml(s: &str) -> String {
    let mut out = String::with_capacity(s.len() + 8);
    let mut hashes = 0;
    for c in s.chars() {
        match c {
            '&' => out.push_str("&amp;"),
            '<' => out.push_str("&lt;"),
            '>' => out.push_str("&gt;"),
            '"' => out.push_str("&quot;"),
            '\'' => out.push_str("&apos;"),
            '[' if hashes >= 2 => out.push_str("&#91;"),
            '\u{FFFE}' | '\u{FFFF}' => out.push('\u{FFFD}'),
            c if is_hostile(c) => push_visible(&mut out, c),
            c => out.push(c),
        }
        hashes = if c == '#' { hashes + 1 } else { 0 };
    }
    out
}

/// Serialised JSON, made safe to print: `##[` inside strings becomes
/// `##\u005b`, and raw C1 controls, separators and bidi controls (which JSON
/// allows unescaped) become `\u` escapes. The parsed value is unchanged:
/// these characters can only occur inside strings, and a pretty-printed line
/// never starts with `::`.
pub fn json(text: String) -> String {
    let hostile = |c: char| is_hostile(c) && !matches!(c, '\n' | '\r' | '\t');
    if !text.contains("##[") && !text.chars().any(hostile) {
        return text;
    }
    let mut out = String::with_capacity(text.len() + 16);
    for c in text.replace("##[", "##\\u005b").chars() {
        if hostile(c) {
            let _ = write!(out, "\\u{:04x}", c as u32);
        } else {
            out.push(c);
        }
    }
    out
}

/// Whether a line of output could be read as a workflow command by the
/// GitHub Actions runner (for tests and assertions).
pub fn is_runner_command(line: &str) -> bool {
    line.trim_start().starts_with("::") || line.contains("##[")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn plain_text_keeps_one_line_and_no_command() {
        assert_eq!(terminal("q-1"), "q-1");
        assert_eq!(terminal("a\n::error::forged"), "a\\n::error::forged");
        assert_eq!(terminal("\x1b[2J"), "\\u{1b}[2J");
        assert_eq!(terminal("  ::error::x"), "  \u{200B}::error::x");
        assert_eq!(terminal("x ##[error]y"), "x ##\u{200B}[error]y");
        assert_eq!(terminal("\u{202E}abc\u{85}"), "\\u{202e}abc\\u{85}");
        assert_eq!(terminal("tab\there\r"), "tab\\there\\r");
        for s in ["a\n::error::forged", "::x", "\t::x", "##[x", "\u{2028}::x"] {
            let t = terminal(s);
            assert!(!is_runner_command(&t), "{t:?}");
            assert!(!t.chars().any(is_hostile), "{t:?}");
            assert_eq!(terminal(&t), t, "idempotent");
        }
    }

    #[test]
    fn lines_keep_their_breaks() {
        assert_eq!(
            terminal_lines("error: `::x`\nhint: \x1b[2J"),
            "error: `::x`\nhint: \\u{1b}[2J"
        );
        assert_eq!(terminal_lines("ok\n::warning::x"), "ok\n\u{200B}::warning::x");
    }

    #[test]
    fn markdown_shows_the_characters() {
        assert_eq!(markdown("<script>"), "&lt;script&gt;");
        assert_eq!(markdown("[x](http://e)"), "\\[x\\](http://e)");
        assert_eq!(markdown("*a* _b_ p_adj"), "\\*a\\* \\_b\\_ p_adj");
        assert_eq!(markdown("a|b"), "a\\|b");
        assert_eq!(markdown("::error::x"), "\\::error::x");
        assert_eq!(markdown("x ##[error]"), "x ##\\[error\\]");
        assert_eq!(markdown("a\nb"), "a\\nb");
        assert_eq!(markdown("&lt;"), "&amp;lt;");
    }

    #[test]
    fn code_spans_cannot_be_closed() {
        assert_eq!(markdown_code("q-1"), "`q-1`");
        assert_eq!(markdown_code("a`b"), "`` a`b ``");
        assert_eq!(markdown_code("``"), "``` `` ```");
        assert_eq!(markdown_code("##[x"), "`##\u{200B}[x`");
    }

    #[test]
    fn xml_has_only_allowed_characters() {
        assert_eq!(xml("a<b & \"c\" 'd'"), "a&lt;b &amp; &quot;c&quot; &apos;d&apos;");
        assert_eq!(xml("s\u{1}t\u{FFFE}"), "s\\u{1}t\u{FFFD}");
        assert_eq!(xml("##[error]"), "##&#91;error]");
        assert_eq!(xml("a\nb"), "a\\nb");
    }

    #[test]
    fn json_keeps_the_value() {
        let v = serde_json::json!({"id": "##[error]x\u{202E}\u{85}", "t": "a\nb"});
        let text = json(serde_json::to_string_pretty(&v).unwrap());
        assert!(!text.lines().any(is_runner_command), "{text}");
        assert!(!text.chars().any(|c| is_hostile(c) && c != '\n'), "{text}");
        let back: serde_json::Value = serde_json::from_str(&text).unwrap();
        assert_eq!(back, v);
    }
}
