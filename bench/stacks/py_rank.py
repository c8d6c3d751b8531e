"""A stand-in for a stuck Python rank, for bench_stacks.py: a main thread in a
join, workers blocked on a lock, in time.sleep and in a socket recv, a few
frames deep each. Prints "ready" once every thread is at its blocking call."""
import socket
import sys
import threading
import time

held = threading.Lock()
held.acquire()
ready = []


def wait_on_lock(depth):
    if depth:
        return wait_on_lock(depth - 1)
    ready.append(1)
    held.acquire()


def sleep_forever(depth):
    if depth:
        return sleep_forever(depth - 1)
    ready.append(1)
    time.sleep(100000)


def recv_forever(sock, depth):
    if depth:
        return recv_forever(sock, depth - 1)
    ready.append(1)
    sock.recv(1)


def main():
    a, b = socket.socketpair()
    threads = [threading.Thread(target=wait_on_lock, args=(8,), name=f"lock-{i}", daemon=True) for i in range(4)]
    threads += [threading.Thread(target=sleep_forever, args=(8,), name=f"sleep-{i}", daemon=True) for i in range(2)]
    threads.append(threading.Thread(target=recv_forever, args=(a, 8), name="recv", daemon=True))
    for t in threads:
        t.start()
    while len(ready) < len(threads):
        time.sleep(0.01)
    time.sleep(0.1)
    print("ready", flush=True)
    threads[0].join()


if __name__ == "__main__":
    sys.exit(main())
