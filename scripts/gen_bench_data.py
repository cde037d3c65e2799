#!/usr/bin/env python3
"""Deterministic benchmark data for rgate (issue 5). Standard library only.

    python3 scripts/gen_bench_data.py --lines 7M --out target/bench-data/7M

writes, in --out:
  qrels.txt    TREC qrels `qid 0 docid grade`, MS MARCO-like: 1-4 judged
               passages per query, grades 0..3 (mostly 1-2, a few 0), at least
               one relevant (grade >= 1) passage per query, sorted by qid;
  run_a.trec   TREC run `qid Q0 docid rank score tag`, 1000 lines per query,
               BM25-like (MRR@10 ~0.19, recall@1000 ~0.86), 4-decimal scores;
  run_b.trec   a paired, slightly better variant of run_a (MRR@10 ~0.21):
               mostly the same candidates, each relevant passage moved up or
               down, 5-decimal scores;
  stamp.json   the arguments, generator version and the sha256 of this script;
               when it matches and the files have the recorded sizes, nothing
               is regenerated (--force regenerates).

Runs are grouped by query (queries in one shuffled "topic file" order, the same
in both runs), sorted by score descending, with some exact score ties; docids
are unique within a query. --lines N gives N // 1000 queries (N is rounded
down to a multiple of 1000). Accepts 1M, 7M, 28M, 500k or plain integers.

--queries N --depth D instead writes the many-small-queries case (issue 17:
70,000 queries x 100 docs): N queries of D results each, 2-13 judged passages
per query (about 7.5, so ~525k qrels lines for 70k queries; grades 0..3, at
least one relevant), the judged ones placed at random ranks (or missed) in
run A, and run B as A with the judged ones moved. It is a load test (many
queries, large qrels), not a model of a retriever.

The output depends only on (--lines, --seed, GEN_VERSION) and the Python
`random` module's algorithms (stable across CPython 3.x releases for the calls
used here). Queries are generated in blocks of BLOCK queries, each with its own
seeded generator, so output does not depend on --jobs.
"""

import argparse
import hashlib
import json
import math
import os
import random
import sys
import time

GEN_VERSION = 1
DEFAULT_SEED = 20261129
N_PASSAGES = 8_841_823          # MS MARCO passage collection size
DEPTH = 1000                    # results per query
BLOCK = 250                     # queries per independently seeded block
N_SHAPES = 64                   # precomputed score-curve shapes per run
TAG_A = "bm25"
TAG_B = "rm3"

# Judged passages per query and their grades (MS MARCO-like: mostly one).
N_JUDGED = [1, 2, 3, 4]
N_JUDGED_W = [0.70, 0.18, 0.08, 0.04]
GRADE_FIRST = [1, 2, 3]          # the first judged passage is always relevant
GRADE_FIRST_W = [0.62, 0.30, 0.08]
GRADE_OTHER = [0, 1, 2, 3]
GRADE_OTHER_W = [0.18, 0.50, 0.25, 0.07]

# Rank model of a judged passage in run A: retrieved with P_RET (by grade);
# rank = floor(1000 ** (u ** alpha)), alpha = exp(gauss(ALPHA_MU, ALPHA_SD))
# drawn per query (easy and hard queries).
P_RET_A = {0: 0.80, 1: 0.84, 2: 0.88, 3: 0.92}
ALPHA_MU = -0.23
ALPHA_SD = 0.60
# Run B, paired with A: log(rank_b) = log(rank_a) + gauss(SHIFT_MU, SHIFT_SD);
# a passage A retrieved is lost by B with P_LOST; one A missed is found by B
# with P_FOUND (at a rank drawn like A's).
SHIFT_MU = -0.06
SHIFT_SD = 0.75
P_LOST = 0.04
P_FOUND = 0.30
# Candidates of B not in A (per query), and how far B moves A's candidates.
B_NEW_FRACTION = 0.10
B_JITTER = 40.0
P_TIE = 0.006                    # chance that a score repeats the one above


def parse_size(text):
    t = text.strip().lower().replace("_", "")
    mult = 1
    if t.endswith("m"):
        mult, t = 1_000_000, t[:-1]
    elif t.endswith("k"):
        mult, t = 1_000, t[:-1]
    try:
        n = int(float(t) * mult)
    except ValueError:
        raise argparse.ArgumentTypeError(f"not a line count: {text!r} (use e.g. 1M, 7M, 28M, 500k)")
    if n < DEPTH:
        raise argparse.ArgumentTypeError(f"--lines must be at least {DEPTH}")
    return n


