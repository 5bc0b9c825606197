#!/usr/bin/env python3
"""A recording TCP proxy for the fuzz seeds: listens on 127.0.0.1:LISTEN_PORT, relays every
connection to 127.0.0.1:SERVER_PORT, and writes what each client sent (client -> server
bytes only, in order) to OUT_DIR/conn-N.bin. Runs until killed.

    record.py LISTEN_PORT SERVER_PORT OUT_DIR
"""
import os
import socket
import sys
import threading


def relay(src, dst, sink):
    try:
        while True:
            b = src.recv(65536)
            if not b:
                break
            if sink is not None:
                sink.write(b)
                sink.flush()
            dst.sendall(b)
    except OSError:
        pass
    finally:
        for s in (src, dst):
            try:
                s.shutdown(socket.SHUT_RDWR)
            except OSError:
                pass


def main():
    listen_port, server_port, out_dir = int(sys.argv[1]), int(sys.argv[2]), sys.argv[3]
    os.makedirs(out_dir, exist_ok=True)
    ls = socket.socket()
    ls.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    ls.bind(("127.0.0.1", listen_port))
    ls.listen(16)
    n = 0
    while True:
        client, _ = ls.accept()
        server = socket.create_connection(("127.0.0.1", server_port))
        n += 1
        sink = open(os.path.join(out_dir, "conn-%d.bin" % n), "wb")
        threading.Thread(target=relay, args=(client, server, sink), daemon=True).start()
        threading.Thread(target=relay, args=(server, client, None), daemon=True).start()


if __name__ == "__main__":
    main()
