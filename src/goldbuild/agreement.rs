//! `gold agreement`: how far two sources of grades agree on the pairs both
//! graded: a model against the people who verified it, or one person
//! against another who labeled the same sheet blind.
//!
//! Why measure it on your own data: a language model's agreement with
//! people swings with the prompt (Cohen's kappa by as much as ±0.28 across
//! 90 prompts) and models tend to call more passages relevant than people
//! do (Alaofi et al., 2025), so a published figure for a judge says little
//! about yours. UMBRELA (Upadhyay et al., 2024) reports its agreement with
//! TREC assessors the same way: Cohen's kappa on relevant/not, and the
//! confusion matrix of the 0-3 grades.
//!
//! The measures, for pairs graded `a` by one source and `b` by the other:
//! - exact agreement: the share of pairs given the same 0-3 grade;
//! - Cohen's kappa (Cohen, 1960) on relevant/not (grade >= the relevance
//!   level): `(p_o - p_e) / (1 - p_e)`, observed agreement against the
//!   agreement two independent sources with these marginals would reach;
//! - quadratic-weighted kappa (Cohen, 1968) on the grades:
//!   `1 - Σ w_ij O_ij / Σ w_ij E_ij` with `w_ij = (i - j)²`, so a 3 against
//!   a 0 costs nine times a 3 against a 2. The weights are grade distances
//!   on 0..3 whichever grades occur (scikit-learn's `cohen_kappa_score`
//!   weighs label *indices*, so it matches only with `labels=[0, 1, 2, 3]`).
//!
//! Kappa is undefined when chance agreement is already total (both sources
//! used one and the same class for every pair): it is reported as absent,
//! with the reason, never as NaN.
//!
//! The figures are pure (rows in, numbers out); [`load`] reads a sheet or a
//! gold set; rendering lives in `report::agreement`.

use std::collections::{BTreeMap, HashMap};
use std::path::Path;

use anyhow::Result;

use super::sheet::{self, Opinion, SheetRow, MODEL, PERSON};
use crate::diag::Warnings;
use crate::gold::{GoldSet, DEFAULT_STRATUM};

/// What `gold agreement` read.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Input {
    Sheet,
    Gold,
}

/// The pairs of a labeling sheet (`.csv`, or JSONL whose first row has a
/// `chunk_id`) or of a gold set (anything else: YAML, JSON, JSONL queries),
/// with every grade recorded for each.
pub fn load(path: &Path) -> Result<(Input, Pairs, Warnings)> {
    if is_sheet(path) {
        let mut pairs = Pairs::default();
        sheet::each_graded_row(path, |r| {
            pairs.add_row(r);
            Ok(())
        })?;
        pairs.done();
        return Ok((Input::Sheet, pairs, Warnings::default()));
    }
    let (gold, warnings) = GoldSet::load_with_provenance(path, None)?;
    Ok((Input::Gold, from_gold(&gold), warnings))
}

/// A sheet by its name or its first line: a gold set's JSONL lines are
/// queries (`id`, `relevant`), a sheet's are pairs (`chunk_id`).
fn is_sheet(path: &Path) -> bool {
    use std::io::{BufRead, Read};
    match sheet::SheetFormat::of(path) {
        sheet::SheetFormat::Csv => return true,
        sheet::SheetFormat::Jsonl => {}
    }
    let is_jsonl = path
        .extension()
        .and_then(|e| e.to_str())
        .is_some_and(|e| e.eq_ignore_ascii_case("jsonl"));
    if !is_jsonl {
        return false;
    }
    let Ok(f) = std::fs::File::open(path) else {
        // Let the sheet reader say why it cannot be opened.
        return true;
    };
    let mut line = Vec::new();
    let mut r = std::io::BufReader::new(f).take(crate::input::LINE_LIMIT as u64);
    loop {
        line.clear();
        match r.read_until(b'\n', &mut line) {
            Ok(0) | Err(_) => return true,
            Ok(_) => {}
        }
        let text = String::from_utf8_lossy(&line);
        let t = text.trim().trim_start_matches('\u{feff}');
        if t.is_empty() {
            continue;
        }
        return serde_json::from_str::<serde_json::Map<String, serde_json::Value>>(t)
            .map_or(true, |m| m.contains_key("chunk_id"));
    }
}

