//! The interactive labeler's state, apart from any terminal: where the
//! cursor is, what each key does, what undo restores, and how a save
//! merges this person's edits into the sheet others save to as well. The
//! command layer draws it and feeds it keys; tests drive it directly.

use super::sheet::{Opinion, SheetRow, PERSON};

/// What a key asks for.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Key {
    Grade(i32),
    Skip,
    Undo,
    Next,
    Previous,
    Quit,
}

impl Key {
    /// SPEC's keys: `0`-`3` grade, `s` skip, `u` undo, `n`/`p` next and
    /// previous, `q` save and quit.
    pub fn from_char(c: char) -> Option<Key> {
        Some(match c {
            '0'..='3' => Key::Grade(c as i32 - '0' as i32),
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
    /// The person graded the row: `row` as it is now.
    Grade(SheetRow),
    /// The person undid a change: the row goes back to `to`, if the sheet
    /// still holds `from` (what the undone change wrote).
    Undo { from: Box<SheetRow>, to: Box<SheetRow> },
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
/// person's grade replaces a model's suggestion or no grade; another
/// person's different grade is a [`Conflict`] and stays (the same grade is
/// no conflict); an undo applies only where the sheet still holds what the
/// undone change wrote. Returns whether `disk` changed, and the conflicts.
pub fn merge(disk: &mut [SheetRow], edits: &[Edit]) -> (bool, Vec<Conflict>) {
    let at: std::collections::HashMap<RowKey, usize> =
        disk.iter().enumerate().map(|(i, r)| (key_of(r), i)).collect();
    let mut changed = false;
    let mut conflicts = Vec::new();
    for e in edits {
        match e {
            Edit::Grade(ours) => {
                // A row removed from the sheet meanwhile has nowhere to go.
                let Some(&i) = at.get(&key_of(ours)) else { continue };
                let d = &mut disk[i];
                if d == ours {
                    continue;
                }
                if d.is_persons() && d.labeler != ours.labeler {
                    if d.grade != ours.grade {
                        conflicts.push(Conflict {
                            query_id: d.query_id.clone(),
                            chunk_id: d.chunk_id.clone(),
                            theirs: (d.grade.unwrap_or_default(), labeler_name(d)),
                            ours: (ours.grade.unwrap_or_default(), labeler_name(ours)),
                        });
                    }
                    continue;
                }
                *d = ours.clone();
                changed = true;
            }
            Edit::Undo { from, to } => {
                let Some(&i) = at.get(&key_of(to)) else { continue };
                if disk[i] == **from {
                    disk[i] = (**to).clone();
                    changed = true;
                }
            }
        }
    }
    (changed, conflicts)
}

fn labeler_name(r: &SheetRow) -> String {
    r.labeler.clone().unwrap_or_else(|| PERSON.to_string())
}

pub struct Session {
    pub rows: Vec<SheetRow>,
    pub cursor: usize,
    labeler: String,
    /// (row, its state before the change, what the change wrote), newest
    /// last.
    undo: Vec<(RowKey, SheetRow, SheetRow)>,
    /// Changes not saved yet, oldest first.
    pending: Vec<Edit>,
    /// Conflicts met by this session's saves, for the screen and the end.
    pub conflicts: Vec<Conflict>,
}

impl Session {
    /// Starts at the first row no person has graded yet, so a stopped
    /// session resumes where it left off.
    pub fn new(rows: Vec<SheetRow>, labeler: impl Into<String>) -> Session {
        let cursor = rows.iter().position(|r| !r.is_persons()).unwrap_or(0);
        Session {
            rows,
            cursor,
            labeler: labeler.into(),
            undo: Vec::new(),
            pending: Vec::new(),
            conflicts: Vec::new(),
        }
    }

    pub fn labeled(&self) -> usize {
        self.rows.iter().filter(|r| r.is_persons()).count()
    }

    pub fn done(&self) -> bool {
        self.rows.iter().all(|r| r.is_persons())
    }

    /// The changes made since the last call, for the caller to save.
    pub fn take_edits(&mut self) -> Vec<Edit> {
        std::mem::take(&mut self.pending)
    }

    /// Takes the sheet as a save found it (with other people's and
    /// `gold suggest`'s work in it) and the conflicts that save met. The
    /// cursor stays on its row; a row another person graded meanwhile is
    /// skipped.
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
        let other_persons = self
            .rows
            .get(self.cursor)
            .is_some_and(|r| r.is_persons() && r.labeler.as_deref() != Some(self.labeler.as_str()));
        if other_persons {
            self.advance();
        }
    }

    /// `now` is the time to record with a grade (RFC 3339, UTC).
    pub fn press(&mut self, key: Key, now: &str) -> Effect {
        if self.rows.is_empty() {
            return if key == Key::Quit {
                Effect::Quit
            } else {
                Effect::Nothing
            };
        }
        match key {
            Key::Grade(g) => {
                let row = &mut self.rows[self.cursor];
                let before = row.clone();
                row.give(Opinion {
                    grade: g,
                    source: PERSON.into(),
                    labeler: Some(self.labeler.clone()),
                    prompt: None,
                    labeled_at: Some(now.to_string()),
                });
                self.undo.push((key_of(row), before, row.clone()));
                self.pending.push(Edit::Grade(row.clone()));
                self.advance();
                Effect::Save
            }
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
                let Some((k, before, wrote)) = self.undo.pop() else {
                    return Effect::Nothing;
                };
                // A row gone from the sheet since, or holding someone
                // else's grade now (a conflict kept theirs): nothing of
                // ours to undo there; undo the change before.
                let Some(i) = self.rows.iter().position(|r| key_of(r) == k && *r == wrote) else {
                    continue;
                };
                self.rows[i] = before.clone();
                self.pending.push(Edit::Undo {
                    from: Box::new(wrote),
                    to: Box::new(before),
                });
                self.cursor = i;
                return Effect::Save;
            },
            Key::Quit => Effect::Quit,
        }
    }

    /// To the next row no person has graded, wrapping around; stays put when
    /// every row is graded.
    fn advance(&mut self) {
        let n = self.rows.len();
        for step in 1..=n {
            let i = (self.cursor + step) % n;
            if !self.rows[i].is_persons() {
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
    use crate::goldbuild::sheet::MODEL;

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

    #[test]
    fn keys_are_specs() {
        assert_eq!(Key::from_char('3'), Some(Key::Grade(3)));
        assert_eq!(Key::from_char('4'), None);
        assert_eq!(Key::from_char('q'), Some(Key::Quit));
    }
}
