#!/usr/bin/env python3
"""Generate rgate's shipped demo data: a gold set and three retrieval runs.

Writes, under config/demo/ (or --out DIR):

  gold.yaml                   90 labeled queries in rgate's native YAML form
  runs/bm25.jsonl             a keyword (BM25) retriever
  runs/hybrid.jsonl           keyword + dense retriever, the better system
  runs/hybrid-regressed.jsonl hybrid after a breaking tokenizer change

The corpus is the documentation of "Lumen", a fictional hosted vector search
API (indexes, documents, hybrid queries, SDKs, a CLI, webhooks, billing).
Every doc file is split into numbered chunks, `docs/auth.md#0` .. `#N`; the
chunk ids of all files form the universe that runs draw their results from.

Why the data looks the way it does:

- Three strata of 30 queries each, because a gate is only as useful as the
  strata it can tell apart: `identifier-lookup` (an error code, config key,
  endpoint or env var), `how-to` (a task) and `multi-hop` (the answer spans
  2-4 chunks of different files, mostly with graded labels, 2 = essential,
  1 = helpful). A few labels are grade 0: chunks a retriever returned that a
  labeler judged not relevant.
- The runs are simulated, not retrieved. Each relevant chunk has a latent
  difficulty shared by all retrievers (so the runs are paired the way real
  systems are: a hard query is hard for both), plus per-retriever noise.
  BM25 is strong on exact identifiers and weak on paraphrase; hybrid is
  better on how-to and multi-hop and about level on identifiers, so the
  improvement is real but not uniform: some queries get worse.
- hybrid-regressed is hybrid after a keyword-tokenizer change that splits on
  `-` and `_`: "LMN-4031" becomes "lmn" + "4031" and "max_batch_size" three
  common words, so sibling chunks (other error codes, other settings of the
  same page) outrank the answer. On 12 identifier lookups the relevant chunk
  falls to rank 5-20 or out of the top 20; the other two strata keep their
  rankings (a few adjacent swaps deep in the list). The drop is confined to
  one stratum and large enough for a paired bootstrap on 30 queries to flag.
- Distractors come mostly from the answer's own page and neighbouring pages,
  as a real retriever's near misses do, and partly from the whole corpus.

The script uses only the standard library and a fixed seed; re-running it
reproduces the files byte for byte.

    python3 scripts/make_demo.py [--out DIR]
"""

from __future__ import annotations

import argparse
import json
import math
import random
from pathlib import Path

SEED = 20261129
DEPTH = 20  # results per query in every run

