"""One rank of a real torch.distributed job (gloo, CPU) that fails in a known way.

Launched by torchrun (tests/torch/torch_job.py does it):
    torchrun --nproc-per-node 4 --master-addr 127.0.0.1 --master-port P scenario.py SCENARIO OUTDIR
Every rank writes OUTDIR/ready.<rank> once it has reached the failure point, so
a test can capture the job live while it hangs. The collective timeout is short
(CCDIAG_TORCH_TIMEOUT seconds) so a hang ends by itself; gloo does not dump the
flight recorder on a timeout, so each rank dumps it through torch's own entry
point (OUTDIR/fr/rank<N>) when its collective fails, as NCCL's watchdog would.
"""
import os
import signal
import sys
import threading
import time
from datetime import timedelta

import torch
import torch.distributed as dist

SCENARIO, OUT = sys.argv[1], sys.argv[2]
RANK = int(os.environ["RANK"])
WORLD = int(os.environ["WORLD_SIZE"])
TIMEOUT = float(os.environ.get("CCDIAG_TORCH_TIMEOUT", "15"))
# The rank that misbehaves; 2 by default (not 0, whose special roles -- store
# host, logging rank -- would hide a reader that blames rank 0 by habit).
CULPRIT = int(os.environ.get("CCDIAG_TORCH_CULPRIT", "2"))


def ready():
    with open(os.path.join(OUT, f"ready.{RANK}"), "w") as f:
        f.write(str(os.getpid()))


def dump_flight_recorder():
    """torch's own dump of the gloo recorder (the bytes NCCL's watchdog would
    write on a timeout), to OUT/fr/rank<N>. torch >= 2.9 has one recorder per
    backend (_dump_fr_trace); older ones only the NCCL one (_dump_nccl_trace)."""
    import torch._C._distributed_c10d as c10d
    os.makedirs(os.path.join(OUT, "fr"), exist_ok=True)
    if hasattr(c10d, "_dump_fr_trace"):
        data = c10d._dump_fr_trace(includeCollectives=True, includeStackTraces=True, onlyActive=False,
                                   backend="gloo")
    elif hasattr(c10d, "_dump_nccl_trace"):
        data = c10d._dump_nccl_trace(includeCollectives=True, includeStackTraces=True, onlyActive=False)
    else:
        return
    with open(os.path.join(OUT, "fr", f"rank{RANK}"), "wb") as f:
        f.write(data)


def on_sigterm(signum, frame):
    # torchrun's agent stops the surviving ranks with SIGTERM after a failure.
    # NCCL's watchdog would have dumped on every rank; gloo has none, so a
    # survivor dumps here and then dies of the signal as it would have.
    try:
        dump_flight_recorder()
    finally:
        signal.signal(signal.SIGTERM, signal.SIG_DFL)
        os.kill(os.getpid(), signal.SIGTERM)


def train_step(t):
    dist.all_reduce(t)
    return t


def heavy_compute(seconds):
    # Pure-Python busy work: the rank is running, not waiting.
    end = time.time() + seconds
    x = 0
    while time.time() < end:
        x += sum(i * i for i in range(1000))
    return x


class SlowDataset(torch.utils.data.Dataset):
    def __len__(self):
        return 64

    def __getitem__(self, i):
        if RANK == CULPRIT and i >= 8:
            time.sleep(3600)  # the worker never produces the batch
        return torch.ones(4)


class DyingDataset(SlowDataset):
    def __getitem__(self, i):
        if RANK == CULPRIT and i >= 8:
            os.kill(os.getpid(), signal.SIGKILL)
        return torch.ones(4)


def loader(ds):
    return torch.utils.data.DataLoader(ds, batch_size=4, num_workers=2, timeout=0)


