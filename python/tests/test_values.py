"""Values against pytrec_eval (an independent implementation of trec_eval's
measures) and against the command line's own JSON, bit for bit."""

import json
import math
import subprocess

import pytest
import pytrec_eval
import yaml

import rgate
from conftest import DEMO, TREC, read_jsonl_run, read_qrels, read_trec_run

# rgate's name -> pytrec_eval's measure.
MEASURES = {
    "ndcg@10": "ndcg_cut_10",
    "recall@10": "recall_10",
    "recall@100": "recall_100",
    "P@5": "P_5",
    "RR": "recip_rank",
    "map": "map",
    "ndcg": "ndcg",
}


def pytrec_values(qrels, run, measures):
    ev = pytrec_eval.RelevanceEvaluator(qrels, set(measures))
    return ev.evaluate(run)


def rgate_per_query(ev):
    """{qid: {pytrec measure: value}} from an Evaluation with per_query."""
    names = list(ev.to_dict()["metrics"])  # canonical names, in MEASURES' order
    out = {}
    for row in ev.per_query:
        out[row["query_id"]] = {MEASURES[m]: row[n] for m, n in zip(MEASURES, names)}
    return out


def assert_same(got, want):
    assert set(got) == set(want)
    for q in want:
        for m, v in want[q].items():
            # pytrec_eval's doubles are trec_eval's: equal to the last bit
            # or within one rounding of a different summation order.
            assert math.isclose(got[q][m], v, rel_tol=1e-12, abs_tol=1e-15), (q, m, got[q][m], v)


def test_trec_eval_fixture_from_paths_dicts_and_dataframes_equals_pytrec_eval():
    qrels, run = read_qrels(TREC / "qrels.test"), read_trec_run(TREC / "results.test")
    want = pytrec_values(qrels, run, MEASURES.values())
    by_path = rgate.evaluate(str(TREC / "qrels.test"), str(TREC / "results.test"), list(MEASURES), per_query=True)
    assert_same(rgate_per_query(by_path), want)
    by_dict = rgate.evaluate(qrels, run, list(MEASURES), per_query=True)
    assert by_dict.per_query == by_path.per_query
    pd = pytest.importorskip("pandas")
    gold_df = pd.DataFrame(
        [(q, d, g) for q, docs in qrels.items() for d, g in docs.items()],
        columns=["query_id", "doc_id", "relevance"],
    )
    run_df = pd.DataFrame(
        [(q, d, s) for q, docs in run.items() for d, s in docs.items()],
        columns=["query_id", "doc_id", "score"],
    )
    by_frame = rgate.evaluate(gold_df, run_df, list(MEASURES), per_query=True)
    assert by_frame.per_query == by_path.per_query


def test_demo_gold_set_with_grades_and_strata_equals_pytrec_eval():
    doc = yaml.safe_load((DEMO / "gold.yaml").read_text())
    qrels, strata = {}, {}
    for q in doc["queries"]:
        rel = q["relevant"]
        qrels[q["id"]] = dict(rel) if isinstance(rel, dict) else {d: 1 for d in rel}
        strata[q["id"]] = q["stratum"]
    ranked = read_jsonl_run(DEMO / "runs" / "hybrid.jsonl")
    # pytrec_eval ranks by score: give it scores that keep the list order.
    scored = {q: {d: float(len(ds) - i) for i, d in enumerate(ds)} for q, ds in ranked.items()}
    want = pytrec_values(qrels, scored, MEASURES.values())
    ev = rgate.evaluate(qrels, ranked, list(MEASURES), per_query=True, strata=strata, by_stratum=True)
    assert_same(rgate_per_query(ev), {q: want[q] for q in want})
    assert ev.to_dict()["strata"] == {"multi-hop": 30, "identifier-lookup": 30, "how-to": 30}
    # The same gold set and run read from the files: the same values.
    by_path = rgate.evaluate(str(DEMO / "gold.yaml"), str(DEMO / "runs" / "hybrid.jsonl"), list(MEASURES), per_query=True)
    assert by_path.per_query == ev.per_query