/// The grades a pair can carry.
pub const GRADES: usize = 4;

/// One side of the comparison.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Side {
    /// Any model's grade.
    Model,
    /// Any person's grade.
    Person,
    /// The grades of one labeler (a person's name, a model's name).
    Labeler(String),
}

impl Side {
    /// `model`, `person`, or a labeler's name.
    pub fn parse(s: &str) -> Side {
        match s {
            MODEL => Side::Model,
            PERSON => Side::Person,
            name => Side::Labeler(name.to_string()),
        }
    }

    pub fn name(&self) -> &str {
        match self {
            Side::Model => MODEL,
            Side::Person => PERSON,
            Side::Labeler(n) => n,
        }
    }

    fn takes(&self, o: &Author) -> bool {
        match self {
            Side::Model => o.source == MODEL,
            Side::Person => o.source == PERSON,
            Side::Labeler(n) => o.labeler.as_deref() == Some(n.as_str()),
        }
    }
}

/// Who gave a grade: a source and, when named, a labeler. Two grades by
/// one author are two grades with the same source and labeler.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub struct Author {
    pub source: String,
    pub labeler: Option<String>,
}

impl Author {
    /// Who it is, as the report names them.
    fn name(&self) -> String {
        self.labeler
            .clone()
            .unwrap_or_else(|| format!("unnamed {}", self.source))
    }
}

/// Every grade recorded for one (query, chunk) pair.
#[derive(Debug, Clone, PartialEq)]
pub struct Graded {
    /// Its stratum, by position in [`Pairs::strata`].
    pub stratum: u32,
    /// (author, grade), the author by position in [`Pairs::authors`]; the
    /// row's (or label's) own grade first.
    pub opinions: Vec<(u32, i32)>,
    /// Grades dropped because their author had already graded the pair
    /// (a hand-edited sheet listing a pair twice): counted, and reported.
    pub dropped: u32,
}

/// The graded pairs of a sheet or a gold set, with the authors and strata
/// they name held once each: a pair is a stratum number and a few (author,
/// grade) numbers, not its ids and its opinions' strings (which made a
/// million-row sheet 1.47 GB).
#[derive(Debug, Clone, Default)]
pub struct Pairs {
    pub items: Vec<Graded>,
    pub authors: Vec<Author>,
    pub strata: Vec<String>,
    author_at: HashMap<Author, u32>,
    stratum_at: HashMap<String, u32>,
    /// (query, chunk) to its item: a pair listed twice is one pair.
    pair_at: HashMap<(Box<str>, Box<str>), u32>,
}

impl Pairs {
    fn author(&mut self, source: String, labeler: Option<String>) -> u32 {
        let a = Author { source, labeler };
        if let Some(&i) = self.author_at.get(&a) {
            return i;
        }
        let i = self.authors.len() as u32;
        self.authors.push(a.clone());
        self.author_at.insert(a, i);
        i
    }

    fn stratum(&mut self, name: &str) -> u32 {
        let name = if name.is_empty() { DEFAULT_STRATUM } else { name };
        if let Some(&i) = self.stratum_at.get(name) {
            return i;
        }
        let i = self.strata.len() as u32;
        self.strata.push(name.to_string());
        self.stratum_at.insert(name.to_string(), i);
        i
    }

    /// Adds a pair's grades (`key`: its query and chunk, to merge a pair
    /// given twice; none when the input cannot repeat one). An author's
    /// second grade for the pair is dropped, as [`SheetRow::give`] would
    /// have replaced it.
    fn add(&mut self, key: Option<(&str, &str)>, stratum: &str, opinions: impl IntoIterator<Item = Opinion>) {
        let at = key.and_then(|(q, c)| self.pair_at.get(&(Box::from(q), Box::from(c))).copied());
        let i = match at {
            Some(i) => i as usize,
            None => {
                let stratum = self.stratum(stratum);
                self.items.push(Graded {
                    stratum,
                    opinions: Vec::new(),
                    dropped: 0,
                });
                if let Some((q, c)) = key {
                    self.pair_at
                        .insert((q.into(), c.into()), (self.items.len() - 1) as u32);
                }
                self.items.len() - 1
            }
        };
        for o in opinions {
            let who = self.author(o.source, o.labeler);
            let g = &mut self.items[i];
            if g.opinions.iter().any(|&(a, _)| a == who) {
                g.dropped += 1;
            } else {
                g.opinions.push((who, o.grade));
            }
        }
    }

