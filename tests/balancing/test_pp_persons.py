"""PP on a dataset of people (core/balancing/persons.py): one record per person, so the plan's
sensitivity 2 and the (ρ1, ρ2) claim hold per person.

Attacked by differencing: two tables that differ only in person 0's 40 records (all hiv vs all
flu), released with the same seed. Without the reduction the plan's counts — which the noise
then hides at sensitivity 2 — would differ by 80; with it, by at most 2 in L1, for every seed.
"""

from __future__ import annotations

from fractions import Fraction as F

import numpy as np
import pandas as pd
import pytest

from core.balancing.persons import one_record_per_person
from core.balancing.publish import publish
from core.balancing.records import encode_sa
from core.balancing.release import ReleaseSettings
from core.cli import main
from core.privacy import Accountant, Noise
from core.registry import Registry

SETTINGS = ReleaseSettings(F(1, 5), F(1, 2), plan_epsilon=1.0, accept_fallback=True)


def people(person0: str, n_people: int = 300, seed: int = 0) -> pd.DataFrame:
    """Person 0 has 40 records of `person0`; everyone else 1-5 records of random values."""
    rng = np.random.default_rng(seed)
    k = rng.integers(1, 6, n_people - 1)
    uid = np.concatenate([np.zeros(40, int), np.repeat(np.arange(1, n_people), k)])
    others = rng.choice(
        ["cold", "flu", "hiv", "tb", "mumps", "covid"], int(k.sum()),
        p=[0.3, 0.2, 0.15, 0.15, 0.1, 0.1],
    )  # fmt: skip
    frame = pd.DataFrame({"person": uid, "sa": [person0] * 40 + list(others)})
    return frame.sample(frac=1.0, random_state=seed).reset_index(drop=True)  # interleaved


def exact_counts(frame: pd.DataFrame) -> pd.Series:
    return pd.Series(encode_sa(frame["sa"], missing="drop").counts()).astype(int)


def test_each_person_keeps_one_record_and_rows_without_a_person_go():
    frame = people("hiv")
    frame.loc[:4, "person"] = None
    kept = one_record_per_person(frame, "person", Noise.seeded(3))
    assert kept["person"].notna().all() and kept["person"].is_unique
    assert set(kept["person"]) == set(frame["person"].dropna())
    assert one_record_per_person(frame, None, Noise.seeded(3)) is frame  # row = person


@pytest.mark.parametrize("seed", range(25))
def test_neighbouring_people_move_the_plan_counts_by_at_most_two(seed):
    a = one_record_per_person(people("hiv"), "person", Noise.seeded(seed))
    b = one_record_per_person(people("flu"), "person", Noise.seeded(seed))
    diff = exact_counts(a).sub(exact_counts(b), fill_value=0).abs().sum()
    assert diff <= 2
    # the control: the records themselves differ by 80
    raw = exact_counts(people("hiv")).sub(exact_counts(people("flu")), fill_value=0)
    assert raw.abs().sum() == 80


@pytest.mark.parametrize("seed", range(10))
def test_same_seed_publications_differ_only_through_person_zero(seed):
    """The plan is drawn from counts at distance <= 2, with the same noise draws: the noisy
    plan counts differ by at most 2 in L1 (without the reduction they would differ by 80)."""
    plans = []
    for value in ("hiv", "flu"):
        acc = Accountant(Noise.seeded(seed), budget=SETTINGS.cost, rho=SETTINGS.claim)
        pub = publish(people(value), "sa", ["sa"], SETTINGS, acc, unit="person")
        plans.append(pd.Series(pub.metadata["plan_counts"], dtype=float))
        assert pub.metadata["privacy"]["unit"].startswith("one person (column person")
    assert plans[0].sub(plans[1], fill_value=0).abs().sum() <= 2


def test_a_dataset_of_people_publishes_one_row_per_person(tmp_path, registry_dir, capsys):
    frame = people("hiv").assign(precinct=lambda f: f.index % 4)
    frame.to_csv(tmp_path / "t.csv", index=False)
    argv = ["dataset", "add", "d", "--table", f"t={tmp_path / 't.csv'}", "--uid", "person",
            "--epsilon", "5", "--delta", "1e-3", "--pp-columns", "precinct"]  # fmt: skip
    assert main(argv) == 0
    out = tmp_path / "pub.csv"
    base = ["balance", "--dataset", "d", "--sa", "sa", "--rho1", "0.2", "--rho2", "0.5",
            "--perturb", "--out", str(out)]  # fmt: skip
    assert main([*base, "--columns", "precinct"]) == 0, capsys.readouterr().err
    published = pd.read_csv(out)
    assert len(published) == frame["person"].nunique() and "person" not in published
    record = Registry().releases("d")[-1]
    assert record.claim.unit_column == "person" and "one record per person" in record.claim.unit
    spent = Registry().spent("d")
    capsys.readouterr()
    assert main([*base, "--engine", "spark"]) == 2
    assert "one record per person" in capsys.readouterr().err
    assert Registry().spent("d") == spent  # refused before the charge