def main():
    signal.signal(signal.SIGTERM, on_sigterm)
    # A named Python thread, as training jobs have (checkpoint writers,
    # heartbeats): live stacks must show its `threading` name.
    threading.Thread(target=lambda: time.sleep(3600), name="ckpt-writer", daemon=True).start()
    if SCENARIO == "late_init":
        # Rank 2 prepares for longer than the timeout before it joins the
        # process group (a model or dataset loaded before init): the others
        # give up waiting for it in init_process_group.
        ready()
        if RANK == CULPRIT:
            time.sleep(TIMEOUT * 3)
    dist.init_process_group("gloo", timeout=timedelta(seconds=TIMEOUT))
    # Groups made later (new_group, DeviceMesh) take c10d's default timeout
    # (30 min for gloo), not the world group's: give them the same one.
    dist.distributed_c10d.default_pg_timeout = timedelta(seconds=TIMEOUT)
    t = torch.ones(1024)
    try:
        for _ in range(3):
            train_step(t)
        if SCENARIO == "healthy":
            for _ in range(5):
                train_step(t)
            dist.barrier()
            ready()
        elif SCENARIO == "training":
            # A healthy job that keeps training (a small matmul, then the
            # gradient all_reduce) until the test has looked at it live and
            # writes OUT/stop: a snapshot of its stacks has the shape of a
            # hang (some ranks in all_reduce, one computing), but it runs.
            # The ranks agree on when to stop (rank 0 reads the file and the
            # flag is reduced): ranks that each read it would stop one step
            # apart, a real mismatch.
            w = torch.randn(128, 128)
            ready()
            deadline = time.time() + 150
            while True:
                for _ in range(4):
                    w = torch.tanh(w @ w)
                train_step(t)
                stop = torch.zeros(1)
                if RANK == 0 and (os.path.exists(os.path.join(OUT, "stop")) or time.time() > deadline):
                    stop[0] = 1
                dist.all_reduce(stop)
                if stop.item() > 0:
                    break
            dist.barrier()
        elif SCENARIO == "skip":
            # Rank 2 skips the collective and waits for the others at the end.
            ready()
            if RANK != CULPRIT:
                train_step(t)
            else:
                time.sleep(TIMEOUT * 3)
        elif SCENARIO == "early_exit":
            # Uneven data: rank 2's shard has one batch fewer, so it leaves the
            # loop, tears its process group down and exits 0 while the others
            # enter one more all_reduce.
            ready()
            if RANK != CULPRIT:
                train_step(t)
        elif SCENARIO == "raises":
            # A bug on one rank: it raises in its own code between two steps
            # (a KeyError on a batch field) while the others wait for it in
            # the next all_reduce.
            ready()
            if RANK == CULPRIT:
                batch = {"input_ids": t}
                t = batch["labels"]
            train_step(t)
        elif SCENARIO == "late_init":
            train_step(t)
        elif SCENARIO == "p2p_deadlock":
            # Hand-written point-to-point exchange with the order wrong on
            # both sides: ranks 2 and 3 each wait to receive from the other
            # before sending (blocking recv), so neither ever sends; ranks 0
            # and 1 go on to the next all_reduce and wait there.
            ready()
            if RANK in (2, 3):
                peer = 5 - RANK
                buf = torch.zeros(1024)
                dist.recv(buf, src=peer)
                dist.send(t, dst=peer)
            train_step(t)
        elif SCENARIO == "busy":
            ready()
            if RANK == CULPRIT:
                heavy_compute(TIMEOUT * 3)
            train_step(t)
        elif SCENARIO == "dataloader":
            it = iter(loader(SlowDataset()))
            for _ in range(4):
                batch = next(it)
                if RANK == 0 and _ == 3:
                    ready()
                ready()
                train_step(batch.sum(0).repeat(256))
        elif SCENARIO == "dataloader_dies":
            it = iter(loader(DyingDataset()))
            ready()
            for _ in range(4):
                batch = next(it)
                train_step(batch.sum(0).repeat(256))
        elif SCENARIO == "sigkill":
            ready()
            if RANK == CULPRIT:
                time.sleep(1)
                os.kill(os.getpid(), signal.SIGKILL)
            train_step(t)
        elif SCENARIO == "size_mismatch":
            ready()
            train_step(torch.ones(2048 if RANK == CULPRIT else 1024))
        elif SCENARIO == "monitored_barrier":
            # Debugging a hang the way torch's docs advise: a monitored_barrier,
            # which names the rank that never arrived (rank 2 is stuck before it).
            ready()
            if RANK == CULPRIT:
                time.sleep(TIMEOUT * 3)
            dist.monitored_barrier(timeout=timedelta(seconds=TIMEOUT))
        elif SCENARIO == "op_mismatch":
            # Rank 2 takes another branch and all_gathers where the others
            # all_reduce (a metric gathered on one rank only).
            ready()
            if RANK == CULPRIT:
                dist.all_gather([torch.zeros(1024) for _ in range(WORLD)], t)
            else:
                train_step(t)
        elif SCENARIO == "dtype_mismatch":
            ready()
            train_step(torch.ones(1024, dtype=torch.float64 if RANK == CULPRIT else torch.float32))
        elif SCENARIO == "subgroup":
            # Two sub-groups {0,1} and {2,3}; rank 2 enters the world all_reduce
            # while the others wait in their sub-group's.
            g01 = dist.new_group([0, 1])
            g23 = dist.new_group([2, 3])
            ready()
            if RANK == CULPRIT:
                train_step(t)
            else:
                dist.all_reduce(t, group=g01 if RANK < 2 else g23)
                train_step(t)
        elif SCENARIO == "rank0_barrier":
            ready()
            if RANK == 0:
                time.sleep(TIMEOUT * 3)  # e.g. rank 0 alone writes a checkpoint
            dist.barrier()
        elif SCENARIO == "segv":
            # A native crash in one rank (a bad pointer in an extension):
            # SIGSEGV kills it outright; the others wait in the next all_reduce.
            ready()
            if RANK == CULPRIT:
                time.sleep(1)
                import ctypes
                ctypes.string_at(0)
            train_step(t)
        elif SCENARIO == "exit_code":
            # One rank leaves through os._exit(3) (a library's fatal error
            # handler, a sys.exit in a callback): no traceback, a non-zero exit.
            ready()
            if RANK == CULPRIT:
                time.sleep(1)
                os._exit(3)
            train_step(t)
        elif SCENARIO == "sys_exit":
            # One rank gives up with sys.exit(1) (a failed sanity check that
            # exits instead of raising): exit code 1, like an exception, but
            # no traceback anywhere.
            ready()
            if RANK == CULPRIT:
                time.sleep(1)
                sys.exit(1)
            train_step(t)
        elif SCENARIO == "straggler":
            ready()
            if RANK == CULPRIT:
                time.sleep(TIMEOUT + 3)
            train_step(t)
        elif SCENARIO == "mesh_tp":
            # A 2-D DeviceMesh [[0,1],[2,3]] with dims ("dp","tp"): tp groups
            # {0,1},{2,3}, dp groups {0,2},{1,3}. Each step reduces over tp,
            # then over dp; rank 2 skips its tp all_reduce once and sleeps, so
            # the hang starts in the tp dimension (rank 3 waits for it there)
            # and reaches dp only as a consequence (rank 0 waits for rank 2,
            # rank 1 for rank 3).
            from torch.distributed.device_mesh import init_device_mesh
            mesh = init_device_mesh("cpu", (2, 2), mesh_dim_names=("dp", "tp"))
            tp, dp = mesh.get_group("tp"), mesh.get_group("dp")
            for _ in range(2):
                dist.all_reduce(t, group=tp)
                dist.all_reduce(t, group=dp)
            ready()
            if RANK == CULPRIT:
                time.sleep(TIMEOUT * 3)
            dist.all_reduce(t, group=tp)
            dist.all_reduce(t, group=dp)
        else:
            raise SystemExit(f"unknown scenario {SCENARIO}")
    except Exception:
        dump_flight_recorder()
        raise
    dump_flight_recorder()
    dist.destroy_process_group()


if __name__ == "__main__":
    main()
