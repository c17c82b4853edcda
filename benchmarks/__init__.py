"""evo-agent's benchmarks: SPEC §8's table and the scripts beside it, side by side with the seed and the peers.

One module per measured area, the shared harness apart:

- `run.py` (also `python -m benchmarks`): the SPEC §8 suite (append, resume, listing, picker) that
  writes `RESULTS.md`; `child.py` is what its fresh child processes run; `report.py` the Markdown.
- `append.py`, `resume.py`, `listing.py`, `picker.py`: each area's inputs, measurements, verdict and table.
- `harness.py`: child processes, timing and peak-RSS measurement, formatting, Markdown tables;
  `texts.py`: generated text; `peers.py`: the OpenAI Agents SDK and LangGraph adapters.
- Scripts of their own: `startup.py`, `search.py`, `redaction.py`, `sync.py`, `bash_tool.py`,
  `git_branch.py`; `previous.py` keeps the library's earlier read and meta paths to measure against.

Importing the package puts this work tree's `src/` first on `sys.path`, so what is measured is the
code beside it, installed or not. Each script stays runnable as `python benchmarks/<name>.py`.
"""

from __future__ import annotations

import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
if str(ROOT / "src") not in sys.path:
    sys.path.insert(0, str(ROOT / "src"))  # measure this work tree, installed or not
if str(ROOT) not in sys.path:
    sys.path.insert(1, str(ROOT))  # tests.* (corpora, reference repair, the PostgreSQL cluster)
