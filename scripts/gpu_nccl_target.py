#!/usr/bin/env python3
"""A real NCCL communicator for `nccl attach` checks on a GPU machine (used by
scripts/device-check.sh; needs a GPU and a libnccl, e.g. PyTorch's wheel).

  gpu_nccl_target.py one-rank    ncclCommInitRank(nranks=1): initialised, idle
  gpu_nccl_target.py init-hang   rank 0 of 2, rank 1 never starts: stuck in bootstrap

Prints one JSON line {"ready": true, "comm": "0x...", "library": PATH} and waits
to be killed. Run with NCCL_DEBUG=INFO NCCL_DEBUG_FILE=...: the INFO log is the
oracle (commId, rank, busId) ccdiag's reading is compared with."""
import ctypes
import ctypes.util
import json
import os
import sys
import threading
import time


def find_nccl():
    env = os.environ.get("CCDIAG_NCCL_LIB")
    if env:
        return env
    try:
        import nvidia.nccl  # the wheel PyTorch depends on
        for base in nvidia.nccl.__path__:
            p = os.path.join(base, "lib", "libnccl.so.2")
            if os.path.exists(p):
                return p
    except ImportError:
        pass
    return ctypes.util.find_library("nccl") or "libnccl.so.2"


class UniqueId(ctypes.Structure):
    _fields_ = [("internal", ctypes.c_char * 128)]


def main():
    mode = sys.argv[1] if len(sys.argv) > 1 else "one-rank"
    path = find_nccl()
    lib = ctypes.CDLL(path)
    uid = UniqueId()
    rc = lib.ncclGetUniqueId(ctypes.byref(uid))
    if rc != 0:
        print(json.dumps({"ready": False, "error": f"ncclGetUniqueId {rc}"}), flush=True)
        return 1
    comm = ctypes.c_void_p()
    if mode == "one-rank":
        rc = lib.ncclCommInitRank(ctypes.byref(comm), 1, uid, 0)
        if rc != 0:
            print(json.dumps({"ready": False, "error": f"ncclCommInitRank {rc}"}), flush=True)
            return 1
    else:
        # Blocks in bootstrap until rank 1 connects, which never happens.
        threading.Thread(target=lambda: lib.ncclCommInitRank(ctypes.byref(comm), 2, uid, 0), daemon=True).start()
        time.sleep(3)
    print(json.dumps({"ready": True, "mode": mode, "comm": hex(comm.value or 0), "library": path}), flush=True)
    while True:
        time.sleep(60)


if __name__ == "__main__":
    sys.exit(main())
