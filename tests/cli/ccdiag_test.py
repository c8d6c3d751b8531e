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


# The hardware sysroot fixtures (tests/fixtures/sysroots) -> (verdict.root_cause,
# culprit fields that must match), shared by the probe tests and the
# collect -> diagnose end-to-end test.
HARDWARE_SYSROOT_VERDICTS = {
    "hgx-h100-healthy": ("no_problem_found", {}),
    "gpu-link-downtrained-x8": ("pcie_link_degraded", {"gpu": "0000:3b:00.0", "rank": 3}),
    "acs-enabled-on-switch": ("pcie_acs_p2p_blocked", {}),
    "acs-unknown-not-root": ("no_problem_found", {}),
    "ib-port-down": ("nic_port_down", {"nic": "mlx5_2", "port": 1}),
    "roce-counters-rising": ("nic_link_flapping", {"nic": "mlx5_5"}),
    "iommu-translating": ("iommu_blocks_p2p", {}),
    "aer-fatal-gpu-fell-off-bus": ("gpu_fell_off_bus", {"gpu": "0000:3b:00.0", "rank": 3}),
    "xid-48-double-bit-ecc": ("gpu_ecc_or_memory_fault", {"gpu": "0000:19:00.0", "rank": 1}),
    "xid-74-nvlink": ("gpu_xid_nvlink_fault", {"gpu": "0000:9e:00.0", "rank": 5}),
    "xid-94-contained-ecc-mig": ("gpu_ecc_or_memory_fault", {"gpu": "0000:bf:00.0"}),
    "xid-119-gsp-timeout": ("gpu_hung_kernel", {"gpu": "0000:c0:00.0"}),
    "qp-error-rank5": ("qp_error_state", {"rank": 5, "pid": 48246, "nic": "mlx5_5"}),
    "container-memlock-64k": ("memlock_limit_too_low", {}),
    "fabric-manager-stopped": ("fabric_manager_not_running", {}),
    "no-gpudirect-module": ("gpudirect_rdma_module_missing", {}),
}

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


_validators = {}


def schema_validator(schema):
    """A validator for `schema`, checked once. jsonschema.validate() checks
    the schema itself again on every call, which on the evidence-kinds schema
    costs far more than the document (minutes over a few thousand items)."""
    key = json.dumps(schema, sort_keys=True)
    v = _validators.get(key)
    if v is None:
        cls = jsonschema.validators.validator_for(schema)
        cls.check_schema(schema)
        v = _validators[key] = cls(schema)
    return v


def validate(doc, schema_name="report.schema.json"):
    if jsonschema is None:
        raise unittest.SkipTest("python3-jsonschema not installed")
    schema_validator(load_schema(schema_name)).validate(doc)


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
