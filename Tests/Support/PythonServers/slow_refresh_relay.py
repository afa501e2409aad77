"""HTTP relay that answers refresh token requests late.

    python slow_refresh_relay.py --upstream-port U --delay SECONDS

Listens on 127.0.0.1 on a free port and prints ``port P`` as its first stdout line. Every
request is passed on at once to http://127.0.0.1:U with the same method, path, headers and body,
and the upstream's answer is relayed back; when the request's form has
``grant_type=refresh_token``, the answer is held back SECONDS after the upstream made it, so that
the authorization server has already rotated the refresh token while the client still waits (as a
slow network or a slow server would make it). One thread per connection; a connection serves one
request. Uses only the standard library.
"""

import argparse
import http.client
import sys
import time
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from urllib.parse import parse_qs

HOP_BY_HOP = {"connection", "keep-alive", "transfer-encoding", "te", "trailer", "upgrade", "proxy-connection"}


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--upstream-port", type=int, required=True)
    parser.add_argument("--delay", type=float, default=3.0)
    args = parser.parse_args()

    class Relay(BaseHTTPRequestHandler):
        protocol_version = "HTTP/1.1"

        def relay(self) -> None:
            length = int(self.headers.get("Content-Length") or 0)
            body = self.rfile.read(length) if length > 0 else b""
            headers = {name: value for name, value in self.headers.items() if name.lower() not in HOP_BY_HOP}
            upstream = http.client.HTTPConnection("127.0.0.1", args.upstream_port, timeout=30)
            try:
                upstream.request(self.command, self.path, body=body, headers=headers)
                answer = upstream.getresponse()
                data = answer.read()
                answer_headers = [(n, v) for n, v in answer.getheaders() if n.lower() not in HOP_BY_HOP | {"content-length"}]
                status = answer.status
            finally:
                upstream.close()
            form = parse_qs(body.decode("latin-1")) if self.command == "POST" else {}
            if form.get("grant_type") == ["refresh_token"]:
                time.sleep(args.delay)
            self.send_response(status)
            for name, value in answer_headers:
                self.send_header(name, value)
            self.send_header("Content-Length", str(len(data)))
            self.send_header("Connection", "close")
            self.end_headers()
            self.wfile.write(data)
            self.close_connection = True

        do_GET = relay
        do_POST = relay

        def log_message(self, format: str, *values) -> None:
            pass

    server = ThreadingHTTPServer(("127.0.0.1", 0), Relay)
    server.daemon_threads = True
    print(f"port {server.server_address[1]}", flush=True)
    sys.stdout.close()
    server.serve_forever()


if __name__ == "__main__":
    main()
