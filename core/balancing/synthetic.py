"""A seeded synthetic patient table for demos and benchmarks (no real people).

Quasi-identifiers: age, sex, zip3, admission_year, insurance; a direct identifier patient_id;
and a skewed sensitive attribute Disease whose probabilities are listed in DISEASES (they are
also documented in demo_data/README.md).
"""

from __future__ import annotations

import numpy as np
import pandas as pd

# Disease -> probability (sums to 1). Hypertension (22%) exceeds rho1 = 1/5, so the demo shows
# SA' != SA; the rare tail shows why small groups need their own gamma.
DISEASES: dict[str, float] = {
    "Hypertension": 0.22,
    "Diabetes": 0.15,
    "Asthma": 0.11,
    "Influenza": 0.09,
    "Migraine": 0.08,
    "Arthritis": 0.07,
    "Depression": 0.06,
    "Bronchitis": 0.05,
    "Gastritis": 0.045,
    "Pneumonia": 0.035,
    "Epilepsy": 0.025,
    "Hepatitis": 0.02,
    "HIV": 0.015,
    "Tuberculosis": 0.01,
    "Leukemia": 0.008,
    "Lupus": 0.008,
    "Cystic fibrosis": 0.004,
}
ZIP3 = ("021", "100", "191", "303", "481", "606", "752", "802", "941", "981")
INSURANCE = ("public", "private", "none")


def patient_table(n: int = 12_000, seed: int = 20100601) -> pd.DataFrame:
    """`n` synthetic patients from a seeded generator (same seed -> same table)."""
    rng = np.random.default_rng(seed)
    diseases = np.array(list(DISEASES))
    probs = np.array(list(DISEASES.values()))
    return pd.DataFrame(
        {
            "patient_id": [f"P{i:06d}" for i in range(1, n + 1)],
            "age": np.clip(rng.normal(52, 18, n).round(), 18, 95).astype(int),
            "sex": rng.choice(["F", "M"], n, p=[0.52, 0.48]),
            "zip3": rng.choice(ZIP3, n),
            "admission_year": rng.integers(2015, 2025, n),
            "insurance": rng.choice(INSURANCE, n, p=[0.45, 0.45, 0.10]),
            "Disease": rng.choice(diseases, n, p=probs / probs.sum()),
        }
    )


def zipf_codes(n: int, d: int, seed: int = 0, s: float = 1.0) -> np.ndarray:
    """`n` integer codes over `d` values with Zipf-like weights 1/rank^s (benchmark input)."""
    weights = 1.0 / np.arange(1, d + 1) ** s
    rng = np.random.default_rng(seed)
    return rng.choice(d, size=n, p=weights / weights.sum())