# --------------------------------------------------------------------------
# The corpus: doc files, a neighbourhood group each, and one title per chunk.
# Only the ids reach the output; the titles keep the labels honest.
# --------------------------------------------------------------------------
DOCS: list[tuple[str, str, list[str]]] = [
    ("docs/quickstart.md", "start", [
        "Sign up and get an API key", "Install an SDK", "Create your first index",
        "Upsert documents", "Run your first query", "Next steps"]),
    ("docs/concepts.md", "data", [
        "Overview", "Indexes", "Namespaces", "Documents and metadata",
        "Vectors and dimensions", "Hybrid search", "Consistency model"]),
    ("docs/auth.md", "auth", [
        "API keys and tokens", "The Authorization header", "Key scopes",
        "Rotating keys without downtime", "Short-lived tokens (POST /v1/auth/token)",
        "SSO / SAML for the dashboard", "IP allowlists", "Troubleshooting 401 and 403"]),
    ("docs/api/keys.md", "auth", [
        "Keys API overview", "POST /v1/keys", "GET /v1/keys",
        "DELETE /v1/keys/{id}", "expires_at and key prefixes (lmn_live_, lmn_test_)",
        "PATCH /v1/keys/{id}"]),
    ("docs/api/indexes.md", "api", [
        "Indexes API overview", "POST /v1/indexes: dimension, metric",
        "Distance metrics", "GET /v1/indexes/{name}: status values",
        "PATCH /v1/indexes/{name}: replicas, ef_search", "DELETE and deletion_protection",
        "Aliases (POST /v1/aliases)", "Collections"]),
    ("docs/api/documents.md", "api", [
        "Document model", "POST /v1/indexes/{index}/documents (upsert)",
        "Batching and max_batch_size", "PATCH: partial metadata updates",
        "Delete by id and delete by filter", "Fetch by id",
        "Idempotency-Key header", "Async upserts and operation ids"]),
    ("docs/api/query.md", "api", [
        "POST /v1/indexes/{index}/query", "top_k, include_metadata, include_vectors",
        "Filter expressions", "Hybrid alpha", "Reranking", "Pagination cursors",
        "Score semantics", "consistency: strong", "Query by id"]),
    ("docs/filters.md", "data", [
        "Filter language overview", "Operators ($eq, $in, $gt, $and, ...)",
        "Nested fields and arrays", "Date ranges", "filterable_fields and performance",
        "Filter errors (LMN-4221)"]),
    ("docs/indexing.md", "data", [
        "How indexing works", "HNSW: m and ef_construction", "ef_search",
        "When an index rebuilds", "Keyword analyzers (standard, whitespace, code)",
        "Freshness and indexing lag", "Sparse vectors", "Reindexing with aliases"]),
    ("docs/embeddings.md", "data", [
        "Built-in embeddings", "Models and dimensions (lumen-embed-small, -large)",
        "Bring your own vectors", "Changing the embedding model",
        "chunk_size and chunk_overlap", "Embedding tokens and pricing", "Multilingual text"]),
    ("docs/sdk/python.md", "sdk", [
        "pip install lumen-sdk", "Creating a client (LUMEN_API_KEY)",
        "Batch upserts", "AsyncLumen", "Retries: max_retries, backoff",
        "Timeouts", "Logging (LUMEN_LOG)", "DataFrames"]),
    ("docs/sdk/typescript.md", "sdk", [
        "npm install @lumen/sdk", "Creating a client", "Edge runtimes and fetch",
        "Types", "Retries", "Browsers: never ship a secret key"]),
    ("docs/sdk/go.md", "sdk", [
        "go get", "Client", "Contexts and timeouts", "Iterators and pagination",
        "errors.As and *lumen.Error"]),
    ("docs/cli.md", "sdk", [
        "Installing the lumen CLI", "lumen auth login (--device)",
        "Profiles (~/.config/lumen/config.toml)", "lumen index create",
        "lumen import (jsonl, parquet)", "lumen export", "LUMEN_PROFILE and env overrides"]),
    ("docs/configuration.md", "sdk", [
        "Precedence", "Environment variables (LUMEN_API_KEY, LUMEN_REGION, LUMEN_BASE_URL, ...)",
        "Client options", "Index settings", "Project settings",
        "Proxies, HTTPS_PROXY and LUMEN_CA_BUNDLE"]),
    ("docs/errors.md", "ops", [
        "Error format: code, message, request_id", "LMN-4010, LMN-4011: invalid or expired key",
        "LMN-4031, LMN-4032: scope, IP not allowed", "LMN-4040, LMN-4041: not found",
        "LMN-4090, LMN-4091: conflict, index not ready", "LMN-4130, LMN-4131: payload, batch too large",
        "LMN-4220, LMN-4221: dimension mismatch, invalid filter",
        "LMN-4290, LMN-4291: rate limit, quota", "LMN-5000, LMN-5030: server errors",
        "Which errors to retry"]),
    ("docs/limits.md", "ops", [
        "Limits by plan", "Rate limits", "Request size and batch limits",
        "Metadata limits", "Index limits (dimension, count)", "top_k and result limits",
        "Requesting an increase"]),
    ("docs/webhooks.md", "ops", [
        "Webhooks overview", "Event types (index.ready, import.completed, usage.threshold)",
        "Registering an endpoint and its signing secret", "Lumen-Signature verification",
        "Delivery and retries", "Replay protection", "lumen webhooks trigger"]),
    ("docs/billing.md", "billing", [
        "Plans", "What is metered", "Read units", "Invoices and payment",
        "Usage alerts and budgets", "Downgrades and overages", "Free plan: paused indexes"]),
    ("docs/regions.md", "ops", [
        "Regions", "Choosing a region (LUMEN_REGION)", "Data residency",
        "Cross-region replication", "Moving an index between regions"]),
    ("docs/backups.md", "ops", [
        "Snapshots", "Creating a snapshot", "Restoring", "Retention",
        "Point-in-time recovery", "Export to S3"]),
    ("docs/security.md", "auth", [
        "Encryption at rest", "TLS", "Customer-managed keys",
        "Private networking", "Audit logs", "Compliance"]),
    ("docs/monitoring.md", "ops", [
        "Dashboard metrics", "Prometheus endpoint (/v1/metrics)", "Latency and p99",
        "Usage metrics", "Alerts", "Request logs and request_id"]),
    ("docs/migration/v1-to-v2.md", "sdk", [
        "What changed in SDK 2.0", "Client construction", "Renamed methods",
        "Exception classes", "Async changes", "1.x deprecation timeline"]),
    ("docs/guides/rag.md", "guides", [
        "RAG with Lumen", "Chunking documents", "Metadata for citations",
        "Hybrid search for RAG", "Reranking", "Evaluating retrieval", "Caching"]),
    ("docs/guides/multitenancy.md", "guides", [
        "Tenancy patterns", "Namespace per tenant", "Per-tenant keys",
        "Deleting a tenant's data", "Noisy neighbours", "Tenant limits"]),
    ("docs/troubleshooting.md", "ops", [
        "Start here", "Slow queries", "Missing results after upsert", "Low recall",
        "Timeouts", "Connection errors and proxies", "Contacting support"]),
    ("docs/changelog.md", "start", [
        "2025-11", "2025-09", "2025-06", "2025-03", "2024-12"]),
]

