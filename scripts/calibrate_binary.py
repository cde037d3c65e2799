#!/usr/bin/env python3
"""Calibration of rgate's gate, measured from outside: through the binary.

Every trial writes a gold set, baseline runs and current runs into a
temporary directory, records the baselines with `rgate baseline update`,
gates the current runs with `rgate gate --format json`, and reads the
verdicts, p-values, bounds, mde and warnings from the JSON report. Nothing
here imports rgate: the expected drops are computed by this script, from the
model below, by exact enumeration.

The model (issue #26's "scenarios it was not tuned to"):

- A query has a latent quality u ~ U(0.15, 0.95), 1-3 relevant chunks with
  grades (the first 2, the others 1 or 2; so nDCG is graded) and a stratum.
- A run ranks 30 chunks. The query's relevant chunks appear as a block: the
  first of them at 0-based position o, o ~ Geometric(u) truncated at 20
  (P(o = i) = (1 - u)^i u for i < 20; with the remaining (1 - u)^20 none is
  retrieved), in a uniformly random order, each next one 1-3 positions
  (uniform) below the one before; distractors fill the rest.
- "No change" draws the current run afresh from the same distribution
  (every query, or with `churn` c only a share c of the queries, the others
  keep the baseline's ranking), so individual queries still change.
- A regression moves the top relevant chunk down k ranks (the chunks it
  passes move up one) with probability pi, pi solved so that the expected
  drop of the check's metric over the check's scope is exactly the drop
  asked for: E[delta] = pi * mean_q E_q[m(move_k(R)) - m(R)], both
  expectations by enumerating every (o, order, gaps) state of each query.
- The skewed scenario keeps the baseline's ranking and, per query, with
  probability 0.35 moves the top relevant chunk down one rank (a small loss),
  with probability pi_gain moves it to rank 1 (a large gain), else nothing;
  pi_gain solved so that the expected delta is exactly 0.

Metrics are computed here as trec_eval defines them (ndcg_cut: gain = grade,
discount log2(rank + 1); recall; success as hit_rate; recip_rank cut at 10;
bpref; num_rel_ret) and gdeval's ERR@k as rgate's src/metrics/graded.rs does,
and checked against `rgate eval` at every start (30-rank runs, and 50-rank
ANN-noised runs with judged non-relevant chunks, over every metric used).

Scenarios (`--only`, comma-separated letters):

  (a) a true drop equal to the printed mde: caught rate (promise .80)
  (b) three and six unchanged retrievers in one gate: exit-1 rate
  (c) one check, n = 29-100, no change, tolerance 0
  (d) the macro overall check under no change
  (e) a skewed change with expected delta 0, each test; (e0) the skew flag
  (f) a reordered gold file and run: identical p and bounds
  (g) over every gate run: fail <=> printed bound beyond the tolerance
  (h) init's rules (old and current) on a 7% nDCG@10 drop and no change
  (i) gm_map on the log scale, unchanged and dropped, each test
  (j) ANN re-run noise on an unchanged retriever (misses and adjacent swaps in
      ranks 5-50, baseline and current i.i.d. copies of one latent ranking,
      50 ranks), tolerance 0: ndcg@10 alone, init's rules, mrr@10 alone on the
      smallest stratum; 90 and 300 queries, plain and heavy-tailed; per check
      fail and `improved` rates, exit-1 rate
  (k) monotone in the loss: hit_rate@1 on one stratum of n = 10..200, all
      hits at rank 1, L lost; the gate's exit code monotone in L per test,
      the identical run passing, compare's interval finite and below 0
  (l) compare: two equal best variants among six, the rate of "also
      significantly better than the runner-up" when they rank top two
      (<= alpha); and a 32-variant x 2 metrics x 4 scopes sweep of clearly
      better variants: a winner named, compare's warnings
  (m) a 5% recall@10 drop on 90 queries: caught rate under one recall@10
      rule at max_drop 0 and under init's rules (and the same unchanged)
  (n) (a) for err@10, bpref and num_rel_ret
  (o) = `--only b --b-checks 15 --b-weighting macro --b-retrievers 6`
  (p) an unchanged re-run that moves exactly K of 90 queries (hit_rate@1,
      each moved query a hit in one run and a miss in the other by a fair
      coin): exit-1 rate per K and test at max_drop 0
  (q) the rules `rgate init` writes (read from the config it writes beside
      a gold set of n queries, so a tolerance sized to the gold set is what
      is tested): a true recall@10 drop of 0.7x and 2.5x its tolerance,
      3 strata, 50 and 100 queries, a re-run that redraws 30% of the
      queries (70% unchanged), plain and heavy-tailed (30% of the queries
      with their relevant block 8 ranks down: sparse, large deltas); exit-1
      rate (promise: <= 0.10 at 0.7x, >= 0.80 at 2.5x)

A scenario that does not loop over tests writes no `test:` key, so the
binary's default test decides (`--test` writes one; (e), (f), (i) and (k)
name theirs). Init's rules are read from `--template` (default: this tree's
src/templates/rgate.yaml) at start, or given as `--rules` JSON.

Rates come with 95% Wilson intervals (Wilson 1927; Brown, Cai and DasGupta
2001, "Interval estimation for a binomial proportion").

    python3 scripts/calibrate_binary.py [--bin target/release/rgate] [--trials 300]
        [--only a,b,c,d,e,f,g,h,i,j,k,l,m,n,o,p] [--json out.json] [--test T]

Standard library only. Deterministic for a given --seed.
"""

import argparse
import itertools
import json
import math
import os
import random
import re
import shutil
import subprocess
import sys
import tempfile
import time

METRICS = ["ndcg@10", "hit_rate@3", "recall@10", "mrr@10"]
Z95 = 1.959963984540054


def wilson(k, n, z=Z95):
    """The 95% Wilson score interval of k successes in n trials."""
    if n == 0:
        return (float("nan"), float("nan"))
    p = k / n
    d = 1 + z * z / n
    c = (p + z * z / (2 * n)) / d
    h = z * math.sqrt(p * (1 - p) / n + z * z / (4 * n * n)) / d
    return (max(0.0, c - h), min(1.0, c + h))


def rate(k, n):
    lo, hi = wilson(k, n)
    return {"k": k, "n": n, "rate": k / n if n else float("nan"), "lo": lo, "hi": hi}


def fmt_rate(r):
    return f"{r['rate']:.3f} [{r['lo']:.3f}, {r['hi']:.3f}] ({r['k']}/{r['n']})"


# ---------------------------------------------------------------- metrics


def split_metric(name):
    """("ndcg", 10) for "ndcg@10"; ("bpref", None) for "bpref"."""
    if "@" in name:
        base, k = name.split("@", 1)
        return base, int(k)
    return name, None


def metric_value(name, placed, grades_all, nonrel=()):
    """`placed`: [(0-based position, grade)] of the retrieved relevant chunks;
    `grades_all`: every relevant grade of the query (for the ideal and recall);
    `nonrel`: (0-based positions of the retrieved chunks judged non-relevant,
    the number of them in the gold set), only bpref reads it.

    As rgate computes them (src/metrics): ndcg@k (gain = grade, discount
    log2(rank + 1)), hit_rate@k (success), recall@k, mrr@k (recip_rank cut
    at k), err@k (gdeval's ERR: stop chance (2^min(g, 4) - 1) / 16 at each
    hit within the top k, summed as stop * reach / rank), bpref (trec_eval:
    each retrieved relevant chunk scores 1 - min(judged non-relevant above
    it, R) / min(N, R), summed over R) and num_rel_ret (relevant chunks
    anywhere in the ranking)."""
    base, k = split_metric(name)
    if base == "ndcg" and k:
        dcg = sum(g / math.log2(p + 2) for p, g in placed if p < k)
        ideal = sorted(grades_all, reverse=True)[:k]
        idcg = sum(g / math.log2(i + 2) for i, g in enumerate(ideal))
        return dcg / idcg if idcg > 0 else 0.0
    if base == "hit_rate" and k:
        return 1.0 if any(p < k for p, _ in placed) else 0.0
    if base == "recall" and k:
        return sum(1 for p, _ in placed if p < k) / len(grades_all)
    if base == "mrr" and k:
        top = [p for p, _ in placed if p < k]
        return 1.0 / (min(top) + 1) if top else 0.0
    if base == "err" and k:
        score, reach = 0.0, 1.0
        for p, g in sorted(placed):
            if p >= k or g <= 0:
                continue
            stop = (2.0 ** min(g, 4) - 1.0) / 16.0
            score += stop * reach / (p + 1)
            reach *= 1.0 - stop
        return score
    if name == "num_rel_ret":
        return float(sum(1 for _, g in placed if g > 0))
    if name == "bpref":
        pos, n_nonrel = nonrel if nonrel else ((), 0)
        r = len(grades_all)
        tot = 0.0
        for p, _ in placed:
            above = sum(1 for x in pos if x < p)
            tot += 1.0 - min(above, r) / min(n_nonrel, r) if above > 0 else 1.0
        return tot / r if r else tot
    raise ValueError(name)


# ---------------------------------------------------------------- the model


class Query:
    def __init__(self, qid, stratum, u, grades):
        self.id = qid
        self.stratum = stratum
        self.u = u
        self.grades = grades  # grade of relevant chunk j, j = 0..r-1
        self._states = None
        self.depth = 30  # length of every run of this query
        self.judged = frozenset()  # distractors x<i> judged non-relevant (grade 0)

    def docs(self):
        return [f"{self.id}-r{j}" for j in range(len(self.grades))]

    def states(self):
        """Every (probability, o or None, order, gaps) state of a run."""
        if self._states is None:
            r = len(self.grades)
            perms = list(itertools.permutations(range(r)))
            gaps = list(itertools.product((1, 2, 3), repeat=r - 1))
            sub = 1.0 / (len(perms) * len(gaps))
            out = []
            for o in range(20):
                po = (1 - self.u) ** o * self.u
                for pm in perms:
                    for g in gaps:
                        out.append((po * sub, o, pm, g))
            pmiss = (1 - self.u) ** 20
            for pm in perms:
                for g in gaps:
                    out.append((pmiss * sub, None, pm, g))
            self._states = out
        return self._states

    def draw(self, rng):
        r = len(self.grades)
        o = None
        for i in range(20):
            if rng.random() < self.u:
                o = i
                break
        pm = list(range(r))
        rng.shuffle(pm)
        g = tuple(rng.choice((1, 2, 3)) for _ in range(r - 1))
        return (o, tuple(pm), g)

    def placed(self, state):
        """[(position, chunk index)] of the retrieved relevant chunks, best first."""
        o, pm, g = state
        if o is None:
            return []
        out = [(o, pm[0])]
        p = o
        for j, gap in zip(pm[1:], g):
            p += gap
            out.append((p, j))
        return out

    def value(self, name, placed):
        nonrel = ()
        if name == "bpref" and self.judged:
            taken = {p for p, _ in placed}
            free = [p for p in range(self.depth) if p not in taken]
            nonrel = ([p for x, p in enumerate(free) if x in self.judged], len(self.judged))
        return metric_value(name, [(p, self.grades[j]) for p, j in placed], self.grades, nonrel)


