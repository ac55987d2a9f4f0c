"""The same question over the same pages gives the same answer in every process.

Python salts string hashes per process, so a set of words yields its members in another order
each run; a float sum over that order can end a hair apart, and a tie between two equally good
clauses then goes either way. The answer must not depend on it.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[4]

# Clause one weighs 0.6; clause two three words of 0.1, 0.2 and 0.3, which also make 0.6 but
# sum to 0.6000000000000001 in some orders: a tie, which the earlier clause wins.
PROGRAM = """
import json
from services.verifier.fragments import shorten
sentence = "omega omega omega omega, alpha beta gamma omega"
weights = {"omega": 0.0, "delta": 0.6, "alpha": 0.1, "beta": 0.2, "gamma": 0.3}
shown = shorten(sentence.replace("omega omega omega omega", "delta omega omega omega"), weights,
                lambda text: text.replace(",", " ").split(), limit=4)
print(json.dumps(shown))
"""


def test_the_clause_an_answer_shows_does_not_depend_on_the_process_hash_seed() -> None:
    shown = set()
    for seed in range(8):
        env = {**os.environ, "PYTHONHASHSEED": str(seed), "PYTHONPATH": str(ROOT)}
        out = subprocess.run([sys.executable, "-c", PROGRAM], env=env, cwd=ROOT, capture_output=True, text=True,
                             check=True, timeout=60)
        shown.add(json.loads(out.stdout))
    assert len(shown) == 1, shown
    assert "delta" in shown.pop()