# --------------------------------------------------------------------------
# The gold set, by stratum. Labels: a list (binary, grade 1) or a dict of
# grades (2 = essential, 1 = helpful, 0 = judged not relevant). Short chunk
# references "auth#3" expand to "docs/auth.md#3".
# --------------------------------------------------------------------------
IDENTIFIER = [
    ("What does error LMN-4031 mean?", {"errors#2": 1, "errors#1": 0}),
    ("LMN-4091 index not ready", ["errors#4"]),
    ("default value of max_batch_size", ["api/documents#2"]),
    ("what is LUMEN_BASE_URL used for", ["configuration#1"]),
    ("ef_search default", {"indexing#2": 1, "troubleshooting#3": 0}),
    ("LMN-4220 on upsert", ["errors#6"]),
    ("POST /v1/keys request body", ["api/keys#1"]),
    ("Lumen-Signature header format", ["webhooks#3"]),
    ("lumen-embed-large dimensions", ["embeddings#1"]),
    ("LMN-4290", ["errors#7", "limits#1"]),
    ("what does deletion_protection do", ["api/indexes#5"]),
    ("LUMEN_LOG=debug", ["sdk/python#6"]),
    ("max number of filterable_fields", ["filters#4", "limits#3"]),
    ("how long is an Idempotency-Key kept?", ["api/documents#6"]),
    ("GET /v1/indexes/{name} status values", ["api/indexes#3"]),
    ("LMN-4131 batch too large", {"errors#5": 1, "limits#2": 0}),
    ("chunk_overlap default", ["embeddings#4"]),
    ("LUMEN_CA_BUNDLE", ["configuration#5"]),
    ("max top_k", ["limits#5"]),
    ("$in operator syntax", ["filters#1"]),
    ("index.ready webhook payload", ["webhooks#1"]),
    ("lumen import --format parquet", ["cli#4"]),
    ("LMN-5030 during maintenance window?", ["errors#8"]),
    ("max_retries default in python sdk", ["sdk/python#4"]),
    ("what is the lmn_test_ prefix on my key", ["api/keys#4"]),
    ("analyzer: code", ["indexing#4"]),
    ("LUMEN_PROFILE env var", ["cli#6"]),
    ("/v1/metrics prometheus", ["monitoring#1"]),
    ("consistency: strong in query", ["api/query#7"]),
    ("error LMN-4011 expired key", ["errors#1", "auth#7"]),
]

