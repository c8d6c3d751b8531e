#!/usr/bin/env python3
"""Generates a multi-rank training log of at least SIZE bytes (default 1 GiB):
an interleaved torchrun stdout of N ranks (default 64) with NCCL_DEBUG=INFO
init output, periodic PyTorch/NCCL INFO chatter, and rare failure lines (IB
completion errors, socket closes, watchdog timeouts), in the formats ccdiag
parses. Written in 4 MiB chunks so generation stays fast and bounded.

usage: gen_log.py OUT [--size BYTES] [--ranks N]"""
import argparse
import random


def init_lines(r, hosts):
    host = hosts[r // 8]
    p = f"{host}:{40000 + r}:{40000 + r} [{r % 8}]"
    return [
        f"[rank{r}]:{p} NCCL INFO Bootstrap : Using eth0:10.1.{r // 8}.{r % 8}<0>",
        f"[rank{r}]:{p} NCCL INFO NET/IB : Using [0]mlx5_{r % 8}:1/IB ; OOB eth0:10.1.{r // 8}.{r % 8}<0>",
        f"[rank{r}]:{p} NCCL INFO Using network IB",
        f"[rank{r}]:{p} NCCL INFO ncclCommInitRank comm 0x55d0{r:04x} rank {r} nranks 64 cudaDev {r % 8} nvmlDev {r % 8} busId {r % 8}a000 commId 0x7f3c2a19d4e8b601 - Init START",
        f"[rank{r}]:{p} NCCL INFO comm 0x55d0{r:04x} rank {r} nRanks 64 nNodes 8 localRanks 8 localRank {r % 8} MNNVL 0",
        f"[rank{r}]:{p} NCCL INFO Channel 00/0 : {r}[{r % 8}] -> {(r + 1) % 64}[{(r + 1) % 8}] via P2P/CUMEM/read",
    ]


CHATTER = [
    "[rank{r}]:[I{md} {t}.{us:06d} {pid} ProcessGroupNCCL.cpp:2100] [PG ID 0 PG GUID 0(default_pg) Rank {r}] NCCL Work update periodically: last enqueued NCCL work: {seq}, last completed NCCL work: {seq1}.",
    "[rank{r}]:{host}:{pid}:{pid} [{d}] NCCL INFO AllReduce: opCount {op:x} sendbuff 0x7f2a00000000 recvbuff 0x7f2a00000000 count 25690112 datatype 7 op 0 root 0 comm 0x55d0{r:04x} [nranks=64] stream 0x55d1",
    "[rank{r}]:step {seq} loss {loss:.4f} lr 3.0e-4 tokens/s 182334 grad_norm 1.02",
    "[rank{r}]:{host}:{pid}:{pid} [{d}] NCCL INFO Channel {c:02d}/1 : {r}[{d}] -> {n}[{nd}] [send] via NET/IB/{d}/GDRDMA",
    "[rank{r}]:  warnings.warn(  # torch/utils/data/dataloader.py:558 UserWarning: This DataLoader will create 16 worker processes",
]

RARE = [
    "[rank{r}]:[2026-04-22 21:34:20] {host}:{pid}:{pid} [{d}] transport/net_ib.cc:1696 NCCL WARN NET/IB: Got completion from peer 10.1.0.7<50411> with status=12 opcode=0 len=0 vendor err 129 (Send) hca mlx5_{d}",
    "[rank{r}]:[2026-04-22 21:34:21] {host}:{pid}:{pid} [{d}] misc/socket.cc:49 NCCL WARN socketProgress: Connection closed by remote peer gpu-node-01<36411>",
    "[rank{r}]:[E0422 21:44:21.{us:06d} {pid} ProcessGroupNCCL.cpp:632] [Rank {r}] Watchdog caught collective operation timeout: WorkNCCL(SeqNum={seq}, OpType=ALLREDUCE, NumelIn=25690112, NumelOut=25690112, Timeout(ms)=600000) ran for 600084 milliseconds before timing out.",
]


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("out")
    ap.add_argument("--size", type=int, default=1 << 30)
    ap.add_argument("--ranks", type=int, default=64)
    a = ap.parse_args()
    rnd = random.Random(8812)
    hosts = [f"gpu-node-{i:02d}" for i in range((a.ranks + 7) // 8)]
    written = 0
    seq = 1000
    with open(a.out, "w") as f:
        head = "\n".join(l for r in range(a.ranks) for l in init_lines(r, hosts)) + "\n"
        f.write(head)
        written += len(head)
        while written < a.size:
            lines = []
            for _ in range(20000):
                r = rnd.randrange(a.ranks)
                seq += 1
                tmpl = RARE[rnd.randrange(len(RARE))] if rnd.random() < 0.0005 else CHATTER[rnd.randrange(len(CHATTER))]
                lines.append(tmpl.format(r=r, host=hosts[r // 8], pid=40000 + r, d=r % 8, n=(r + 8) % a.ranks,
                                         nd=(r + 8) % 8, c=rnd.randrange(32), seq=seq, seq1=seq - 1, op=seq,
                                         loss=rnd.random() * 3, md="0422", t="21:30:00",
                                         us=rnd.randrange(1000000)))
            chunk = "\n".join(lines) + "\n"
            f.write(chunk)
            written += len(chunk)
    print(f"wrote {written} bytes to {a.out}")


if __name__ == "__main__":
    main()
