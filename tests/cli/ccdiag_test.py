"""Shared helpers for CLI and live tests: run the built ccdiag, parse and
validate its JSON against docs/schema/, and skip (exit 77) when a need is
missing. Every JSON a test produces goes through `run_json`, which validates
it, so the schema is checked against everything the suite exercises."""
import json
import os
import subprocess
import sys
import unittest

SOURCE_DIR = os.environ.get("CCDIAG_SOURCE_DIR", os.path.abspath(os.path.join(os.path.dirname(__file__), "..", "..")))
BUILD_DIR = os.environ.get("CCDIAG_BUILD_DIR", os.path.join(SOURCE_DIR, "build"))
BIN = os.environ.get("CCDIAG_BIN", os.path.join(BUILD_DIR, "ccdiag"))
FIXTURES = os.path.join(SOURCE_DIR, "tests", "fixtures")
EXAMPLES = os.path.join(SOURCE_DIR, "examples", "bundles")
SCHEMA_DIR = os.path.join(SOURCE_DIR, "docs", "schema")

try:
    import jsonschema  # Debian: python3-jsonschema
except ImportError:  # pragma: no cover - setup.sh installs it
    jsonschema = None


def run(args, timeout=60, input=None, env=None):
    """Runs ccdiag with args; returns CompletedProcess (text)."""
    full_env = dict(os.environ)
    full_env["NO_COLOR"] = "1"
    if env:
        full_env.update(env)
    return subprocess.run([BIN] + list(args), capture_output=True, text=True, timeout=timeout,
                          input=input, env=full_env)


def load_schema(name="report.schema.json"):
    with open(os.path.join(SCHEMA_DIR, name)) as f:
        return json.load(f)


def validate(doc, schema_name="report.schema.json"):
    if jsonschema is None:
        raise unittest.SkipTest("python3-jsonschema not installed")
    jsonschema.validate(doc, load_schema(schema_name))


def run_json(args, expect_rc=None, schema="report.schema.json", timeout=60, env=None):
    """Runs ccdiag with --json, checks the exit code, parses and validates."""
    p = run(list(args) + ["--json"], timeout=timeout, env=env)
    if expect_rc is not None and p.returncode != expect_rc:
        raise AssertionError(f"exit {p.returncode}, expected {expect_rc}\nstdout:{p.stdout[-3000:]}\nstderr:{p.stderr[-3000:]}")
    doc = json.loads(p.stdout)
    if schema:
        validate(doc, schema)
    return doc, p


def skip_unless(condition, reason):
    """Skip the whole test module with CTest's SKIP_RETURN_CODE when a need is missing."""
    if not condition:
        print(f"SKIP: {reason}")
        sys.exit(77)