HOW_TO = [
    ("How do I rotate an API key without downtime?",
     {"auth#3": 2, "api/keys#1": 1, "api/keys#3": 1}),
    ("how to verify webhook signatures in python", ["webhooks#3", "webhooks#5"]),
    ("delete all documents matching a metadata filter", ["api/documents#4"]),
    ("How do I set up hybrid search (keyword + vector)?", ["api/query#3", "concepts#5"]),
    ("how to change the embedding model on an existing index",
     {"embeddings#3": 2, "indexing#7": 1}),
    ("move an index from us-east-1 to eu-west-1", ["regions#4", "backups#2"]),
    ("restore index from snapshot", ["backups#2"]),
    ("paginate through query results past the first page", ["api/query#5"]),
    ("make the python client retry on 429", ["sdk/python#4", "errors#9"]),
    ("using lumen behind a corporate proxy", ["configuration#5", "troubleshooting#5"]),
    ("create a read-only key for our frontend",
     {"auth#2": 2, "api/keys#1": 1, "sdk/typescript#5": 1}),
    ("fastest way to upsert ~1M documents", ["sdk/python#2", "api/documents#7"]),
    ("set up a usage alert before we hit our budget", ["billing#4", "monitoring#4"]),
    ("export all vectors to S3", ["backups#5", "cli#5"]),
    ("log in with the CLI on a headless server", ["cli#1"]),
    ("filter by date range", ["filters#3"]),
    ("How can I add a replica to an index?", ["api/indexes#4"]),
    ("test my webhook endpoint locally", ["webhooks#6"]),
    ("enable SSO for our team", {"auth#5": 1, "security#5": 0}),
    ("restrict API access to office IP addresses", ["auth#6"]),
    ("set a request timeout in the go sdk", ["sdk/go#2"]),
    ("add a rerank step to my queries", ["api/query#4", "guides/rag#4"]),
    ("point an alias at a new index", ["api/indexes#6", "indexing#7"]),
    ("scrape lumen metrics with prometheus", ["monitoring#1"]),
    ("update metadata without re-sending the vector", ["api/documents#3"]),
    ("use the typescript sdk in cloudflare workers", ["sdk/typescript#2"]),
    ("upgrade python sdk 1.x to 2.0", ["migration/v1-to-v2#1", "migration/v1-to-v2#2"]),
    ("delete one tenant's data for a GDPR request",
     {"guides/multitenancy#3": 2, "api/documents#4": 1}),
    ("find the request id of a slow query to send to support",
     ["monitoring#5", "troubleshooting#6"]),
    ("how do i improve recall, results look incomplete", ["troubleshooting#3", "indexing#2"]),
]

