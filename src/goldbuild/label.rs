//! The interactive labeler's state, apart from any terminal: where the
//! cursor is, what each key does, what undo restores, and how a save
//! merges this person's edits into the sheet others save to as well. The
//! command layer draws it and feeds it keys; tests drive it directly.
//!
//! Every grade goes through [`SheetRow::give`], so nothing another source
//! gave is lost: accepting a model's suggestion makes it the person's
//! (verified) grade and keeps the model's as an opinion, and a blind
//! session ([`Session::blind`]) adds a second person's grade beside the
//! first one's, for `gold agreement` to compare. A blind labeler sees no
//! other grade: an agreement measured after seeing the first grade
//! measures anchoring, not agreement (Cohen 1960 assumes independent
//! raters).

use super::sheet::{Opinion, SheetRow, MODEL, PERSON};

/// What a key asks for.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Key {
    Grade(i32),
    /// Take the model's suggestion on this row as this person's grade.
    Accept,
    Skip,
    Undo,
    Next,
    Previous,
    Quit,
}

impl Key {
    /// SPEC's keys: `0`-`3` grade, `s` skip, `u` undo, `n`/`p` next and
    /// previous, `q` save and quit; and `a`, accept the model's suggestion
    /// (Enter too, in the terminal).
    pub fn from_char(c: char) -> Option<Key> {
        Some(match c {
            '0'..='3' => Key::Grade(c as i32 - '0' as i32),
            'a' => Key::Accept,
            's' => Key::Skip,
            'u' => Key::Undo,
            'n' => Key::Next,
            'p' => Key::Previous,
            'q' => Key::Quit,
            _ => return None,
        })
    }
}

/// What the caller must do after a key.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Effect {
    /// The sheet changed: save it before anything else.
    Save,
    /// Only the cursor moved.
    Moved,
    /// Nothing to do (e.g. undo with nothing to undo).
    Nothing,
    Quit,
}

/// A row's identity in the sheet: its (query id, chunk id).
type RowKey = (String, String);

fn key_of(r: &SheetRow) -> RowKey {
    (r.query_id.clone(), r.chunk_id.clone())
}

/// One change a session made to a row, kept until it is saved: a save
/// merges these into the sheet as it is on disk (see [`merge`]) instead of
/// writing the session's copy of every row over what others saved.
#[derive(Debug, Clone, PartialEq)]
pub enum Edit {
    /// The person graded the row (query id, chunk id): `grade` is given to
    /// the row on disk by [`SheetRow::give`], so grades others saved to it
    /// meanwhile stay. `blind`: a second opinion, never a conflict.
    Grade {
        key: (String, String),
        grade: Opinion,
        blind: bool,
    },
    /// The person undid a grade: `mine` is withdrawn from the row, and
    /// `restore` (this person's grade before it, if any) given back, if
    /// the row still holds `mine` (see [`withdraw`]).
    Undo {
        key: (String, String),
        mine: Opinion,
        restore: Option<Opinion>,
    },
}

/// Two people's different grades for one row: the one saved first stays.
#[derive(Debug, Clone, PartialEq)]
pub struct Conflict {
    pub query_id: String,
    pub chunk_id: String,
    /// The grade in the sheet, and who gave it.
    pub theirs: (i32, String),
    /// This session's grade, not saved.
    pub ours: (i32, String),
}

impl Conflict {
    pub fn describe(&self) -> String {
        format!(
            "`{}/{}`: {} graded it {}, {} graded it {}; {}'s grade, saved first, stays",
            self.query_id,
            self.chunk_id,
            self.theirs.1,
            self.theirs.0,
            self.ours.1,
            self.ours.0,
            self.theirs.1
        )
    }
}