    /// A sheet row: every grade it holds, the row's own first.
    pub fn add_row(&mut self, r: SheetRow) {
        let key = (r.query_id.as_str(), r.chunk_id.as_str());
        let opinions: Vec<Opinion> = r.all_opinions().collect();
        self.add(Some(key), &r.stratum, opinions);
    }

    /// Frees what was needed only to merge repeated pairs.
    pub fn done(&mut self) {
        self.pair_at = HashMap::new();
        self.items.shrink_to_fit();
    }
}

/// The pairs of a sheet with every grade each holds (the row's own first).
/// A pair listed twice (a hand-edited sheet) is one pair, holding the
/// grades of both rows; an author's second grade for it is dropped, as
/// [`SheetRow::give`] would have replaced it.
pub fn from_sheet(rows: &[SheetRow]) -> Pairs {
    let mut pairs = Pairs::default();
    for r in rows {
        pairs.add_row(r.clone());
    }
    pairs.done();
    pairs
}

/// The chunk-id labels of a gold set with every grade their provenance
/// records: the label's own grade, by the provenance's source and labeler
/// (a label without provenance is a person's, as `gold pool` reads it),
/// then the opinions `gold import` carried from the sheet. Span labels
/// carry no provenance and are left out.
pub fn from_gold(gold: &GoldSet) -> Pairs {
    let mut pairs = Pairs::default();
    for (qi, q) in gold.queries.iter().enumerate() {
        let prov = gold.provenance.get(&q.id);
        for l in &q.labels {
            let p = prov.and_then(|p| p.get(l.id));
            let own = Opinion {
                grade: l.grade,
                source: p.map_or_else(|| PERSON.to_string(), |p| p.source.clone()),
                labeler: p.and_then(|p| p.labeler.clone()),
                ..Opinion::default()
            };
            let others = p
                .map(|p| p.opinions.as_slice())
                .unwrap_or_default()
                .iter()
                .map(super::provenance::from_gold);
            // A gold set gives a label once per query: no pair to merge.
            pairs.add(None, gold.stratum_name(qi), std::iter::once(own).chain(others));
        }
    }
    pairs.done();
    pairs
}

/// The model's grades against people's on the verified queries of a gold
/// set's labeling (SPEC "Gating on model labels"), with how many verified
/// queries carry model grades: what `gate.judge` gates on.
///
/// The pairs are the model's graded chunks of each verified query (its
/// pooled pairs). People graded every pooled pair of a verified query, so a
/// model-graded chunk missing from `relevant` is a person's 0, the grade
/// the person-side metric reads it as (trec_eval: an unlisted chunk is not
/// relevant). A chunk only people graded has no model grade to compare and
/// is left out, as [`agreement`] leaves out a pair one side alone graded; a
/// negative (unjudged) person grade is [`Agreement::unusable`].
pub fn from_labeling(gold: &GoldSet) -> (Pairs, usize) {
    let mut pairs = Pairs::default();
    let mut queries = 0;
    for &qi in &gold.labeling.verified {
        let qi = qi as usize;
        let (Some(model), Some(q)) = (gold.labeling.model_labels(qi), gold.queries.get(qi)) else {
            continue;
        };
        queries += 1;
        let people: HashMap<&str, i32> = q.labels.iter().map(|l| (l.id, l.grade)).collect();
        for m in model {
            let person = people.get(m.id).copied().unwrap_or(0);
            let opinion = |grade, source: &str| Opinion {
                grade,
                source: source.to_string(),
                ..Opinion::default()
            };
            // A query's model grades name each chunk once: no pair to merge.
            pairs.add(
                None,
                gold.stratum_name(qi),
                [opinion(m.grade, MODEL), opinion(person, PERSON)],
            );
        }
    }
    pairs.done();
    (pairs, queries)
}

