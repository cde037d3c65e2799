//! Where the library's work runs, so that a call can be interrupted, the
//! process can fork after it, and a bug cannot raise a `PanicException`.
//!
//! **Fork.** rayon's global pool starts its threads on first use and keeps
//! them; `fork()` copies only the calling thread, so in a `multiprocessing`
//! fork child (Linux's default start method before Python 3.14) the pool
//! still believes in its workers, and the first parallel job waits for them
//! forever (issue 41, item 7). rayon has no way to rebuild its global pool
//! in a child, so the module runs its work on a pool of its own: kept idle
//! between calls (starting threads per call would tax a loop of small
//! calls), stopped and its threads joined by an `os.register_at_fork`
//! `before` hook, so the process forks with no thread of rgate's (as
//! Python asks: 3.12 warns about a fork with threads), and started again
//! by the next call on either side. A fork that skips Python's hooks (one
//! from C) is caught by the pool's process id: a child forgets the copied
//! pool, whose threads it does not have, and starts its own.
//!
//! **Ctrl-C.** Python's SIGINT handler only sets a flag; the
//! `KeyboardInterrupt` is raised when the interpreter next runs Python
//! code, which a thread inside Rust never does (issue 41, item 8: 8.3 s
//! late in a 9.2 s compare). The work runs on the pool while the calling
//! thread waits without the GIL, taking it back every [`TICK`] to run
//! `PyErr_CheckSignals`, so a pending signal's handler runs within a tick
//! and its exception (`KeyboardInterrupt`, or whatever a handler raises)
//! is the call's. The library has no way to stop its work midway (the
//! bootstrap has no cancel point), so the interrupted work finishes on its
//! threads in the background and its result is dropped; the interpreter
//! is back at once. Handing the work to the pool costs two thread
//! wake-ups a call: a call on a two-query dict took 160 µs against 80 µs
//! when it ran on the calling thread (2-core machine under load 8).
//!
//! **Panics.** A panic is a bug in rgate, never an answer to bad input;
//! should one happen it is caught here and raised as `RgateError` saying
//! so, and the panic message is not printed (the library prints nothing).
//! The fix belongs at the panic's cause; this is the backstop that keeps a
//! `BaseException` (which `except Exception` does not catch) out of users'
//! programs.

use std::any::Any;
use std::cell::Cell;
use std::panic::{catch_unwind, AssertUnwindSafe};
use std::sync::mpsc::{self, RecvTimeoutError};
use std::sync::{Arc, Mutex, Once};
use std::thread::JoinHandle;
use std::time::Duration;

use pyo3::prelude::*;

/// How often a waiting call looks for a signal: a Ctrl-C is answered within
/// this, and each look takes the GIL for a moment.
pub const TICK: Duration = Duration::from_millis(20);

thread_local! {
    /// Set on the pools' threads and inside [`guard`]: a panic there is
    /// raised as an error, so the hook stays silent.
    static QUIET: Cell<bool> = const { Cell::new(false) };
}

/// Keeps the panic hook from printing the panics this module raises as
/// errors; other threads' panics (the console script's) print as before.
pub fn quiet_panics() {
    static ONCE: Once = Once::new();
    ONCE.call_once(|| {
        let previous = std::panic::take_hook();
        std::panic::set_hook(Box::new(move |info| {
            if !QUIET.with(Cell::get) {
                previous(info);
            }
        }));
    });
}

/// The error a caught panic becomes.
pub fn panic_error(py: Python<'_>, payload: Box<dyn Any + Send>) -> PyErr {
    let what = payload
        .downcast_ref::<&str>()
        .map(|s| s.to_string())
        .or_else(|| payload.downcast_ref::<String>().cloned())
        .unwrap_or_else(|| "a panic".into());
    crate::user_error(
        py,
        format!("rgate failed on a bug of its own: {what}"),
        Some("this is not your input's fault; please report it with the input at https://github.com/rgate-dev/rgate/issues".into()),
    )
}

/// Runs `f` (reading the caller's values, with the GIL) with a panic raised
/// as [`panic_error`].
pub fn guard<T>(py: Python<'_>, f: impl FnOnce() -> PyResult<T>) -> PyResult<T> {
    let was = QUIET.with(|q| q.replace(true));
    let r = catch_unwind(AssertUnwindSafe(f));
    QUIET.with(|q| q.set(was));
    r.unwrap_or_else(|p| Err(panic_error(py, p)))
}

type Outcome<T> = std::thread::Result<anyhow::Result<T>>;

/// A pool and its threads, and the process they were started in.
struct Pool {
    pid: u32,
    pool: rayon::ThreadPool,
    threads: Vec<JoinHandle<()>>,
}