/// Merges a session's edits into `disk` (the sheet as it is now). A
/// person's grade replaces a model's suggestion or no grade (the model's
/// kept as an opinion); another person's different grade is a [`Conflict`]
/// and stays (the same grade is no conflict), except in a blind session,
/// where it is the second opinion the session is for; an undo applies only
/// where the sheet still holds the undone grade. Returns whether `disk`
/// changed, and the conflicts.
pub fn merge(disk: &mut [SheetRow], edits: &[Edit]) -> (bool, Vec<Conflict>) {
    let at: std::collections::HashMap<RowKey, usize> =
        disk.iter().enumerate().map(|(i, r)| (key_of(r), i)).collect();
    let mut changed = false;
    let mut conflicts = Vec::new();
    for e in edits {
        match e {
            Edit::Grade { key, grade, blind } => {
                // A row removed from the sheet meanwhile has nowhere to go.
                let Some(&i) = at.get(key) else { continue };
                let d = &mut disk[i];
                if !blind && d.is_persons() && d.labeler != grade.labeler {
                    if d.grade != Some(grade.grade) {
                        conflicts.push(Conflict {
                            query_id: d.query_id.clone(),
                            chunk_id: d.chunk_id.clone(),
                            theirs: (d.grade.unwrap_or_default(), labeler_name(d)),
                            ours: (
                                grade.grade,
                                grade.labeler.clone().unwrap_or_else(|| PERSON.into()),
                            ),
                        });
                    }
                    continue;
                }
                let before = d.clone();
                d.give(grade.clone());
                changed |= *d != before;
            }
            Edit::Undo { key, mine, restore } => {
                let Some(&i) = at.get(key) else { continue };
                changed |= withdraw(&mut disk[i], mine, restore.as_ref());
            }
        }
    }
    (changed, conflicts)
}

/// Takes `mine` back from a row: gone from where it is (the row's own
/// grade or an opinion), `restore` given in its place. When it was the
/// row's own grade, the remaining grades are given again in their order,
/// so [`SheetRow::give`]'s rule picks the effective one (a model's
/// suggestion it displaced comes back; another person's grade beside it
/// takes its place). Returns false, changing nothing, when the row no
/// longer holds `mine` (someone changed it since).
pub fn withdraw(row: &mut SheetRow, mine: &Opinion, restore: Option<&Opinion>) -> bool {
    if row.own().as_ref() == Some(mine) {
        let mut rest: Vec<Opinion> = std::mem::take(&mut row.opinions);
        if let Some(r) = restore {
            rest.insert(0, r.clone());
        }
        row.grade = None;
        row.source = None;
        row.labeler = None;
        row.verified = false;
        row.prompt = None;
        row.labeled_at = None;
        for o in rest {
            row.give(o);
        }
        return true;
    }
    let Some(at) = row.opinions.iter().position(|o| o == mine) else {
        return false;
    };
    match restore {
        Some(r) => row.opinions[at] = r.clone(),
        None => {
            row.opinions.remove(at);
        }
    }
    true
}

fn labeler_name(r: &SheetRow) -> String {
    r.labeler.clone().unwrap_or_else(|| PERSON.to_string())
}

pub struct Session {
    pub rows: Vec<SheetRow>,
    pub cursor: usize,
    labeler: String,
    /// A second opinion: other sources' grades hidden, rows counted done
    /// when this labeler graded them, another person's grade no conflict.
    blind: bool,
    /// (row, the grade given, this labeler's grade before it), newest last.
    undo: Vec<(RowKey, Opinion, Option<Opinion>)>,
    /// Changes not saved yet, oldest first.
    pending: Vec<Edit>,
    /// Conflicts met by this session's saves, for the screen and the end.
    pub conflicts: Vec<Conflict>,
}

impl Session {
    /// Starts at the first row still to label, so a stopped session resumes
    /// where it left off.
    pub fn new(rows: Vec<SheetRow>, labeler: impl Into<String>) -> Session {
        Session::with_mode(rows, labeler.into(), false)
    }

    /// A blind session: see [`Session::blind`].
    pub fn blind(rows: Vec<SheetRow>, labeler: impl Into<String>) -> Session {
        Session::with_mode(rows, labeler.into(), true)
    }

