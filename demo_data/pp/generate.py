"""Write the PP demo tables as CSV (they are also generated in memory by the app and `dpx`).

    .venv/bin/python demo_data/pp/generate.py            # figure9.csv + patients.csv here
    .venv/bin/python demo_data/pp/generate.py --n 50000 --seed 7 --out /tmp/pp

patients.csv is not committed (12,000 rows); figure9.csv (42 rows) is.
"""

from __future__ import annotations

import argparse
from pathlib import Path

from core.balancing.demos import figure9_table
from core.balancing.synthetic import patient_table


def main() -> None:
    ap = argparse.ArgumentParser(description="write the PP demo tables")
    ap.add_argument("--out", default=str(Path(__file__).parent))
    ap.add_argument("--n", type=int, default=12_000, help="synthetic patients")
    ap.add_argument("--seed", type=int, default=20100601)
    args = ap.parse_args()
    out = Path(args.out)
    out.mkdir(parents=True, exist_ok=True)
    figure9_table().to_csv(out / "figure9.csv", index=False)
    patient_table(args.n, args.seed).to_csv(out / "patients.csv", index=False)
    print(f"wrote {out / 'figure9.csv'} and {out / 'patients.csv'}")


if __name__ == "__main__":
    main()
