"""The module in a process: no thread left behind a call (so a fork child
can call it), Ctrl-C answered during a call, and a panic (a bug) raised as
RgateError, never as PanicException (issue 41, items 6, 7 and 8)."""

import multiprocessing
import subprocess
import sys
import textwrap

import pytest

import rgate

GOLD = {f"q{i}": {"a": 1} for i in range(30)}
BASE = {f"q{i}": ["b", "a"] for i in range(30)}
BETTER = {f"q{i}": ["a", "b"] for i in range(30)}

linux = pytest.mark.skipif(not sys.platform.startswith("linux"), reason="fork and /proc/self/task are Linux's")


def _child(queue):
    # Hand-computed: every query's first relevant document moves from rank
    # 2 to rank 1, RR from 0.5 to 1.
    cmp = rgate.compare(GOLD, {"base": BASE, "new": BETTER}, "rr", resamples=500)
    queue.put((rgate.evaluate(GOLD, BASE, "rr")["rr"], cmp.checks[0]["delta"]))


@linux
def test_a_fork_finds_no_thread_of_rgates():
    # In a fresh interpreter, so that the count starts from one thread.
    # The pool kept between calls is stopped before the fork (Python 3.12
    # warns, here an error, about a fork with threads) and started again
    # by the next call.
    script = textwrap.dedent(
        """
        import os, rgate
        count = lambda: len(os.listdir("/proc/self/task"))
        gold = {"q1": {"a": 1}, "q2": {"b": 1}}
        rgate.evaluate(gold, {"q1": ["a"], "q2": ["c", "b"]}, "rr,ndcg@10")
        rgate.compare(gold, {"x": {"q1": ["a"]}, "y": {"q2": ["b"]}}, "rr", resamples=200)
        kept = count()
        pid = os.fork()
        if pid == 0:
            os._exit(0 if count() == 1 else 1)
        at_fork = count()
        _, status = os.waitpid(pid, 0)
        rgate.evaluate(gold, {"q1": ["a"]}, "rr")
        print(kept, at_fork, os.waitstatus_to_exitcode(status), count())
        """
    )
    got = subprocess.run(
        [sys.executable, "-W", "ignore::rgate.RgateWarning", "-W", "error::DeprecationWarning", "-c", script],
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert got.returncode == 0, got.stderr
    kept, at_fork, child, again = map(int, got.stdout.split())
    assert kept > 1, "a pool is kept between calls"
    assert (at_fork, child) == (1, 0)
    assert again == kept


@linux
def test_a_fork_child_after_a_call_can_call_rgate():
    # The parent's call first: it used to leave rayon's pool behind, whose
    # threads a fork child lacks, and the child's first call waited for
    # them forever.
    assert rgate.evaluate(GOLD, BASE, "rr")["rr"] == 0.5
    ctx = multiprocessing.get_context("fork")
    queue = ctx.Queue()
    child = ctx.Process(target=_child, args=(queue,))
    child.start()
    child.join(60)
    if child.is_alive():
        child.kill()
        child.join()
        pytest.fail("the fork child hung in its rgate call")
    assert child.exitcode == 0
    assert queue.get(timeout=5) == (0.5, 0.5)


# A compare that runs for seconds (1,000,000 resamples, five metrics), its
# input small enough to build in a moment. Run in a child process: the
# interrupted work finishes in the background (src/work.rs), and ending
# the process ends it rather than leaving it to slow the other tests.
INTERRUPTED = textwrap.dedent(
    """
    import os, signal, threading, time
    import rgate
    gold = {f"q{i}": {f"d{j}": (i * j) % 3 for j in range(20)} for i in range(2000)}
    a = {f"q{i}": [f"d{(j * 7 + i) % 40}" for j in range(40)] for i in range(2000)}
    b = {f"q{i}": [f"d{(j * 11 + i) % 40}" for j in range(40)] for i in range(2000)}
    sent = []
    def interrupt():
        time.sleep(0.5)
        sent.append(time.perf_counter())
        os.kill(os.getpid(), signal.SIGINT)
    threading.Thread(target=interrupt, daemon=True).start()
    start = time.perf_counter()
    try:
        rgate.compare(gold, {"a": a, "b": b}, "ndcg@10,map,recall@40,P@10,RR", resamples=1_000_000)
        print("finished", time.perf_counter() - start)
    except KeyboardInterrupt:
        print("interrupted", time.perf_counter() - sent[0])
    """
)


# Reading 20 million ids (one shared list of 100, 200,000 times) holds the
# GIL for seconds; the reader runs pending signal handlers as it goes.
INTERRUPTED_READING = textwrap.dedent(
    """
    import signal, time
    import rgate
    ids = [f"d{j}" for j in range(100)]
    run = {f"q{i}": ids for i in range(200_000)}
    signal.signal(signal.SIGALRM, signal.default_int_handler)
    signal.setitimer(signal.ITIMER_REAL, 0.3)
    start = time.perf_counter()
    try:
        rgate.evaluate({"q1": ["d1"]}, run, "rr")
        print("finished", time.perf_counter() - start)
    except KeyboardInterrupt:
        print("interrupted", time.perf_counter() - start - 0.3)
    """
)


@linux
@pytest.mark.parametrize("script", [INTERRUPTED, INTERRUPTED_READING], ids=["working", "reading"])
def test_ctrl_c_interrupts_a_long_call_promptly(script):
    got = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True, timeout=300)
    assert got.returncode == 0, got.stderr
    outcome, seconds = got.stdout.split()
    # Before: KeyboardInterrupt came when the call returned, seconds late.
    assert outcome == "interrupted", got.stdout
    assert float(seconds) < 1.0, f"KeyboardInterrupt {seconds} s after the signal"


@pytest.mark.parametrize("where", ["reading", "work"])
def test_a_panic_is_an_rgate_error_and_prints_nothing(where, capfd):
    with pytest.raises(rgate.RgateError) as info:
        rgate._rgate._panic_on_purpose(where)
    assert info.value.message == "rgate failed on a bug of its own: a panic on purpose"
    assert "please report it" in info.value.hint
    assert capfd.readouterr() == ("", "")
