//! Python's dicts and lists of ids, scores and grades, read into the
//! library's in-memory inputs with no Python object made per value.
//!
//! A 70,000 x 100 run is 7 million ids: read through PyO3's `extract`
//! each costs a reference taken and dropped and, under the limited API of
//! CPython 3.9 (abi3, SPEC "Python API"), a new `bytes` object, since
//! `PyUnicode_AsUTF8AndSize` joined the limited API only in 3.10. Here a
//! dict is walked with `PyDict_Next` (borrowed items), a str's text is
//! copied out with `PyUnicode_AsUCS4` (limited API since 3.3) into one
//! reused buffer and written as UTF-8 into the query's packed ids, and a
//! float is read with `PyFloat_AsDouble`, the call `extract::<f64>` makes,
//! so values are bit for bit what the slower path read.
//!
//! Only exact strs (and str subclasses), exact floats and exact ints are
//! read this way: anything else (an int id, a numpy float, a grade of 2.0)
//! goes through `crate::key`, `crate::score` and `crate::grade`, which
//! read what they always read and name the query and document of a value
//! they refuse. Those may run Python code (`__index__`, `__float__`), which
//! could change the dict being read: the value is held by a reference of
//! our own while they run, and a container whose size changed meanwhile is
//! refused, as Python's own iteration refuses it.
//!
//! Reading 7 million values takes seconds with the GIL held, so every
//! [`TICK_EVERY`] values the reader runs `PyErr_CheckSignals`: a Ctrl-C is
//! raised as `KeyboardInterrupt` while a large dict is read, not after.
//! Signal handlers are Python code too, so a check counts as a slow path.

use pyo3::ffi;
use pyo3::prelude::*;
use pyo3::types::{PyDict, PyList};

/// Gold labels per query as read from a dict: `(query, [(doc, grade)])`.
type GradedGold = Vec<(String, Vec<(String, i32)>)>;

use rgate::run::memory::{Packed, Ranked, RowsBuilder};

use crate::{bad, in_context};

/// What a container's size must stay while it is read.
fn unchanged(now: ffi::Py_ssize_t, was: ffi::Py_ssize_t, what: &str) -> PyResult<()> {
    if now == was {
        Ok(())
    } else {
        Err(bad(format!(
            "{what} changed size while rgate read it (a value's __index__ or __float__ changed it)"
        )))
    }
}

/// How many values are read between two looks for a signal: a look costs
/// a call into libpython, and 65,536 values take a few milliseconds.
const TICK_EVERY: u32 = 1 << 16;

/// Reads ids, scores and grades; keeps its buffers between values.
pub struct Reader<'py> {
    py: Python<'py>,
    ucs4: Vec<ffi::Py_UCS4>,
    /// How many times a slow path ran (and with it, perhaps, Python
    /// code): a loop whose count moved checks its container's size.
    slow: u64,
    /// Values read since the last look for a signal.
    since_signals: u32,
}

impl<'py> Reader<'py> {
    pub fn new(py: Python<'py>) -> Self {
        Reader {
            py,
            ucs4: Vec::new(),
            slow: 0,
            since_signals: 0,
        }
    }

    /// Runs pending signal handlers every [`TICK_EVERY`] calls; their
    /// exception (`KeyboardInterrupt`) ends the read. Called where no
    /// borrowed item is held.
    fn tick(&mut self) -> PyResult<()> {
        self.since_signals += 1;
        if self.since_signals < TICK_EVERY {
            return Ok(());
        }
        self.since_signals = 0;
        // A handler is Python code: it may have changed what is read.
        self.slow += 1;
        self.py.check_signals()
    }

