#!/usr/bin/env python3
"""Reference values for rgate's PPI++ estimator (src/stats/ppi.rs), from
ppi-python (`pip install ppi-python==0.2.3`; the version is checked below).

Each case is one stratum of per-query metric values: `model_all` (the model's
values on all N queries), and for a uniform random sample of n of them
`model_verified` and `people_verified`. They are passed to ppi-python the way
rgate does: Y = people_verified, Yhat = model_verified,
Yhat_unlabeled = model_all (the verified queries included).

Recorded per case:
  lambda        ppi_py.ppi._calc_lam_glm exactly as ppi_mean_ci calls it
                (power tuned, clipped to [0, 1])
  mean          ppi_mean_pointestimate(Y, Yhat, Yhat_unlabeled, lam=None)
  ci[level]     ppi_mean_ci(..., alpha=1-level, alternative="two-sided", lam=None)
  classic_ci    ppi_mean_ci(..., lam=1): PPI without tuning
  people_ci     classical_mean_ci(Y, alpha=1-level)
  p_smaller     ppi_mean_pval(..., null=margin, alternative="smaller",
                lam=lambda): ppi_mean_pval with lam=None does not clip
                lambda in 0.2.3, so the tuned, clipped one is passed

Values are rounded to 4 decimals before anything is computed, so the JSON
holds the exact inputs. Fixed seeds; run from the repository root:

    python3 scripts/ppi_reference.py > tests/fixtures/ppi/reference.json
"""

import json
from importlib.metadata import version

import numpy as np
from ppi_py import classical_mean_ci, ppi_mean_ci, ppi_mean_pointestimate, ppi_mean_pval
from ppi_py.ppi import _calc_lam_glm

PPI_VERSION = version("ppi-python")
assert PPI_VERSION.startswith("0.2."), PPI_VERSION

LEVELS = [0.95, 0.9]


def graded(rng, size):
    """nDCG-like values in [0, 1]: a lump at 0, the rest spread."""
    v = rng.beta(2.0, 1.5, size)
    v[rng.random(size) < 0.2] = 0.0
    return v


def model_for(kind, rng, people):
    size = people.shape[0]
    if kind == "good":
        return np.clip(people + rng.normal(0, 0.12, size), 0, 1)
    if kind == "useless":
        return graded(rng, size)
    if kind == "weak":
        return np.clip(0.95 * graded(rng, size) + 0.05 * people, 0, 1)
    if kind == "negative":
        return np.clip(1.0 - people + rng.normal(0, 0.1, size), 0, 1)
    if kind == "biased":
        return np.clip(people + 0.15 + rng.normal(0, 0.1, size), 0, 1)
    if kind == "binary":
        # hit@k flipped by a judge with 15% false positives, 5% false negatives
        flip = np.where(people > 0.5, rng.random(size) < 0.05, rng.random(size) < 0.15)
        return np.where(flip, 1.0 - people, people)
    raise ValueError(kind)


def people_for(kind, rng, size):
    if kind == "binary":
        return (rng.random(size) < 0.6).astype(float)
    if kind == "delta":
        return rng.choice([-1.0, 0.0, 1.0], size, p=[0.15, 0.7, 0.15])
    return graded(rng, size)


def delta_model(rng, people):
    """Paired deltas as the model sees them: mostly the people's, some moved."""
    size = people.shape[0]
    moved = rng.random(size) < 0.2
    return np.where(moved, rng.choice([-1.0, 0.0, 1.0], size), people)


def case(name, kind, n, big_n, seed):
    rng = np.random.default_rng(seed)
    people_all = np.round(people_for(kind, rng, big_n), 4)
    if kind == "delta":
        model_all = delta_model(rng, people_all)
    else:
        model_all = model_for(kind, rng, people_all)
    model_all = np.round(model_all, 4)
    idx = np.sort(rng.choice(big_n, size=n, replace=False))
    y = people_all[idx]
    yh = model_all[idx]
    yu = model_all

    # lambda as ppi_mean_ci computes it (centring point is the lam=1 estimate)
    centre = ppi_mean_pointestimate(y, yh, yu, lam=1)
    lam = _calc_lam_glm(
        (y - centre).reshape(-1, 1),
        (yh - centre).reshape(-1, 1),
        (yu - centre).reshape(-1, 1),
        np.eye(1),
        coord=None,
        clip=True,
        optim_mode="overall",
    )
    mean = float(np.asarray(ppi_mean_pointestimate(y, yh, yu, lam=None)).item())
    out = {
        "name": name,
        "seed": seed,
        "model_all": [float(v) for v in yu],
        "model_verified": [float(v) for v in yh],
        "people_verified": [float(v) for v in y],
        "lambda": float(lam),
        "mean": mean,
        "people_mean": float(y.mean()),
        "ci": {},
        "classic_ci": {},
        "people_ci": {},
        "p_smaller": [],
    }
    for level in LEVELS:
        lo, hi = ppi_mean_ci(y, yh, yu, alpha=1 - level, alternative="two-sided", lam=None)
        out["ci"][str(level)] = [float(np.asarray(lo).item()), float(np.asarray(hi).item())]
        lo, hi = ppi_mean_ci(y, yh, yu, alpha=1 - level, alternative="two-sided", lam=1)
        out["classic_ci"][str(level)] = [float(np.asarray(lo).item()), float(np.asarray(hi).item())]
        lo, hi = classical_mean_ci(y, alpha=1 - level, alternative="two-sided")
        out["people_ci"][str(level)] = [float(lo), float(hi)]
    for margin in [mean - 0.05, mean, mean + 0.03]:
        margin = round(margin, 4)
        p = ppi_mean_pval(y, yh, yu, null=margin, alternative="smaller", lam=float(lam))
        out["p_smaller"].append([margin, float(np.asarray(p).item())])
    return out


CASES = [
    ("good-10-50", "good", 10, 50, 1),
    ("useless-10-50", "useless", 10, 50, 2),
    ("good-25-200", "good", 25, 200, 3),
    ("negative-25-200", "negative", 25, 200, 4),
    ("biased-50-500", "biased", 50, 500, 5),
    ("useless-100-1000", "useless", 100, 1000, 6),
    ("weak-100-1000", "weak", 100, 1000, 11),
    ("binary-100-2000", "binary", 100, 2000, 7),
    ("delta-60-600", "delta", 60, 600, 8),
    ("negative-200-1000", "negative", 200, 1000, 9),
    ("binary-200-5000", "binary", 200, 5000, 10),
]


def main():
    cases = [case(*c) for c in CASES]
    doc = {
        "about": (
            "PPI++ mean estimates from ppi-python %s (scripts/ppi_reference.py): "
            "Y=people_verified, Yhat=model_verified, Yhat_unlabeled=model_all; "
            "lam=None (power tuned, clipped), two-sided normal intervals; "
            "classic_ci uses lam=1, people_ci is classical_mean_ci, p_smaller is "
            "ppi_mean_pval(null=margin, alternative='smaller', lam=lambda)." % PPI_VERSION
        ),
        "ppi_python": PPI_VERSION,
        "cases": cases,
    }
    print(json.dumps(doc, indent=None, separators=(",", ":")))


if __name__ == "__main__":
    main()