def move_down(placed, k, depth=30):
    """The top relevant chunk down k ranks; those it passes move up one.
    k = "out": the top relevant chunk leaves the ranking; k = "lowest-out":
    the lowest relevant chunk within the top 10 does (a recall@10 loss that
    spares the top of the ranking); those below it move up one."""
    if not placed:
        return placed
    top_p, top_j = placed[0]
    if k == "out":
        return [(p - 1, j) for p, j in placed[1:]]
    if k == "lowest-out":
        top = [x for x in placed if x[0] < 10]
        if not top:
            return placed
        lp = top[-1][0]
        return [(p - 1 if p > lp else p, j) for p, j in placed if p != lp]
    new_p = min(top_p + k, depth - 1)
    out = []
    for p, j in placed[1:]:
        out.append((p - 1 if top_p < p <= new_p else p, j))
    out.append((new_p, top_j))
    return sorted(out)


def move_up(placed, k):
    """The top relevant chunk up k ranks (at most to rank 1); the
    distractors it passes move down one."""
    if not placed:
        return placed
    top_p, top_j = placed[0]
    return [(max(0, top_p - k), top_j)] + list(placed[1:])


def lowest_down(placed):
    """The lowest relevant chunk within the top 10 down one rank (a small
    loss); nothing when none is in the top 10."""
    top = [x for x in placed if x[0] < 10]
    if not top:
        return placed
    p, j = top[-1]
    out = [(q - 1 if q == p + 1 else q, i) for q, i in placed if (q, i) != (p, j)]
    return sorted(out + [(p + 1, j)])


def ideal(grades):
    """Every relevant chunk at the top, best grade first (nDCG 1)."""
    order = sorted(range(len(grades)), key=lambda j: -grades[j])
    return [(i, j) for i, j in enumerate(order)]


class World:
    def __init__(self, sizes, seed, names=None, u=(0.15, 0.95)):
        rng = random.Random(seed)
        self.strata = names or [f"s{i}" for i in range(len(sizes))]
        self.queries = []
        for s, n in enumerate(sizes):
            for i in range(n):
                r = rng.choices((1, 2, 3), weights=(0.5, 0.3, 0.2))[0]
                grades = [2] + [rng.choice((1, 2)) for _ in range(r - 1)]
                self.queries.append(Query(f"q{s}-{i:04d}", self.strata[s], rng.uniform(*u), grades))
        self._exp = {}

    def scope(self, stratum):
        return [q for q in self.queries if stratum in (None, "all", q.stratum)]

    def expected(self, metric, stratum, transform):
        """mean over the scope of E_q[m(transform(R))] - E_q[m(R)], exact."""
        key = (metric, stratum, transform)
        if key not in self._exp:
            tot = 0.0
            qs = self.scope(stratum)
            for q in qs:
                e = 0.0
                for pr, o, pm, g in q.states():
                    pl = q.placed((o, pm, g))
                    if transform[0] == "down":
                        new = move_down(pl, transform[1], q.depth)
                    elif transform[0] == "up":
                        new = move_up(pl, transform[1])
                    elif transform[0] == "skew-loss":
                        if o is None or o >= 10:
                            continue
                        new = lowest_down(pl)
                    else:  # "skew-gain": only a query missed in the top 10
                        if o is not None and o < 10:
                            continue
                        new = ideal(q.grades)
                    e += pr * (q.value(metric, new) - q.value(metric, pl))
                tot += e
            self._exp[key] = tot / len(qs)
        return self._exp[key]

    def mean(self, metric, stratum):
        qs = self.scope(stratum)
        tot = 0.0
        for q in qs:
            tot += sum(pr * q.value(metric, q.placed((o, pm, g))) for pr, o, pm, g in q.states())
        return tot / len(qs)

    def solve_down(self, metric, stratum, drop, ks=(3, 5, 8, 12, 20)):
        """(k, pi): the smallest k whose pi = drop / D_k is at most 0.9."""
        if drop <= 0:
            return (ks[0], 0.0)
        for k in ks:
            d = -self.expected(metric, stratum, ("down", k))
            if d > 0 and drop / d <= 0.9:
                return (k, drop / d)
        k = ks[-1]
        return (k, min(1.0, drop / -self.expected(metric, stratum, ("down", k))))

    def solve_up(self, metric, stratum, gain, ks=(1, 2, 3, 5, 8, 20)):
        """(k, pi): the smallest k whose pi = gain / G_k is at most 0.9 (the
        top relevant chunk moved up k ranks with probability pi)."""
        if gain <= 0:
            return (ks[0], 0.0)
        for k in ks:
            d = self.expected(metric, stratum, ("up", k))
            if d > 0 and gain / d <= 0.9:
                return (k, gain / d)
        k = ks[-1]
        return (k, min(1.0, gain / self.expected(metric, stratum, ("up", k))))

    def judge_distractors(self, seed, m=4, among=20):
        """Each query gets m of its first `among` distractors judged
        non-relevant (grade 0 in the gold set), which bpref reads."""
        rng = random.Random(seed)
        for q in self.queries:
            q.judged = frozenset(rng.sample(range(among), m))
        self._exp = {}

    def set_depth(self, depth):
        for q in self.queries:
            q.depth = depth
        self._exp = {}

    # -------- files

    def gold_yaml(self, order=None):
        qs = self.queries if order is None else [self.queries[i] for i in order]
        lines = ["version: 1", "queries:"]
        for q in qs:
            rel = ", ".join([f'"{d}": {g}' for d, g in zip(q.docs(), q.grades)] + [f'"{q.id}-x{x}": 0' for x in sorted(q.judged)])
            lines += [f"  - id: {q.id}", f"    stratum: {q.stratum}", f"    relevant: {{{rel}}}"]
        return "\n".join(lines) + "\n"


def ranking(q, placed):
    docs = q.docs()
    out = [None] * q.depth
    for p, j in placed:
        out[p] = docs[j]
    x = 0
    for i in range(q.depth):
        if out[i] is None:
            out[i] = f"{q.id}-x{x}"
            x += 1
    return out


def run_jsonl(world, placed_by_query, order=None):
    idx = range(len(world.queries)) if order is None else order
    lines = []
    for i in idx:
        q = world.queries[i]
        lines.append(json.dumps({"query_id": q.id, "results": ranking(q, placed_by_query[i])}))
    return "\n".join(lines) + "\n"


# ---------------------------------------------------------------- runs


def draw_pair(world, rng, churn=1.0, regress=None, skew=None):
    """(baseline placements, current placements). `regress`: (stratum, k, pi);
    `skew`: (pi_loss, pi_gain)."""
    base, cur = [], []
    for q in world.queries:
        sb = q.draw(rng)
        pb = q.placed(sb)
        if skew is not None:
            hit10 = sb[0] is not None and sb[0] < 10
            if hit10 and rng.random() < skew[0]:
                pc = lowest_down(pb)
            elif not hit10 and rng.random() < skew[1]:
                pc = ideal(q.grades)
            else:
                pc = pb
        else:
            pc = q.placed(q.draw(rng)) if rng.random() < churn else pb
            in_scope = regress is not None and regress[0] in (None, "all", q.stratum)
            if in_scope and rng.random() < regress[2]:
                pc = move_down(pc, regress[1])
        base.append(pb)
        cur.append(pc)
    return base, cur


def ann_copy(placed, rng, depth, miss=0.1, swaps=(1, 5), lo=4):
    """One noisy copy of a latent ranking, as an approximate-nearest-
    neighbour index re-run gives: with chance `miss` one relevant chunk at
    ranks lo+1..depth (uniformly among those there) drops out of the ranking
    (the ones below move up, a distractor fills the end), then a uniform
    number in `swaps` of swaps, each of two adjacent positions within ranks
    lo+1..depth."""
    slots = [None] * depth
    for p, j in placed:
        slots[p] = j
    if rng.random() < miss:
        cand = [p for p in range(lo, depth) if slots[p] is not None]
        if cand:
            del slots[rng.choice(cand)]
            slots.append(None)
    for _ in range(rng.randint(*swaps)):
        i = rng.randrange(lo, depth - 1)
        slots[i], slots[i + 1] = slots[i + 1], slots[i]
    return [(p, j) for p, j in enumerate(slots) if j is not None]


def draw_ann(world, rng, miss=0.1, swaps=(1, 5), deep=frozenset(), shift=8):
    """(baseline, current): each an independent ann_copy of the query's
    latent ranking, drawn afresh as World draws one; a query in `deep` has
    its latent block moved `shift` ranks down first (its rr and nDCG mass
    only at deep ranks)."""
    base, cur = [], []
    for i, q in enumerate(world.queries):
        latent = q.placed(q.draw(rng))
        if i in deep:
            latent = [(p + shift, j) for p, j in latent]
        base.append(ann_copy(latent, rng, q.depth, miss, swaps))
        cur.append(ann_copy(latent, rng, q.depth, miss, swaps))
    return base, cur


# The test the scenarios that do not name one run under: None writes no
# `test:` key, so the binary's default decides (--test sets it).
DEFAULT_TEST = None


def config_yaml(retrievers, rules, test=None, weighting="micro", decision=None, extra=None, metrics=None):
    test = test or DEFAULT_TEST
    ms = list(metrics or METRICS)
    for r in rules:
        if r["metric"] not in ms:
            ms.append(r["metric"])
    lines = [
        "gold: gold.yaml",
        "baselines: baselines",
        f"metrics: [{', '.join(ms)}]",
        "retrievers:",
    ]
    for r in retrievers:
        lines += [f"  - name: {r}", f"    run: runs/{r}-base.jsonl"]
    lines += ["gate:", f"  weighting: {weighting}"]
    if test and test != "default":
        lines.append(f"  test: {test}")
    if decision:
        lines.append(f"  decision: {decision}")
    for k, v in (extra or {}).items():
        lines.append(f"  {k}: {v}")
    lines.append("  rules:")
    for r in rules:
        lines.append(f"    - metric: {r['metric']}")
        if "max_drop_pct" in r:
            lines.append(f"      max_drop_pct: {r['max_drop_pct']}")
        else:
            lines.append(f"      max_drop: {r.get('max_drop', 0)}")
        st = r.get("strata", "overall")
        lines.append(f"      strata: {st if isinstance(st, str) else '[' + ', '.join(st) + ']'}")
        for k, v in r.items():
            if k not in ("metric", "max_drop", "max_drop_pct", "strata"):
                lines.append(f"      {k}: {v if isinstance(v, str) else json.dumps(v)}")
    return "\n".join(lines) + "\n"


