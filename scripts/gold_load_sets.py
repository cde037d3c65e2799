# Writes native YAML and JSON gold sets of 2,000 / 16,000 / 100,000 queries,
# each with two labels and their provenance as `gold import` writes them,
# for timing `rgate gold validate --gold gNNN.yaml` (issue 25 item 4).
import json, sys
for n in (2000, 16000, 100000):
    qs = []
    for q in range(n):
        rel = {f"doc{q}.md#0": 1, f"doc{q}.md#1": 2}
        prov = {k: {"source": "person", "labeler": "ana", "at": "2026-11-30T10:00:00Z", "verified": True} for k in rel}
        qs.append({"id": f"q{q}", "text": f"text of query {q}", "stratum": f"s{q % 5}", "relevant": rel, "provenance": prov})
    with open(f"g{n}.json", "w") as f:
        f.write(json.dumps({"version": 1, "queries": qs}, indent=2) + "\n")
    with open(f"g{n}.yaml", "w") as f:
        f.write("version: 1\nqueries:\n")
        for d in qs:
            f.write(f"- id: {d['id']}\n  text: {d['text']}\n  stratum: {d['stratum']}\n  relevant:\n")
            for k, v in d["relevant"].items(): f.write(f"    {k}: {v}\n")
            f.write("  provenance:\n")
            for k, p in d["provenance"].items():
                f.write(f"    {k}:\n      source: person\n      labeler: ana\n      at: 2026-11-30T10:00:00Z\n      verified: true\n")
