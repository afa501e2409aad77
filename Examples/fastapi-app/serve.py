"""Serves app.py on 127.0.0.1 at a free port and prints `port N` once it listens."""

import socket
import sys

import uvicorn

sock = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
sock.bind(("127.0.0.1", 0))
sock.listen(64)
print(f"port {sock.getsockname()[1]}", flush=True)

sys.path.insert(0, __file__.rsplit("/", 1)[0])
server = uvicorn.Server(uvicorn.Config("app:app", log_level="warning"))
server.run(sockets=[sock])
