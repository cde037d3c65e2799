//! The labeling sheet: one row per (query, candidate chunk), JSONL by
//! default (SPEC's keys) or CSV with the same columns, so it opens in a
//! spreadsheet as well as in the terminal labeler.

use std::path::Path;

use anyhow::Result;
use serde::{Deserialize, Serialize};

use super::excerpt;
use crate::diag::{input_error, input_error_hint};
use crate::escape::{csv_cell, csv_value};
use crate::fsutil::Rewrite;

/// Who gave a grade.
pub const PERSON: &str = "person";
pub const MODEL: &str = "model";

#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct SheetRow {
    pub query_id: String,
    #[serde(default)]
    pub query: String,
    #[serde(default)]
    pub stratum: String,
    pub chunk_id: String,
    /// The chunk's text, when a corpus was given.
    #[serde(default)]
    pub text: Option<String>,
    /// `None` until labeled.
    #[serde(default)]
    pub grade: Option<i32>,
    /// [`PERSON`] or [`MODEL`].
    #[serde(default)]
    pub source: Option<String>,
    #[serde(default)]
    pub labeler: Option<String>,
    /// A person's grade is verified; a model's is not until a person says so.
    #[serde(default)]
    pub verified: bool,
    /// When the grade was given (UTC, RFC 3339).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub labeled_at: Option<String>,
    /// A model's grade: the sha256 (hex) of the prompt text that produced it.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub prompt: Option<String>,
    /// The other grades given for this pair: the model's first pass once a
    /// person graded the row, a second person's blind grade. The row's own
    /// `grade` is the one that counts (import reads it); these are kept so
    /// `gold agreement` can compare the sources on the pairs both graded.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub opinions: Vec<Opinion>,
    /// The verification draw the row was written for (`gold verify-sample`):
    /// `gold import` refuses a row of a draw the gold set no longer records
    /// (see [`crate::gold::VerifySample::draw_id`]).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub draw: Option<String>,
}

/// One grade for a (query, chunk) pair, by one source.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct Opinion {
    pub grade: i32,
    /// [`PERSON`] or [`MODEL`].
    pub source: String,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub labeler: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub prompt: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub labeled_at: Option<String>,
}

impl Opinion {
    fn same_author(&self, other: &Opinion) -> bool {
        self.source == other.source && self.labeler == other.labeler
    }
}

impl SheetRow {
    pub fn is_persons(&self) -> bool {
        self.grade.is_some() && self.source.as_deref() == Some(PERSON)
    }

    /// The row's own grade as an [`Opinion`], when it has one.
    pub fn own(&self) -> Option<Opinion> {
        Some(Opinion {
            grade: self.grade?,
            source: self.source.clone().unwrap_or_else(|| PERSON.into()),
            labeler: self.labeler.clone(),
            prompt: self.prompt.clone(),
            labeled_at: self.labeled_at.clone(),
        })
    }

    /// Every grade given for the pair: the row's own first, then the others.
    pub fn all_opinions(&self) -> impl Iterator<Item = Opinion> + '_ {
        self.own().into_iter().chain(self.opinions.iter().cloned())
    }

    fn set_own(&mut self, o: Opinion) {
        self.verified = o.source == PERSON;
        self.grade = Some(o.grade);
        self.source = Some(o.source);
        self.labeler = o.labeler;
        self.prompt = o.prompt;
        self.labeled_at = o.labeled_at;
    }

    /// Records a grade by the one rule every writer of a sheet follows:
    /// - an ungraded row takes it;
    /// - the same author grading again replaces their own grade;
    /// - a person's grade displaces a model's, which is kept in `opinions`;
    /// - a model never displaces a person: its grade goes to `opinions`;
    /// - a second person's grade beside a first person's goes to `opinions`
    ///   (replacing that person's earlier one), the first person's stands.
    ///
    /// Nothing is ever lost, so agreement can be measured afterwards.
    pub fn give(&mut self, o: Opinion) {
        let Some(own) = self.own() else {
            self.set_own(o);
            return;
        };
        if own.same_author(&o) {
            self.set_own(o);
            return;
        }
        if own.source == MODEL && o.source == PERSON {
            self.opinions.retain(|x| !x.same_author(&own));
            self.opinions.insert(0, own);
            self.opinions.retain(|x| !x.same_author(&o));
            self.set_own(o);
            return;
        }
        match self.opinions.iter_mut().find(|x| x.same_author(&o)) {
            Some(x) => *x = o,
            None => self.opinions.push(o),
        }
    }
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum SheetFormat {
    Jsonl,
    Csv,
}

