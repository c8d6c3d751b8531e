import os, sys, time, signal
from datetime import timedelta
import torch, torch.distributed as dist
import torch.multiprocessing as mp
SCEN = sys.argv[1]
def worker(rank, world):
    os.environ["MASTER_ADDR"] = "127.0.0.1"; os.environ["MASTER_PORT"] = "29877"
    dist.init_process_group("gloo", rank=rank, world_size=world, timeout=timedelta(seconds=10))
    t = torch.ones(1024)
    for _ in range(3): dist.all_reduce(t)
    if SCEN == "raises" and rank == 2:
        batch = {"x": t}; t = batch["labels"]
    if SCEN == "sigkill" and rank == 2:
        time.sleep(1); os.kill(os.getpid(), signal.SIGKILL)
    if SCEN == "skip" and rank == 2:
        time.sleep(20)
    else:
        dist.all_reduce(t)
    dist.destroy_process_group()
if __name__ == "__main__":
    mp.spawn(worker, args=(4,), nprocs=4, join=True)