MULTI_HOP = [
    ("nightly import fails with LMN-4131, what batch size should the python sdk use "
     "and what is the max on Pro?",
     {"sdk/python#2": 2, "limits#2": 2, "errors#5": 1}),
    ("can a namespace-scoped key manage webhooks, and which error do I get if not?",
     {"guides/multitenancy#2": 2, "auth#2": 1, "errors#2": 1}),
    ("we're in eu-west-1: are snapshots stored in the same region and how long are "
     "they kept on Pro?",
     {"regions#2": 2, "backups#3": 2, "backups#0": 1}),
    ("new docs don't show up in filtered queries for a few seconds, does consistency "
     "strong fix that?",
     {"indexing#5": 2, "api/query#7": 2, "concepts#6": 1}),
    ("how many read units does a hybrid query with rerank cost",
     {"billing#2": 2, "api/query#4": 1, "api/query#3": 0}),
    ("switching from lumen-embed-small to large: new dimension, reindex, cost",
     {"embeddings#1": 2, "embeddings#3": 2, "embeddings#5": 1, "indexing#7": 1}),
    ("free plan index got paused, do webhooks still fire and how do I resume it",
     {"billing#6": 2, "webhooks#1": 1}),
    ("429s during bulk upsert from 8 workers, what's the limit and the right backoff?",
     {"limits#1": 2, "errors#9": 2, "sdk/python#4": 1}),
    ("webhook signature check fails since we rotated the signing secret",
     {"webhooks#3": 2, "webhooks#2": 1, "webhooks#0": 0}),
    ("per-tenant isolation with separate keys, and keeping one tenant from "
     "throttling the others",
     ["guides/multitenancy#2", "guides/multitenancy#4", "limits#1"]),
    ("do customer managed keys also cover snapshots exported to S3?",
     {"security#2": 2, "backups#5": 2}),
    ("filter on a metadata field added later gives LMN-4221, do I need a rebuild?",
     {"filters#4": 2, "indexing#3": 2, "filters#5": 1}),
    ("raise ef_search for recall and see what it does to p99 latency",
     {"indexing#2": 2, "monitoring#2": 1}),
    ("python async client timing out behind a proxy with a custom CA",
     ["sdk/python#3", "sdk/python#5", "configuration#5"]),
    ("moving our RAG pipeline to hybrid + rerank, what alpha to start with?",
     {"guides/rag#3": 2, "api/query#3": 2, "guides/rag#4": 1}),
    ("after DELETE /v1/keys/{id}, how long until requests with the old key get LMN-4010?",
     {"api/keys#3": 2, "errors#1": 1, "auth#3": 1}),
    ("audit log of who rotated keys, can we ship it to our SIEM",
     {"security#4": 2, "monitoring#5": 1}),
    ("private networking in eu-west-1, does the CLI work over it",
     {"security#3": 2, "regions#1": 1, "cli#2": 1}),
    ("how many indexes on Starter and what happens to extra ones if we downgrade from Pro",
     {"limits#4": 2, "billing#5": 2, "billing#0": 1}),
    ("go sdk: iterate all docs matching a filter and handle LMN-4041",
     ["sdk/go#3", "sdk/go#4", "errors#3"]),
    ("get an import.completed webhook when lumen import finishes",
     {"webhooks#1": 2, "cli#4": 2}),
    ("cross-region replication lag vs read-after-write consistency",
     {"regions#3": 2, "concepts#6": 2}),
    ("LMN-4220 after switching to our own 1536-d vectors",
     {"errors#6": 2, "embeddings#2": 2, "api/indexes#1": 1}),
    ("how to evaluate retrieval quality of our RAG app and track it over time",
     {"guides/rag#5": 2, "monitoring#0": 1, "guides/rag#0": 0}),
    ("sdk 2.0 exception classes for rate limit vs quota exceeded",
     {"migration/v1-to-v2#3": 2, "errors#7": 2}),
    ("storage cost of metadata for 10M docs and the per-doc metadata limit",
     {"billing#1": 2, "limits#3": 2}),
    ("chunking long docs for RAG: built-in chunk_size or do it ourselves?",
     {"embeddings#4": 2, "guides/rag#1": 2, "quickstart#3": 0}),
    ("point in time recovery on enterprise after an accidental delete by filter",
     {"backups#4": 2, "api/documents#4": 1}),
    ("index stuck in rebuilding, queries return LMN-4091",
     {"api/indexes#3": 2, "errors#4": 2, "indexing#3": 1}),
    ("typescript sdk in the browser using short-lived tokens",
     {"sdk/typescript#5": 2, "auth#4": 2, "sdk/typescript#1": 1}),
]

STRATA = [
    ("identifier-lookup", IDENTIFIER),
    ("how-to", HOW_TO),
    ("multi-hop", MULTI_HOP),
]