impl SheetFormat {
    /// CSV by extension, else JSONL.
    pub fn of(path: &Path) -> SheetFormat {
        match path.extension().and_then(|e| e.to_str()) {
            Some(e) if e.eq_ignore_ascii_case("csv") => SheetFormat::Csv,
            _ => SheetFormat::Jsonl,
        }
    }
}

const COLUMNS: [&str; 12] = [
    "query_id",
    "query",
    "stratum",
    "chunk_id",
    "text",
    "grade",
    "source",
    "labeler",
    "verified",
    "labeled_at",
    "prompt",
    "opinions",
];

/// Reads a sheet; errors name the file and line.
pub fn read(path: &Path) -> Result<Vec<SheetRow>> {
    read_as(path, true)
}

/// [`read`], each row's chunk `text` dropped as the row is read: for
/// readers of the grades (`gold import`), which never show it, and for
/// whom the texts of a large sheet would be most of what they hold.
pub fn read_grades(path: &Path) -> Result<Vec<SheetRow>> {
    let mut rows = Vec::new();
    each_graded_row(path, |r| {
        rows.push(r);
        Ok(())
    })?;
    Ok(rows)
}

/// Hands each row of a sheet to `each` as it is read, its chunk `text`
/// dropped, so that a reader that keeps less than the rows (`gold
/// agreement`: the grades of each pair) holds less than the sheet. A JSONL
/// sheet is read a line at a time (the whole file and every row of a
/// million-row sheet were held at once); the limits are [`read`]'s.
pub fn each_graded_row(path: &Path, mut each: impl FnMut(SheetRow) -> Result<()>) -> Result<()> {
    use std::io::Read;
    if SheetFormat::of(path) == SheetFormat::Csv {
        for r in read_as(path, false)? {
            each(r)?;
        }
        return Ok(());
    }
    let limit = crate::input::SHEET_LIMIT;
    let file = crate::input::open_within(path, WHAT, limit, HINT)?;
    let reader = std::io::BufReader::with_capacity(64 << 10, file.take(limit + 1));
    let mut lines = crate::input::Lines::new(reader, path, WHAT).with_limit(limit as usize + 1);
    let mut buf = Vec::new();
    let mut total = 0u64;
    while let Some(no) = lines.next_line(&mut buf)? {
        total += buf.len() as u64 + 1;
        if total > limit + 1 {
            return Err(crate::input::grew_past(path, WHAT, limit));
        }
        let line = std::str::from_utf8(&buf).map_err(|_| input_error(path, Some(no), "not valid UTF-8"))?;
        if let Some(row) = jsonl_row(path, no, line, false)? {
            each(row)?;
        }
    }
    Ok(())
}

const WHAT: &str = "labeling sheet";
const HINT: &str = "make one with `rgate gold pool`";

fn read_as(path: &Path, keep_text: bool) -> Result<Vec<SheetRow>> {
    let bytes = crate::input::read(path, WHAT, crate::input::SHEET_LIMIT, HINT)?;
    let bytes = crate::diag::strip_bom(&bytes);
    let text = std::str::from_utf8(bytes).map_err(|e| {
        input_error(
            path,
            Some(crate::diag::line_of(bytes, e.valid_up_to())),
            "not valid UTF-8",
        )
    })?;
    match SheetFormat::of(path) {
        SheetFormat::Jsonl => parse_jsonl(path, text, keep_text),
        SheetFormat::Csv => parse_csv(path, text, keep_text),
    }
}

fn parse_jsonl(path: &Path, text: &str, keep_text: bool) -> Result<Vec<SheetRow>> {
    let mut rows = Vec::new();
    for (i, line) in text.lines().enumerate() {
        if let Some(row) = jsonl_row(path, i + 1, line, keep_text)? {
            rows.push(row);
        }
    }
    Ok(rows)
}

/// One line of a JSONL sheet: a checked row, or none for a blank line.
fn jsonl_row(path: &Path, no: usize, line: &str, keep_text: bool) -> Result<Option<SheetRow>> {
    let t = line.trim();
    if t.is_empty() {
        return Ok(None);
    }
    let mut row: SheetRow = serde_json::from_str(t).map_err(|e| {
        input_error_hint(
            path,
            Some(no),
            format!("not a sheet row: {e}"),
            "each line is an object with query_id, query, stratum, chunk_id, text, grade, source, labeler, verified",
        )
    })?;
    check(path, Some(no), &row)?;
    if !keep_text {
        row.text = None;
    }
    Ok(Some(row))
}