impl Pool {
    fn start(py: Python<'_>) -> PyResult<Pool> {
        let threads: Arc<Mutex<Vec<JoinHandle<()>>>> = Arc::default();
        let spawned = threads.clone();
        let pool = rayon::ThreadPoolBuilder::new()
            .thread_name(|i| format!("rgate-{i}"))
            .spawn_handler(move |thread| {
                let mut b = std::thread::Builder::new();
                if let Some(name) = thread.name() {
                    b = b.name(name.to_string());
                }
                if let Some(size) = thread.stack_size() {
                    b = b.stack_size(size);
                }
                let h = b.spawn(move || {
                    QUIET.with(|q| q.set(true));
                    thread.run();
                })?;
                spawned.lock().unwrap_or_else(|e| e.into_inner()).push(h);
                Ok(())
            })
            .build()
            .map_err(|e| {
                crate::user_error(
                    py,
                    format!("rgate could not start its threads: {e}"),
                    Some(
                        "the process may be at its thread limit (ulimit -u); RAYON_NUM_THREADS=1 uses one"
                            .into(),
                    ),
                )
            })?;
        let threads = std::mem::take(&mut *threads.lock().unwrap_or_else(|e| e.into_inner()));
        Ok(Pool {
            pid: std::process::id(),
            pool,
            threads,
        })
    }

    /// Ends the threads (an idle pool's end as soon as it is dropped) and
    /// waits until they are gone.
    fn stop(self) {
        drop(self.pool);
        for t in self.threads {
            let _ = t.join();
        }
    }
}

/// The pool between calls: starting one per call costs its threads' start
/// (a tight loop of small calls would pay it each time), so the last one
/// is kept, idle, and [`before_fork`] stops it. Taken and put back only
/// with the GIL held: a fork happens with the GIL held by the forking
/// thread, so no other thread is ever inside this lock at a fork, and a
/// child never inherits it locked.
static IDLE: Mutex<Option<Pool>> = Mutex::new(None);

fn idle() -> std::sync::MutexGuard<'static, Option<Pool>> {
    IDLE.lock().unwrap_or_else(|e| e.into_inner())
}

/// The idle pool, or a new one. A pool of another process is one a fork
/// copied without `before_fork` running (a fork from C code): its threads
/// do not exist here, so it is forgotten, not stopped (stopping would wait
/// for them).
fn take_pool(_py: Python<'_>) -> Option<Pool> {
    let p = idle().take()?;
    if p.pid == std::process::id() {
        Some(p)
    } else {
        std::mem::forget(p);
        None
    }
}

fn put_back(_py: Python<'_>, p: Pool) {
    let mut slot = idle();
    if slot.is_none() {
        *slot = Some(p);
    } else {
        drop(slot);
        p.stop();
    }
}

/// `os.register_at_fork(before=...)`: stops the idle pool, so that the
/// process forks with no thread of rgate's, as Python asks of a process
/// that forks (3.12 warns about threads at a fork), and the child starts a
/// pool of its own on its first call. Only the work of a call interrupted
/// by Ctrl-C and still finishing can be running at a fork; the child does
/// not need it.
#[pyfunction]
#[pyo3(name = "_before_fork")]
pub fn before_fork(_py: Python<'_>) {
    let p = idle().take();
    if let Some(p) = p {
        // With the GIL held (idle threads need none to end): let go, it
        // would let another thread's call start a pool before the fork.
        if p.pid == std::process::id() {
            p.stop();
        } else {
            std::mem::forget(p);
        }
    }
}

/// Runs `work` on rgate's pool and waits for it, taking signals meanwhile
/// (see the module's doc). Its error is raised as `RgateError`.
pub fn run<T, F>(py: Python<'_>, work: F) -> PyResult<T>
where
    T: Send + 'static,
    F: FnOnce() -> anyhow::Result<T> + Send + 'static,
{
    let pool = match take_pool(py) {
        Some(p) => p,
        None => Pool::start(py)?,
    };
    let (tx, rx) = mpsc::channel::<Outcome<T>>();
    pool.pool.spawn(move || {
        // The receiver is gone when the call was interrupted: the result
        // is dropped.
        let _ = tx.send(catch_unwind(AssertUnwindSafe(work)));
    });
    let waited: PyResult<Outcome<T>> = py.detach(move || loop {
        match rx.recv_timeout(TICK) {
            Ok(outcome) => return Ok(outcome),
            Err(RecvTimeoutError::Timeout) => {
                Python::attach(|py| py.check_signals())?;
            }
            // The job cannot end without sending; should it, say so.
            Err(RecvTimeoutError::Disconnected) => {
                let lost: Box<dyn Any + Send> = Box::new("the work ended without a result");
                return Ok(Err(lost));
            }
        }
    });
    match waited {
        // Interrupted: the pool is still at the work; dropped, its threads
        // end when the work does (a spawned job keeps them until it
        // returns), and the next call starts another pool.
        Err(interrupt) => {
            drop(pool.pool);
            Err(interrupt)
        }
        Ok(outcome) => {
            // The job has sent its result; its last instructions may still
            // run on a thread, which the next job waits for as rayon's
            // queue does.
            put_back(py, pool);
            match outcome {
                Ok(done) => done.map_err(|e| crate::rgate_error(py, &e)),
                Err(payload) => Err(panic_error(py, payload)),
            }
        }
    }
}
