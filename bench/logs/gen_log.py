#!/usr/bin/env python3
"""Generates the interleaved torchrun stdout of a long multi-rank training job
(default 64 ranks = 8 hosts x 8 GPUs) run with NCCL_DEBUG=INFO (default
subsystems INIT,BOOTSTRAP,ENV: no per-collective COLL lines) and
TORCH_CPP_LOG_LEVEL=INFO, until it is at least SIZE bytes (default 1 GiB).

The line mix follows what such jobs print (shapes from the incidents in the
project's case collection and NCCL 2.21 / PyTorch 2.x output):

* A session starts with the full NCCL set-up of every rank: version, plugin,
  bootstrap, NET/IB, environment, comm init, affinity, NVLS, Trees, one line
  per channel and peer (32 channels), "Connected all rings/trees", Init
  COMPLETE -- for the world communicator and for the data-parallel and
  tensor-parallel subgroups created at start-up (3 communicators per rank).
* Then the training loop. Per step, every rank prints a Python-logging step
  line; the last rank prints throughput/memory; every 30 s of job time each
  rank's ProcessGroupNCCL watchdog logs "NCCL Work update periodically";
  every 200 steps an eval (new communicator for the eval subgroup on first
  use, p2p connections set up lazily with "[send]/[receive] via" lines,
  metrics lines), every 1000 steps a checkpoint; Python warnings once per
  session per rank (two lines each).
* A session ends in a failure: one rank's IB completion error (WARN with a
  timestamp) and its error breadcrumbs, peers' "Connection closed by remote
  peer", watchdog timeouts, "Some NCCL operations have failed", a traceback,
  torchelastic's failure report; the job restarts and the next session
  begins. --sessions (default 3) sets how many restarts share the size.

Matching lines (set-up context + failures) are therefore a small share of
the bytes, as in a real log; the script prints the share of each line class
so the bench can quote it. Deterministic (seeded). Written in ~4 MiB chunks.

--mix dense instead writes the stress mix the first version of this bench
used: after the set-up, every line is NCCL/PyTorch chatter drawn evenly from
five templates -- a "[send] via NET/IB" transport line, a COLL "opCount"
line (NCCL_DEBUG_SUBSYS=COLL), a "NCCL Work update periodically" line, a
step line, a warning -- with 0.05% failure lines. A fifth of its lines match
a signature (real jobs print transport lines only at connection set-up), so
it measures the per-match cost, not a realistic log.

--mix coll writes what a job run with NCCL_DEBUG=INFO NCCL_DEBUG_SUBSYS=INIT,COLL
prints while someone chases a hang: the set-up of every rank as in the
realistic mix, then per training step 14 collectives per rank (AllReduce,
AllGather, ReduceScatter, Broadcast on the world and subgroup communicators),
each one "<Coll>: opCount <n> sendbuff ... [nranks=N] stream ..." line per rank
(NCCL 2.21's format), with the step lines between them, and the failure at the
end. About 85% of its lines are opCount lines.

usage: gen_log.py OUT [--size BYTES] [--ranks N] [--sessions K] [--mix realistic|dense|coll]"""
import argparse
import collections
import random

HOSTS_PER_RANK = 8
CHANNELS = 32


DENSE_CHATTER = [
    "[rank{r}]:[I{md} {t}.{us:06d} {pid} ProcessGroupNCCL.cpp:2100] [PG ID 0 PG GUID 0(default_pg) Rank {r}] NCCL Work update periodically: last enqueued NCCL work: {seq}, last completed NCCL work: {seq1}.",
    "[rank{r}]:{host}:{pid}:{pid} [{d}] NCCL INFO AllReduce: opCount {op:x} sendbuff 0x7f2a00000000 recvbuff 0x7f2a00000000 count 25690112 datatype 7 op 0 root 0 comm 0x55d0{r:04x} [nranks=64] stream 0x55d1",
    "[rank{r}]:step {seq} loss {loss:.4f} lr 3.0e-4 tokens/s 182334 grad_norm 1.02",
    "[rank{r}]:{host}:{pid}:{pid} [{d}] NCCL INFO Channel {c:02d}/1 : {r}[{d}] -> {n}[{nd}] [send] via NET/IB/{d}/GDRDMA",
    "[rank{r}]:  warnings.warn(  # torch/utils/data/dataloader.py:558 UserWarning: This DataLoader will create 16 worker processes",
]

