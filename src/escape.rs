//! Neutralisers for text rgate echoes from users' files (query ids and
//! texts, stratum and run names, notes, paths), one per output syntax.
//!
//! Reports are read in terminals, in CI logs, in spreadsheets and on
//! pull-request pages, and a gold set is data anyone with commit access can
//! edit. Five threats:
//!
//! - **Terminal control.** ESC, CR, C1 controls and bidi overrides can clear
//!   a reviewer's screen, rewrite a line, or reorder what it shows; other
//!   invisible format characters (U+200B, U+FEFF, the tag characters) hide
//!   text a reader cannot see but a program, or a model judging relevance,
//!   reads. Every format here shows them as visible escapes (`\n`,
//!   `\u{202e}`), so a value stays on its one line and reads as what it is.
//! - **CI commands.** The GitHub Actions runner reads every line of a step's
//!   stdout and stderr as a possible workflow command: a line that starts
//!   with `::` after leading whitespace is trimmed, or that holds `##[`
//!   anywhere (the legacy form). See `ActionCommand.TryParseV2`/`TryParse`
//!   in actions/runner, `src/Runner.Common/ActionCommand.cs`. Each
//!   neutraliser breaks both, in its format's own escape where it has one
//!   (`\u{3a}` and `\u{5b}` in plain text, as any other escape there; `\[`
//!   in Markdown; `&#91;` in XML; `\u005b` in JSON).
//! - **Markup.** The Markdown report is rendered on pull-request pages:
//!   HTML, links, emphasis and table pipes in a query text are shown as
//!   text. XML 1.0 forbids most control characters even as references, so
//!   JUnit gets them as visible escapes.
//! - **Mentions.** GitHub turns `@user` and `@org/team` in a comment into a
//!   mention that notifies them, and no Markdown escape stops it (a
//!   backslash does not: github/markup#1168, github/cmark-gfm#181). A
//!   zero-width space after the `@`, written as the entity `&#8203;`, does,
//!   and still reads `@user` (the workaround in cmark-gfm#181; Dependabot
//!   inserts the same character, dependabot-core#3157).
//! - **Formulas.** A spreadsheet runs a CSV cell that begins with `=`, `+`,
//!   `-`, `@`, tab or CR as a formula (`=HYPERLINK(..)` leaks data, DDE runs
//!   commands). OWASP's "CSV Injection" page
//!   (<https://owasp.org/www-community/attacks/CSV_Injection>) and ASVS 5.0
//!   V1.2.10 say to prefix such a cell with a single quote and to quote
//!   fields that hold a separator; [`csv_cell`] does, reversibly, so the
//!   labeling sheet reads back exactly what was written ([`csv_value`]).
//!
//! Every function is idempotent on its own output except [`markdown`],
//! [`xml`] and [`csv_cell`], which escape their escape character: apply
//! those once, where raw text enters a renderer.

use std::borrow::Cow;
use std::fmt::Write as _;

/// Characters no report shows raw: C0 and C1 controls, DEL, the Unicode line
/// and paragraph separators, and the invisible format characters (general
/// category Cf), among them the bidirectional controls of the "Trojan
/// Source" set (CVE-2021-42574: U+202A-202E, U+2066-2069, U+200E, U+200F,
/// U+061C), U+200B and U+FEFF, and the tag characters that smuggle text
/// past a reader. The two joiners (U+200C, U+200D) stay: Persian and Indic
/// words and emoji sequences need them to render, and they reorder nothing.
pub fn is_hostile(c: char) -> bool {
    c.is_control()
        || matches!(c, '\u{2028}' | '\u{2029}')
        || (is_format(c) && !matches!(c, '\u{200C}' | '\u{200D}'))
}