    /// Appends the text of `obj` as UTF-8 when it is a str that UTF-8 can
    /// hold; appends nothing and says false otherwise (not a str, or a str
    /// with a lone surrogate).
    ///
    /// # Safety
    /// `obj` is a live object and the GIL is held.
    unsafe fn append_str(&mut self, obj: *mut ffi::PyObject, out: &mut String) -> bool {
        unsafe {
            if ffi::PyUnicode_CheckExact(obj) == 0 && ffi::PyUnicode_Check(obj) == 0 {
                return false;
            }
            let n = ffi::PyUnicode_GetLength(obj);
            if n < 0 {
                ffi::PyErr_Clear();
                return false;
            }
            let n = n as usize;
            self.ucs4.clear();
            self.ucs4.reserve(n);
            if n > 0 {
                // Writes exactly n code points (no NUL: copy_null 0).
                if ffi::PyUnicode_AsUCS4(obj, self.ucs4.as_mut_ptr(), n as ffi::Py_ssize_t, 0).is_null() {
                    ffi::PyErr_Clear();
                    return false;
                }
                self.ucs4.set_len(n);
            }
        }
        let start = out.len();
        out.reserve(self.ucs4.len());
        for &c in &self.ucs4 {
            if c < 0x80 {
                out.push(c as u8 as char);
            } else if let Some(ch) = char::from_u32(c) {
                out.push(ch);
            } else {
                out.truncate(start);
                return false;
            }
        }
        true
    }

    /// `obj`'s id text, appended to `out`.
    ///
    /// # Safety
    /// As [`Reader::append_str`].
    unsafe fn id(&mut self, obj: *mut ffi::PyObject, what: &str, out: &mut String) -> PyResult<()> {
        if unsafe { self.append_str(obj, out) } {
            return Ok(());
        }
        self.slow += 1;
        let obj = unsafe { Bound::from_borrowed_ptr(self.py, obj) };
        out.push_str(&crate::key(&obj, what)?);
        Ok(())
    }

    /// # Safety
    /// As [`Reader::append_str`].
    unsafe fn score(&mut self, obj: *mut ffi::PyObject, qid: &str, doc: &str) -> PyResult<f64> {
        unsafe {
            if ffi::PyFloat_CheckExact(obj) != 0 {
                return Ok(ffi::PyFloat_AsDouble(obj));
            }
        }
        self.slow += 1;
        let obj = unsafe { Bound::from_borrowed_ptr(self.py, obj) };
        crate::score(&obj, qid, doc)
    }

    /// # Safety
    /// As [`Reader::append_str`].
    unsafe fn grade(&mut self, obj: *mut ffi::PyObject, qid: &str, doc: &str) -> PyResult<i32> {
        unsafe {
            if ffi::PyLong_CheckExact(obj) != 0 {
                let mut overflow = 0;
                let v = ffi::PyLong_AsLongAndOverflow(obj, &mut overflow);
                // -1 with an error set is a failure; -1 alone is the value.
                if overflow == 0 && (v != -1 || ffi::PyErr_Occurred().is_null()) {
                    if let Ok(g) = i32::try_from(v) {
                        return Ok(g);
                    }
                }
                ffi::PyErr_Clear();
            }
        }
        self.slow += 1;
        let obj = unsafe { Bound::from_borrowed_ptr(self.py, obj) };
        crate::grade(&obj, qid, doc)
    }

    /// Each `(key, value)` of `d` in order, `f` given the key's id text.
    /// The items are borrowed from the dict; `f` may call the slow paths,
    /// after which the dict's size is checked.
    fn each_item(
        &mut self,
        d: &Bound<'py, PyDict>,
        what: &str,
        id_what: &str,
        mut f: impl FnMut(&mut Self, &str, *mut ffi::PyObject) -> PyResult<()>,
    ) -> PyResult<()> {
        let dict = d.as_ptr();
        let size = unsafe { ffi::PyDict_Size(dict) };
        let mut pos: ffi::Py_ssize_t = 0;
        let mut key = String::new();
        loop {
            let ticked = self.slow;
            self.tick()?;
            if self.slow != ticked {
                unchanged(unsafe { ffi::PyDict_Size(dict) }, size, what)?;
            }
            let (mut k, mut v) = (std::ptr::null_mut(), std::ptr::null_mut());
            // SAFETY: the GIL is held and `dict` is alive (`d` holds it);
            // PyDict_Next bounds-checks `pos` against the dict as it is now.
            if unsafe { ffi::PyDict_Next(dict, &mut pos, &mut k, &mut v) } == 0 {
                break;
            }
            key.clear();
            let before = self.slow;
            // A str key is read with no Python code run, so the borrowed
            // value stays valid; before any other key's slow path the
            // value is held by a reference of our own. (No reference is
            // taken per item otherwise: under abi3 each is two calls into
            // libpython, 14 million for a 70,000 x 100 run.)
            if unsafe { self.append_str(k, &mut key) } {
                f(self, &key, v)?;
            } else {
                let value = unsafe { Bound::from_borrowed_ptr(self.py, v) };
                // A document id's container names its query ("query `q1`'s
                // dict"); the top-level dict's ids are the queries themselves.
                unsafe { self.id(k, id_what, &mut key) }.map_err(|e| {
                    if what.starts_with("query ") {
                        in_context(self.py, e, what)
                    } else {
                        e
                    }
                })?;
                f(self, &key, value.as_ptr())?;
            }
            if self.slow != before {
                unchanged(unsafe { ffi::PyDict_Size(dict) }, size, what)?;
            }
        }
        Ok(())
    }

