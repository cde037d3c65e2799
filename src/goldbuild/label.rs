//! The interactive labeler's state, apart from any terminal: where the
//! cursor is, what each key does, and what undo restores. The command layer
//! draws it and feeds it keys; tests drive it directly.

use super::sheet::{SheetRow, PERSON};

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

pub struct Session {
    pub rows: Vec<SheetRow>,
    pub cursor: usize,
    labeler: String,
    /// (row, its state before the change), newest last.
    undo: Vec<(usize, SheetRow)>,
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
        }
    }

    pub fn labeled(&self) -> usize {
        self.rows.iter().filter(|r| r.is_persons()).count()
    }

    pub fn done(&self) -> bool {
        self.rows.iter().all(|r| r.is_persons())
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
                self.undo.push((self.cursor, row.clone()));
                row.grade = Some(g);
                row.source = Some(PERSON.into());
                row.labeler = Some(self.labeler.clone());
                row.verified = true;
                row.labeled_at = Some(now.to_string());
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
            Key::Undo => match self.undo.pop() {
                Some((i, before)) => {
                    self.rows[i] = before;
                    self.cursor = i;
                    Effect::Save
                }
                None => Effect::Nothing,
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
                labeled_at: None,
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

    #[test]
    fn keys_are_specs() {
        assert_eq!(Key::from_char('3'), Some(Key::Grade(3)));
        assert_eq!(Key::from_char('4'), None);
        assert_eq!(Key::from_char('q'), Some(Key::Quit));
    }
}