/// Unicode general category Cf (Format), as of Unicode 15.1
/// (`UnicodeData.txt`; checked against Python's `unicodedata`).
fn is_format(c: char) -> bool {
    matches!(
        c,
        '\u{AD}'
            | '\u{600}'..='\u{605}'
            | '\u{61C}'
            | '\u{6DD}'
            | '\u{70F}'
            | '\u{890}'..='\u{891}'
            | '\u{8E2}'
            | '\u{180E}'
            | '\u{200B}'..='\u{200F}'
            | '\u{202A}'..='\u{202E}'
            | '\u{2060}'..='\u{2064}'
            | '\u{2066}'..='\u{206F}'
            | '\u{FEFF}'
            | '\u{FFF9}'..='\u{FFFB}'
            | '\u{110BD}'
            | '\u{110CD}'
            | '\u{13430}'..='\u{1343F}'
            | '\u{1BCA0}'..='\u{1BCA3}'
            | '\u{1D173}'..='\u{1D17A}'
            | '\u{E0001}'
            | '\u{E0020}'..='\u{E007F}'
    )
}

/// What follows an `@` in Markdown so GitHub reads no mention: a zero-width
/// space, as an entity (a raw one would be a hostile character itself).
pub const MENTION_BREAK: &str = "&#8203;";

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
/// characters become visible escapes, and so do the `[` of `##[` and the
/// first `:` of a leading `::` (`\u{5b}`, `\u{3a}`): the runner reads no
/// command, and the reader sees that something was escaped (an invisible
/// character would hide it, and is itself what this function shows).
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
    let mut out = line.replace("##[", "##\\u{5b}");
    let lead = out.len() - out.trim_start().len();
    if out[lead..].starts_with("::") {
        out.replace_range(lead..lead + 1, "\\u{3a}");
    }
    out
}

/// A path as plain text ([`terminal`]): file names may hold a newline, and
/// one echoed raw would start a line of its own in a CI log.
pub fn path(p: &std::path::Path) -> String {
    terminal(&p.display().to_string()).into_owned()
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
/// `p_adj` stays readable). Hostile characters become visible escapes. An
/// `@` that could start a mention gets `&#8203;` after it (see the module
/// notes): GitHub links `@name` and `@org/team` where the `@` follows no
/// letter, digit or `_` and is followed by a letter or digit, so
/// `recall@10` and `a@b.example` are left as they are.
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
            '@' => {
                out.push('@');
                let after_word = i > 0 && (chars[i - 1].is_ascii_alphanumeric() || chars[i - 1] == '_');
                if !after_word && chars.get(i + 1).is_some_and(|c| c.is_ascii_alphanumeric()) {
                    out.push_str(MENTION_BREAK);
                }
            }
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

/// Whether a spreadsheet would read a cell starting so as a formula: `=`,
/// `+`, `-`, `@`, tab and CR (OWASP's list), NUL (ASVS 5.0 V1.2.10), and the
/// quote [`csv_cell`] marks a neutralised cell with, so that a cell which
/// itself starts with one reads back whole.
fn opens_formula(s: &str) -> bool {
    s.starts_with(['=', '+', '-', '@', '\t', '\r', '\0', '\''])
}

/// A number as rgate writes one (`-0.0123`, `12`), or the lone `-` its
/// tables write for "none": every spreadsheet reads these as a number or as
/// text, never as a formula, so a number is left to sum and sort as one.
fn is_inert(s: &str) -> bool {
    if s == "-" {
        return true;
    }
    let digits = |t: &str| !t.is_empty() && t.bytes().all(|b| b.is_ascii_digit());
    let body = s.strip_prefix('-').unwrap_or(s);
    match body.split_once('.') {
        Some((int, frac)) => digits(int) && digits(frac),
        None => digits(body),
    }
}

/// A CSV cell's text with formulas neutralised (OWASP "CSV Injection"): a
/// cell that [would open a formula](opens_formula) gets a leading `'`,
/// which spreadsheets take as "this is text" and [`csv_value`] takes off
/// again; a plain number (`-0.0123`) and a lone `-` are left as they are. Quoting is the
/// writer's (RFC 4180), and must also cover `;`, the separator Excel uses in
/// locales whose decimal mark is a comma: an unquoted `a;=1+1` would open a
/// second cell with a formula.
pub fn csv_cell(s: &str) -> Cow<'_, str> {
    if opens_formula(s) && !is_inert(s) {
        Cow::Owned(format!("'{s}"))
    } else {
        Cow::Borrowed(s)
    }
}

