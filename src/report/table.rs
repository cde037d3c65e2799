//! One table model rendered three ways (aligned text, Markdown, CSV), so each
//! report builds its rows once and every format shows the same numbers
//! (hyperfine's exporters share a table the same way).

use std::fmt::Write;

use unicode_width::UnicodeWidthStr;

use crate::escape;

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Align {
    Left,
    Right,
}

#[derive(Debug, Clone, Default)]
pub struct Table {
    pub headers: Vec<String>,
    pub align: Vec<Align>,
    pub rows: Vec<Vec<String>>,
}

impl Table {
    /// Columns after the first `left` are right-aligned (numbers).
    pub fn new(headers: Vec<String>, left: usize) -> Table {
        let align = (0..headers.len())
            .map(|i| if i < left { Align::Left } else { Align::Right })
            .collect();
        Table {
            headers,
            align,
            rows: Vec::new(),
        }
    }

    pub fn push(&mut self, row: Vec<String>) {
        debug_assert_eq!(row.len(), self.headers.len());
        self.rows.push(row);
    }

    /// Each column's width in terminal columns (see [`display_width`]).
    fn widths(&self) -> Vec<usize> {
        let mut w: Vec<usize> = self.headers.iter().map(|h| display_width(h)).collect();
        for r in &self.rows {
            for (i, c) in r.iter().enumerate() {
                w[i] = w[i].max(display_width(c));
            }
        }
        w
    }

    /// The table with every cell passed through `f`: cells hold raw text
    /// from users' files, and each format neutralises it its own way.
    fn escaped(&self, f: impl Fn(&str) -> String) -> Table {
        Table {
            headers: self.headers.iter().map(|c| f(c)).collect(),
            align: self.align.clone(),
            rows: self
                .rows
                .iter()
                .map(|r| r.iter().map(|c| f(c)).collect())
                .collect(),
        }
    }

    /// The table without the columns named in `drop` (by header, in that
    /// order), as many of them as it takes for its text to fit `width`
    /// columns; with the headers left out. A table that fits keeps all.
    pub fn fit(&self, width: usize, drop: &[&str]) -> (Table, Vec<String>) {
        let mut t = self.clone();
        let mut dropped = Vec::new();
        for name in drop {
            if t.text_width() <= width {
                break;
            }
            if let Some(i) = t.headers.iter().position(|h| h == name) {
                t.headers.remove(i);
                t.align.remove(i);
                for r in &mut t.rows {
                    r.remove(i);
                }
                dropped.push(name.to_string());
            }
        }
        (t, dropped)
    }

    /// The widest line of [`Table::text`], in columns.
    pub fn text_width(&self) -> usize {
        let w = self.escaped(|c| escape::terminal(c).into_owned()).widths();
        w.iter().sum::<usize>() + 2 * w.len().saturating_sub(1)
    }

    /// Space-aligned columns for a terminal, two spaces apart.
    pub fn text(&self) -> String {
        let t = self.escaped(|c| escape::terminal(c).into_owned());
        t.aligned()
    }

    fn aligned(&self) -> String {
        let w = self.widths();
        let mut out = String::new();
        let line = |cells: &[String], out: &mut String| {
            let mut s = String::new();
            for (i, c) in cells.iter().enumerate() {
                if i > 0 {
                    s.push_str("  ");
                }
                let pad = w[i].saturating_sub(display_width(c));
                match self.align[i] {
                    Align::Left => {
                        s.push_str(c);
                        s.push_str(&" ".repeat(pad));
                    }
                    Align::Right => {
                        s.push_str(&" ".repeat(pad));
                        s.push_str(c);
                    }
                }
            }
            out.push_str(s.trim_end());
            out.push('\n');
        };
        line(&self.headers, &mut out);
        let rule: Vec<String> = w.iter().map(|n| "-".repeat(*n)).collect();
        line(&rule, &mut out);
        for r in &self.rows {
            line(r, &mut out);
        }
        out
    }