    fn with_mode(rows: Vec<SheetRow>, labeler: String, blind: bool) -> Session {
        let mut s = Session {
            rows,
            cursor: 0,
            labeler,
            blind,
            undo: Vec::new(),
            pending: Vec::new(),
            conflicts: Vec::new(),
        };
        s.cursor = (0..s.rows.len()).find(|&i| s.to_do(&s.rows[i])).unwrap_or(0);
        s
    }

    pub fn is_blind(&self) -> bool {
        self.blind
    }

    /// This labeler's grade on a row, if any (own or an opinion).
    pub fn mine(&self, r: &SheetRow) -> Option<Opinion> {
        r.all_opinions()
            .find(|o| o.source == PERSON && o.labeler.as_deref() == Some(self.labeler.as_str()))
    }

    /// Whether a row still waits for this session: no person's grade (or,
    /// blind, none of this labeler's).
    fn to_do(&self, r: &SheetRow) -> bool {
        if self.blind {
            self.mine(r).is_none()
        } else {
            !r.is_persons()
        }
    }

    /// The model's suggestion on a row, when its grade is one no person
    /// has given yet: what [`Key::Accept`] takes. None in a blind session,
    /// which shows no other grade.
    pub fn suggestion(&self, r: &SheetRow) -> Option<Opinion> {
        if self.blind {
            return None;
        }
        r.own().filter(|o| o.source == MODEL)
    }

    pub fn labeled(&self) -> usize {
        self.rows.iter().filter(|r| !self.to_do(r)).count()
    }

    pub fn done(&self) -> bool {
        self.rows.iter().all(|r| !self.to_do(r))
    }

    /// The changes made since the last call, for the caller to save.
    pub fn take_edits(&mut self) -> Vec<Edit> {
        std::mem::take(&mut self.pending)
    }

    /// Takes the sheet as a save found it (with other people's and
    /// `gold suggest`'s work in it) and the conflicts that save met. The
    /// cursor stays on its row; a row another person graded meanwhile is
    /// skipped (not in a blind session: there the row still waits for this
    /// labeler).
    pub fn refresh(&mut self, rows: Vec<SheetRow>, conflicts: Vec<Conflict>) {
        self.conflicts.extend(conflicts);
        if rows.is_empty() {
            // Someone emptied the sheet: nothing to show instead, and the
            // edits still to come have nowhere to go but are harmless.
            return;
        }
        let here = self.rows.get(self.cursor).map(key_of);
        self.rows = rows;
        self.cursor = here
            .and_then(|k| self.rows.iter().position(|r| key_of(r) == k))
            .unwrap_or(0)
            .min(self.rows.len().saturating_sub(1));
        let other_persons = !self.blind
            && self
                .rows
                .get(self.cursor)
                .is_some_and(|r| r.is_persons() && r.labeler.as_deref() != Some(self.labeler.as_str()));
        if other_persons {
            self.advance();
        }
    }

    /// `now` is the time to record with a grade (RFC 3339, UTC).
    /// [`Effect::Nothing`] for a key with nothing to act on (undo with
    /// nothing to undo, accept on a row without a suggestion), so the
    /// caller can say why.
    pub fn press(&mut self, key: Key, now: &str) -> Effect {
        if self.rows.is_empty() {
            return if key == Key::Quit {
                Effect::Quit
            } else {
                Effect::Nothing
            };
        }
        match key {
            Key::Grade(g) => self.grade(g, now),
            Key::Accept => match self.suggestion(&self.rows[self.cursor]) {
                Some(s) => self.grade(s.grade, now),
                None => Effect::Nothing,
            },
            Key::Skip => {
                self.advance();
                Effect::Moved
            }
            Key::Next => {
                if self.cursor + 1 < self.rows.len() {
                    self.cursor += 1;
                }
                Effect::Moved
            }
            Key::Previous => {
                self.cursor = self.cursor.saturating_sub(1);
                Effect::Moved
            }
            Key::Undo => loop {
                let Some((k, mine, restore)) = self.undo.pop() else {
                    return Effect::Nothing;
                };
                // A row gone from the sheet since, or no longer holding
                // this grade (a conflict kept theirs, someone edited it):
                // nothing of ours to undo there; undo the change before.
                let Some(i) = self.rows.iter().position(|r| key_of(r) == k) else {
                    continue;
                };
                if !withdraw(&mut self.rows[i], &mine, restore.as_ref()) {
                    continue;
                }
                self.pending.push(Edit::Undo {
                    key: k,
                    mine,
                    restore,
                });
                self.cursor = i;
                return Effect::Save;
            },
            Key::Quit => Effect::Quit,
        }
    }