def make_template(tag, score_fmt):
    """One query's block as a %-format string; \\0 stands for the qid."""
    return "".join(f"\0 Q0 D%d {i + 1} {score_fmt} {tag}\n" for i in range(DEPTH))


def make_shapes(rng):
    """Decreasing curves from 1.0 to 0.0 over DEPTH ranks: large gaps at the
    top, small in the tail (as BM25), a few exact repeats."""
    shapes = []
    for _ in range(N_SHAPES):
        gaps = []
        for i in range(DEPTH - 1):
            if rng.random() < P_TIE:
                gaps.append(0.0)
            else:
                gaps.append(rng.expovariate(1.0) / (i + 4.0) ** 0.9)
        total = sum(gaps)
        cur = 1.0
        shape = [cur]
        for g in gaps:
            cur -= g / total
            shape.append(cur)
        shape[-1] = 0.0
        shapes.append(shape)
    return shapes


def make_perms(rng):
    """Local reorderings of DEPTH candidates (B's view of A's candidates)."""
    perms = []
    for _ in range(N_SHAPES):
        keys = [i + rng.gauss(0.0, B_JITTER) for i in range(DEPTH)]
        perms.append(sorted(range(DEPTH), key=keys.__getitem__))
    return perms


def draw_rank(rng, alpha):
    return int(DEPTH ** (rng.random() ** alpha))  # 1 .. DEPTH-1


def place(ranks_taken, rank):
    """Next free rank at or below `rank` (then above), 1-based."""
    r = rank
    while r in ranks_taken and r < DEPTH:
        r += 1
    while r in ranks_taken:
        r -= 1
    ranks_taken.add(r)
    return r