fn parse_csv(path: &Path, text: &str, keep_text: bool) -> Result<Vec<SheetRow>> {
    let mut r = csv::ReaderBuilder::new().from_reader(text.as_bytes());
    let headers = r
        .headers()
        .map_err(|e| input_error(path, Some(1), format!("not a CSV sheet: {e}")))?
        .clone();
    let col = |name: &str| headers.iter().position(|h| h == name);
    let need = |name: &str| {
        col(name).ok_or_else(|| {
            input_error_hint(
                path,
                Some(1),
                format!("the header has no `{name}` column"),
                format!("a CSV sheet has the columns {}", COLUMNS.join(",")),
            )
        })
    };
    let (qi, ci) = (need("query_id")?, need("chunk_id")?);
    let mut rows = Vec::new();
    for rec in r.records() {
        let rec = rec.map_err(|e| {
            let line = e.position().map(|p| p.line() as usize);
            input_error(path, line, format!("bad CSV row: {e}"))
        })?;
        let line = rec.position().map(|p| p.line() as usize);
        // Cells as `render` wrote them: formulas neutralised, undone here.
        let get = |name: &str| csv_value(col(name).and_then(|i| rec.get(i)).unwrap_or(""));
        let opt = |name: &str| Some(get(name).into_owned()).filter(|s| !s.is_empty());
        let grade = match get("grade").trim() {
            "" => None,
            g => Some(g.parse::<i32>().map_err(|_| {
                input_error_hint(
                    path,
                    line,
                    format!("grade `{}` is not an integer", excerpt(g)),
                    "grades are 0 (not relevant), 1, 2, 3; leave the cell empty when unlabeled",
                )
            })?),
        };
        let verified = match get("verified").trim().to_ascii_lowercase().as_str() {
            "" | "false" | "0" | "no" => false,
            "true" | "1" | "yes" => true,
            other => {
                return Err(input_error(
                    path,
                    line,
                    format!("verified `{}` is not true or false", excerpt(other)),
                ))
            }
        };
        let row = SheetRow {
            query_id: csv_value(rec.get(qi).unwrap_or("")).into_owned(),
            query: get("query").to_string(),
            stratum: get("stratum").to_string(),
            chunk_id: csv_value(rec.get(ci).unwrap_or("")).into_owned(),
            text: if keep_text { opt("text") } else { None },
            grade,
            source: opt("source"),
            labeler: opt("labeler"),
            verified,
            labeled_at: opt("labeled_at"),
            prompt: opt("prompt"),
            draw: opt("draw"),
            opinions: match get("opinions").trim() {
                "" => Vec::new(),
                o => serde_json::from_str(o).map_err(|e| {
                    input_error_hint(
                        path,
                        line,
                        format!("opinions cell is not a JSON list of grades: {e}"),
                        "leave it as rgate wrote it, or empty",
                    )
                })?,
            },
        };
        check(path, line, &row)?;
        rows.push(row);
    }
    Ok(rows)
}

fn check(path: &Path, line: Option<usize>, row: &SheetRow) -> Result<()> {
    if row.query_id.is_empty() || row.chunk_id.is_empty() {
        return Err(input_error(path, line, "a row needs a query_id and a chunk_id"));
    }
    for (name, id) in [("query_id", &row.query_id), ("chunk_id", &row.chunk_id)] {
        if id.contains('\0') {
            // A C string ends there: trec_eval, a shell or a database would
            // read another id than rgate does.
            return Err(input_error_hint(
                path,
                line,
                format!("{name} `{}` holds a NUL character", excerpt(id)),
                "an id is printable text; fix the row (nothing was imported)",
            ));
        }
    }
    if let Some(s) = row.source.as_deref() {
        if s != PERSON && s != MODEL {
            return Err(input_error_hint(
                path,
                line,
                format!("source `{}` is neither person nor model", excerpt(s)),
                "source says who graded the row: `person` or `model`",
            ));
        }
    }
    for o in &row.opinions {
        if o.source != PERSON && o.source != MODEL {
            return Err(input_error_hint(
                path,
                line,
                format!(
                    "an opinion's source `{}` is neither person nor model",
                    excerpt(&o.source)
                ),
                "source says who graded the row: `person` or `model`",
            ));
        }
    }
    for g in row.grade.into_iter().chain(row.opinions.iter().map(|o| o.grade)) {
        if !(0..=3).contains(&g) {
            return Err(input_error_hint(
                path,
                line,
                format!("grade {g} is outside 0..3"),
                "grades are 0 (not relevant), 1, 2, 3",
            ));
        }
    }
    Ok(())
}