# --------------------------------------------------------------------------
# Retriever models. A relevant chunk's rank is 1 + floor(exp(x)) with
#   x = mu + sigma * (0.75 * z + 0.66 * e) - GRADE_BOOST * (grade - 1),
# z its difficulty (shared by all retrievers), e per-retriever noise.
# Past DEPTH it is not retrieved. mu is per retriever and stratum.
# --------------------------------------------------------------------------
MODEL = {
    "bm25": {"identifier-lookup": (-0.1, 1.5), "how-to": (1.55, 1.5),
             "multi-hop": (2.6, 1.5)},
    "hybrid": {"identifier-lookup": (-0.6, 1.35), "how-to": (0.3, 1.35),
               "multi-hop": (1.8, 1.4)},
}
GRADE_BOOST = 0.5
SHARED, OWN = 0.75, 0.66

# Regression: identifier lookups whose answer the tokenizer change buries,
# and where to: a rank in the given range, or None for "out of the top 20".
REGRESSED_QUERIES = 12
REGRESSED_RANKS = [(5, 10)] * 3 + [(11, 20)] * 3 + [None] * 6
# Queries per other stratum whose ranking changes by one adjacent swap past rank 5.
REGRESSED_SWAPS_PER_STRATUM = 2


def chunk_universe() -> tuple[list[str], dict[str, list[str]], dict[str, str]]:
    """All chunk ids, the chunks of each doc, and each doc's group."""
    universe: list[str] = []
    by_doc: dict[str, list[str]] = {}
    group: dict[str, str] = {}
    for path, grp, titles in DOCS:
        ids = [f"{path}#{i}" for i in range(len(titles))]
        by_doc[path] = ids
        group[path] = grp
        universe.extend(ids)
    return universe, by_doc, group


def expand(ref: str) -> str:
    name, _, n = ref.partition("#")
    return f"docs/{name}.md#{n}"


def doc_of(chunk: str) -> str:
    return chunk.split("#", 1)[0]


def build_gold(rng: random.Random, universe: list[str]) -> list[dict]:
    known = set(universe)
    items = []
    for stratum, queries in STRATA:
        for text, labels in queries:
            if isinstance(labels, list):
                graded = {expand(r): 1 for r in labels}
                binary = True
            else:
                graded = {expand(r): g for r, g in labels.items()}
                binary = False
            for chunk in graded:
                if chunk not in known:
                    raise SystemExit(f"unknown chunk {chunk!r} in {text!r}")
            items.append({"text": text, "stratum": stratum,
                          "relevant": graded, "binary": binary})
    # Real gold sets are sampled from logs, not written stratum by stratum.
    rng.shuffle(items)
    for n, item in enumerate(items, start=1):
        item["id"] = f"q-{n:03d}"
    return items


def yaml_str(s: str) -> str:
    """A double-quoted YAML scalar (valid JSON string, ASCII only)."""
    return json.dumps(s, ensure_ascii=True)


def write_gold(path: Path, gold: list[dict]) -> None:
    n_graded = sum(1 for q in gold if not q["binary"])
    lines = [
        "# rgate demo gold set: questions about the docs of Lumen, a fictional",
        "# hosted vector search API. Generated by scripts/make_demo.py; edit the",
        "# script, not this file.",
        "#",
        "# 90 queries, 30 per stratum:",
        "#   identifier-lookup  an error code, config key, endpoint or env var",
        "#   how-to             a task (\"rotate a key without downtime\")",
        "#   multi-hop          the answer spans 2-4 chunks of different files",
        "#",
        "# Labels are chunk ids (docs/<file>.md#<n>). A list means binary",
        f"# relevance (grade 1); a map gives grades ({n_graded} queries): 2 = essential,",
        "# 1 = helpful, 0 = judged not relevant. Chunk ids contain '#', so they",
        "# are quoted.",
        "version: 1",
        "queries:",
    ]
    for q in gold:
        rel = q["relevant"]
        if q["binary"]:
            flow = "[" + ", ".join(yaml_str(c) for c in rel) + "]"
        else:
            flow = "{" + ", ".join(f"{yaml_str(c)}: {g}" for c, g in rel.items()) + "}"
        lines += [
            f"  - id: {q['id']}",
            f"    text: {yaml_str(q['text'])}",
            f"    stratum: {q['stratum']}",
            f"    relevant: {flow}",
        ]
    write_text(path, "\n".join(lines) + "\n")


