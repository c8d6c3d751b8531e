"""A test RAS server: speaks NCCL's RAS client protocol (NVIDIA/nccl
src/ras/client_support.cc, rasClientEventLoop) and replies with fixture
reports, or misbehaves on purpose.

Protocol as the real server: one command per line, case-insensitive, a
trailing '\\r' stripped; "CLIENT PROTOCOL <n>" -> "SERVER PROTOCOL 2";
"TIMEOUT <n>" -> "OK" or "ERROR: Invalid timeout value <x>"; "SET FORMAT
text|json" -> "OK" or "ERROR: Invalid format <x>" (before 2.28.7: "ERROR:
Unknown command <cmd>"); "STATUS"/"VERBOSE STATUS" -> the report in chunks
(header first, the rest after the gathering), then close; anything else ->
"ERROR: Unknown command <cmd>"; a line over 1024 bytes closes the connection.

Modes: ok (json supported), pre_json (2.24-2.28.3: no SET FORMAT), slow
(accepts, never answers STATUS), slow_handshake (never answers the
handshake), close_early (closes after the handshake), garbage (binary junk
instead of a handshake), wrong_protocol (an HTTP server), truncated (closes in
the middle of the report).

Run standalone: python3 fake_ras_server.py MODE TEXT_FILE JSON_FILE [PORT]
(prints the port it listens on)."""
import socket
import sys
import threading
import time


class FakeRasServer:
    def __init__(self, mode, text_reply, json_reply, host="127.0.0.1", port=0, family=socket.AF_INET):
        self.mode = mode
        self.text_reply = text_reply
        self.json_reply = json_reply
        self.sock = socket.socket(family, socket.SOCK_STREAM)
        self.sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        self.sock.bind((host, port))
        self.sock.listen(16)
        self.port = self.sock.getsockname()[1]
        self.commands = []
        self.connections = 0
        self._stop = False
        self._thread = threading.Thread(target=self._serve, daemon=True)

    def start(self):
        self._thread.start()
        return self

    def stop(self):
        # Wake the accept thread (shutdown makes a blocked accept fail on Linux) and wait for it before the
        # fd is closed: a thread that read the fd number just before close() would otherwise accept on the
        # next test's server, which got the same number, and answer its clients in this server's mode.
        self._stop = True
        try:
            self.sock.shutdown(socket.SHUT_RDWR)
        except OSError:
            pass
        if self._thread.is_alive() and self._thread is not threading.current_thread():
            self._thread.join(timeout=5)
        try:
            self.sock.close()
        except OSError:
            pass

    def _serve(self):
        while not self._stop:
            try:
                conn, _ = self.sock.accept()
            except OSError:
                return
            if self._stop:
                conn.close()
                return
            self.connections += 1
            threading.Thread(target=self._client, args=(conn,), daemon=True).start()

    def _client(self, conn):
        try:
            self._converse(conn)
        except OSError:
            pass
        finally:
            try:
                conn.close()
            except OSError:
                pass

    def _converse(self, conn):
        if self.mode == "garbage":
            conn.recv(1024)
            conn.sendall(b"\x00\xff\xfe\x13garbage\x07\x00" * 8 + b"\n")
            time.sleep(0.2)
            return
        if self.mode == "wrong_protocol":
            conn.recv(1024)
            conn.sendall(b"HTTP/1.1 400 Bad Request\r\nContent-Length: 0\r\n\r\n")
            return
        fmt = "text"
        buf = b""
        while True:
            data = conn.recv(4096)
            if not data:
                return
            buf += data
            while b"\n" in buf:
                raw, buf = buf.split(b"\n", 1)
                line = raw.decode("ascii", "replace")
                if line.endswith("\r"):
                    line = line[:-1]
                self.commands.append(line)
                low = line.lower()
                if low.startswith("client protocol "):
                    if self.mode == "slow_handshake":
                        time.sleep(60)
                        return
                    conn.sendall(b"SERVER PROTOCOL 2\n")
                    if self.mode == "close_early":
                        return
                elif low.startswith("timeout "):
                    v = line[len("timeout "):]
                    conn.sendall(b"OK\n" if v.isdigit() else ("ERROR: Invalid timeout value %s\n" % v).encode())
                elif low.startswith("set format ") and self.mode != "pre_json":
                    v = line[len("set format "):]
                    if v.lower() in ("text", "json"):
                        fmt = v.lower()
                        conn.sendall(b"OK\n")
                    else:
                        conn.sendall(("ERROR: Invalid format %s\n" % v).encode())
                elif low in ("status", "verbose status"):
                    if self.mode == "slow":
                        time.sleep(60)
                        return
                    reply = (self.json_reply if fmt == "json" else self.text_reply).encode()
                    if self.mode == "truncated":
                        conn.sendall(reply[: len(reply) // 3])
                        return
                    # Like RAS: the local part first, the gathered part later.
                    cut = reply.find(b"Communicators...") if fmt == "text" else -1
                    if cut > 0:
                        conn.sendall(reply[:cut])
                        time.sleep(0.05)
                        conn.sendall(reply[cut:])
                    else:
                        conn.sendall(reply)
                    return
                else:
                    conn.sendall(("ERROR: Unknown command %s\n" % line).encode())
            if len(buf) > 1024:
                return


if __name__ == "__main__":
    mode, tfile, jfile = sys.argv[1], sys.argv[2], sys.argv[3]
    port = int(sys.argv[4]) if len(sys.argv) > 4 else 0
    srv = FakeRasServer(mode, open(tfile).read(), open(jfile).read(), port=port).start()
    print(srv.port, flush=True)
    while True:
        time.sleep(3600)
