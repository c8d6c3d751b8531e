"""Runs the failing scenarios of test_torch_jobs.py again with another rank as
the culprit and reads them post-mortem, as a user would: `diagnose --log` on
the console and the per-rank logs, and `ccdiag fr` on the dumps. The CTest
classes fix the culprit at rank 2 (and 0 or 3 for a few); a reader that
learned "rank 2" or "the rank in the middle" passes them and fails here.

Not a CTest (about 40 s a job on 2 cores): a development check whose table
goes into docs/torch-jobs.md.

    CCDIAG_BIN=build/ccdiag python3 tests/torch/culprit_sweep.py [--culprits 1,3] [--timeout 12] [SCENARIO...]
    CCDIAG_BIN=build/ccdiag python3 tests/torch/culprit_sweep.py --live [SCENARIO...]

--live reads the scenarios that hang (the class's `live`) with `ccdiag diagnose` while they hang, as
the CTest does (40 s collective timeout, so the capture fits in the hang), instead of post-mortem.

Each row: scenario, culprit, what the logs and the dumps said, and whether
that is what the scenario's class accepts (its causes, and the culprit where
the class says the source can name it).
"""
import argparse
import os
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
import test_torch_jobs as T  # noqa: E402
from torch_job import TorchJob, run_json  # noqa: E402

# Scenarios whose shape fixes the culprit (a 2x2 mesh, the {2,3} sub-group, the
# 2<->3 exchange, the rank-0 checkpoint) or that have no culprit are left out.
FIXED = {"healthy", "training", "subgroup", "mesh_tp", "p2p_deadlock", "rank0_barrier"}


def classes():
    seen = {}
    for name in dir(T):
        c = getattr(T, name)
        if isinstance(c, type) and issubclass(c, T.ScenarioTest) and c.scenario and c.scenario not in FIXED:
            seen.setdefault(c.scenario, c)  # one class per scenario (subclasses differ only in culprit)
    return seen


def judge(doc, causes, culprit, may_name, ambiguous):
    cause, rank, conf = T.verdict(doc)
    ok = cause in causes or (ambiguous and cause == "insufficient_evidence")
    if ok and may_name and cause != "insufficient_evidence":
        ok = rank == culprit
    return f"{cause} r{rank} {conf}", ok


def one_live(cls, culprit):
    with TorchJob(cls.scenario, culprit=culprit, tee=cls.tee) as job:
        job.wait_ready(cls.ready_ranks)
        doc, _ = run_json(["--timeout", T.LIVE_TIMEOUT, "diagnose"], timeout=120)
        cls.job = job
        cls.after_live()
        job.wait_end(timeout=150)
        return [judge(doc, cls.causes, culprit, cls.live_culprit, False), ("", True)]


def one(cls, culprit, timeout_s):
    with TorchJob(cls.scenario, timeout_s=timeout_s, culprit=culprit, tee=cls.tee) as job:
        job.wait_ready(cls.ready_ranks)
        job.wait_end(timeout=150)
        args = ["diagnose"]
        for path in [job.console_path] + job.rank_logs():
            args += ["--log", path]
        logs_doc, _ = run_json(args, timeout=120)
        row = [judge(logs_doc, cls.logs_causes or cls.causes, culprit, cls.logs_culprit, cls.logs_ambiguous)]
        if job.fr_dumps():
            fr_doc, _ = run_json(["fr", job.fr_dir()], schema=None, timeout=60)
            row.append(judge(fr_doc, cls.fr_causes or cls.causes, culprit, cls.fr_culprit, False))
        else:
            row.append(("no dumps", True))
        return row


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--culprits", default="1,3")
    ap.add_argument("--timeout", type=float, default=12)
    ap.add_argument("--live", action="store_true", help="diagnose the hanging scenarios live")
    ap.add_argument("scenarios", nargs="*")
    a = ap.parse_args()
    todo = classes()
    names = a.scenarios or sorted(n for n, c in todo.items() if c.live or not a.live)
    total = right = 0
    print(f"{'scenario':18} {'culprit':7} {'live verdict' if a.live else 'logs verdict':45} "
          f"{'' if a.live else 'fr verdict':45}")
    for name in names:
        for culprit in [int(x) for x in a.culprits.split(",")]:
            try:
                (lv, lok), (fv, fok) = (one_live(todo[name], culprit) if a.live
                                        else one(todo[name], culprit, a.timeout))
            except AssertionError as e:
                print(f"{name:18} {culprit:<7} job failed: {str(e).splitlines()[0][:80]}")
                continue
            total += 1 if a.live else 2
            right += lok + (0 if a.live else fok)
            mark = lambda ok: "" if ok else "  <-- WRONG"
            print(f"{name:18} {culprit:<7} {lv + mark(lok):45} {fv + mark(fok):45}", flush=True)
    print(f"\n{right}/{total} readings as the scenario's class accepts")
    return 0 if right == total else 1


if __name__ == "__main__":
    sys.exit(main())