    /// `{qid: {doc: score}}`.
    pub fn scored_run(&mut self, d: &Bound<'py, PyDict>) -> PyResult<Vec<(String, Ranked)>> {
        let mut queries = Vec::with_capacity(d.len());
        let mut id_bytes = 8;
        self.each_item(d, "the run dict", "a query id", |r, qid, docs| {
            let docs = unsafe { Bound::from_borrowed_ptr(r.py, docs) };
            let docs = docs
                .cast::<PyDict>()
                .map_err(|_| bad(format!("query `{qid}`: expected {{doc: score}}")))?;
            let mut p = Packed::scored();
            let n = docs.len();
            p.reserve(n, n * id_bytes);
            r.each_item(
                docs,
                &format!("query `{qid}`'s dict"),
                "a document id",
                |r, id, s| {
                    let s = unsafe { r.score(s, qid, id)? };
                    p.push(id, s);
                    Ok(())
                },
            )?;
            if !p.is_empty() {
                id_bytes = p.text_len().div_ceil(p.len()).max(1);
            }
            queries.push((qid.to_string(), Ranked::Packed(p)));
            Ok(())
        })?;
        Ok(queries)
    }

    /// Each item of a list, in order.
    fn each_in_list(
        &mut self,
        list: &Bound<'py, PyAny>,
        qid: &str,
        mut f: impl FnMut(&mut Self, *mut ffi::PyObject) -> PyResult<()>,
    ) -> PyResult<()> {
        let list = list
            .cast::<PyList>()
            .map_err(|_| bad(format!("query `{qid}`: expected a list of document ids")))?;
        let l = list.as_ptr();
        let size = unsafe { ffi::PyList_Size(l) };
        let mut i = 0;
        // The size is read again each time: a slow path may have changed it.
        while i < unsafe { ffi::PyList_Size(l) } {
            self.tick()?;
            if i >= unsafe { ffi::PyList_Size(l) } {
                break;
            }
            // SAFETY: 0 <= i < the list's size, the GIL is held.
            let item = unsafe { ffi::PyList_GetItem(l, i) };
            if item.is_null() {
                return Err(PyErr::take(self.py).unwrap_or_else(|| bad("a list item could not be read")));
            }
            let before = self.slow;
            f(self, item)?;
            if self.slow != before {
                unchanged(
                    unsafe { ffi::PyList_Size(l) },
                    size,
                    &format!("query `{qid}`'s list"),
                )?;
            }
            i += 1;
        }
        Ok(())
    }

    /// `{qid: [doc, ...]}`, best first.
    pub fn ranked_run(&mut self, d: &Bound<'py, PyDict>) -> PyResult<Vec<(String, Ranked)>> {
        let mut queries = Vec::with_capacity(d.len());
        self.each_item(d, "the run dict", "a query id", |r, qid, docs| {
            let docs = unsafe { Bound::from_borrowed_ptr(r.py, docs) };
            let mut p = Packed::ranked();
            let mut doc = String::new();
            r.each_in_list(&docs, qid, |r, item| {
                doc.clear();
                unsafe { r.id(item, "a document id", &mut doc) }
                    .map_err(|e| in_context(r.py, e, &format!("query `{qid}`")))?;
                p.push(&doc, 0.0);
                Ok(())
            })?;
            queries.push((qid.to_string(), Ranked::Packed(p)));
            Ok(())
        })?;
        Ok(queries)
    }

