"""Tests of the layover Python bindings (a package, so its conftest does not
shadow tests/integration/conftest.py when both suites run in one pytest)."""