/// A cell's value as [`csv_cell`] wrote it: one leading `'` taken off
/// where it marks a neutralised cell. `csv_value(csv_cell(x)) == x` for
/// every `x`; a `'` typed before any other text is kept.
pub fn csv_value(s: &str) -> Cow<'_, str> {
    match s.strip_prefix('\'') {
        Some(rest) if opens_formula(rest) => Cow::Borrowed(rest),
        _ => Cow::Borrowed(s),
    }
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
        assert_eq!(terminal("  ::error::x"), "  \\u{3a}:error::x");
        assert_eq!(terminal("x ##[error]y"), "x ##\\u{5b}error]y");
        assert_eq!(terminal("\u{202E}abc\u{85}"), "\\u{202e}abc\\u{85}");
        assert_eq!(terminal("tab\there\r"), "tab\\there\\r");
        // Invisible format characters are shown; the joiners are kept.
        assert_eq!(
            terminal("a\u{200B}b\u{FEFF}\u{E0041}"),
            "a\\u{200b}b\\u{feff}\\u{e0041}"
        );
        assert_eq!(
            terminal("\u{2066}x\u{2069}\u{61C}"),
            "\\u{2066}x\\u{2069}\\u{61c}"
        );
        assert_eq!(terminal("می\u{200C}خواهم"), "می\u{200C}خواهم");
        for s in [
            "a\n::error::forged",
            "::x",
            "\t::x",
            "##[x",
            "\u{2028}::x",
            "\u{200B}::x",
        ] {
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
        assert_eq!(terminal_lines("ok\n::warning::x"), "ok\n\\u{3a}:warning::x");
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
    fn markdown_mentions_nobody() {
        assert_eq!(markdown("@ana"), "@&#8203;ana");
        assert_eq!(markdown("ask @org/team now"), "ask @&#8203;org/team now");
        assert_eq!(markdown("(@ana)"), "(@&#8203;ana)");
        assert_eq!(markdown("recall@10 a@b.example @ x"), "recall@10 a@b.example @ x");
    }

    #[test]
    fn csv_cells_open_no_formula_and_read_back() {
        assert_eq!(csv_cell("=HYPERLINK(\"http://x\")"), "'=HYPERLINK(\"http://x\")");
        assert_eq!(csv_cell("@x"), "'@x");
        assert_eq!(csv_cell("+1"), "'+1");
        assert_eq!(csv_cell("\tx"), "'\tx");
        assert_eq!(csv_cell("'quoted"), "''quoted");
        assert_eq!(csv_cell("-0.0123"), "-0.0123");
        assert_eq!(csv_cell("-1"), "-1");
        assert_eq!(csv_cell("-1e5"), "'-1e5");
        assert_eq!(csv_cell("-"), "-");
        assert_eq!(csv_cell("--"), "'--");
        assert_eq!(csv_cell("a=b"), "a=b");
        assert_eq!(csv_value("'hello"), "'hello");
        for s in [
            "=HYPERLINK(\"http://x\")",
            "-1",
            "-1.5",
            "'quoted",
            "''",
            "'",
            "@x",
            "\tx",
            "\rx",
            "\0",
            "x",
            "",
            "-",
            "'=",
            "+",
        ] {
            assert_eq!(csv_value(&csv_cell(s)), s, "{s:?}");
        }
    }

    #[test]
    fn code_spans_cannot_be_closed() {
        assert_eq!(markdown_code("q-1"), "`q-1`");
        assert_eq!(markdown_code("a`b"), "`` a`b ``");
        assert_eq!(markdown_code("``"), "``` `` ```");
        assert_eq!(markdown_code("##[x"), "`##\\u{5b}x`");
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