def write_text(path: Path, text: str) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    with open(path, "w", encoding="utf-8", newline="\n") as f:
        f.write(text)


# --------------------------------------------------------------------------
# Rankings
# --------------------------------------------------------------------------
def place(ranked: dict[str, int], fill: list[str]) -> list[str]:
    """Put chunks at their wanted ranks (collisions slide down), fill the rest."""
    slots: list[str | None] = [None] * DEPTH
    for chunk, want in sorted(ranked.items(), key=lambda kv: (kv[1], kv[0])):
        r = want - 1
        while r < DEPTH and slots[r] is not None:
            r += 1
        if r < DEPTH:
            slots[r] = chunk
    taken = {c for c in slots if c is not None}
    pool = iter(c for c in fill if c not in taken)
    return [c if c is not None else next(pool) for c in slots]


def distractors(rng: random.Random, q: dict, universe: list[str],
                by_doc: dict[str, list[str]], group: dict[str, str]) -> list[str]:
    """Unlabeled chunks in a plausible order: own pages, neighbours, anything."""
    labeled = q["relevant"]
    docs = sorted({doc_of(c) for c in labeled})
    groups = sorted({group[d] for d in docs})
    same = [c for d in docs for c in by_doc[d] if c not in labeled]
    near = [c for d, g in sorted(group.items()) if g in groups and d not in docs
            for c in by_doc[d]]
    far = [c for c in universe if c not in labeled and c not in same and c not in near]
    out: list[str] = []
    for i in range(3 * DEPTH):
        # Near the top, near misses come from the same pages; deeper, anything.
        u = rng.random() * (0.6 + i / DEPTH)
        src = same if (u < 0.45 and same) else near if (u < 0.85 and near) else far
        pick = rng.choice(src)
        if pick not in out:
            out.append(pick)
    rest = [c for c in universe if c not in labeled and c not in out]
    rng.shuffle(rest)
    return out + rest


def scores(rng: random.Random, kind: str, stratum: str) -> list[float]:
    """DEPTH strictly decreasing scores shaped like the retriever's."""
    if kind == "bm25":
        top = {"identifier-lookup": (16.0, 25.0), "how-to": (10.0, 18.0),
               "multi-hop": (9.0, 16.0)}[stratum]
        hi, lo, nd, step = rng.uniform(*top), rng.uniform(5.0, 7.5), 2, 0.01
    else:
        hi, lo, nd, step = rng.uniform(0.72, 0.91), rng.uniform(0.30, 0.42), 4, 0.0001
    rest = sorted((rng.uniform(lo, hi) for _ in range(DEPTH - 2)), reverse=True)
    vals = [round(v, nd) for v in [hi, *rest, lo]]
    for i in range(1, DEPTH):  # no ties, so the list order is unambiguous
        if vals[i] >= vals[i - 1]:
            vals[i] = round(vals[i - 1] - step, nd)
    return vals


