"""run.py runs every test of the client (python3 -m unittest discovery) and ends with the
plain count line "P passed, F failed, S skipped"; PY_COUNTS, when set, names a file that gets
that line too. It exits non-zero when a test failed."""
from __future__ import annotations

import os
import sys
import unittest
from pathlib import Path


def main() -> int:
    root = Path(__file__).resolve().parent.parent
    sys.path.insert(0, str(root))
    suite = unittest.defaultTestLoader.discover(str(root / "tests"), top_level_dir=str(root))
    result = unittest.TextTestRunner(verbosity=2 if "-v" in sys.argv else 1).run(suite)
    failed = len(result.failures) + len(result.errors) + len(result.unexpectedSuccesses)
    skipped = len(result.skipped)
    passed = result.testsRun - failed - skipped
    line = f"{passed} passed, {failed} failed, {skipped} skipped"
    print(line)
    if os.environ.get("PY_COUNTS"):
        Path(os.environ["PY_COUNTS"]).write_text(line + "\n", encoding="utf-8")
    return 0 if result.wasSuccessful() else 1


if __name__ == "__main__":
    sys.exit(main())
