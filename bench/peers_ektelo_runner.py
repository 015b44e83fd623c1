"""Runs ektelo's standalone plans (UGrid, AGrid, HB, DAWA) on one matrix — executed by
bench/peers_ektelo.py with the python of a throwaway venv where ektelo is importable.

ektelo is never installed into DP Explorer's environment nor committed. How the venv was made
(ektelo pins numpy 1.16, which does not build on Python 3.11; these are the smallest changes
that let its code run on numpy 2 — in the throwaway copy only):

    git clone ektelo (or `fetch github:ektelo/ektelo`) into DIR; python3 -m venv DIR/venv
    DIR/venv/bin/pip install numpy scipy networkx future swig pandas pyyaml
    in ektelo/algorithm/dawa/cutils/{cutil.i,numpy.i}: PyInt_Check/PyInt_AsLong/PyString_Check
      -> PyLong_Check/PyLong_AsLong/PyUnicode_Check; SWIG_Python_AppendOutput(..., array) gets
      a third argument 1; then `python setup.py build_ext -b ./cutils/ --swig-cpp` there
    ektelo/algorithm/ahp, client/mapper.py, private/pselection.py: the Cython modules (AHP,
      PrivBayes; unused here) imported lazily / set to None
    private/measurement.py: np.abs(A) -> abs(A) (numpy 2 no longer dispatches to __abs__)
    support.py mapping_statistics: flatten np.unique's inverse (numpy 2 keeps the input shape)
    environment: EKTELO_DATA, EKTELO_HOME, EKTELO_LOG_PATH set to any directory

usage: runner.py JOBS.json   (JSON: {"matrix": npy, "workload": npy (q, 4 half-open r0 r1 c0 c1),
        "jobs": [[method, eps, seed, out.npy], ...]})
"""

import json
import sys
import time

import numpy as np
from ektelo.matrix import EkteloMatrix
from ektelo.plans import standalone
from scipy import sparse

with open(sys.argv[1]) as fh:
    spec = json.load(fh)
F = np.load(spec["matrix"]).astype(int)
Q = np.load(spec["workload"])
shape = F.shape
# The workload as an explicit sparse matrix (one row per rectangle): ektelo's RangeQueries
# would make GreedyH densify a Kronecker Gram of 65,536^2 entries (32 GiB) at 256 x 256.
idx = np.arange(F.size).reshape(shape)
rows, cols = [], []
for i, (r0, r1, c0, c1) in enumerate(Q):
    cells = idx[r0:r1, c0:c1].reshape(-1)
    rows.append(np.full(len(cells), i))
    cols.append(cells)
rows, cols = np.concatenate(rows), np.concatenate(cols)
W = EkteloMatrix(sparse.csr_matrix((np.ones(len(rows)), (rows, cols)), shape=(len(Q), F.size)))
n = int(F.sum())  # ektelo's UGrid/AGrid take the data scale as a (here: true) parameter
for method, eps, seed, out in spec["jobs"]:
    t = time.time()
    if method == "ugrid":
        plan = standalone.UGrid(n)
    elif method == "agrid":
        plan = standalone.AGrid(n)
    elif method == "hb":
        plan = standalone.HB(shape)
    elif method == "dawa":
        plan = standalone.Dawa(shape, 0.25, True)  # the paper's ratio; power-of-two intervals
    else:
        raise SystemExit(f"unknown method {method}")
    x = plan.Run(W, F, float(eps), int(seed))
    np.save(out, np.asarray(x, dtype=float).reshape(shape))
    print(f"{method} eps={eps} seed={seed} {time.time() - t:.1f}s", file=sys.stderr)