/// The figures for one set of pairs.
#[derive(Debug, Clone, PartialEq)]
pub struct Stats {
    pub n: u64,
    /// `confusion[i][j]`: pairs side A graded `i` and side B graded `j`.
    pub confusion: [[u64; GRADES]; GRADES],
    /// Share of pairs with the same grade; `None` with no pairs.
    pub agreement: Option<f64>,
    /// Cohen's kappa on relevant/not at the relevance level.
    pub kappa: Measure,
    /// Quadratic-weighted kappa on the 0-3 grades.
    pub weighted_kappa: Measure,
    /// Share of pairs each side called relevant: a model that says
    /// "relevant" far more often than the people is over-labeling.
    pub relevant_a: Option<f64>,
    pub relevant_b: Option<f64>,
}

/// A kappa, or why there is none.
#[derive(Debug, Clone, PartialEq)]
pub enum Measure {
    Value(f64),
    Undefined(String),
}

impl Measure {
    pub fn value(&self) -> Option<f64> {
        match self {
            Measure::Value(v) => Some(*v),
            Measure::Undefined(_) => None,
        }
    }

    pub fn reason(&self) -> Option<&str> {
        match self {
            Measure::Value(_) => None,
            Measure::Undefined(r) => Some(r),
        }
    }
}

/// The figures of a confusion matrix, relevant meaning grade >= `level`.
/// Counts stay integers until the last division, so "undefined" is decided
/// exactly, not by comparing floats with 1.
pub fn stats(confusion: [[u64; GRADES]; GRADES], level: i32) -> Stats {
    let n: u64 = confusion.iter().flatten().sum();
    let row: Vec<u64> = confusion.iter().map(|r| r.iter().sum()).collect();
    let col: Vec<u64> = (0..GRADES)
        .map(|j| confusion.iter().map(|r| r[j]).sum())
        .collect();
    let rel = |g: usize| g as i32 >= level;
    let same: u64 = (0..GRADES).map(|i| confusion[i][i]).sum();
    let share = |k: u64| (n > 0).then(|| k as f64 / n as f64);
    let a_rel: u64 = (0..GRADES).filter(|&g| rel(g)).map(|g| row[g]).sum();
    let b_rel: u64 = (0..GRADES).filter(|&g| rel(g)).map(|g| col[g]).sum();
    let kappa = if n == 0 {
        Measure::Undefined("no pairs".into())
    } else if a_rel == b_rel && (a_rel == 0 || a_rel == n) {
        Measure::Undefined(format!(
            "one class only: both sides called every pair {}",
            if a_rel == 0 { "not relevant" } else { "relevant" }
        ))
    } else {
        let mut agree_bin = 0u64;
        for (i, r) in confusion.iter().enumerate() {
            for (j, &c) in r.iter().enumerate() {
                if rel(i) == rel(j) {
                    agree_bin += c;
                }
            }
        }
        let nf = n as f64;
        let p_o = agree_bin as f64 / nf;
        let (pa, pb) = (a_rel as f64 / nf, b_rel as f64 / nf);
        let p_e = pa * pb + (1.0 - pa) * (1.0 - pb);
        Measure::Value((p_o - p_e) / (1.0 - p_e))
    };
    // Σ w_ij E_ij, times n: an integer, zero exactly when both sides gave
    // every pair one and the same grade.
    let mut expected_n = 0u64;
    let mut observed = 0u64;
    for i in 0..GRADES {
        for j in 0..GRADES {
            let w = (i.abs_diff(j) * i.abs_diff(j)) as u64;
            expected_n += w * row[i] * col[j];
            observed += w * confusion[i][j];
        }
    }
    let weighted_kappa = if n == 0 {
        Measure::Undefined("no pairs".into())
    } else if expected_n == 0 {
        let g = row.iter().position(|&c| c > 0).unwrap_or(0);
        Measure::Undefined(format!("one grade only: both sides gave every pair grade {g}"))
    } else {
        Measure::Value(1.0 - (observed as f64 * n as f64) / expected_n as f64)
    };
    Stats {
        n,
        confusion,
        agreement: share(same),
        kappa,
        weighted_kappa,
        relevant_a: share(a_rel),
        relevant_b: share(b_rel),
    }
}