    /// `{qid: {doc: grade}}`.
    pub fn graded_gold(&mut self, d: &Bound<'py, PyDict>) -> PyResult<GradedGold> {
        let mut queries = Vec::with_capacity(d.len());
        self.each_item(d, "the qrels dict", "a query id", |r, qid, labels| {
            let labels = unsafe { Bound::from_borrowed_ptr(r.py, labels) };
            let labels = labels
                .cast::<PyDict>()
                .map_err(|_| bad(format!("query `{qid}`: expected {{doc: grade}}")))?;
            let mut l = Vec::with_capacity(labels.len());
            r.each_item(
                labels,
                &format!("query `{qid}`'s dict"),
                "a document id",
                |r, doc, g| {
                    let g = unsafe { r.grade(g, qid, doc)? };
                    l.push((doc.to_string(), g));
                    Ok(())
                },
            )?;
            queries.push((qid.to_string(), l));
            Ok(())
        })?;
        Ok(queries)
    }

    /// `{qid: [doc, ...]}`: each document relevant, grade 1.
    pub fn listed_gold(&mut self, d: &Bound<'py, PyDict>) -> PyResult<GradedGold> {
        let mut queries = Vec::with_capacity(d.len());
        self.each_item(d, "the qrels dict", "a query id", |r, qid, docs| {
            let docs = unsafe { Bound::from_borrowed_ptr(r.py, docs) };
            let mut l = Vec::new();
            r.each_in_list(&docs, qid, |r, item| {
                let mut doc = String::new();
                unsafe { r.id(item, "a document id", &mut doc) }
                    .map_err(|e| in_context(r.py, e, &format!("query `{qid}`")))?;
                l.push((doc, 1));
                Ok(())
            })?;
            queries.push((qid.to_string(), l));
            Ok(())
        })?;
        Ok(queries)
    }

    /// Three equal-length columns, row by row: `f` gets the query's and
    /// the document's id text and the value.
    fn each_row(
        &mut self,
        cols: (&Bound<'py, PyList>, &Bound<'py, PyList>, &Bound<'py, PyList>),
        mut f: impl FnMut(&mut Self, &str, &str, *mut ffi::PyObject) -> PyResult<()>,
    ) -> PyResult<()> {
        let (q, d, v) = (cols.0.as_ptr(), cols.1.as_ptr(), cols.2.as_ptr());
        let size = |l| unsafe { ffi::PyList_Size(l) };
        let n = size(q);
        if size(d) != n || size(v) != n {
            return Err(bad("the columns have different lengths"));
        }
        let (mut qid, mut doc) = (String::new(), String::new());
        for i in 0..n {
            self.tick()?;
            if size(q) != n || size(d) != n || size(v) != n {
                return Err(bad(
                    "a column changed size while rgate read it (a value's __index__ or __float__ changed it)",
                ));
            }
            // SAFETY: 0 <= i < each list's size, the GIL is held; each item
            // is held while the slow paths run.
            let item = |l| unsafe { Bound::from_borrowed_ptr(self.py, ffi::PyList_GetItem(l, i)) };
            let (qi, di, vi) = (item(q), item(d), item(v));
            qid.clear();
            doc.clear();
            unsafe {
                self.id(qi.as_ptr(), "a query id", &mut qid)?;
                self.id(di.as_ptr(), "a document id", &mut doc)?;
            }
            f(self, &qid, &doc, vi.as_ptr())?;
        }
        Ok(())
    }

    /// A DataFrame's `query_id, doc_id, score` columns.
    pub fn run_rows(
        &mut self,
        cols: (&Bound<'py, PyList>, &Bound<'py, PyList>, &Bound<'py, PyList>),
    ) -> PyResult<RowsBuilder> {
        let mut b = RowsBuilder::default();
        self.each_row(cols, |r, q, d, v| {
            let s = unsafe { r.score(v, q, d)? };
            b.push(q, d, s);
            Ok(())
        })?;
        Ok(b)
    }

    /// A DataFrame's `query_id, doc_id, relevance` columns.
    pub fn gold_rows(
        &mut self,
        cols: (&Bound<'py, PyList>, &Bound<'py, PyList>, &Bound<'py, PyList>),
    ) -> PyResult<Vec<(String, String, i32)>> {
        let mut rows = Vec::with_capacity(cols.0.len());
        self.each_row(cols, |r, q, d, v| {
            let g = unsafe { r.grade(v, q, d)? };
            rows.push((q.to_string(), d.to_string(), g));
            Ok(())
        })?;
        Ok(rows)
    }
}
