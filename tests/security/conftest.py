"""The security suite (tests/security/) shares the integration suite's fixtures.

Each case attacks the sandbox as a hostile agent would and asserts the real
filesystem and processes afterwards. Run by `make test` as an unprivileged uid.
"""
import importlib.util
import sys
from pathlib import Path

_INTEGRATION = Path(__file__).resolve().parent.parent / "integration"
sys.path.insert(0, str(_INTEGRATION))
_spec = importlib.util.spec_from_file_location("integration_conftest", _INTEGRATION / "conftest.py")
_shared = importlib.util.module_from_spec(_spec)
_spec.loader.exec_module(_shared)
globals().update({k: v for k, v in vars(_shared).items() if not k.startswith("__")})
