"""Channel lines carry the communicator's own ranks: a job's world, its
tensor-parallel groups (one per host) and its data-parallel groups (one rank
per host) each have a rank 0. Judged together they look like ranks on two
hosts joined by P2P, and ccdiag once called a healthy 2-node job a host
identity collision (nccl_bug, 0.74). The log below is written line by line in
NCCL 2.21's INFO format (Init START with commId, the nNodes line, Channel
lines with [send]/[receive] for network peers) for 2 hosts x 8 GPUs; the
negative control gives both hosts one name, which must still be found."""
import os
import tempfile
import unittest

from ccdiag_test import run_json


def comm_lines(host, node, comm_ptr, comm_id, rank, nranks, dev, edges):
    pid = 4000 + node * 100 + dev
    p = f"{host}:{pid}:{pid + 50} [{dev}]"
    out = [f"{p} NCCL INFO ncclCommInitRank comm {comm_ptr} rank {rank} nranks {nranks} cudaDev {dev} nvmlDev {dev} "
           f"busId {0x18 + 0x10 * dev:x}000 commId {comm_id} - Init START",
           f"{p} NCCL INFO comm {comm_ptr} rank {rank} nRanks {nranks} nNodes {2 if nranks != 8 else 1} "
           f"localRanks {8 if nranks != 2 else 1} localRank {dev if nranks != 2 else 0} MNNVL 0"]
    for c in range(2):
        for e in edges:
            out.append(f"{p} NCCL INFO Channel {c:02d}/0 : {e}")
    out.append(f"{p} NCCL INFO ncclCommInitRank comm {comm_ptr} rank {rank} nranks {nranks} cudaDev {dev} nvmlDev {dev} "
               f"busId {0x18 + 0x10 * dev:x}000 commId {comm_id} - Init COMPLETE")
    return out


def job_log(host_names):
    lines = []
    for node, host in enumerate(host_names):
        for dev in range(8):
            world = node * 8 + dev
            ptr = f"0x55d0{node}{dev}00"
            nxt = (world + 1) % 16
            if dev == 7:  # the ring leaves the node
                edges = [f"{world}[7] -> {nxt}[0] [send] via NET/IB/{dev}/GDRDMA"]
            else:
                edges = [f"{world}[{dev}] -> {nxt}[{dev + 1}] via P2P/CUMEM/read"]
            if dev == 0:
                edges.append(f"{(world - 1) % 16}[7] -> {world}[0] [receive] via NET/IB/0/GDRDMA")
            lines += comm_lines(host, node, ptr + "a", "0x7f3c2a19d4e8b601", world, 16, dev, edges)
            # tensor-parallel group: this host's 8 GPUs, ranks 0-7
            lines += comm_lines(host, node, ptr + "b", f"0x43210000000{node}", dev, 8, dev,
                                [f"{dev}[{dev}] -> {(dev + 1) % 8}[{(dev + 1) % 8}] via P2P/CUMEM/read"])
            # data-parallel group: GPU `dev` of each host, ranks 0-1, over the network
            lines += comm_lines(host, node, ptr + "c", f"0x12345678000{dev}", node, 2, dev,
                                [f"{node}[{dev}] -> {1 - node}[{dev}] [send] via NET/IB/{dev}/GDRDMA",
                                 f"{1 - node}[{dev}] -> {node}[{dev}] [receive] via NET/IB/{dev}/GDRDMA"])
    # the job then hangs: the watchdog fires on one rank
    lines.append(f"[rank3]:[E1201 10:00:00.000000 {4003} ProcessGroupNCCL.cpp:632] [Rank 3] Watchdog caught collective "
                 "operation timeout: WorkNCCL(SeqNum=12, OpType=ALLREDUCE, NumelIn=1, NumelOut=1, Timeout(ms)=600000) "
                 "ran for 600084 milliseconds before timing out.")
    return "\n".join(lines) + "\n"


class Communicators(unittest.TestCase):
    def diagnose(self, host_names):
        with tempfile.TemporaryDirectory() as d:
            path = os.path.join(d, "job.log")
            with open(path, "w") as f:
                f.write(job_log(host_names))
            doc, _ = run_json(["diagnose", "--log", path])
        return doc

    def test_subgroups_on_two_hosts_are_no_host_collision(self):
        doc = self.diagnose(["node-a", "node-b"])
        ids = {f["id"] for f in doc["findings"]}
        self.assertNotIn("logs.p2p_edge_across_hosts", ids)
        self.assertNotIn("tree.cross_host_p2p", ids)
        self.assertNotIn(doc["verdict"].get("root_cause"), ("nccl_bug", "duplicate_hostname_across_nodes"))

    def test_two_nodes_with_one_name_are_still_found(self):
        doc = self.diagnose(["node-a", "node-a"])
        ids = {f["id"] for f in doc["findings"]}
        self.assertTrue({"logs.p2p_edge_across_hosts", "tree.cross_host_p2p"} & ids, sorted(ids))
        self.assertEqual(doc["verdict"].get("root_cause"), "duplicate_hostname_across_nodes")


if __name__ == "__main__":
    unittest.main()