/// The sheet as text in `format`.
pub fn render(rows: &[SheetRow], format: SheetFormat) -> Result<String> {
    match format {
        SheetFormat::Jsonl => {
            let mut out = String::new();
            for r in rows {
                out.push_str(&serde_json::to_string(r)?);
                out.push('\n');
            }
            Ok(out)
        }
        SheetFormat::Csv => {
            // A sheet opens in a spreadsheet: every cell through `csv_cell`
            // (a chunk text `=HYPERLINK(..)` stays text), and `;` quoted
            // (the csv crate quotes the "comment" byte wherever it occurs).
            let mut w = csv::WriterBuilder::new()
                .comment(Some(b';'))
                .from_writer(Vec::new());
            // A verification sheet's rows carry their draw: one more column,
            // only there (every other sheet keeps its columns).
            let draws = rows.iter().any(|r| r.draw.is_some());
            let mut header: Vec<&str> = COLUMNS.to_vec();
            if draws {
                header.push("draw");
            }
            w.write_record(&header)?;
            for r in rows {
                let opinions = if r.opinions.is_empty() {
                    String::new()
                } else {
                    serde_json::to_string(&r.opinions)?
                };
                let cells = [
                    r.query_id.as_str(),
                    &r.query,
                    &r.stratum,
                    &r.chunk_id,
                    r.text.as_deref().unwrap_or(""),
                    &r.grade.map(|g| g.to_string()).unwrap_or_default(),
                    r.source.as_deref().unwrap_or(""),
                    r.labeler.as_deref().unwrap_or(""),
                    if r.verified { "true" } else { "false" },
                    r.labeled_at.as_deref().unwrap_or(""),
                    r.prompt.as_deref().unwrap_or(""),
                    &opinions,
                    r.draw.as_deref().unwrap_or(""),
                ];
                let cells = &cells[..header.len()];
                w.write_record(cells.iter().map(|c| csv_cell(c).into_owned()))?;
            }
            Ok(String::from_utf8(w.into_inner()?)?)
        }
    }
}

