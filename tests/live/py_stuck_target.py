"""A Python process stuck the way a rank gets stuck, for test_python_stacks.py.
Runs under any CPython 3.10+. Registers faulthandler on SIGUSR1 to write its own
all-threads traceback (the ground truth) to argv[1]; prints "ready" once every
thread is at its blocking call; then blocks forever in main()."""
import faulthandler
import signal
import socket
import sys
import threading
import time

N_IDLE = 12
ready = []
held = threading.Lock()
held.acquire()


class Worker:
    def wait_on_lock(self):
        ready.append("lock")
        held.acquire()


def sleep_forever():
    ready.append("sleep")
    time.sleep(100000)


def recv_forever(sock):
    ready.append("recv")
    sock.recv(1)


def recurse(depth):
    if depth == 0:
        ready.append("deep")
        time.sleep(100000)
        return 0
    return recurse(depth - 1) + 1


def idle_worker(i):
    ready.append(f"idle{i}")
    time.sleep(100000)


def spin():
    ready.append("spin")
    n = 0
    while True: n += 1  # noqa: E701 -- one line, so its line is stable while it runs


def block_main():
    held.acquire()


def main():
    out = open(sys.argv[1], "w")
    faulthandler.register(signal.SIGUSR1, file=out, all_threads=True)
    a, b = socket.socketpair()
    targets = [(Worker().wait_on_lock, ()), (sleep_forever, ()), (recv_forever, (a,)), (recurse, (40,))]
    targets += [(idle_worker, (i,)) for i in range(N_IDLE)]
    if len(sys.argv) > 2 and sys.argv[2] == "spin":
        targets.append((spin, ()))
    for fn, args in targets:
        threading.Thread(target=fn, args=args, daemon=True).start()
    while len(ready) < len(targets):
        time.sleep(0.01)
    time.sleep(0.3)  # every thread is now inside its blocking call
    print("ready", flush=True)
    block_main()


if __name__ == "__main__":
    main()