def template_rules(path):
    """The `rules:` block under `gate:` of an `rgate init` template, parsed
    by hand (the subset of YAML the template uses: `- key: value` items,
    `key: value` lines, flow lists, `#` comments)."""
    def scalar(v):
        v = v.split(" #", 1)[0].strip()
        if v.startswith("[") and v.endswith("]"):
            return [x.strip().strip("'\"") for x in v[1:-1].split(",") if x.strip()]
        if len(v) >= 2 and v[0] == v[-1] and v[0] in "'\"":
            return v[1:-1]
        try:
            return int(v)
        except ValueError:
            pass
        try:
            return float(v)
        except ValueError:
            return v

    rules, cur, in_gate, rules_indent = [], None, False, None
    for raw in open(path):
        line = raw.rstrip("\n")
        body = line.strip()
        if not body or body.startswith("#"):
            continue
        ind = len(line) - len(line.lstrip())
        if ind == 0:
            in_gate = body.startswith("gate:")
            rules_indent = None
            continue
        if not in_gate:
            continue
        if rules_indent is None:
            if body.startswith("rules:"):
                rules_indent = ind
            continue
        if ind <= rules_indent and not body.startswith("-"):
            rules_indent = None  # the next key of gate:
            continue
        if body.startswith("- "):
            cur = {}
            rules.append(cur)
            body = body[2:].strip()
        if cur is not None and ":" in body:
            k, v = body.split(":", 1)
            cur[k.strip()] = scalar(v)
    return rules


def at_tolerance_zero(rules):
    """The same rules with every tolerance 0 (absolute)."""
    out = []
    for r in rules:
        r = {k: v for k, v in r.items() if k not in ("max_drop", "max_drop_pct")}
        r["max_drop"] = 0
        out.append(r)
    return out


def rule_label(r):
    st = r.get("strata", "overall")
    tol = f"{r['max_drop_pct']}%" if "max_drop_pct" in r else r.get("max_drop", 0)
    return f"{r['metric']} {st if isinstance(st, str) else '[' + ','.join(st) + ']'} <= {tol}"


class Runner:
    def __init__(self, binary, tmp):
        self.bin = binary
        self.tmp = tmp
        self.calls = 0
        self.failures = []

    def run(self, args, cwd):
        self.calls += 1
        env = dict(os.environ)
        env.pop("RGATE_CONFIG", None)
        env["NO_COLOR"] = "1"
        return subprocess.run([self.bin] + args, cwd=cwd, capture_output=True, text=True, env=env)

    def gate(self, world, pairs, config, gold_text=None, cur_order=None):
        """`pairs`: {retriever: (base, cur)}. Returns (exit code, report)."""
        d = self.tmp
        if os.path.exists(os.path.join(d, "baselines")):
            shutil.rmtree(os.path.join(d, "baselines"))
        os.makedirs(os.path.join(d, "runs"), exist_ok=True)
        with open(os.path.join(d, "gold.yaml"), "w") as f:
            f.write(world.gold_yaml())
        with open(os.path.join(d, "rgate.yaml"), "w") as f:
            f.write(config)
        for name, (base, cur) in pairs.items():
            with open(os.path.join(d, "runs", f"{name}-base.jsonl"), "w") as f:
                f.write(run_jsonl(world, base))
            with open(os.path.join(d, "runs", f"{name}-cur.jsonl"), "w") as f:
                f.write(run_jsonl(world, cur, cur_order))
        r = self.run(["--config", "rgate.yaml", "baseline", "update", "--note", "calibration"], d)
        if r.returncode != 0:
            raise SystemExit(f"baseline update failed ({r.returncode}): {r.stderr}")
        if gold_text is not None:
            with open(os.path.join(d, "gold.yaml"), "w") as f:
                f.write(gold_text)
        args = ["--config", "rgate.yaml", "--format", "json", "gate"]
        for name in pairs:
            args += ["--run", f"{name}=runs/{name}-cur.jsonl"]
        r = self.run(args, d)
        if r.returncode not in (0, 1):
            raise SystemExit(f"gate failed ({r.returncode}): {r.stderr}")
        self.last_stderr = r.stderr
        return r.returncode, json.loads(r.stdout)

    def compare(self, world, runs, args):
        """`runs`: [(name, placements)], the baseline first. Returns (report,
        stderr) of `rgate compare --gold gold.yaml NAME=PATH ... --format json`."""
        d = self.tmp
        os.makedirs(os.path.join(d, "runs"), exist_ok=True)
        with open(os.path.join(d, "gold.yaml"), "w") as f:
            f.write(world.gold_yaml())
        paths = []
        for name, placed in runs:
            path = os.path.join("runs", f"cmp-{name}.jsonl")
            with open(os.path.join(d, path), "w") as f:
                f.write(run_jsonl(world, placed))
            paths.append(f"{name}={path}")
        # No config file is read: the temporary directory has none under config/.
        r = self.run(["compare", "--gold", "gold.yaml", "--format", "json", "--color", "never"] + list(args) + paths, d)
        if r.returncode != 0:
            raise SystemExit(f"compare failed ({r.returncode}): {r.stderr}")
        return json.loads(r.stdout), r.stderr


# ---------------------------------------------------------------- audits


class Audit:
    """Item (g) and "no false cannot-fail", over every gate of every scenario."""

    def __init__(self):
        self.checks = 0
        self.mismatch = []
        self.cannot_fail_warned = 0
        self.cannot_fail_but_failed = []
        self.skew_flags = 0
        self.verdicts = {}

    def add(self, scenario, report):
        for r in report["retrievers"]:
            small = set()
            for w in r.get("warnings", []) + report.get("warnings", []):
                m = re.search(r"too small to gate at all: (.*?): even", w)
                if m and "can never fail" in w:
                    for part in m.group(1).split(", "):
                        small.add(part.split(" (")[0])
            self.cannot_fail_warned += len(small)
            for c in r["checks"]:
                v = c["verdict"]
                self.verdicts[v] = self.verdicts.get(v, 0) + 1
                if c.get("skew") not in (None, False, {}, []):
                    self.skew_flags += 1
                if c.get("p_adjusted") is None or v == "not-gated":
                    continue
                if c["stratum"] in small and v == "fail":
                    self.cannot_fail_but_failed.append((scenario, r["name"], c["metric"], c["stratum"], c["p_adjusted"]))
                ok = bound_agrees(report["settings"]["decision"], c)
                if ok is None:
                    continue
                self.checks += 1
                if not ok:
                    self.mismatch.append((scenario, r["name"], c["metric"], c["stratum"], v, c.get("upper_bound"), c.get("lower_bound"), c.get("tolerance"), c.get("p_adjusted")))


def bound_agrees(decision, c):
    """Whether "fail" holds exactly when the printed bound lies beyond the
    tolerance (None when the check has no bound to read)."""
    tol = c.get("tolerance")
    v = c["verdict"]
    if tol is None:
        return None
    if decision in ("confident-drop", "significant-drop"):
        b = c.get("upper_bound")
        if b is None:
            return None
        if decision == "significant-drop":
            beyond = b < 0 and c["delta"] < -tol
        else:
            beyond = b < -tol
        return (v == "fail") == beyond
    if decision == "non-inferiority":
        b = c.get("lower_bound")
        if b is None:
            return None
        return (v == "fail") == (not b > -tol)
    return None


def find(report, retriever, metric, stratum):
    for r in report["retrievers"]:
        if retriever is None or r["name"] == retriever:
            for c in r["checks"]:
                if c["metric"] == metric and c["stratum"] == stratum:
                    return c
    raise KeyError((retriever, metric, stratum))


# ---------------------------------------------------------------- scenarios


def sc_power(runner, audit, trials, seed, kmin=3):
    """(a) power at the printed mde."""
    w = World([120, 60, 25], seed)
    cases = [
        ("ndcg@10 overall (205 q)", "ndcg@10", "all", "overall"),
        ("ndcg@10 large stratum s1 (60 q)", "ndcg@10", "s1", ["s1"]),
        ("ndcg@10 sign-flip stratum s2 (25 q)", "ndcg@10", "s2", ["s2"]),
        ("hit_rate@3 overall (205 q)", "hit_rate@3", "all", "overall"),
    ]
    return power_at_mde(runner, audit, trials, seed, w, cases, 0.02, "a", kmin)


