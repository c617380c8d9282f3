"""Script tests: scripts/ on sys.path, as `python scripts/NAME.py` has it, so that a script's
sibling modules (scripts/vc_baseline_model.py) import as they do when it runs."""

import sys
from pathlib import Path

SCRIPTS = Path(__file__).resolve().parents[2] / "scripts"
if str(SCRIPTS) not in sys.path:
    sys.path.insert(0, str(SCRIPTS))
