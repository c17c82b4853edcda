"""`python -m benchmarks [--quick|--smoke …]`: the SPEC §8 suite, as `python benchmarks/run.py`."""

import sys

from benchmarks.run import main

sys.exit(main())