def power_at_mde(runner, audit, trials, seed, w, cases, tol, tag, kmin=3):
    """For each case (label, metric, stratum, strata[, ks]): the mde the gate
    prints under no change (mean over pilots), then a true drop equal to it
    (the top relevant chunk moved down k ranks, or out of the ranking for
    k = "out", with probability pi; exact by enumeration), how often it is
    caught, and the mde printed during the drop. Rule max_drop `tol`."""
    out = []
    pilots = max(20, trials // 10)
    for case in cases:
        label, metric, stratum, strata = case[:4]
        ks = case[4] if len(case) > 4 else (3, 5, 8, 12, 20)
        ks = tuple(k for k in ks if k == "out" or k >= kmin)
        rng = random.Random(seed * 31 + len(out))
        cfg = config_yaml(["sim"], [{"metric": metric, "max_drop": tol, "strata": strata}])
        mdes = []
        for _ in range(pilots):
            code, rep = runner.gate(w, {"sim": draw_pair(w, rng)}, cfg)
            audit.add(f"{tag}-pilot", rep)
            c = find(rep, "sim", metric, stratum)
            if c.get("mde") is not None:
                mdes.append(c["mde"])
        if not mdes:
            out.append({"case": label, "mde": None})
            print(f"({tag}) {label}: no mde printed", flush=True)
            continue
        mde = sum(mdes) / len(mdes)
        k, pi = w.solve_down(metric, stratum, mde, ks=ks)
        exact = pi * -w.expected(metric, stratum, ("down", k))
        caught, mde_during, test = 0, [], None
        for _ in range(trials):
            code, rep = runner.gate(w, {"sim": draw_pair(w, rng, regress=(stratum, k, pi))}, cfg)
            audit.add(tag, rep)
            c = find(rep, "sim", metric, stratum)
            test = c["test"]
            caught += c["verdict"] == "fail"
            if c.get("mde") is not None:
                mde_during.append(c["mde"])
        r = rate(caught, trials)
        row = {
            "case": label,
            "test": test,
            "max_drop": tol,
            "kmin": kmin,
            "pilots": pilots,
            "mde_no_change": mde,
            "mde_sd": (sum((m - mde) ** 2 for m in mdes) / max(1, len(mdes) - 1)) ** 0.5,
            "k": k,
            "pi": pi,
            "true_drop": exact,
            "caught": r,
            "mde_during_drop": sum(mde_during) / len(mde_during) if mde_during else None,
        }
        out.append(row)
        kk = f", k >= {kmin}"
        print(f"({tag}) {label} [{test}]{kk}: printed mde {mde:.4f} (mean of {pilots}); true drop {exact:.4f} (k={k}, pi={pi:.3f}): caught {fmt_rate(r)}; mde printed during the drop {row['mde_during_drop']}", flush=True)
    return out


def sc_retrievers(runner, audit, trials, seed, tols, shapes, counts=(3, 6), weightings=("micro", "macro")):
    """(b) three and six unchanged retrievers in one gate: exit-1 rate, with
    15 checks a retriever (three metrics, overall and every stratum) or one
    (ndcg@10 overall). (o) is `--only b --b-checks 15 --b-weighting macro
    --b-retrievers 6`: the same draws as the full (b) for that row."""
    out = []
    w = World([60, 25, 8, 4], seed)
    for shape, nret, weighting, tol in itertools.product(shapes, counts, weightings, tols):
            strata = "all" if shape == 15 else "overall"
            metrics = ("ndcg@10", "hit_rate@3", "recall@10") if shape == 15 else ("ndcg@10",)
            rules = [{"metric": m, "max_drop": tol, "strata": strata} for m in metrics]
            rng = random.Random(seed * 17 + nret * 2 + (weighting == "macro"))
            names = [f"r{i}" for i in range(nret)]
            cfg = config_yaml(names, rules, weighting=weighting)
            fails, ret_fails = 0, 0
            for _ in range(trials):
                code, rep = runner.gate(w, {n: draw_pair(w, rng) for n in names}, cfg)
                audit.add("b", rep)
                fails += code == 1
                ret_fails += sum(r["verdict"] == "fail" for r in rep["retrievers"])
            r = rate(fails, trials)
            rr = rate(ret_fails, trials * nret)
            out.append({"retrievers": nret, "weighting": weighting, "max_drop": tol, "checks_per_retriever": shape, "exit1": r, "per_retriever": rr})
            print(f"(b) {nret} unchanged retrievers, {weighting}, strata 60/25/8/4, {shape} check(s) each, max_drop {tol}: exit 1 {fmt_rate(r)}; per retriever {fmt_rate(rr)}", flush=True)
    return out


def sc_small_n(runner, audit, trials, seed):
    """(c) one check, one stratum of n queries, no change, tolerance 0."""
    out = []
    for n in (29, 30, 31, 40, 60, 100):
        w = World([n], seed + n)
        rng = random.Random(seed * 13 + n)
        cfg = config_yaml(["sim"], [{"metric": "ndcg@10", "max_drop": 0, "strata": "overall"}])
        fails, test = 0, None
        for _ in range(trials):
            code, rep = runner.gate(w, {"sim": draw_pair(w, rng)}, cfg)
            audit.add("c", rep)
            c = find(rep, "sim", "ndcg@10", "all")
            test = c["test"]
            fails += c["verdict"] == "fail"
        r = rate(fails, trials)
        out.append({"n": n, "test": test, "fails": r})
        print(f"(c) n = {n} [{test}], ndcg@10, no change, max_drop 0: fails {fmt_rate(r)}", flush=True)
    return out


def sc_macro(runner, audit, trials, seed):
    """(d) the macro overall check under no change."""
    w = World([60, 25, 8, 4], seed)
    rng = random.Random(seed * 7)
    out = []
    for metric in ("ndcg@10", "hit_rate@3"):
        cfg = config_yaml(["sim"], [{"metric": metric, "max_drop": 0, "strata": "overall"}], weighting="macro")
        fails = 0
        for _ in range(trials):
            code, rep = runner.gate(w, {"sim": draw_pair(w, rng)}, cfg)
            audit.add("d", rep)
            fails += find(rep, "sim", metric, "all")["verdict"] == "fail"
        r = rate(fails, trials)
        out.append({"metric": metric, "fails": r})
        print(f"(d) macro overall {metric}, strata 60/25/8/4, no change, max_drop 0: fails {fmt_rate(r)}", flush=True)
    return out


def sc_skew(runner, audit, trials, seed):
    """(e) about a third of the queries lose a little, a few gain a lot,
    expected delta exactly 0: a query with a relevant chunk in the top 10
    loses with probability 0.35 (its lowest one there moves down a rank); a
    query with none there gains with probability pi_gain (the ideal ranking);
    pi_gain solved so that E[delta] = 0. Latent quality U(0.05, 0.95)."""
    w = World([100], seed, u=(0.05, 0.95))
    metric = "ndcg@10"
    loss = w.expected(metric, "all", ("skew-loss",))
    gain = w.expected(metric, "all", ("skew-gain",))
    pl = 0.35
    pg = -pl * loss / gain
    p_hit = sum(sum(pr for pr, o, _, _ in q.states() if o is not None and o < 10) for q in w.queries) / len(w.queries)
    out = {"pi_loss": pl, "pi_gain": pg, "share_losing": pl * p_hit, "share_gaining": pg * (1 - p_hit), "mean_loss_per_loser": loss / p_hit, "mean_gain_per_gainer": gain / (1 - p_hit), "tests": []}
    print(f"(e) skewed: n = 100, {out['share_losing']:.3f} of queries lose {out['mean_loss_per_loser']:.4f} on average, {out['share_gaining']:.3f} gain {out['mean_gain_per_gainer']:.4f}; E[delta] = {pl * loss + pg * gain:.2e}", flush=True)
    for test in ("bootstrap", "t-test", "randomization"):
        rng = random.Random(seed * 5)  # the same data for every test
        cfg = config_yaml(["sim"], [{"metric": metric, "max_drop": 0, "strata": "overall"}], test=test)
        fails, flagged, named = 0, 0, 0
        for _ in range(trials):
            base, cur = draw_pair(w, rng, skew=(pl, pg))
            code, rep = runner.gate(w, {"sim": (base, cur)}, cfg)
            audit.add("e", rep)
            c = find(rep, "sim", metric, "all")
            fails += c["verdict"] == "fail"
            sk = c.get("skew")
            text = json.dumps(rep["retrievers"][0].get("warnings", [])) + json.dumps(sk)
            if sk not in (None, False, {}, []) or "skew" in text.lower():
                flagged += 1
                # The queries named are exactly ones that gained (of the at
                # most 10 the report names), and at least one is named.
                gainers = {w.queries[i].id for i in range(len(w.queries)) if cur[i] != base[i] and (not base[i] or base[i][0][0] >= 10)}
                names = {q["query_id"] for q in (sk or {}).get("queries", [])} if isinstance(sk, dict) else set()
                if names and names <= gainers:
                    named += 1
        r = rate(fails, trials)
        f = rate(flagged, trials)
        out["tests"].append({"test": test, "fails": r, "flagged": f, "named_a_gainer": rate(named, trials)})
        print(f"(e) skewed, {test}: fails {fmt_rate(r)}; skew flagged {fmt_rate(f)}; the queries named are gainers {fmt_rate(rate(named, trials))}", flush=True)
    return out


def sc_skew_false_flags(runner, audit, trials, seed):
    """The skew flag under a symmetric, unchanged scenario: how often it fires."""
    w = World([100], seed + 1)
    rng = random.Random(seed * 3)
    cfg = config_yaml(["sim"], [{"metric": "ndcg@10", "max_drop": 0, "strata": "overall"}])
    flagged = 0
    for _ in range(trials):
        code, rep = runner.gate(w, {"sim": draw_pair(w, rng)}, cfg)
        audit.add("e0", rep)
        c = find(rep, "sim", "ndcg@10", "all")
        sk = c.get("skew")
        flagged += sk not in (None, False, {}, [])
    r = rate(flagged, trials)
    print(f"(e0) unchanged, symmetric: skew flagged {fmt_rate(r)}", flush=True)
    return {"flagged": r}


def sc_geomean(runner, audit, trials, seed):
    """(i) gm_map, gated on the log scale (issue #30): how often an
    unchanged retriever fails it (tolerance 0, so H0 "no drop"; alpha 0.05,
    one check, no correction), with map beside it; and how often a drop
    (the top relevant chunk of 30% of the queries moved down 3 ranks) is
    caught by each. Under `test: bootstrap` gm_map is decided by the t-test
    (the report's test column says so): the bootstrap-t cried wolf on it."""
    w = World([100], seed + 9)
    rules = [{"metric": "gm_map", "max_drop": 0, "strata": "overall"},
             {"metric": "map", "max_drop": 0, "strata": "overall"}]
    out = {}
    for label, test, regress in (("unchanged", "bootstrap", None), ("unchanged", "t-test", None),
                                 ("unchanged", "randomization", None), ("dropped", "randomization", (None, 3, 0.3)),
                                 ("dropped", "bootstrap", (None, 3, 0.3)), ("dropped", "t-test", (None, 3, 0.3))):
        rng = random.Random(seed * 11 + len(test) + (regress is not None))
        cfg = config_yaml(["sim"], rules, test=test, metrics=["gm_map", "map"], extra={"correction": "none"})
        fails = {"gm_map": 0, "map": 0}
        for _ in range(trials):
            code, rep = runner.gate(w, {"sim": draw_pair(w, rng, regress=regress)}, cfg)
            audit.add("i", rep)
            for m in fails:
                fails[m] += find(rep, "sim", m, "all")["verdict"] == "fail"
        rates = {m: rate(k, trials) for m, k in fails.items()}
        out[f"{label} {test}"] = rates
        print(f"(i) {label}, {test}: failed gm_map {fmt_rate(rates['gm_map'])}, map {fmt_rate(rates['map'])}", flush=True)
    return out


def sc_reorder(runner, audit, trials, seed):
    """(f) the gold file (and the current run) with its queries reordered:
    every p and bound identical."""
    w = World([40, 25, 12], seed)
    rng = random.Random(seed * 11)
    rules = [{"metric": m, "max_drop": 0.02, "strata": "all"} for m in ("ndcg@10", "hit_rate@3")]
    same, gold_changed = 0, 0
    diffs = []
    for t in range(trials):
        test = ("bootstrap", "t-test", "randomization")[t % 3]
        cfg = config_yaml(["sim"], rules, test=test)
        base, cur = draw_pair(w, rng)
        _, rep1 = runner.gate(w, {"sim": (base, cur)}, cfg)
        order = list(range(len(w.queries)))
        rng.shuffle(order)
        corder = list(range(len(w.queries)))
        rng.shuffle(corder)
        _, rep2 = runner.gate(w, {"sim": (base, cur)}, cfg, gold_text=w.gold_yaml(order), cur_order=corder)
        audit.add("f", rep1)
        audit.add("f", rep2)
        gold_changed += bool(rep2["retrievers"][0]["gold_changed"])
        keys = ("p_value", "p_adjusted", "upper_bound", "lower_bound", "ci_low", "ci_high", "verdict", "mde")
        a = {(c["metric"], c["stratum"]): tuple(c.get(k) for k in keys) for c in rep1["retrievers"][0]["checks"]}
        b = {(c["metric"], c["stratum"]): tuple(c.get(k) for k in keys) for c in rep2["retrievers"][0]["checks"]}
        if a == b:
            same += 1
        else:
            for key in a:
                if a[key] != b.get(key):
                    diffs.append((test, key, a[key][0], b.get(key, (None,))[0]))
                    break
    r = rate(same, trials)
    print(f"(f) reordered gold file and run: every p and bound identical in {fmt_rate(r)}; gold_changed reported in {gold_changed}; first differences {diffs[:3]}", flush=True)
    return {"identical": r, "gold_changed": gold_changed, "examples": diffs[:5]}


# The rules `rgate init` wrote before issue 26, and the ones it wrote at
# issue 26 (src/templates/rgate.yaml); (h), (j) and (m) read the template's
# current rules at start (--template, --rules).
OLD_INIT_RULES = [
    {"metric": "recall@10", "max_drop": 0.05, "strata": "all"},
    {"metric": "ndcg@10", "max_drop_pct": 10, "strata": "overall"},
]
INIT_RULES = [
    {"metric": "ndcg@10", "max_drop_pct": 1, "strata": "overall"},
    {"metric": "hit_rate@3", "max_drop_pct": 2, "strata": "overall"},
]


class DeepQuery(Query):
    """A query whose relevant block sits `shift` ranks lower than Query
    puts it (chunks pushed past the run's end are not retrieved): its
    recall@10 hangs on a few ranks, so a redraw moves it by whole labels."""

    def __init__(self, q, shift):
        super().__init__(q.id, q.stratum, q.u, q.grades)
        self.shift = shift

    def placed(self, state):
        return [(p + self.shift, j) for p, j in super().placed(state) if p + self.shift < self.depth]


def init_config(runner, world):
    """Runs `rgate init` in an empty directory holding `world`'s gold set at
    eval/gold.yaml and returns (rules, gate keys) of the config it wrote."""
    d = tempfile.mkdtemp(prefix="rgate-init-", dir=runner.tmp)
    os.makedirs(os.path.join(d, "eval"))
    with open(os.path.join(d, "eval", "gold.yaml"), "w") as f:
        f.write(world.gold_yaml())
    r = runner.run(["init"], d)
    if r.returncode != 0:
        raise SystemExit(f"rgate init failed ({r.returncode}): {r.stderr}")
    path = os.path.join(d, "config", "rgate.yaml")
    rules, keys = template_rules(path), template_gate_keys(path)
    shutil.rmtree(d)
    return rules, keys


def template_gate_keys(path):
    """decision, correction and alpha under `gate:` of a config."""
    keys, in_gate = {}, False
    for raw in open(path):
        line = raw.split(" #", 1)[0].rstrip()
        body = line.strip()
        if not body or body.startswith("#"):
            continue
        ind = len(line) - len(line.lstrip())
        if ind == 0:
            in_gate = body.startswith("gate:")
            continue
        if in_gate and ind == 2 and ":" in body:
            k, v = body.split(":", 1)
            if k in ("decision", "correction", "alpha"):
                keys[k] = v.strip()
    return keys


def sc_init_tolerance(runner, audit, trials, seed, sizes_list, churn=0.3, deep_share=0.3, shift=8, factors=(0.7, 2.5), given=None, u=(0.15, 0.95), tails=(False, True)):
    """(q) init's rules on recall@10 drops of 0.7x and 2.5x its tolerance."""
    out = []
    for sizes in sizes_list:
        for heavy in tails:
            w = World(sizes, seed * 31 + sum(sizes) + heavy, names=STRATA3, u=u)
            if heavy:
                drng = random.Random(seed * 37 + sum(sizes))
                w.queries = [DeepQuery(q, shift) if drng.random() < deep_share else q for q in w.queries]
            rules, keys = given or init_config(runner, w)
            rec = [r for r in rules if r["metric"] == "recall@10" and "max_drop" in r]
            if not rec:
                raise SystemExit(f"(q) no absolute recall@10 rule among {rules}")
            tol = float(rec[0]["max_drop"])
            extra = {k: v for k, v in keys.items() if k != "decision"}
            cfg = config_yaml(["search"], rules, decision=keys.get("decision"), extra=extra)
            wl = f"{sum(sizes)} q ({'/'.join(map(str, sizes))}), u ~ U{u}{', heavy tails' if heavy else ''}"
            label = f"{keys.get('decision', 'default decision')}; " + "; ".join(rule_label(r) for r in rules)
            for f in factors:
                drop = f * tol
                k, pi = w.solve_down("recall@10", "all", drop, ks=("lowest-out", "out", 3, 5, 8, 12, 20))
                rng = random.Random(seed * 41 + sum(sizes) * 3 + heavy + int(f * 10))
                fails = weak = 0
                for _ in range(trials):
                    code, rep = runner.gate(w, {"search": draw_pair(w, rng, churn=churn, regress=("all", k, pi))}, cfg)
                    audit.add("q", rep)
                    fails += code == 1
                    warns = [x for r in rep["retrievers"] for x in r.get("warnings", [])] + rep.get("warnings", [])
                    weak += any("cannot enforce their tolerance" in x for x in warns)
                r = rate(fails, trials)
                out.append({"world": wl, "rules": label, "factor": f, "drop": drop, "tolerance": tol, "k": k, "pi": pi,
                            "recall10": w.mean("recall@10", "all"), "exit1": r, "cannot_enforce_warned": rate(weak, trials)})
                print(f"(q) {wl}, churn {churn}: {label}: recall@10 {w.mean('recall@10', 'all'):.3f}, true drop {drop:.4f} = {f}x tolerance {tol} (k={k}, pi={pi:.3f}): exit 1 {fmt_rate(r)}; 'cannot enforce' warned {weak}/{trials}", flush=True)
    return out


def sc_init(runner, audit, trials, seed, rules_sets, churns=(0.25, 1.0)):
    """(h) a true 7% nDCG@10 drop on a 90-query gold set, and an unchanged
    run, under the rules `rgate init` writes and under proposed ones."""
    w = World([30, 30, 30], seed, names=["identifier-lookup", "how-to", "multi-hop"])
    base_mean = w.mean("ndcg@10", "all")
    drop = 0.07 * base_mean
    out = []
    for churn in churns:
        k, pi = w.solve_down("ndcg@10", "all", drop, ks=(3, 5, 8))
        # The drop on top of the churn: the churned queries are redrawn, then
        # moved, so the expected drop is still pi * D.
        for label, rules, extra in rules_sets:
            cfg = config_yaml(["search"], rules, extra=extra)
            for case, regress in (("7% drop", ("all", k, pi)), ("unchanged", None)):
                rng = random.Random(seed * 19 + int(churn * 100) + (regress is None))
                fails = 0
                for _ in range(trials):
                    code, rep = runner.gate(w, {"search": draw_pair(w, rng, churn=churn, regress=regress)}, cfg)
                    audit.add("h", rep)
                    fails += code == 1
                r = rate(fails, trials)
                out.append({"rules": label, "churn": churn, "case": case, "exit1": r, "k": k, "pi": pi, "drop": drop, "baseline_ndcg": base_mean})
                print(f"(h) {label}, churn {churn}, {case} (ndcg@10 {base_mean:.4f}, drop {drop:.4f}, k={k}, pi={pi:.3f}): exit 1 {fmt_rate(r)}", flush=True)
    return out


STRATA3 = ["identifier-lookup", "how-to", "multi-hop"]


def gated(report):
    """(retriever, check) of every gated check of a gate report."""
    for r in report["retrievers"]:
        for c in r["checks"]:
            if c["verdict"] != "not-gated":
                yield r["name"], c


def finite(x):
    return isinstance(x, (int, float)) and math.isfinite(x)


def skewed(c):
    return c.get("skew") not in (None, False, {}, [])


def sc_ann(runner, audit, trials, seed, init_rules, miss=0.1, swaps=(1, 5), deep_share=0.3, shift=8):
    """(j) ANN re-run noise on an unchanged retriever. Each trial draws each
    query's latent ranking (as World draws one, 50 ranks); the baseline and
    the current run are independent noisy copies of it (ann_copy: a miss
    with chance `miss`, a few adjacent swaps, all within ranks 5-50), so the
    two runs are exchangeable and every check's null holds exactly. Gated at
    tolerance 0 by (i) ndcg@10 overall alone, (ii) the rules `rgate init`
    writes with every tolerance 0, (iii) mrr@10 alone on the smallest
    stratum, each its own gate on the same draws. Worlds of 90 (30/30/30)
    and 300 (120/120/60) queries, each plain and heavy-tailed (a share
    `deep_share` of the queries with their relevant block `shift` ranks
    down: their rr and nDCG mass only at deep ranks, their deltas sparse)."""
    out = []
    worlds = [("90 q (30/30/30)", [30, 30, 30]), ("300 q (120/120/60)", [120, 120, 60])]
    for (wlabel, sizes), heavy in itertools.product(worlds, (False, True)):
        w = World(sizes, seed + sum(sizes), names=STRATA3)
        w.set_depth(50)
        drng = random.Random(seed * 23 + sum(sizes))
        deep = frozenset(i for i in range(len(w.queries)) if drng.random() < deep_share) if heavy else frozenset()
        small = STRATA3[sizes.index(min(sizes))]
        configs = [
            ("ndcg@10 overall alone", [{"metric": "ndcg@10", "max_drop": 0, "strata": "overall"}]),
            ("init rules at max_drop 0", at_tolerance_zero(init_rules)),
            (f"mrr@10 on {small} ({min(sizes)} q) alone", [{"metric": "mrr@10", "max_drop": 0, "strata": [small]}]),
        ]
        cfgs = [(label, config_yaml(["search"], rules)) for label, rules in configs]
        rng = random.Random(seed * 29 + sum(sizes) + heavy)
        stats = {label: {"exit1": 0, "checks": {}} for label, _ in cfgs}
        changed = 0
        for _ in range(trials):
            base, cur = draw_ann(w, rng, miss, swaps, deep, shift)
            changed += sum(b != c for b, c in zip(base, cur))
            for label, cfg in cfgs:
                code, rep = runner.gate(w, {"search": (base, cur)}, cfg)
                audit.add("j", rep)
                st = stats[label]
                st["exit1"] += code == 1
                for _, c in gated(rep):
                    key = f"{c['metric']} {c['stratum']} (n {c['n']})"
                    d = st["checks"].setdefault(key, {"fail": 0, "improved": 0, "inconclusive": 0, "fail_skewed": 0, "nonfinite_bound": 0, "tests": []})
                    d["fail"] += c["verdict"] == "fail"
                    d["improved"] += c["verdict"] == "improved"
                    d["inconclusive"] += c["verdict"] == "inconclusive"
                    d["fail_skewed"] += c["verdict"] == "fail" and skewed(c)
                    d["nonfinite_bound"] += not (finite(c.get("upper_bound")) and finite(c.get("lower_bound")))
                    if c["test"] not in d["tests"]:
                        d["tests"].append(c["test"])
        world = f"{wlabel}{', heavy tails (' + str(len(deep)) + ' deep queries, shift ' + str(shift) + ')' if heavy else ''}"
        share = changed / (trials * len(w.queries))
        print(f"(j) {world}: miss {miss}, swaps {swaps[0]}-{swaps[1]} a run; share of queries whose ranking differs {share:.3f}", flush=True)
        for label, _ in cfgs:
            st = stats[label]
            row = {"world": world, "config": label, "exit1": rate(st["exit1"], trials), "share_changed": share, "checks": []}
            print(f"(j)   {label}: exit 1 {fmt_rate(row['exit1'])}", flush=True)
            for key, d in st["checks"].items():
                cr = {"check": key, "tests": d["tests"], "fail": rate(d["fail"], trials), "improved": rate(d["improved"], trials),
                      "inconclusive": rate(d["inconclusive"], trials), "fails_flagged_skewed": d["fail_skewed"], "nonfinite_bounds": d["nonfinite_bound"]}
                row["checks"].append(cr)
                print(f"(j)     {key} [{'/'.join(d['tests'])}]: fail {fmt_rate(cr['fail'])}; improved {fmt_rate(cr['improved'])}; inconclusive {cr['inconclusive']['rate']:.3f}; fails flagged skewed {d['fail_skewed']}/{d['fail']}; non-finite bounds {d['nonfinite_bound']}", flush=True)
            out.append(row)
    return out


def loss_grid(n):
    """Every L for n <= 30, else about 25 values including n-2, n-1, n."""
    if n <= 30:
        return list(range(n + 1))
    return sorted({round(i * n / 22) for i in range(23)} | {n - 2, n - 1, n})


def sc_monotone(runner, audit, seed, ns, tests, gate_seeds):
    """(k) monotone in the loss. One stratum of n queries, one relevant chunk
    each, every baseline query a hit at rank 1; the current run loses L of
    them (the relevant chunk out of the ranking; nested sets: the first L
    of one fixed order). Rule {hit_rate@1, max_drop 0.1} on the stratum,
    for each test (`default` writes no `test:`) and gate seed: the gate's
    exit code must be monotone in L (once 1, always 1). Then `rgate compare`
    on the same files: every printed interval finite, and its upper end
    below 0 from some L on."""
    out = []
    for n in ns:
        qs = [Query(f"q0-{i:04d}", "s0", 0.5, [2]) for i in range(n)]
        w = World([], seed)
        w.strata, w.queries = ["s0"], qs
        order = list(range(n))
        random.Random(seed * 37 + n).shuffle(order)
        base = [[(0, 0)] for _ in qs]
        grid = loss_grid(n)
        curs = {}
        for L in grid:
            lost = set(order[:L])
            curs[L] = [[] if i in lost else [(0, 0)] for i in range(n)]
        for test in tests:
            for gs in gate_seeds:
                extra = {"seed": gs} if gs is not None else None
                cfg = config_yaml(["sim"], [{"metric": "hit_rate@1", "max_drop": 0.1, "strata": ["s0"]}], test=test, metrics=["hit_rate@1"], extra=extra)
                rows, first_fail, violations, nonfinite, used = [], None, [], [], None
                for L in grid:
                    code, rep = runner.gate(w, {"sim": (base, curs[L])}, cfg)
                    audit.add("k", rep)
                    c = find(rep, "sim", "hit_rate@1", "s0")
                    used = c["test"]
                    rows.append([L, code, c["verdict"], c.get("p_adjusted"), c.get("upper_bound")])
                    if not finite(c.get("upper_bound")):
                        nonfinite.append(["gate", L, "upper_bound", c.get("upper_bound")])
                    if code == 1 and first_fail is None:
                        first_fail = L
                    elif code == 0 and first_fail is not None:
                        violations.append(L)
                # compare on the same files
                cargs = ["-m", "hit_rate@1"] + (["--test", test] if test and test != "default" else []) + (["--seed", str(gs)] if gs is not None else [])
                crow, below_from, cviol = [], None, []
                for L in grid:
                    crep, _ = runner.compare(w, [("base", base), ("cur", curs[L])], cargs)
                    c = [x for x in crep["runs"][0]["checks"] if x["stratum"] == "all"][0]
                    for key in ("ci_low", "ci_high", "lower_bound", "upper_bound", "p_value"):
                        if not finite(c.get(key)):
                            nonfinite.append(["compare", L, key, c.get(key)])
                    crow.append([L, c["delta"], c.get("ci_low"), c.get("ci_high"), c.get("p_value")])
                    hi = c.get("ci_high")
                    below = finite(hi) and hi < 0
                    if below and below_from is None:
                        below_from = L
                    elif not below and below_from is not None:
                        cviol.append(L)
                # The identical run (L = 0) at tolerance 0 with on_inconclusive: fail.
                cfg0 = config_yaml(["sim"], [{"metric": "hit_rate@1", "max_drop": 0, "strata": ["s0"]}], test=test, metrics=["hit_rate@1"],
                                   extra=dict(extra or {}, on_inconclusive="fail"))
                code0, rep0 = runner.gate(w, {"sim": (base, curs[0])}, cfg0)
                audit.add("k", rep0)
                ident0 = [code0, find(rep0, "sim", "hit_rate@1", "s0")["verdict"]]
                late = [x for x in nonfinite if first_fail is not None and x[1] >= first_fail]
                row = {"n": n, "test": test, "test_used": used, "gate_seed": gs, "grid": grid, "first_fail": first_fail,
                       "violations": violations, "identical_run": rows[0][1:3], "identical_run_tol0_on_inconclusive_fail": ident0, "compare_ci_high_below_0_from": below_from,
                       "compare_violations": cviol, "nonfinite": nonfinite, "gate": rows, "compare": crow}
                out.append(row)
                ok = "monotone" if not violations else f"NOT monotone: passes at L = {violations}"
                cok = "" if not cviol else f", but not at L = {cviol}"
                print(f"(k) n = {n}, test {test} [{used}]{'' if gs is None else ', gate seed ' + str(gs)}: first failing L {first_fail} ({ok}); L = 0 (identical run): exit {rows[0][1]} {rows[0][2]}, at max_drop 0 + on_inconclusive fail: exit {ident0[0]} {ident0[1]}; "
                      f"compare's upper end < 0 from L = {below_from}{cok}; non-finite values printed: {len(nonfinite)} ({len(late)} at L >= first fail) {nonfinite[:4]}", flush=True)
    return out


def improved_runs(base, rng, k, pi):
    return [move_up(pb, k) if rng.random() < pi else pb for pb in base]


def sc_runner_up(runner, trials, seed, sizes=(50, 50, 50), corrections=("holm", "bh"), alpha=0.05):
    """(l) compare's runner-up statement on two truly equal variants. A
    baseline run and six variants, each the baseline with the top relevant
    chunk of a share of the queries moved up k ranks (k, share solved by
    enumeration for the expected nDCG@10 gain): v2 and v5 +10% of the
    baseline's mean (the same distribution, drawn independently), v1, v3, v4,
    v6 +3%, +5%, +6.5%, +8%. Among the trials where v2 and v5 rank top two,
    how often the statement names a best and claims it "also significantly
    better" than the runner-up (the null holds: must be <= alpha)."""
    w = World(list(sizes), seed + 43, names=STRATA3[:len(sizes)])
    bm = w.mean("ndcg@10", "all")
    shares = {"v1": 0.3, "v2": 1.0, "v3": 0.5, "v4": 0.65, "v5": 1.0, "v6": 0.8}
    solved = {v: w.solve_up("ndcg@10", "all", f * 0.10 * bm) for v, f in shares.items()}
    equal = {"v2", "v5"}
    rng = random.Random(seed * 41)
    tests = ["--test", DEFAULT_TEST] if DEFAULT_TEST and DEFAULT_TEST != "default" else []
    st = {c: {"top2": 0, "best_named": 0, "claimed": 0, "no_runner_up": 0, "levels": set()} for c in corrections}
    for _ in range(trials):
        base, _ = draw_pair(w, rng)
        runs = [("base", base)] + [(v, improved_runs(base, rng, *solved[v])) for v in shares]
        for corr in corrections:
            rep, _ = runner.compare(w, runs, ["-m", "ndcg@10", "--correction", corr, "--alpha", str(alpha)] + tests)
            top2 = {r["name"] for r in rep["ranking"][:2]}
            if top2 != equal:
                continue
            s = st[corr]
            s["top2"] += 1
            stmt = rep["statement"]
            if stmt.get("best") in equal:
                s["best_named"] += 1
                ru = stmt.get("runner_up")
                if ru is None:
                    s["no_runner_up"] += 1
                elif ru.get("name") in equal and ru.get("better"):
                    s["claimed"] += 1
                if ru is not None and ru.get("level") is not None:
                    s["levels"].add(round(ru["level"], 6))
    out = {"n": len(w.queries), "baseline_ndcg10": bm, "variants": {v: {"k": k, "pi": pi, "gain": shares[v] * 0.10 * bm} for v, (k, pi) in solved.items()}, "corrections": {}}
    for corr, s in st.items():
        r = rate(s["claimed"], s["top2"])
        rb = rate(s["claimed"], s["best_named"])
        out["corrections"][corr] = {"top2_trials": s["top2"], "best_named": s["best_named"], "claimed_given_top2": r, "claimed_given_best_named": rb, "runner_up_absent": s["no_runner_up"], "levels": sorted(s["levels"])}
        print(f"(l) equal variants v2, v5 (+{0.10 * bm:.4f} nDCG@10, n {len(w.queries)}), {corr}: top two in {s['top2']}/{trials}; best named in {s['best_named']}; "
              f"'also significantly better than the runner-up' {fmt_rate(r)} (alpha {alpha}); of best named {rb['rate']:.3f}; runner_up absent {s['no_runner_up']}; levels {sorted(s['levels'])}", flush=True)
    return out


def sc_sweep(runner, trials, seed, nvar=32, gain=0.075, sizes=(100, 100, 100)):
    """(l) a large family: nvar variants, each the baseline with a share of
    the queries' top relevant chunk moved up (expected +gain nDCG@10), x 2
    metrics (ndcg@10, recall@10) x 4 scopes (--by-stratum, 3 strata): is a
    winner named (statement.best not null)? And the warnings compare prints."""
    w = World(list(sizes), seed + 47, names=STRATA3[:len(sizes)])
    k, pi = w.solve_up("ndcg@10", "all", gain)
    rng = random.Random(seed * 43)
    tests = ["--test", DEFAULT_TEST] if DEFAULT_TEST and DEFAULT_TEST != "default" else []
    named, warnings, fam, minp, better = 0, {}, None, [], []
    t0 = time.time()
    for _ in range(trials):
        base, _ = draw_pair(w, rng)
        runs = [("base", base)] + [(f"v{i:02d}", improved_runs(base, rng, k, pi)) for i in range(nvar)]
        rep, err = runner.compare(w, runs, ["-m", "ndcg@10,recall@10", "--by-stratum"] + tests)
        fam = rep["settings"].get("family_tests")
        named += rep["statement"].get("best") is not None
        better.append(sum(bool(r.get("better")) for r in rep["ranking"]))
        ps = [c["p_adjusted"] for r in rep["runs"] for c in r["checks"] if finite(c.get("p_adjusted"))]
        minp.append(min(ps) if ps else None)
        for line in err.splitlines():
            line = line.strip()
            if line:
                key = re.sub(r"\d+(\.\d+)?", "#", line)[:300]
                warnings.setdefault(key, [0, line])[0] += 1
    r = rate(named, trials)
    out = {"variants": nvar, "gain": gain, "k": k, "pi": pi, "n": len(w.queries), "family_tests": fam, "winner_named": r,
           "variants_better_per_trial": better, "min_p_adjusted": minp, "warnings": [{"count": c, "example": ex} for c, ex in warnings.values()],
           "seconds_per_compare": (time.time() - t0) / max(1, trials)}
    print(f"(l) sweep: {nvar} variants +{gain} nDCG@10 (k={k}, pi={pi:.3f}), 2 metrics x 4 scopes, n {len(w.queries)}, family {fam}: a winner named {fmt_rate(r)}; "
          f"variants 'better' per trial {better}; smallest p_adj {minp}", flush=True)
    for c, ex in warnings.values():
        print(f"(l)   compare printed ({c}/{trials}): {ex}", flush=True)
    if not warnings:
        print("(l)   compare printed nothing on stderr (no warning)", flush=True)
    return out


def sc_recall_power(runner, audit, trials, seed, init_rules, churns=(0.25, 1.0), how="lowest-out"):
    """(m) power on a real drop: a 5% relative recall@10 drop on 90
    queries (30/30/30, (h)'s world), and an unchanged run, under one rule
    {recall@10, max_drop 0, overall} and under the rules `rgate init` writes
    (as written); both rule sets see the same draws. Exit-1 rate. The drop
    (`how`, --m-drop): "lowest-out", with probability pi a query's lowest
    relevant chunk within the top 10 leaves the ranking (recall@10 loses
    1/R, the top of the ranking mostly kept); "top-down", (h)'s model, the
    top relevant chunk moved down k ranks (nDCG@10 and hit_rate@3 lose as
    much); pi exact by enumeration either way."""
    w = World([30, 30, 30], seed, names=STRATA3)
    bm = w.mean("recall@10", "all")
    drop = 0.05 * bm
    k, pi = w.solve_down("recall@10", "all", drop, ks=("lowest-out",) if how == "lowest-out" else (3, 5, 8, 12, 20))
    sets = [("one rule recall@10 overall max_drop 0", [{"metric": "recall@10", "max_drop": 0, "strata": "overall"}]),
            ("init rules (" + "; ".join(rule_label(r) for r in init_rules) + ")", init_rules)]
    out = []
    for churn in churns:
        for case, regress in (("5% recall@10 drop", ("all", k, pi)), ("unchanged", None)):
            for label, rules in sets:
                rng = random.Random(seed * 53 + int(churn * 100) + (regress is None))
                cfg = config_yaml(["search"], rules)
                fails = 0
                for _ in range(trials):
                    code, rep = runner.gate(w, {"search": draw_pair(w, rng, churn=churn, regress=regress)}, cfg)
                    audit.add("m", rep)
                    fails += code == 1
                r = rate(fails, trials)
                out.append({"rules": label, "churn": churn, "case": case, "drop_model": how, "exit1": r, "k": k, "pi": pi, "drop": drop, "baseline_recall10": bm})
                print(f"(m) {label}, churn {churn}, {case} (recall@10 {bm:.4f}, drop {drop:.4f}, k={k}, pi={pi:.3f}): exit 1 {fmt_rate(r)}", flush=True)
    return out


def sc_power_other(runner, audit, trials, seed, tol=0.0, kmin=3):
    """(n) (a) for other measures: err@10 (overall and a 60-query stratum),
    bpref (4 of each query's first 20 distractors judged non-relevant in the
    gold set) and num_rel_ret (the drop: the top relevant chunk out of the
    ranking). The printed mde under no change, a true drop equal to it,
    caught rate (promise .80), the mde printed during the drop."""
    w = World([120, 60, 25], seed + 5)
    w.judge_distractors(seed + 6)
    cases = [
        ("err@10 overall (205 q)", "err@10", "all", "overall"),
        ("err@10 stratum s1 (60 q)", "err@10", "s1", ["s1"]),
        ("bpref overall (205 q)", "bpref", "all", "overall"),
        ("num_rel_ret overall (205 q)", "num_rel_ret", "all", "overall", ("out",)),
    ]
    return power_at_mde(runner, audit, trials, seed + 5, w, cases, tol, "n", kmin)


def sc_sparse_moves(runner, audit, trials, seed, ks, tests, n=90):
    """(p) an unchanged re-run that moves exactly K of n queries: one stratum,
    one relevant chunk a query, each baseline query a hit at rank 1 with
    probability 0.7; K queries chosen at random are a hit in one run and a
    miss in the other, which run by a fair coin (so baseline and current
    are exchangeable: nothing changed). Rule {hit_rate@1, max_drop 0,
    overall}; exit-1 rate per K and test. A valid test fails at most alpha
    at every K; a drop carried by K lost queries cannot be told from this
    world's all-one-way draws, which happen 2^-K of the time."""
    out = []
    for test in tests:
        cfg = config_yaml(["sim"], [{"metric": "hit_rate@1", "max_drop": 0, "strata": "overall"}], test=test, metrics=["hit_rate@1"])
        for k in ks:
            rng = random.Random(seed * 71 + k)
            qs = [Query(f"q-{i:03d}", "s0", 0.5, [2]) for i in range(n)]
            w = World([], seed)
            w.strata, w.queries = ["s0"], qs
            fails, used = 0, None
            for _ in range(trials):
                hits = [rng.random() < 0.7 for _ in range(n)]
                cur = list(hits)
                for i in rng.sample(range(n), k):
                    a = rng.random() < 0.5
                    hits[i], cur[i] = a, not a
                base = [[(0, 0)] if h else [] for h in hits]
                now = [[(0, 0)] if h else [] for h in cur]
                code, rep = runner.gate(w, {"sim": (base, now)}, cfg)
                audit.add("p", rep)
                used = find(rep, "sim", "hit_rate@1", "all")["test"]
                fails += code == 1
            r = rate(fails, trials)
            out.append({"test": test, "test_used": used, "k": k, "n": n, "exit1": r})
            print(f"(p) unchanged, {k} of {n} queries moved at random, test {test} [{used}]: exit 1 {fmt_rate(r)}", flush=True)
    return out


def check_metrics(runner, seed, extra_metrics=()):
    """This script's metric values equal `rgate eval`'s: on one drawn run of
    the 30-rank world, and on ANN-noised 50-rank runs (scenario j's, deep
    queries included) with judged non-relevant chunks in the gold set (for
    bpref), over every metric a scenario computes (`extra_metrics`: those of
    the init template's rules, where this script can compute them)."""
    w = World([30, 20], seed)
    rng = random.Random(seed)
    base, _ = draw_pair(w, rng)
    worst = eval_check(runner, w, base, METRICS)
    w2 = World([25, 25], seed + 1)
    w2.set_depth(50)
    w2.judge_distractors(seed + 2)
    b2, c2 = draw_ann(w2, random.Random(seed + 3), miss=0.5, deep=frozenset(range(0, 50, 3)))
    more = list(METRICS) + ["hit_rate@1", "err@10", "err@20", "bpref", "num_rel_ret", "recall@50", "ndcg@20", "mrr@50"]
    for m in extra_metrics:
        try:
            metric_value(m, [(0, 2)], [2])
        except (ValueError, TypeError):
            print(f"metric check: {m} is not computed by this script (not checked)", flush=True)
            continue
        if m not in more:
            more.append(m)
    worst = max(worst, eval_check(runner, w2, b2, more), eval_check(runner, w2, c2, more))
    print(f"metric check: largest |script - rgate eval| = {worst:.2e} over {', '.join(more)}", flush=True)
    if worst > 1e-9:
        raise SystemExit("this script's metrics disagree with rgate eval")


def eval_check(runner, w, placed, metrics):
    d = runner.tmp
    with open(os.path.join(d, "gold.yaml"), "w") as f:
        f.write(w.gold_yaml())
    with open(os.path.join(d, "run.jsonl"), "w") as f:
        f.write(run_jsonl(w, placed))
    r = runner.run(["eval", "--gold", "gold.yaml", "--run", "run.jsonl", "--metrics", ",".join(metrics), "--per-query", "--format", "json"], d)
    if r.returncode != 0:
        raise SystemExit(f"eval failed: {r.stderr}")
    rep = json.loads(r.stdout)
    rows = rep.get("per_query") or rep["runs"][0].get("per_query")
    worst, where = 0.0, None
    by_id = {q.id: i for i, q in enumerate(w.queries)}
    for row in rows:
        i = by_id[row["query_id"]]
        q = w.queries[i]
        for m in metrics:
            v = row["values"][m] if "values" in row else row[m]
            e = abs(v - q.value(m, placed[i]))
            if e > worst:
                worst, where = e, (m, q.id, v, q.value(m, placed[i]))
    if worst > 1e-9:
        print(f"metric check: worst {where} (metric, query, rgate, script)", flush=True)
    return worst


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--bin", default="target/release/rgate")
    ap.add_argument("--trials", type=int, default=300)
    ap.add_argument("--only", default="a,b,c,d,e,f,g,h,i,j,k,l,m,n")
    ap.add_argument("--seed", type=int, default=26)
    ap.add_argument("--h-churn", default="0.25,1.0", help="(h): shares of queries whose ranking is redrawn")
    ap.add_argument("--no-init", action="store_true", help="(h): only the --propose rule sets")
    ap.add_argument("--a-kmin", default="3", help="(a): the smallest k a drop may use, comma-separated for several runs")
    ap.add_argument("--b-checks", default="15,1", help="(b): checks per retriever, 15 and/or 1")
    ap.add_argument("--b-tols", default="0", help="max_drop of (b)'s rules, comma-separated")
    ap.add_argument("--b-weighting", default="micro,macro", help="(b)/(o): weightings, micro and/or macro")
    ap.add_argument("--b-retrievers", default="3,6", help="(b)/(o): numbers of unchanged retrievers in one gate")
    ap.add_argument("--b-trials", type=int, default=None, help="(b)/(o): trials (default max(100, 2/3 of --trials))")
    ap.add_argument("--test", default=None, help="the test written as `test:` (and compare's --test) where a scenario names none; default: none written, the binary's default decides")
    ap.add_argument("--template", default=os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "src", "templates", "rgate.yaml"),
                    help="(j, m): the `rgate init` template whose gate rules are read at start")
    ap.add_argument("--rules", default=None, help="(j, m): init's rules as JSON, in place of --template's: [{\"metric\": ..., \"max_drop_pct\"|\"max_drop\": ..., \"strata\": ...}]")
    ap.add_argument("--j-miss", type=float, default=0.1, help="(j): chance of a miss a query and run")
    ap.add_argument("--j-swaps", default="1,5", help="(j): adjacent swaps a query and run, uniform in this range")
    ap.add_argument("--j-deep", type=float, default=0.3, help="(j): heavy-tailed worlds: share of queries whose relevant block sits deep")
    ap.add_argument("--j-shift", type=int, default=8, help="(j): how many ranks down the deep queries' block sits")
    ap.add_argument("--k-n", default="10,30,60,120,200", help="(k): stratum sizes")
    ap.add_argument("--k-tests", default="default,bootstrap,t-test,randomization", help="(k): tests (`default`: no test: key / --test flag)")
    ap.add_argument("--k-seeds", default=None, help="(k): gate/compare seeds, comma-separated (default: the binary's)")
    ap.add_argument("--l-trials", type=int, default=None, help="(l): trials of the six-variant runner-up scenario (default --trials)")
    ap.add_argument("--l-sweep-trials", type=int, default=None, help="(l): trials of the 32-variant sweep (default max(3, --trials // 20))")
    ap.add_argument("--m-churn", default="0.25,1.0", help="(m): shares of queries whose ranking is redrawn")
    ap.add_argument("--m-drop", default="lowest-out", choices=("lowest-out", "top-down"), help="(m): how the recall@10 drop arrives")
    ap.add_argument("--n-tol", type=float, default=0.0, help="(n): max_drop of the rule")
    ap.add_argument("--n-kmin", default="3", help="(n): the smallest k a drop may use, comma-separated for several runs")
    ap.add_argument("--p-k", default="3,4,5,6,8,12,20", help="(p): numbers of moved queries")
    ap.add_argument("--p-tests", default="default,t-test,bootstrap", help="(p): tests (`default`: no test: key)")
    ap.add_argument("--q-sizes", default="17/17/16,34/33/33", help="(q): gold sets (stratum sizes), comma-separated")
    ap.add_argument("--q-factors", default="0.7,2.5", help="(q): true drops as multiples of the recall@10 tolerance")
    ap.add_argument("--q-churn", type=float, default=0.3, help="(q): share of queries whose ranking is redrawn")
    ap.add_argument("--q-u", default="0.15,0.95", help="(q): range of the queries' latent quality (lower: a harder world, recall@10 further from 1)")
    ap.add_argument("--q-tails", default="plain,heavy", help="(q): worlds, plain and/or heavy")
    ap.add_argument("--q-given", default=None, help="(q): [rules, {\"decision\": ..}] as JSON in place of what `rgate init` writes")
    ap.add_argument("--json", default=None, help="also write every figure here")
    ap.add_argument("--propose", default=None, help="extra rule set for (h), as JSON: [label, rules, extra]")
    args = ap.parse_args()
    binary = os.path.abspath(args.bin)
    only = set(args.only.split(","))
    if "o" in only:
        only.add("b")
    global DEFAULT_TEST
    DEFAULT_TEST = args.test
    if args.rules:
        init_rules, init_src = json.loads(args.rules), "--rules"
    else:
        init_rules, init_src = template_rules(args.template), os.path.abspath(args.template)
    t0 = time.time()
    res = {"trials": args.trials, "seed": args.seed, "binary": binary, "test": args.test or "binary's default",
           "init_rules": init_rules, "init_rules_from": init_src}
    if only & {"h", "j", "m"}:
        print(f"init rules ({init_src}): {'; '.join(rule_label(r) for r in init_rules)}", flush=True)
        if not init_rules:
            raise SystemExit("no rules read from the init template")
    with tempfile.TemporaryDirectory(prefix="rgate-calib-") as tmp:
        runner = Runner(binary, tmp)
        check_metrics(runner, args.seed, [r["metric"] for r in init_rules])
        audit = Audit()
        T = args.trials
        if "a" in only:
            res["a_power_at_mde"] = [row for kmin in args.a_kmin.split(",") for row in sc_power(runner, audit, T, args.seed, int(kmin))]
        if "b" in only:
            res["b_retrievers"] = sc_retrievers(runner, audit, args.b_trials or max(100, T * 2 // 3), args.seed, [float(t) for t in args.b_tols.split(",")], [int(x) for x in args.b_checks.split(",")],
                                                [int(x) for x in args.b_retrievers.split(",")], args.b_weighting.split(","))
        if "c" in only:
            res["c_small_n"] = sc_small_n(runner, audit, T, args.seed)
        if "d" in only:
            res["d_macro"] = sc_macro(runner, audit, T, args.seed)
        if "e" in only:
            res["e_skew"] = sc_skew(runner, audit, T, args.seed)
            res["e0_skew_false_flags"] = sc_skew_false_flags(runner, audit, T, args.seed)
        if "i" in only:
            res["i_geomean"] = sc_geomean(runner, audit, T, args.seed)
        if "f" in only:
            res["f_reorder"] = sc_reorder(runner, audit, max(30, T // 5), args.seed)
        if "h" in only:
            sets = [] if args.no_init else [("old init rules", OLD_INIT_RULES, None), ("init rules", init_rules, None)]
            if args.propose:
                for p in json.loads(args.propose):
                    sets.append((p[0], p[1], p[2] if len(p) > 2 else None))
            res["h_init"] = sc_init(runner, audit, T, args.seed, sets, [float(c) for c in args.h_churn.split(",")])
        if "j" in only:
            res["j_ann_noise"] = sc_ann(runner, audit, T, args.seed, init_rules, args.j_miss, tuple(int(x) for x in args.j_swaps.split(",")), args.j_deep, args.j_shift)
        if "k" in only:
            seeds = [int(x) for x in args.k_seeds.split(",")] if args.k_seeds else [None]
            res["k_monotone"] = sc_monotone(runner, audit, args.seed, [int(x) for x in args.k_n.split(",")], args.k_tests.split(","), seeds)
            ks = res["k_monotone"]
            bad = [(r["n"], r["test"], r["gate_seed"]) for r in ks if r["violations"]]
            inf = [(r["n"], r["test"], r["gate_seed"]) for r in ks if r["nonfinite"]]
            ident = [(r["n"], r["test"], r["gate_seed"]) for r in ks if r["identical_run"][0] != 0 or r["identical_run_tol0_on_inconclusive_fail"][0] != 0]
            print(f"(k) summary: gate not monotone in {len(bad)} of {len(ks)} sweeps {bad}; non-finite values printed in {len(inf)} {inf}; identical run exit 1 in {len(ident)} {ident}", flush=True)
        if "l" in only:
            res["l_runner_up"] = sc_runner_up(runner, args.l_trials or T, args.seed)
            res["l_sweep"] = sc_sweep(runner, args.l_sweep_trials or max(3, T // 20), args.seed)
        if "m" in only:
            res["m_recall_power"] = sc_recall_power(runner, audit, T, args.seed, init_rules, [float(c) for c in args.m_churn.split(",")], args.m_drop)
        if "p" in only:
            res["p_sparse_moves"] = sc_sparse_moves(runner, audit, T, args.seed, [int(x) for x in args.p_k.split(",")], args.p_tests.split(","))
        if "q" in only:
            sizes = [tuple(int(x) for x in z.split("/")) for z in args.q_sizes.split(",")]
            given = json.loads(args.q_given) if args.q_given else None
            res["q_init_tolerance"] = sc_init_tolerance(runner, audit, T, args.seed, sizes, args.q_churn,
                                                        factors=[float(x) for x in args.q_factors.split(",")], given=given,
                                                        u=tuple(float(x) for x in args.q_u.split(",")), tails=[t == "heavy" for t in args.q_tails.split(",")])
        if "n" in only:
            res["n_power_other"] = [row for kmin in args.n_kmin.split(",") for row in sc_power_other(runner, audit, T, args.seed, args.n_tol, int(kmin))]
        res["g_bound_audit"] = {
            "gated_checks": audit.checks,
            "mismatches": len(audit.mismatch),
            "examples": audit.mismatch[:8],
            "verdicts": audit.verdicts,
            "cannot_fail_warnings": audit.cannot_fail_warned,
            "cannot_fail_but_failed": audit.cannot_fail_but_failed[:8],
            "cannot_fail_but_failed_count": len(audit.cannot_fail_but_failed),
        }
        print(f"(g) fail <=> printed bound beyond tolerance: {len(audit.mismatch)} mismatches in {audit.checks} gated checks; examples {audit.mismatch[:3]}", flush=True)
        print(f"    verdicts {audit.verdicts}; 'can never fail' warnings {audit.cannot_fail_warned}, of which the check failed {len(audit.cannot_fail_but_failed)}: {audit.cannot_fail_but_failed[:3]}", flush=True)
        res["rgate_calls"] = runner.calls
    res["seconds"] = time.time() - t0
    print(f"{runner.calls} rgate calls in {res['seconds']:.0f} s", flush=True)
    if args.json:
        with open(args.json, "w") as f:
            json.dump(res, f, indent=1)


if __name__ == "__main__":
    sys.exit(main())