/// What `gold agreement` found.
#[derive(Debug, Clone, PartialEq)]
pub struct Agreement {
    pub a: Side,
    pub b: Side,
    pub relevance_level: i32,
    /// Pairs in the input.
    pub pairs: usize,
    /// Pairs graded by side A but not side B, and the other way round.
    pub only_a: usize,
    pub only_b: usize,
    /// Pairs where a side had several grades to offer (two models under
    /// `model`, say): the first recorded was compared.
    pub several: usize,
    /// Grades dropped as an author's second grade of a pair ([`Graded::dropped`]).
    pub dropped: usize,
    /// Pairs both sides graded, left out because a compared grade is not
    /// 0..3 (a gold set's negative "unjudged" grade).
    pub unusable: usize,
    /// Whose grades each side compared, with how many pairs each.
    pub labelers_a: Vec<(String, u64)>,
    pub labelers_b: Vec<(String, u64)>,
    pub all: Stats,
    /// Per stratum, by name.
    pub strata: Vec<(String, Stats)>,
}

/// Compares side `a` with side `b` on every pair both graded. On a pair,
/// side A's grade is the first recorded grade it takes (the row's own grade
/// comes first), side B's the first it takes by another author, so
/// `person,person` compares the first person with a second one.
pub fn agreement(pairs: &Pairs, a: &Side, b: &Side, relevance_level: i32) -> Agreement {
    let items = &pairs.items;
    let who = |o: &(u32, i32)| &pairs.authors[o.0 as usize];
    let mut all = [[0u64; GRADES]; GRADES];
    let mut by_stratum: BTreeMap<&str, [[u64; GRADES]; GRADES]> = BTreeMap::new();
    let (mut only_a, mut only_b, mut several, mut unusable) = (0, 0, 0, 0);
    let dropped = items.iter().map(|g| g.dropped as usize).sum();
    let mut la: BTreeMap<String, u64> = BTreeMap::new();
    let mut lb: BTreeMap<String, u64> = BTreeMap::new();
    for g in items {
        let oa = g.opinions.iter().find(|o| a.takes(who(o)));
        let ob = g
            .opinions
            .iter()
            .find(|o| b.takes(who(o)) && oa.is_none_or(|x| x.0 != o.0));
        let (oa, ob) = match (oa, ob) {
            (Some(x), Some(y)) => (x, y),
            (Some(_), None) => {
                only_a += 1;
                continue;
            }
            (None, Some(_)) => {
                only_b += 1;
                continue;
            }
            (None, None) => continue,
        };
        let offered_a = g
            .opinions
            .iter()
            .filter(|o| a.takes(who(o)) && o.0 != ob.0)
            .count();
        let offered_b = g
            .opinions
            .iter()
            .filter(|o| b.takes(who(o)) && o.0 != oa.0)
            .count();
        if offered_a > 1 || offered_b > 1 {
            several += 1;
        }
        // Grades outside 0..3 never reach here: sheets and gold sets with
        // them are refused by their readers, but a gold set may hold a
        // negative (unjudged) grade, which is no opinion to compare.
        let (Some(i), Some(j)) = (grade_index(oa.1), grade_index(ob.1)) else {
            unusable += 1;
            continue;
        };
        all[i][j] += 1;
        by_stratum
            .entry(&pairs.strata[g.stratum as usize])
            .or_insert([[0; GRADES]; GRADES])[i][j] += 1;
        *la.entry(who(oa).name()).or_default() += 1;
        *lb.entry(who(ob).name()).or_default() += 1;
    }
    let by_count = |m: BTreeMap<String, u64>| {
        let mut v: Vec<(String, u64)> = m.into_iter().collect();
        v.sort_by(|x, y| y.1.cmp(&x.1).then_with(|| x.0.cmp(&y.0)));
        v
    };
    Agreement {
        a: a.clone(),
        b: b.clone(),
        relevance_level,
        pairs: items.len(),
        only_a,
        only_b,
        several,
        dropped,
        unusable,
        labelers_a: by_count(la),
        labelers_b: by_count(lb),
        all: stats(all, relevance_level),
        strata: by_stratum
            .into_iter()
            .map(|(s, c)| (s.to_string(), stats(c, relevance_level)))
            .collect(),
    }
}