def fresh_ids(rng, k, exclude):
    """k distinct passage ids not in exclude."""
    out = []
    seen = set(exclude)
    while len(out) < k:
        need = k - len(out)
        for d in rng.choices(range(N_PASSAGES), k=need + need // 50 + 8):
            if d not in seen:
                seen.add(d)
                out.append(d)
                if len(out) == k:
                    break
    return out


class Ctx:
    """Per-process constants (shapes, templates), built from the seed."""

    def __init__(self, seed):
        rng = random.Random(f"rgate-bench:{seed}:shapes")
        self.shapes_a = make_shapes(rng)
        self.shapes_b = make_shapes(rng)
        self.perms = make_perms(rng)
        self.tpl_a = make_template(TAG_A, "%.4f")
        self.tpl_b = make_template(TAG_B, "%.5f")


_CTX = None


def gen_block(args):
    """Generate one block of queries: returns (qrels lines, run A text, run B text)."""
    seed, lines, block_no, qids = args
    global _CTX
    if _CTX is None or _CTX[0] != seed:
        _CTX = (seed, Ctx(seed))
    ctx = _CTX[1]
    rng = random.Random(f"rgate-bench:{seed}:{lines}:{block_no}")
    rand = rng.random
    gauss = rng.gauss
    uniform = rng.uniform
    qrels = []
    out_a = []
    out_b = []
    args_a = [None] * (2 * DEPTH)
    args_b = [None] * (2 * DEPTH)
    log_depth = math.log(DEPTH)
    for qid in qids:
        qs = str(qid)
        # judged passages and grades
        nj = rng.choices(N_JUDGED, N_JUDGED_W)[0]
        grades = [rng.choices(GRADE_FIRST, GRADE_FIRST_W)[0]]
        grades += rng.choices(GRADE_OTHER, GRADE_OTHER_W, k=nj - 1)
        judged = rng.sample(range(N_PASSAGES), nj)
        for d, g in zip(judged, grades):
            qrels.append((qid, f"{qs} 0 D{d} {g}\n"))
        # ranks in A and B (higher grades tend to rank higher)
        alpha = math.exp(gauss(ALPHA_MU, ALPHA_SD))
        taken_a = set()
        taken_b = set()
        place_a = []
        place_b = []
        for d, g in zip(judged, grades):
            a_alpha = alpha * (1.0 + 0.25 * (g - 1))
            ra = None
            if rand() < P_RET_A[g]:
                ra = draw_rank(rng, a_alpha)
            if ra is not None:
                if rand() < P_LOST:
                    rb = None
                else:
                    x = math.log(ra) + gauss(SHIFT_MU, SHIFT_SD)
                    rb = int(math.exp(min(max(x, 0.0), log_depth - 1e-9)))
                place_a.append((place(taken_a, ra), d))
            else:
                rb = draw_rank(rng, a_alpha) if rand() < P_FOUND else None
            if rb is not None:
                place_b.append((place(taken_b, rb), d))
        # candidates: A's non-judged candidates; B keeps most, reordered locally
        base = fresh_ids(rng, DEPTH, judged)
        docs_a = base[:]
        for r, d in place_a:
            docs_a[r - 1] = d
        perm = ctx.perms[int(rand() * N_SHAPES)]
        docs_b = [base[j] for j in perm]
        n_new = int(DEPTH * B_NEW_FRACTION * (0.5 + rand()))
        new = fresh_ids(rng, n_new, base + judged)
        for pos, d in zip(rng.sample(range(DEPTH), n_new), new):
            docs_b[pos] = d
        for r, d in place_b:
            docs_b[r - 1] = d
        # scores: a per-query affine map of a precomputed decreasing shape
        top = uniform(11.0, 32.0)
        low = top * uniform(0.32, 0.5)
        span = top - low
        shape = ctx.shapes_a[int(rand() * N_SHAPES)]
        args_a[0::2] = docs_a
        args_a[1::2] = [low + span * x for x in shape]
        out_a.append(ctx.tpl_a.replace("\0", qs) % tuple(args_a))
        top = uniform(0.85, 1.15) * top
        low = top * uniform(0.3, 0.45)
        span = top - low
        shape = ctx.shapes_b[int(rand() * N_SHAPES)]
        args_b[0::2] = docs_b
        args_b[1::2] = [low + span * x for x in shape]
        out_b.append(ctx.tpl_b.replace("\0", qs) % tuple(args_b))
    return qrels, "".join(out_a), "".join(out_b)


def gen_small(seed, n_queries, depth):
    """The many-small-queries case: (qrels text, run A text, run B text)."""
    rng = random.Random(f"rgate-bench:{seed}:small:{n_queries}:{depth}")
    qrels, out_a, out_b = [], [], []
    for k in range(n_queries):
        qs = str(1_000_000 + k)
        nj = rng.randint(2, 13)
        judged = [rng.randrange(N_PASSAGES) for _ in range(nj)]
        judged = list(dict.fromkeys(judged))
        grades = [rng.choice((1, 2, 3))] + [rng.choice((0, 1, 1, 2, 3)) for _ in judged[1:]]
        for d, g in zip(judged, grades):
            qrels.append(f"{qs} 0 D{d} {g}\n")
        docs_a = [rng.randrange(N_PASSAGES) for _ in range(depth)]
        docs_b = docs_a[:]
        jset = set(judged)
        docs_a = [d if d not in jset else d + 1 for d in docs_a]
        docs_b = docs_a[:]
        for d in judged:
            if rng.random() < 0.7:
                docs_a[rng.randrange(depth)] = d
            if rng.random() < 0.75:
                docs_b[rng.randrange(depth)] = d
        for docs, out, tag in ((docs_a, out_a, TAG_A), (docs_b, out_b, TAG_B)):
            seen = set()
            r = 0
            for d in docs:
                if d in seen:
                    continue
                seen.add(d)
                r += 1
                out.append(f"{qs} Q0 D{d} {r} {100.0 - r * 0.5 - rng.random() * 0.4:.4f} {tag}\n")
    return "".join(qrels), "".join(out_a), "".join(out_b)


def read_stamp(path):
    try:
        with open(path) as f:
            return json.load(f)
    except (OSError, ValueError):
        return None


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--lines", type=parse_size,
                    help="run lines per run file: 1M, 7M, 28M ... (queries = lines // 1000)")
    ap.add_argument("--queries", type=parse_size,
                    help="with --depth: the many-small-queries case (e.g. 70k)")
    ap.add_argument("--depth", type=int, default=100, help="results per query with --queries")
    ap.add_argument("--out", required=True, help="output directory")
    ap.add_argument("--seed", type=int, default=DEFAULT_SEED)
    ap.add_argument("--jobs", type=int, default=0,
                    help="worker processes (default: CPUs, at most 4); output is identical for any value")
    ap.add_argument("--force", action="store_true", help="regenerate even when the stamp matches")
    ap.add_argument("--quiet", action="store_true")
    opts = ap.parse_args(argv)

    if (opts.lines is None) == (opts.queries is None):
        ap.error("give --lines, or --queries (with --depth)")
    small = opts.queries is not None
    if small:
        n_queries, lines = opts.queries, opts.queries * opts.depth
    else:
        n_queries = opts.lines // DEPTH
        lines = n_queries * DEPTH
    out = opts.out
    names = ["qrels.txt", "run_a.trec", "run_b.trec"]
    stamp_path = os.path.join(out, "stamp.json")
    with open(os.path.abspath(__file__), "rb") as f:
        source_sha = hashlib.sha256(f.read()).hexdigest()
    want = {"generator": "rgate gen_bench_data.py", "version": GEN_VERSION,
            "lines": lines, "queries": n_queries, "seed": opts.seed, "source_sha256": source_sha,
            "depth": opts.depth if small else DEPTH}

    def say(msg):
        if not opts.quiet:
            print(msg, file=sys.stderr, flush=True)

    old = read_stamp(stamp_path)
    if not opts.force and old is not None and all(old.get(k) == v for k, v in want.items()):
        sizes = old.get("bytes", {})
        if all(os.path.isfile(os.path.join(out, n)) and os.path.getsize(os.path.join(out, n)) == sizes.get(n)
               for n in names):
            say(f"gen_bench_data: {out} is up to date ({lines} lines, seed {opts.seed}); skipping")
            return 0

    os.makedirs(out, exist_ok=True)
    if os.path.exists(stamp_path):
        os.remove(stamp_path)
    t0 = time.time()
    tmp = {n: os.path.join(out, n + ".tmp") for n in names}
    if small:
        texts = dict(zip(names, gen_small(opts.seed, n_queries, opts.depth)))
        for n in names:
            with open(tmp[n], "w") as f:
                f.write(texts[n])
            os.replace(tmp[n], os.path.join(out, n))
        want["bytes"] = {n: os.path.getsize(os.path.join(out, n)) for n in names}
        want["seconds"] = round(time.time() - t0, 1)
        with open(stamp_path + ".tmp", "w") as f:
            json.dump(want, f, indent=1)
            f.write("\n")
        os.replace(stamp_path + ".tmp", stamp_path)
        n_qrels = texts["qrels.txt"].count("\n")
        say(f"gen_bench_data: {n_queries} queries x {opts.depth} docs, {n_qrels} qrels lines -> {out} "
            f"in {want['seconds']} s")
        return 0
    master = random.Random(f"rgate-bench:{opts.seed}:{lines}:qids")
    # MS MARCO-like numeric qids, 6 digits while they fit
    hi = max(1_000_000, 100_000 + 4 * n_queries)
    qids = master.sample(range(100_000, hi), n_queries)   # topic-file order
    blocks = [(opts.seed, lines, i, qids[s:s + BLOCK])
              for i, s in enumerate(range(0, n_queries, BLOCK))]

    jobs = opts.jobs or min(4, os.cpu_count() or 1)
    qrels = []
    with open(tmp["run_a.trec"], "w", buffering=1 << 22) as fa, \
            open(tmp["run_b.trec"], "w", buffering=1 << 22) as fb:
        if jobs > 1 and len(blocks) > 1:
            import multiprocessing as mp
            with mp.Pool(jobs) as pool:
                results = pool.imap(gen_block, blocks, chunksize=1)
                for i, (qr, ta, tb) in enumerate(results):
                    qrels += qr
                    fa.write(ta)
                    fb.write(tb)
        else:
            for blk in blocks:
                qr, ta, tb = gen_block(blk)
                qrels += qr
                fa.write(ta)
                fb.write(tb)
    qrels.sort(key=lambda t: t[0])  # stable: judged order kept within a query
    with open(tmp["qrels.txt"], "w", buffering=1 << 20) as fq:
        fq.write("".join(line for _, line in qrels))
    for n in names:
        os.replace(tmp[n], os.path.join(out, n))
    want["bytes"] = {n: os.path.getsize(os.path.join(out, n)) for n in names}
    want["seconds"] = round(time.time() - t0, 1)
    with open(stamp_path + ".tmp", "w") as f:
        json.dump(want, f, indent=1)
        f.write("\n")
    os.replace(stamp_path + ".tmp", stamp_path)
    mb = want["bytes"]["run_a.trec"] / 1e6
    say(f"gen_bench_data: {lines} lines x 2 runs, {n_queries} queries -> {out} "
        f"(run_a {mb:.1f} MB, {want['bytes']['run_a.trec'] / lines:.1f} B/line) in {want['seconds']} s")
    return 0


if __name__ == "__main__":
    sys.exit(main())