def simulate(rng: random.Random, fill_rng: random.Random, gold: list[dict],
             universe: list[str], by_doc: dict[str, list[str]],
             group: dict[str, str]) -> dict[str, dict]:
    """Rank draws use rng; distractors and scores use fill_rng, so that
    reshaping the filler never moves a relevant chunk."""
    runs: dict[str, dict] = {"bm25": {}, "hybrid": {}}
    for q in gold:
        qz = rng.gauss(0, 1)
        z = {c: 0.5 * qz + 0.87 * rng.gauss(0, 1) for c in q["relevant"]}
        for kind in runs:
            mu, sigma = MODEL[kind][q["stratum"]]
            want: dict[str, int] = {}
            for chunk, grade in q["relevant"].items():
                if grade == 0:
                    # Pooled and judged: some retriever ranked it high.
                    if rng.random() < 0.7:
                        want[chunk] = rng.randint(1, 10)
                    continue
                x = mu + sigma * (SHARED * z[chunk] + OWN * rng.gauss(0, 1))
                x -= GRADE_BOOST * (grade - 1)
                rank = 1 + math.floor(math.exp(min(x, 10.0)))
                if rank <= DEPTH:
                    want[chunk] = rank
            fill = distractors(fill_rng, q, universe, by_doc, group)
            ids = place(want, fill)
            runs[kind][q["id"]] = list(zip(ids, scores(fill_rng, kind, q["stratum"])))
    runs["hybrid-regressed"] = regress(rng, gold, runs["hybrid"], universe, by_doc)
    return runs


def regress(rng: random.Random, gold: list[dict], hybrid: dict[str, list],
            universe: list[str], by_doc: dict[str, list[str]]) -> dict[str, list]:
    """hybrid after a tokenizer change that splits identifiers apart."""
    out = {qid: list(res) for qid, res in hybrid.items()}

    def hit3(q: dict) -> bool:
        top = [c for c, _ in hybrid[q["id"]][:3]]
        return any(q["relevant"].get(c, 0) >= 1 for c in top)

    victims = [q for q in gold if q["stratum"] == "identifier-lookup" and hit3(q)]
    victims = rng.sample(victims, REGRESSED_QUERIES)
    targets = REGRESSED_RANKS[:]
    rng.shuffle(targets)
    for q, target in zip(victims, targets):
        ids = [c for c, _ in hybrid[q["id"]]]
        rel = [c for c in ids if q["relevant"].get(c, 0) >= 1]
        kept = [c for c in ids if c not in rel]
        # Sibling chunks of the answer's page now match the split tokens.
        siblings = [c for d in sorted({doc_of(c) for c in q["relevant"]})
                    for c in by_doc[d] if c not in q["relevant"] and c not in kept]
        rng.shuffle(siblings)
        kept = siblings[:3] + kept
        kept += [c for c in universe if c not in kept and c not in q["relevant"]]
        want = {}
        if target is not None:
            for c in rel:
                want[c] = rng.randint(*target)
        ids = place(want, kept)
        out[q["id"]] = list(zip(ids, scores(rng, "hybrid", q["stratum"])))
    swapped = []
    for stratum in ("how-to", "multi-hop"):
        ids_s = [q["id"] for q in gold if q["stratum"] == stratum]
        swapped += rng.sample(ids_s, REGRESSED_SWAPS_PER_STRATUM)
    for qid in swapped:
        res = out[qid]
        i = rng.randint(5, DEPTH - 2)
        (a, sa), (b, sb) = res[i], res[i + 1]
        res[i], res[i + 1] = (b, sa), (a, sb)
    return out


def write_run(path: Path, gold: list[dict], run: dict[str, list]) -> None:
    lines = []
    for q in gold:
        results = [{"id": c, "score": s} for c, s in run[q["id"]]]
        lines.append(json.dumps({"query_id": q["id"], "results": results}))
    write_text(path, "\n".join(lines) + "\n")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n", 1)[0])
    root = Path(__file__).resolve().parent.parent
    parser.add_argument("--out", type=Path, default=root / "config" / "demo",
                        help="output directory (default: config/demo)")
    args = parser.parse_args()

    rng = random.Random(SEED)
    fill_rng = random.Random(SEED + 1)
    universe, by_doc, group = chunk_universe()
    gold = build_gold(rng, universe)
    runs = simulate(rng, fill_rng, gold, universe, by_doc, group)

    write_gold(args.out / "gold.yaml", gold)
    for name, run in runs.items():
        write_run(args.out / "runs" / f"{name}.jsonl", gold, run)
    print(f"wrote {len(gold)} queries and {len(runs)} runs over "
          f"{len(universe)} chunks to {args.out}")


if __name__ == "__main__":
    main()