    fn grade(&mut self, g: i32, now: &str) -> Effect {
        let before = self.mine(&self.rows[self.cursor]);
        let o = Opinion {
            grade: g,
            source: PERSON.into(),
            labeler: Some(self.labeler.clone()),
            prompt: None,
            labeled_at: Some(now.to_string()),
        };
        let row = &mut self.rows[self.cursor];
        row.give(o.clone());
        let key = key_of(row);
        self.undo.push((key.clone(), o.clone(), before));
        self.pending.push(Edit::Grade {
            key,
            grade: o,
            blind: self.blind,
        });
        self.advance();
        Effect::Save
    }

    /// To the next row still to label, wrapping around; stays put when
    /// every row is done.
    fn advance(&mut self) {
        let n = self.rows.len();
        for step in 1..=n {
            let i = (self.cursor + step) % n;
            if self.to_do(&self.rows[i]) {
                self.cursor = i;
                return;
            }
        }
        if self.cursor + 1 < n {
            self.cursor += 1;
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn rows(n: usize) -> Vec<SheetRow> {
        (0..n)
            .map(|i| SheetRow {
                query_id: "q".into(),
                query: String::new(),
                stratum: "s".into(),
                chunk_id: format!("c{i}"),
                text: None,
                grade: None,
                source: None,
                labeler: None,
                verified: false,
                ..Default::default()
            })
            .collect()
    }

    #[test]
    fn grade_skip_undo_resume() {
        let mut r = rows(3);
        // A model's suggestion is not a person's grade: the session starts there.
        r[0].grade = Some(1);
        r[0].source = Some(MODEL.into());
        let mut s = Session::new(r, "ana");
        assert_eq!(s.cursor, 0);
        assert_eq!(s.press(Key::Grade(2), "t1"), Effect::Save);
        assert_eq!(
            (s.rows[0].grade, s.rows[0].verified, s.cursor),
            (Some(2), true, 1)
        );
        assert_eq!(s.rows[0].labeler.as_deref(), Some("ana"));
        assert_eq!(s.press(Key::Skip, "t"), Effect::Moved);
        assert_eq!(s.cursor, 2);
        assert_eq!(s.press(Key::Grade(0), "t2"), Effect::Save);
        // Back to the skipped row, the only one left.
        assert_eq!(s.cursor, 1);
        assert_eq!(s.press(Key::Undo, "t"), Effect::Save);
        assert_eq!((s.cursor, s.rows[2].grade), (2, None));
        assert_eq!(s.press(Key::Undo, "t"), Effect::Save);
        assert_eq!(s.rows[0].source.as_deref(), Some(MODEL));
        assert_eq!(s.press(Key::Undo, "t"), Effect::Nothing);
        // Resume: a new session starts at the first row not graded by a person.
        let mut done = rows(2);
        done[0].grade = Some(1);
        done[0].source = Some(PERSON.into());
        assert_eq!(Session::new(done, "ana").cursor, 1);
    }

    /// Two sessions opened on one sheet, each saving by merging its edits
    /// into what the other saved: both keep their grades, a model's
    /// suggestion gives way, and the same row graded differently by both is
    /// a conflict that keeps the first save.
    #[test]
    fn two_sessions_merge_their_edits_and_report_a_conflict() {
        let mut disk = rows(4);
        disk[3].grade = Some(1);
        disk[3].source = Some(MODEL.into());
        let mut ana = Session::new(disk.clone(), "ana");
        let mut bo = Session::new(disk.clone(), "bo");
        ana.press(Key::Grade(2), "t"); // c0
        ana.press(Key::Grade(3), "t"); // c1
        let (changed, conflicts) = merge(&mut disk, &ana.take_edits());
        assert!(changed && conflicts.is_empty());
        // Bo's session still shows c0 and c1 ungraded; bo grades c0 the
        // same as ana (no conflict), c2, and c3 over the model.
        bo.press(Key::Grade(2), "t"); // c0
        bo.press(Key::Next, "t");
        bo.press(Key::Grade(1), "t"); // c2
        bo.press(Key::Grade(0), "t"); // c3
        let (changed, conflicts) = merge(&mut disk, &bo.take_edits());
        assert!(changed && conflicts.is_empty(), "{conflicts:?}");
        let got: Vec<(Option<i32>, Option<&str>)> =
            disk.iter().map(|r| (r.grade, r.labeler.as_deref())).collect();
        assert_eq!(
            got,
            [
                (Some(2), Some("ana")),
                (Some(3), Some("ana")),
                (Some(1), Some("bo")),
                (Some(0), Some("bo"))
            ]
        );
        // Bo, not yet refreshed, grades c1 differently from ana.
        bo.cursor = 1;
        bo.press(Key::Grade(0), "t");
        let before = disk.clone();
        let (changed, conflicts) = merge(&mut disk, &bo.take_edits());
        assert!(!changed);
        assert_eq!(disk, before);
        assert_eq!(conflicts.len(), 1);
        assert_eq!(
            conflicts[0].describe(),
            "`q/c1`: ana graded it 3, bo graded it 0; ana's grade, saved first, stays"
        );
        // Bo's undo now finds ana's grade there, not bo's: nothing to undo
        // on that row, so it undoes bo's change before (c3 back to the model).
        bo.refresh(disk.clone(), conflicts);
        assert_eq!(bo.press(Key::Undo, "t"), Effect::Save);
        merge(&mut disk, &bo.take_edits());
        assert_eq!(
            (disk[1].grade, disk[1].labeler.as_deref()),
            (Some(3), Some("ana"))
        );
        assert_eq!((disk[3].grade, disk[3].source.as_deref()), (Some(1), Some(MODEL)));
        // An undo whose row someone changed since leaves it alone.
        let mut cy = Session::new(disk.clone(), "cy");
        cy.cursor = 3;
        cy.press(Key::Grade(2), "t");
        merge(&mut disk, &cy.take_edits());
        disk[3].grade = Some(1);
        disk[3].labeler = Some("dee".into());
        cy.press(Key::Undo, "t");
        let (changed, _) = merge(&mut disk, &cy.take_edits());
        assert!(!changed);
        assert_eq!(disk[3].labeler.as_deref(), Some("dee"));
    }

    #[test]
    fn a_refresh_moves_past_another_persons_row_and_survives_an_emptied_sheet() {
        let mut s = Session::new(rows(3), "ana");
        assert_eq!(s.cursor, 0);
        let mut disk = rows(3);
        disk[0].grade = Some(2);
        disk[0].source = Some(PERSON.into());
        disk[0].labeler = Some("bo".into());
        s.refresh(disk, Vec::new());
        assert_eq!((s.cursor, s.labeled()), (1, 1));
        s.refresh(Vec::new(), Vec::new());
        assert_eq!((s.rows.len(), s.cursor), (3, 1));
    }

    /// `a` takes the model's suggestion as this person's verified grade,
    /// the model's grade kept as an opinion; on a row with no suggestion
    /// it does nothing (the screen says why); undo brings the suggestion
    /// back as the row's grade.
    #[test]
    fn accept_takes_the_suggestion_and_keeps_the_models_grade() {
        let mut r = rows(2);
        r[0].grade = Some(2);
        r[0].source = Some(MODEL.into());
        r[0].labeler = Some("gpt".into());
        let mut disk = r.clone();
        let mut s = Session::new(r, "ana");
        assert_eq!(s.press(Key::Accept, "t1"), Effect::Save);
        let row = &s.rows[0];
        assert_eq!(
            (
                row.grade,
                row.source.as_deref(),
                row.labeler.as_deref(),
                row.verified
            ),
            (Some(2), Some(PERSON), Some("ana"), true)
        );
        assert_eq!(row.opinions.len(), 1);
        assert_eq!(
            (row.opinions[0].grade, row.opinions[0].labeler.as_deref()),
            (2, Some("gpt"))
        );
        // On to row 1, which has no suggestion.
        assert_eq!(s.cursor, 1);
        assert_eq!(s.press(Key::Accept, "t"), Effect::Nothing);
        let (changed, _) = merge(&mut disk, &s.take_edits());
        assert!(changed);
        assert_eq!(disk[0], s.rows[0]);
        assert_eq!(s.press(Key::Undo, "t"), Effect::Save);
        merge(&mut disk, &s.take_edits());
        assert_eq!(
            (
                disk[0].grade,
                disk[0].source.as_deref(),
                disk[0].verified,
                disk[0].opinions.len()
            ),
            (Some(2), Some(MODEL), false, 0)
        );
    }

    /// A blind session shows no suggestion, counts only this labeler's
    /// rows as done, and its grade on a row another person graded goes
    /// beside theirs (no conflict), through a merge with the sheet as the
    /// first person saved it; undo takes only the blind grade back.
    #[test]
    fn blind_adds_a_second_opinion_beside_the_first_persons() {
        let mut disk = rows(3);
        disk[0].give(Opinion {
            grade: 3,
            source: PERSON.into(),
            labeler: Some("ana".into()),
            ..Default::default()
        });
        disk[1].give(Opinion {
            grade: 1,
            source: MODEL.into(),
            labeler: Some("gpt".into()),
            ..Default::default()
        });
        let mut bo = Session::blind(disk.clone(), "bo");
        // Ana's row still waits for bo: it is where the session starts.
        assert_eq!((bo.cursor, bo.labeled()), (0, 0));
        assert!(bo.suggestion(&bo.rows[1]).is_none());
        assert_eq!(bo.press(Key::Grade(0), "t1"), Effect::Save); // c0
        assert_eq!(bo.press(Key::Accept, "t"), Effect::Nothing); // c1: nothing shown to accept
        assert_eq!(bo.press(Key::Grade(2), "t2"), Effect::Save); // c1
        assert_eq!(bo.labeled(), 2);
        let (changed, conflicts) = merge(&mut disk, &bo.take_edits());
        assert!(changed && conflicts.is_empty(), "{conflicts:?}");
        // Ana's grade stands; bo's is an opinion beside it.
        assert_eq!(
            (disk[0].grade, disk[0].labeler.as_deref()),
            (Some(3), Some("ana"))
        );
        let bo_c0: Vec<(i32, Option<&str>)> = disk[0]
            .opinions
            .iter()
            .map(|o| (o.grade, o.labeler.as_deref()))
            .collect();
        assert_eq!(bo_c0, [(0, Some("bo"))]);
        // On the model's row bo displaced the model, which is kept.
        assert_eq!((disk[1].grade, disk[1].labeler.as_deref()), (Some(2), Some("bo")));
        assert_eq!(disk[1].opinions[0].labeler.as_deref(), Some("gpt"));
        // Undo of c1 brings the model's grade back; of c0 removes bo's opinion.
        bo.refresh(disk.clone(), Vec::new());
        assert_eq!(bo.press(Key::Undo, "t"), Effect::Save);
        assert_eq!(bo.press(Key::Undo, "t"), Effect::Save);
        merge(&mut disk, &bo.take_edits());
        assert_eq!((disk[1].grade, disk[1].source.as_deref()), (Some(1), Some(MODEL)));
        assert!(disk[1].opinions.is_empty());
        assert_eq!((disk[0].grade, disk[0].opinions.len()), (Some(3), 0));
    }

    #[test]
    fn keys_are_specs() {
        assert_eq!(Key::from_char('3'), Some(Key::Grade(3)));
        assert_eq!(Key::from_char('4'), None);
        assert_eq!(Key::from_char('q'), Some(Key::Quit));
        assert_eq!(Key::from_char('a'), Some(Key::Accept));
    }
}