DENSE_RARE = [
    "[rank{r}]:[2026-04-22 21:34:20] {host}:{pid}:{pid} [{d}] transport/net_ib.cc:1696 NCCL WARN NET/IB: Got completion from peer 10.1.0.7<50411> with status=12 opcode=0 len=0 vendor err 129 (Send) hca mlx5_{d}",
    "[rank{r}]:[2026-04-22 21:34:21] {host}:{pid}:{pid} [{d}] misc/socket.cc:49 NCCL WARN socketProgress: Connection closed by remote peer gpu-node-01<36411>",
    "[rank{r}]:[E0422 21:44:21.{us:06d} {pid} ProcessGroupNCCL.cpp:632] [Rank {r}] Watchdog caught collective operation timeout: WorkNCCL(SeqNum={seq}, OpType=ALLREDUCE, NumelIn=25690112, NumelOut=25690112, Timeout(ms)=600000) ran for 600084 milliseconds before timing out.",
]


class Gen:
    def __init__(self, out, ranks, rnd):
        self.f = out
        self.ranks = ranks
        self.rnd = rnd
        self.hosts = [f"gpu-node-{i:02d}" for i in range((ranks + 7) // 8)]
        self.buf = []
        self.pending = 0
        self.written = 0
        self.classes = collections.Counter()
        self.lines = 0
        self.session = 0
        self.t = 0.0  # job seconds

    def emit(self, cls, line):
        self.buf.append(line)
        self.pending += len(line) + 1
        self.classes[cls] += 1
        if len(self.buf) >= 20000:
            self.flush()

    def flush(self):
        if self.buf:
            chunk = "\n".join(self.buf) + "\n"
            self.f.write(chunk)
            self.written += len(chunk)
            self.lines += len(self.buf)
            self.buf = []
            self.pending = 0

    def pid(self, r):
        return 30000 + 1000 * self.session + r

    def nccl(self, r, tid_off=0):
        host = self.hosts[r // 8]
        pid = self.pid(r)
        return f"[rank{r}]:{host}:{pid}:{pid + tid_off} [{r % 8}]"

    def ts(self):
        s = int(self.t)
        return f"2026-04-22 {21 + s // 3600 % 3:02d}:{s // 60 % 60:02d}:{s % 60:02d}"

    # ---------------------------------------------------------------- set-up
    def comm_init(self, r, nranks, rank_in, comm, commid, world, spread=False):
        p = self.nccl(r, 212)
        d = r % 8
        e = lambda l: self.emit("nccl-setup", l)
        e(f"{p} NCCL INFO ncclCommInitRank comm 0x{comm:x} rank {rank_in} nranks {nranks} cudaDev {d} nvmlDev {d} busId {0x18 + 0x10 * d:x}000 commId 0x{commid:016x} - Init START")
        e(f"{p} NCCL INFO Setting affinity for GPU {d} to ffffffff,00000000,ffffffff")
        e(f"{p} NCCL INFO NVLS multicast support is not available on dev {d}")
        nodes = max(1, nranks // 8)
        e(f"{p} NCCL INFO comm 0x{comm:x} rank {rank_in} nRanks {nranks} nNodes {nodes} localRanks {min(8, nranks)} localRank {d % min(8, nranks)} MNNVL 0")
        e(f"{p} NCCL INFO Trees [0] {(rank_in + 1) % nranks}/-1/-1->{rank_in}->{(rank_in - 1) % nranks} [1] {(rank_in + 1) % nranks}/-1/-1->{rank_in}->{(rank_in - 1) % nranks}")
        e(f"{p} NCCL INFO P2P Chunksize set to 131072")
        nxt, prv = (rank_in + 1) % nranks, (rank_in - 1) % nranks
        cross = nranks > 8 and d == 7
        # spread: a subgroup with one rank per host (data parallel), every peer on another node.
        for c in range(CHANNELS if world else 8):
            if spread:
                e(f"{p} NCCL INFO Channel {c:02d}/0 : {rank_in}[{d}] -> {nxt}[{d}] [send] via NET/IB/{d}/GDRDMA")
                e(f"{p} NCCL INFO Channel {c:02d}/0 : {prv}[{d}] -> {rank_in}[{d}] [receive] via NET/IB/{d}/GDRDMA")
                continue
            if cross:
                e(f"{p} NCCL INFO Channel {c:02d}/0 : {rank_in}[{d}] -> {nxt}[0] [send] via NET/IB/{c % 8}/GDRDMA")
            else:
                e(f"{p} NCCL INFO Channel {c:02d}/0 : {rank_in}[{d}] -> {nxt}[{(d + 1) % 8}] via P2P/CUMEM/read")
            if nranks > 8 and d == 0:
                e(f"{p} NCCL INFO Channel {c:02d}/0 : {prv}[7] -> {rank_in}[{d}] [receive] via NET/IB/{c % 8}/GDRDMA")
        e(f"{p} NCCL INFO Connected all rings")
        e(f"{p} NCCL INFO Connected all trees")
        e(f"{p} NCCL INFO threadThresholds 8/8/64 | 512/8/64 | 512 | 512")
        e(f"{p} NCCL INFO {CHANNELS} coll channels, {CHANNELS} collnet channels, 0 nvls channels, 32 p2p channels, 32 p2p channels per peer")
        e(f"{p} NCCL INFO CC Off, Multi-GPU CC Off, workFifoBytes 1048576")
        e(f"{p} NCCL INFO ncclCommInitRank comm 0x{comm:x} rank {rank_in} nranks {nranks} cudaDev {d} nvmlDev {d} busId {0x18 + 0x10 * d:x}000 commId 0x{commid:016x} - Init COMPLETE")
        e(f"{p} NCCL INFO Init timings: rank {rank_in} nranks {nranks} total 1.84 (kernels 0.21, bootstrap 0.92, allgathers 0.05, topo 0.31, graphs 0.02, connections 0.30, rest 0.03)")
        torch = f"[rank{r}]:[I422 {self.ts()[11:]}.{self.rnd.randrange(10**6):06d} {self.pid(r)} ProcessGroupNCCL.cpp:2209]"
        self.emit("torch-glog", f"{torch} [PG ID {comm % 4} PG GUID {comm % 4} Rank {rank_in}] ProcessGroupNCCL created ncclComm_ 0x{comm:x} on CUDA device: {d}")

    def startup(self):
        ranks = self.ranks
        for r in range(ranks):
            p = self.nccl(r)
            e = lambda l: self.emit("nccl-setup", l)
            if r == 0:
                e(f"[rank0]:NCCL version 2.21.5+cuda12.4")
            e(f"{p} NCCL INFO cudaDriverVersion 12040")
            e(f"{p} NCCL INFO NCCL_SOCKET_IFNAME set by environment to eth0")
            e(f"{p} NCCL INFO Bootstrap : Using eth0:10.1.{r // 8}.{r % 8 + 10}<0>")
            e(f"{p} NCCL INFO NET/Plugin: No plugin found (libnccl-net.so)")
            e(f"{p} NCCL INFO NET/Plugin: Plugin load returned 2 : libnccl-net.so: cannot open shared object file: No such file or directory : when loading libnccl-net.so")
            e(f"{p} NCCL INFO NET/Plugin: Using internal network plugin.")
            e(f"{p} NCCL INFO NCCL_IB_HCA set by environment to mlx5")
            nics = " ".join(f"[{i}]mlx5_{i}:1/IB" for i in range(8))
            e(f"{p} NCCL INFO NET/IB : Using {nics} ; OOB eth0:10.1.{r // 8}.{r % 8 + 10}<0>")
            e(f"{p} NCCL INFO Using non-device net plugin version 0")
            e(f"{p} NCCL INFO Using network IB")
        base = 0x55D0_0000_0000 + self.session * 0x1000_0000
        for r in range(ranks):  # world
            self.comm_init(r, ranks, r, base + r * 0x100, 0x7F3C2A19D4E8B601 + self.session, True)
        for r in range(ranks):  # data-parallel group: same local rank across hosts
            self.comm_init(r, max(1, ranks // 8), r // 8, base + 0x80_0000 + r * 0x100, 0x1234_5678_0000 + r % 8, False, spread=self.ranks > 8)
        for r in range(ranks):  # tensor-parallel group: one host
            self.comm_init(r, min(8, ranks), r % 8, base + 0x90_0000 + r * 0x100, 0x4321_0000 + r // 8, False)

    # ---------------------------------------------------------------- training
    def step(self, n):
        rnd = self.rnd
        self.t += 1.05
        for r in range(self.ranks):
            ms = rnd.randrange(1000)
            self.emit("train", f"[rank{r}]:{self.ts()},{ms:03d} - INFO - trainer.py:412 - step {n} | loss {2.0 + rnd.random():.4f} | lr 3.00e-04 | grad_norm {0.8 + rnd.random() / 2:.3f} | step_time {1.0 + rnd.random() / 10:.3f}s")
        last = self.ranks - 1
        self.emit("train", f"[rank{last}]: iteration {n:8d}/ 500000 | consumed samples: {n * 512:12d} | elapsed time per iteration (ms): {1040 + rnd.randrange(40)}.{rnd.randrange(10)} | throughput per GPU (TFLOP/s/GPU): {400 + rnd.randrange(20)}.{rnd.randrange(10)} | learning rate: 3.000000E-04 | global batch size:   512 | lm loss: {2 + rnd.random():.6E} | loss scale: 1.0 | grad norm: {0.8 + rnd.random() / 2:.3f} | number of skipped iterations:   0 | number of nan iterations:   0 |")
        if n % 30 == 0:
            for r in range(self.ranks):
                self.emit("torch-glog", f"[rank{r}]:[I422 {self.ts()[11:]}.{rnd.randrange(10**6):06d} {self.pid(r)} ProcessGroupNCCL.cpp:2100] [PG ID 0 PG GUID 0(default_pg) Rank {r}] NCCL Work update periodically: last enqueued NCCL work: {n * 14}, last completed NCCL work: {n * 14 - 1}.")
        if n % 200 == 0:
            self.eval(n)
        if n % 1000 == 0:
            for r in range(self.ranks):
                self.emit("train", f"[rank{r}]:{self.ts()},000 - INFO - checkpointing.py:188 - saving checkpoint at iteration {n:8d} to /checkpoints/run-17/iter_{n:07d} in torch_dist format")
            self.emit("train", f"[rank0]:  successfully saved checkpoint from iteration {n:8d} to /checkpoints/run-17 [ t 1/8, p 1/1 ]")

    def eval(self, n):
        first = not self.eval_comm
        self.eval_comm = True
        for r in range(self.ranks):
            if first:  # eval subgroup communicator, created on first use
                self.comm_init(r, self.ranks, r, 0x55E0_0000_0000 + r * 0x100, 0x7F3C_0000_0000 + self.session, False)
                p = self.nccl(r, 230)
                nb = (r + 8) % self.ranks
                self.emit("nccl-setup", f"{p} NCCL INFO Channel 00/1 : {r}[{r % 8}] -> {nb}[{nb % 8}] [send] via NET/IB/{r % 8}/GDRDMA/Shared")
                self.emit("nccl-setup", f"{p} NCCL INFO Channel 01/1 : {r}[{r % 8}] -> {nb}[{nb % 8}] [send] via NET/IB/{r % 8}/GDRDMA/Shared")
            self.emit("train", f"[rank{r}]:{self.ts()},500 - INFO - evaluate.py:77 - validation at step {n}: running 64 batches")
        self.emit("train", f"[rank0]: validation loss at iteration {n} | lm loss value: {2 + self.rnd.random():.6E} | lm loss PPL: {7 + self.rnd.random():.6E} |")

    def warnings(self):
        for r in range(self.ranks):
            self.emit("train", f"[rank{r}]:/usr/local/lib/python3.10/dist-packages/torch/utils/checkpoint.py:295: FutureWarning: `torch.cpu.amp.autocast(args...)` is deprecated. Please use `torch.amp.autocast('cpu', args...)` instead.")
            self.emit("train", f"[rank{r}]:  with torch.enable_grad(), device_autocast_ctx, torch.cpu.amp.autocast(**ctx.cpu_autocast_kwargs):  # type: ignore[attr-defined]")

    # ---------------------------------------------------------------- failure
    def failure(self, n):
        rnd = self.rnd
        bad = rnd.randrange(self.ranks)
        host = self.hosts[bad // 8]
        p = self.nccl(bad, 240)
        e = lambda l: self.emit("failure", l)
        e(f"[rank{bad}]:[{self.ts()}] {p[len(f'[rank{bad}]:'):]} transport/net_ib.cc:1696 NCCL WARN NET/IB: Got completion from peer 10.1.{(bad + 8) % self.ranks // 8}.{bad % 8 + 10}<50411> with status=12 opcode=0 len=0 vendor err 129 (Send) localGid ::ffff:10.1.{bad // 8}.{bad % 8 + 10} remoteGids::ffff:10.1.{(bad + 8) % self.ranks // 8}.{bad % 8 + 10} hca mlx5_{bad % 8}")
        for where in ("transport/net_ib.cc:1702", "proxy.cc:1052", "proxy.cc:1213"):
            e(f"{p} NCCL INFO {where} -> 6")
        self.t += 600
        for r in range(self.ranks):
            if r == bad:
                continue
            if r // 8 != bad // 8 and rnd.random() < 0.25:
                e(f"[rank{r}]:[{self.ts()}] {self.nccl(r, 240)[len(f'[rank{r}]:'):]} misc/socket.cc:49 NCCL WARN socketProgress: Connection closed by remote peer {host}<36411>")
        for r in range(self.ranks):
            e(f"[rank{r}]:[E422 {self.ts()[11:]}.{rnd.randrange(10**6):06d} {self.pid(r)} ProcessGroupNCCL.cpp:632] [Rank {r}] Watchdog caught collective operation timeout: WorkNCCL(SeqNum={n * 14}, OpType=ALLREDUCE, NumelIn=25690112, NumelOut=25690112, Timeout(ms)=600000) ran for 600084 milliseconds before timing out.")
            e(f"[rank{r}]:[E422 {self.ts()[11:]}.{rnd.randrange(10**6):06d} {self.pid(r)} ProcessGroupNCCL.cpp:1785] [PG ID 0 PG GUID 0(default_pg) Rank {r}] Some NCCL operations have failed or timed out. Due to the asynchronous nature of CUDA kernels, subsequent GPU operations might run on corrupted/incomplete data.")
            e(f"[rank{r}]:[E422 {self.ts()[11:]}.{rnd.randrange(10**6):06d} {self.pid(r)} ProcessGroupNCCL.cpp:1791] [PG ID 0 PG GUID 0(default_pg) Rank {r}] To avoid data inconsistency, we are taking the entire process down.")
        self.emit("train", "Traceback (most recent call last):")
        self.emit("train", '  File "/workspace/train.py", line 412, in <module>')
        self.emit("train", "    main()")
        e(f"torch.distributed.elastic.multiprocessing.errors.ChildFailedError: ")
        e(f"[{self.ts()}]")
        e(f"  host      : {host}")
        e(f"  rank      : {bad} (local_rank: {bad % 8})")
        e(f"  exitcode  : -6 (pid: {self.pid(bad)})")
        e(f"  error_file: <N/A>")
        e(f"  traceback : Signal 6 (SIGABRT) received by PID {self.pid(bad)}")

    def run_dense(self, size):
        rnd = self.rnd
        self.startup()
        seq = 1000
        while self.written + self.pending < size:
            r = rnd.randrange(self.ranks)
            seq += 1
            rare = rnd.random() < 0.0005
            tmpl = DENSE_RARE[rnd.randrange(len(DENSE_RARE))] if rare else DENSE_CHATTER[rnd.randrange(len(DENSE_CHATTER))]
            self.emit("failure" if rare else "dense-chatter",
                      tmpl.format(r=r, host=self.hosts[r // 8], pid=40000 + r, d=r % 8, n=(r + 8) % self.ranks,
                                  nd=(r + 8) % 8, c=rnd.randrange(32), seq=seq, seq1=seq - 1, op=seq,
                                  loss=rnd.random() * 3, md="0422", t="21:30:00", us=rnd.randrange(1000000)))
        self.session = 1

    COLLS = (("AllReduce", 25690112, 7, 0), ("AllGather", 3211264, 7, 0), ("ReduceScatter", 3211264, 7, 0),
             ("AllReduce", 1, 1, 0), ("Broadcast", 8, 4, 0))

    def run_coll(self, size, sessions):
        rnd = self.rnd
        per = size / sessions
        n = 0
        op = [0] * self.ranks
        for _ in range(sessions):
            self.eval_comm = False
            self.startup()
            end = per * (self.session + 1)
            base = 0x55D0_0000_0000 + self.session * 0x1000_0000
            while self.written + self.pending < end:
                n += 1
                for k in range(14):
                    name, count, dtype, redop = self.COLLS[k % len(self.COLLS)]
                    sub = k % 3  # world, data-parallel, tensor-parallel communicator
                    for r in range(self.ranks):
                        comm = base + (0, 0x80_0000, 0x90_0000)[sub] + r * 0x100
                        nranks = (self.ranks, max(1, self.ranks // 8), min(8, self.ranks))[sub]
                        self.emit("coll", f"{self.nccl(r)} NCCL INFO {name}: opCount {op[r]:x} sendbuff 0x7f2a{rnd.randrange(1 << 16):04x}0000 recvbuff 0x7f2a{rnd.randrange(1 << 16):04x}0000 count {count} datatype {dtype} op {redop} root 0 comm 0x{comm:x} [nranks={nranks}] stream 0x55d1{r:04x}")
                        op[r] += 1
                self.step(n)
            self.failure(n)
            self.session += 1
            self.flush()

    def run(self, size, sessions):
        per = size / sessions
        n = 0
        for _ in range(sessions):
            self.eval_comm = False
            self.startup()
            self.warnings()
            end = per * (self.session + 1)
            while self.written + self.pending < end:
                n += 1
                self.step(n)
            self.failure(n)
            self.session += 1
            self.flush()


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("out")
    ap.add_argument("--size", type=int, default=1 << 30)
    ap.add_argument("--ranks", type=int, default=64)
    ap.add_argument("--sessions", type=int, default=3)
    ap.add_argument("--mix", choices=("realistic", "dense", "coll"), default="realistic")
    a = ap.parse_args()
    with open(a.out, "w") as f:
        g = Gen(f, a.ranks, random.Random(8812))
        if a.mix == "dense":
            g.run_dense(a.size)
        elif a.mix == "coll":
            g.run_coll(a.size, a.sessions)
        else:
            g.run(a.size, a.sessions)
        g.flush()
    total = sum(g.classes.values())
    mix = ", ".join(f"{k} {100.0 * v / total:.2f}%" for k, v in sorted(g.classes.items()))
    print(f"wrote {g.written} bytes, {g.lines} lines, {g.session} sessions to {a.out}; line mix: {mix}")


if __name__ == "__main__":
    main()