/// Rewrites the sheet at `path` under its lock: `change` gets the rows as
/// they are on disk now, edits them, and says whether it changed anything
/// (nothing is written otherwise). Every writer of a sheet (each save of
/// `gold label`, `gold suggest`) goes through here, merging its own edits
/// into what is there, so two labelers and a running `gold suggest` keep
/// each other's grades. The write is atomic (a kill costs at most this one
/// change), through a link to the real file, keeping its permissions.
pub fn update<T>(
    path: &Path,
    now: &str,
    on_wait: &mut dyn FnMut(&str),
    change: impl FnOnce(&mut Vec<SheetRow>) -> Result<(T, bool)>,
) -> Result<T> {
    let file = Rewrite::begin(path, now, on_wait)?;
    let mut rows = read(file.path())?;
    let (out, changed) = change(&mut rows)?;
    if changed {
        file.write(render(&rows, SheetFormat::of(path))?.as_bytes())?;
    }
    Ok(out)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn row(q: &str, c: &str, grade: Option<i32>) -> SheetRow {
        SheetRow {
            query_id: q.into(),
            query: "how, \"quoted\"".into(),
            stratum: "how-to".into(),
            chunk_id: c.into(),
            text: Some("line one\nline two".into()),
            grade,
            source: grade.map(|_| PERSON.into()),
            labeler: grade.map(|_| "ana".into()),
            verified: grade.is_some(),
            ..Default::default()
        }
    }

    fn op(grade: i32, source: &str, who: &str) -> Opinion {
        Opinion {
            grade,
            source: source.into(),
            labeler: Some(who.into()),
            ..Default::default()
        }
    }

    /// Read a row at a time, a JSONL sheet gives the rows `read` gives,
    /// their chunk text dropped; a blank line, a byte order mark and CRLF
    /// endings read as before, and an error names its line.
    #[test]
    fn a_sheet_read_row_by_row_is_the_sheet_without_its_texts() {
        let dir = tempfile::tempdir().unwrap();
        let rows = vec![
            row("q1", "c1", Some(2)),
            row("q1", "c2", None),
            row("q2", "c3", Some(0)),
        ];
        let mut text = String::from("\u{feff}");
        for (i, r) in rows.iter().enumerate() {
            text += &serde_json::to_string(r).unwrap();
            text += if i == 1 { "\r\n\n" } else { "\n" };
        }
        for name in ["s.jsonl", "s.csv"] {
            let p = dir.path().join(name);
            let body = match name {
                "s.csv" => render(&rows, SheetFormat::Csv).unwrap(),
                _ => text.clone(),
            };
            std::fs::write(&p, body).unwrap();
            let want: Vec<SheetRow> = read(&p)
                .unwrap()
                .into_iter()
                .map(|mut r| {
                    r.text = None;
                    r
                })
                .collect();
            assert_eq!(want.len(), 3);
            assert_eq!(read_grades(&p).unwrap(), want, "{name}");
        }
        let p = dir.path().join("bad.jsonl");
        std::fs::write(
            &p,
            format!(
                "{}\n\n{{\"query_id\": 1}}\n",
                serde_json::to_string(&rows[0]).unwrap()
            ),
        )
        .unwrap();
        let e = format!("{:#}", read_grades(&p).unwrap_err());
        assert!(e.contains("bad.jsonl:3: not a sheet row"), "{e}");
        let mut bytes = serde_json::to_vec(&rows[0]).unwrap();
        bytes.extend_from_slice(b"\n\xff\n");
        std::fs::write(&p, bytes).unwrap();
        let e = format!("{:#}", read_grades(&p).unwrap_err());
        assert!(e.contains("bad.jsonl:2: not valid UTF-8"), "{e}");
    }

    #[test]
    fn jsonl_and_csv_round_trip() {
        let dir = tempfile::tempdir().unwrap();
        let mut judged = row("q2", "c3", None);
        judged.give(Opinion {
            prompt: Some("ab12".into()),
            ..op(3, MODEL, "gpt")
        });
        judged.give(op(1, PERSON, "ana"));
        let rows = vec![row("q1", "c1", Some(2)), row("q1", "c2", None), judged];
        for name in ["s.jsonl", "s.csv"] {
            let p = dir.path().join(name);
            std::fs::write(&p, render(&rows, SheetFormat::of(&p)).unwrap()).unwrap();
            assert_eq!(read(&p).unwrap(), rows, "{name}");
        }
        let csv = std::fs::read_to_string(dir.path().join("s.csv")).unwrap();
        assert!(csv.starts_with(
            "query_id,query,stratum,chunk_id,text,grade,source,labeler,verified,labeled_at,prompt,opinions\n"
        ));
        assert!(
            csv.contains("q1,\"how, \"\"quoted\"\"\",how-to,c2,\"line one\nline two\",,,,false,,,\n"),
            "{csv}"
        );
        assert!(
            csv.contains(",1,person,ana,true,,,\"[{\"\"grade\"\":3,\"\"source\"\":\"\"model\"\",\"\"labeler\"\":\"\"gpt\"\",\"\"prompt\"\":\"\"ab12\"\"}]\"\n"),
            "{csv}"
        );
    }

    #[test]
    fn give_keeps_every_grade_and_never_lets_a_model_displace_a_person() {
        let mut r = row("q", "c", None);
        r.give(op(2, MODEL, "gpt"));
        assert_eq!(
            (r.grade, r.source.as_deref(), r.verified),
            (Some(2), Some(MODEL), false)
        );
        // A person displaces the model; the model's grade is kept.
        r.give(op(0, PERSON, "ana"));
        assert_eq!(
            (r.grade, r.labeler.as_deref(), r.verified),
            (Some(0), Some("ana"), true)
        );
        assert_eq!(r.opinions, vec![op(2, MODEL, "gpt")]);
        // A model again (a second opinion) goes beside, the person stands.
        r.give(op(3, MODEL, "claude"));
        assert_eq!(r.grade, Some(0));
        // A second person goes beside; grading again replaces their own.
        r.give(op(1, PERSON, "bo"));
        r.give(op(2, PERSON, "bo"));
        assert_eq!(r.grade, Some(0));
        assert_eq!(
            r.opinions,
            vec![op(2, MODEL, "gpt"), op(3, MODEL, "claude"), op(2, PERSON, "bo")]
        );
        // The first person re-grading replaces their own grade only.
        r.give(op(1, PERSON, "ana"));
        assert_eq!((r.grade, r.opinions.len()), (Some(1), 3));
        assert_eq!(r.all_opinions().count(), 4);
    }

    #[test]
    fn bad_rows_name_their_line() {
        let dir = tempfile::tempdir().unwrap();
        let p = dir.path().join("s.jsonl");
        std::fs::write(
            &p,
            "{\"query_id\":\"q\",\"chunk_id\":\"c\"}\n{\"query_id\":\"q\",\"chunk_id\":\"c\",\"grade\":7}\n",
        )
        .unwrap();
        let e = format!("{:#}", read(&p).unwrap_err());
        assert!(e.contains("s.jsonl:2: grade 7 is outside 0..3"), "{e}");
    }
}