def test_ties_rank_by_document_id_descending_as_pytrec_eval_does():
    qrels = {"q1": {"a": 1}, "q2": {"z": 1}}
    run = {"q1": {"a": 0.5, "b": 0.5, "c": 0.5}, "q2": {"y": 1.0, "z": 1.0}}
    want = pytrec_values(qrels, run, {"recip_rank"})
    ev = rgate.evaluate(qrels, run, "RR", per_query=True)
    got = {r["query_id"]: r["mrr"] for r in ev.per_query}
    assert got == {q: v["recip_rank"] for q, v in want.items()} == {"q1": 1 / 3, "q2": 1.0}


def test_evaluate_to_dict_is_the_cli_json_bit_for_bit(at_root):
    gold, run = "config/demo/gold.yaml", "config/demo/runs/bm25.jsonl"
    cli = subprocess.run(
        ["rgate", "eval", "--gold", gold, "--run", run, "--format", "json", "--per-query", "--by-stratum"],
        capture_output=True, text=True, check=True,
    )
    got = rgate.evaluate(gold, run, per_query=True, by_stratum=True).to_dict()
    # json.loads reads a double back to the same bits; == on the whole
    # tree compares every value exactly.
    assert got == json.loads(cli.stdout)


def test_compare_to_dict_is_the_cli_json(at_root):
    gold = "config/demo/gold.yaml"
    runs = {"bm25": "config/demo/runs/bm25.jsonl", "hybrid": "config/demo/runs/hybrid.jsonl"}
    cli = subprocess.run(
        ["rgate", "compare", "--gold", gold, *[f"{n}={p}" for n, p in runs.items()], "--format", "json", "--resamples", "2000"],
        capture_output=True, text=True, check=True,
    )
    got = rgate.compare(gold, runs, resamples=2000)
    assert got.to_dict() == json.loads(cli.stdout)
    # In memory, the same numbers: only the runs' paths differ.
    mem = rgate.compare(gold, {n: read_jsonl_run(p) for n, p in runs.items()}, resamples=2000)
    assert [c["p_value"] for c in mem.checks] == [c["p_value"] for c in got.checks]
    assert mem.means == got.means


class FakeRanx:
    """What ranx's Qrels and Run hand over: to_dict()."""

    def __init__(self, d):
        self._d = d

    def to_dict(self):
        return self._d


def test_ranx_objects_are_read_through_to_dict():
    qrels, run = {"q1": {"a": 1}}, {"q1": {"b": 0.9, "a": 0.8}}
    assert rgate.evaluate(FakeRanx(qrels), FakeRanx(run), "RR")["rr"] == 0.5


def test_ids_that_do_not_pack_give_the_values_of_ids_that_do():
    # Ids cross into Rust joined by NUL; an int id, an id holding a NUL and
    # a grade given as a float take the one-by-one way. Same input, same
    # values: the NUL-holding id is a document like any other.
    packed = rgate.evaluate(
        {"1": {"d\x01": 2, "7": 1}, "2": {"x": 1}},
        {"1": {"7": 0.5, "d\x01": 0.25, "z": 0.75}, "2": {"y": 0.9, "x": 0.1}},
        "ndcg@10,RR",
    )
    unpacked = rgate.evaluate(
        {1: {"d\x00": 2.0, 7: 1}, 2: {"x": 1}},
        {1: {7: 0.5, "d\x00": 0.25, "z": 0.75}, 2: {"y": 0.9, "x": 0.1}},
        "ndcg@10,RR",
    )
    assert unpacked.to_dict()["metrics"] == packed.to_dict()["metrics"]
    # Hand-computed: q1 ranks z, 7 (grade 1), d (grade 2); q2 ranks y, x.
    assert packed["rr"] == (1 / 2 + 1 / 2) / 2