fn grade_index(g: i32) -> Option<usize> {
    usize::try_from(g).ok().filter(|&g| g < GRADES)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn matrix(pairs: &[(usize, usize)]) -> [[u64; GRADES]; GRADES] {
        let mut m = [[0; GRADES]; GRADES];
        for &(i, j) in pairs {
            m[i][j] += 1;
        }
        m
    }

    /// Worked by hand. Ten pairs (A, B): (0,0) (0,0) (0,1) (1,1) (1,2)
    /// (2,2) (2,2) (3,2) (3,3) (1,0).
    /// Exact: 6 of 10 the same -> 0.6.
    /// Relevant at level 1: A's grades 0,0,0,1,1,2,2,3,3,1 -> 7 relevant;
    /// B's 0,0,1,1,2,2,2,2,3,0 -> 7 relevant. Binary agreement: (0,0)x2
    /// neither, (0,1) no, (1,1) (1,2) (2,2)x2 (3,2) (3,3) both, (1,0) no
    /// -> 8 of 10.
    /// p_e = 0.7·0.7 + 0.3·0.3 = 0.58; kappa = (0.8 - 0.58) / 0.42 = 11/21.
    /// Weighted: Σ w O = (0,1):1 + (1,2):1 + (3,2):1 + (1,0):1 = 4.
    /// Row sums (A) r = [3,3,2,2], column sums (B) c = [3,2,4,1].
    /// Σ w r_i c_j / n = (Σ_i Σ_j (i-j)² r_i c_j) / 10:
    ///   i=0 (r=3): c·w = 3·0 + 2·1 + 4·4 + 1·9 = 27 -> 81
    ///   i=1 (r=3): 3·1 + 2·0 + 4·1 + 1·4 = 11 -> 33
    ///   i=2 (r=2): 3·4 + 2·1 + 4·0 + 1·1 = 15 -> 30
    ///   i=3 (r=2): 3·9 + 2·4 + 4·1 + 1·0 = 39 -> 78
    ///   total 222, /10 = 22.2; weighted kappa = 1 - 4/22.2 = 1 - 40/222 = 91/111.
    /// scikit-learn 1.x agrees (see tests/it/gold_agreement.rs for the
    /// command): cohen_kappa_score(a, b) on the relevant flags =
    /// 0.5238095238095238, with weights="quadratic", labels=[0,1,2,3] =
    /// 0.8198198198198198.
    #[test]
    fn kappas_match_the_hand_computed_values() {
        let m = matrix(&[
            (0, 0),
            (0, 0),
            (0, 1),
            (1, 1),
            (1, 2),
            (2, 2),
            (2, 2),
            (3, 2),
            (3, 3),
            (1, 0),
        ]);
        let s = stats(m, 1);
        assert_eq!(s.n, 10);
        assert_eq!(s.agreement, Some(0.6));
        let k = s.kappa.value().unwrap();
        assert!((k - 11.0 / 21.0).abs() < 1e-12, "{k}");
        let w = s.weighted_kappa.value().unwrap();
        assert!((w - 91.0 / 111.0).abs() < 1e-12, "{w}");
        assert_eq!((s.relevant_a, s.relevant_b), (Some(0.7), Some(0.7)));
    }

    #[test]
    fn kappa_is_undefined_not_nan_when_one_class_only() {
        // Both said "not relevant" (grade 0) to everything: neither kappa
        // is defined.
        let s = stats(matrix(&[(0, 0), (0, 0)]), 1);
        assert_eq!(s.agreement, Some(1.0));
        assert_eq!(
            s.kappa.reason(),
            Some("one class only: both sides called every pair not relevant")
        );
        assert_eq!(
            s.weighted_kappa.reason(),
            Some("one grade only: both sides gave every pair grade 0")
        );
        // Relevant everywhere, but grades vary: the graded kappa exists.
        // r = [0,1,1,0], c = [0,1,1,0]; Σ w O = 2 ((1,2) and (2,1)), Σ w r c / n
        // = (1·1·1 + 1·1·1) / 2 = 1; weighted kappa = 1 - 2 = -1.
        let s = stats(matrix(&[(1, 2), (2, 1)]), 1);
        assert!(s.kappa.reason().unwrap().contains("every pair relevant"));
        assert_eq!(s.weighted_kappa.value(), Some(-1.0));
        // Opposite classes: p_e = 0, kappa = (0 - 0) / 1 = 0.
        let s = stats(matrix(&[(0, 3), (0, 3)]), 1);
        assert_eq!(s.kappa.value(), Some(0.0));
        let s = stats([[0; GRADES]; GRADES], 1);
        assert_eq!((s.agreement, s.kappa.reason()), (None, Some("no pairs")));
    }

    fn op(grade: i32, source: &str, who: &str) -> Opinion {
        Opinion {
            grade,
            source: source.into(),
            labeler: Some(who.into()),
            ..Default::default()
        }
    }

    fn graded(items: &mut Pairs, q: &str, stratum: &str, ops: Vec<Opinion>) {
        items.add(Some((q, "c")), stratum, ops);
    }

    #[test]
    fn sides_pick_the_first_grade_they_take_by_a_different_author() {
        let mut items = Pairs::default();
        graded(
            &mut items,
            "q1",
            "s",
            vec![op(2, PERSON, "ana"), op(3, MODEL, "gpt")],
        );
        graded(
            &mut items,
            "q2",
            "s",
            vec![op(1, PERSON, "ana"), op(1, PERSON, "bo")],
        );
        graded(&mut items, "q3", "t", vec![op(0, MODEL, "gpt")]);
        graded(
            &mut items,
            "q4",
            "t",
            vec![op(0, PERSON, "ana"), op(2, MODEL, "gpt"), op(1, MODEL, "claude")],
        );
        let r = agreement(&items, &Side::Model, &Side::Person, 1);
        assert_eq!(r.all.n, 2);
        assert_eq!(r.all.confusion[3][2], 1);
        assert_eq!(r.all.confusion[2][0], 1);
        assert_eq!((r.only_a, r.only_b, r.several), (1, 1, 1));
        assert_eq!(r.labelers_a, [("gpt".to_string(), 2)]);
        assert_eq!(
            r.strata.iter().map(|s| s.0.as_str()).collect::<Vec<_>>(),
            ["s", "t"]
        );
        // person vs person: only q2 has two people.
        let r = agreement(&items, &Side::Person, &Side::Person, 1);
        assert_eq!((r.all.n, r.all.confusion[1][1]), (1, 1));
        assert_eq!(r.labelers_b, [("bo".to_string(), 1)]);
        // A named model against the people.
        let r = agreement(&items, &Side::parse("claude"), &Side::parse("person"), 1);
        assert_eq!((r.all.n, r.all.confusion[1][0]), (1, 1));
    }

    /// A pair given twice is one pair; an author's second grade of it is
    /// dropped and counted; authors and strata are held once each.
    #[test]
    fn a_pair_given_twice_is_one_and_names_are_held_once() {
        let mut items = Pairs::default();
        graded(&mut items, "q1", "s", vec![op(2, PERSON, "ana")]);
        graded(
            &mut items,
            "q1",
            "s",
            vec![op(3, PERSON, "ana"), op(1, MODEL, "gpt")],
        );
        graded(
            &mut items,
            "q2",
            "",
            vec![op(0, MODEL, "gpt"), op(0, PERSON, "ana")],
        );
        items.done();
        assert_eq!(items.items.len(), 2);
        assert_eq!(items.items[0].opinions, [(0, 2), (1, 1)]);
        assert_eq!(items.items[0].dropped, 1);
        assert_eq!(items.authors.len(), 2);
        assert_eq!(items.strata, ["s", DEFAULT_STRATUM]);
        let r = agreement(&items, &Side::Model, &Side::Person, 1);
        assert_eq!((r.pairs, r.all.n, r.dropped), (2, 2, 1));
        assert_eq!((r.all.confusion[1][2], r.all.confusion[0][0]), (1, 1));
    }
}