    pub fn markdown(&self) -> String {
        let mut out = String::new();
        let esc = |s: &str| escape::markdown(s);
        let _ = writeln!(
            out,
            "| {} |",
            self.headers
                .iter()
                .map(|h| esc(h))
                .collect::<Vec<_>>()
                .join(" | ")
        );
        let _ = writeln!(
            out,
            "|{}|",
            self.align
                .iter()
                .map(|a| match a {
                    Align::Left => ":---",
                    Align::Right => "---:",
                })
                .collect::<Vec<_>>()
                .join("|")
        );
        for r in &self.rows {
            let _ = writeln!(
                out,
                "| {} |",
                r.iter().map(|c| esc(c)).collect::<Vec<_>>().join(" | ")
            );
        }
        out
    }

    /// RFC 4180, every cell through [`csv_field`].
    pub fn csv(&self) -> String {
        let mut out = String::new();
        let mut line = |cells: &[String]| {
            let s: Vec<String> = cells.iter().map(|c| csv_field(c)).collect();
            out.push_str(&s.join(","));
            out.push('\n');
        };
        line(&self.headers);
        for r in &self.rows {
            line(r);
        }
        out
    }
}

/// A CSV cell: neutralised as plain text (a CSV on stdout is read by
/// terminals and CI runners too), then for spreadsheets (a cell that would
/// open a formula gets a leading `'`; numbers stay numbers, see
/// [`escape::csv_cell`]), then quoted when it holds a comma, quote, line
/// break or `;` (the separator of comma-decimal locales).
pub fn csv_field(c: &str) -> String {
    let t = escape::terminal(c);
    let c = escape::csv_cell(&t);
    if c.contains([',', '"', '\n', '\r', ';']) {
        format!("\"{}\"", c.replace('"', "\"\""))
    } else {
        c.to_string()
    }
}

/// How many terminal columns `s` takes: two for a CJK or other wide
/// character, none for a combining mark, one otherwise. Counting chars
/// instead shifts every column after a stratum named `日本語` by three.
pub fn display_width(s: &str) -> usize {
    UnicodeWidthStr::width(s)
}

/// The first ten characters of a commit id (characters, not bytes: the
/// field comes from a file anyone can edit).
pub fn short_commit(c: &str) -> String {
    c.chars().take(10).collect()
}

/// Four decimals, as trec_eval prints.
pub fn f4(v: f64) -> String {
    format!("{v:.4}")
}

/// A signed delta with four decimals.
pub fn signed4(v: f64) -> String {
    if v == 0.0 {
        // "-0.0000" reads as a drop; it is not one.
        "+0.0000".into()
    } else {
        format!("{v:+.4}")
    }
}

/// p-values: four decimals, or `<0.0001`.
pub fn pfmt(p: f64) -> String {
    if p.is_nan() {
        "-".into()
    } else if p < 0.0001 {
        "<0.0001".into()
    } else {
        format!("{p:.4}")
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn renders_three_ways() {
        let mut t = Table::new(vec!["scope".into(), "n".into(), "mrr".into()], 1);
        t.push(vec!["all".into(), "90".into(), "0.5000".into()]);
        t.push(vec!["a,b".into(), "3".into(), "1.0000".into()]);
        assert_eq!(
            t.text(),
            "scope   n     mrr\n-----  --  ------\nall    90  0.5000\na,b     3  1.0000\n"
        );
        assert!(t
            .markdown()
            .starts_with("| scope | n | mrr |\n|:---|---:|---:|\n"));
        assert!(t.csv().contains("\"a,b\",3,1.0000"));
    }

    #[test]
    fn wide_characters_take_two_columns() {
        let mut t = Table::new(vec!["scope".into(), "n".into()], 1);
        t.push(vec!["日本語".into(), "3".into()]);
        t.push(vec!["e\u{301}".into(), "12".into()]);
        // 日本語 is 6 columns wide; e + combining acute is 1.
        assert_eq!(
            t.text(),
            "scope    n\n------  --\n日本語   3\ne\u{301}       12\n"
        );
    }

    #[test]
    fn number_formats() {
        assert_eq!(signed4(-0.0), "+0.0000");
        assert_eq!(signed4(-0.02), "-0.0200");
        assert_eq!(pfmt(0.00001), "<0.0001");
    }
}
