"""The OAuth 2 authorization server of the tests: django-oauth-toolkit under waitress.

    .build/python/bin/python Tests/Support/PythonServers/oauth_server/serve.py [options]

Listens on a free port of 127.0.0.1, and prints ``port N`` as its first stdout line once it
accepts connections; prints nothing else on stdout. Its SQLite database lives in a temporary
folder, removed when the process ends, however it ends. See README.md beside this file for the
options, the clients, the endpoints and the sign-in sequences.
"""

import argparse
import os
import shutil
import sys
import tempfile
import time

STARTED = time.monotonic()
HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.dirname(HERE))
sys.dont_write_bytecode = True  # no __pycache__ among the sources

# The clients, fixed: (client id, secret or None for a public client, grant type).
REDIRECT_URIS = "http://127.0.0.1/callback http://[::1]/callback"
CLIENTS = [
    ("service-client", "service-secret", "client-credentials"),
    ("web-client", "web-secret", "authorization-code"),
    ("native-client", None, "authorization-code"),
    ("device-client", None, "urn:ietf:params:oauth:grant-type:device_code"),
    ("tv-client", "tv-secret", "urn:ietf:params:oauth:grant-type:device_code"),
]


def parse_arguments():
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--username", default="alice", help="the user who signs in (default alice)")
    parser.add_argument("--password", default="alice-password", help="her password (default alice-password)")
    parser.add_argument("--access-token-expires", type=int, default=3600, metavar="SECONDS",
                        help="access tokens' lifetime (default 3600)")
    parser.add_argument("--device-interval", type=int, default=5, metavar="SECONDS",
                        help="the device flow's polling interval (default 5)")
    parser.add_argument("--device-code-expires", type=int, default=600, metavar="SECONDS",
                        help="device codes' lifetime (default 600)")
    parser.add_argument("--device-slow-down", action="store_true",
                        help="answer slow_down to a device poll sooner than the interval")
    parser.add_argument("--refresh-token-reuse-protection", action="store_true",
                        help="a reused (rotated-out) refresh token revokes the whole family")
    parser.add_argument("--jwt-client-id", default="jwt-client",
                        help="the client that authenticates with private_key_jwt (default jwt-client)")
    parser.add_argument("--jwt-public-key", metavar="PEM",
                        help="that client's public key (RSA for RS256, P-256 for ES256); no such client without it")
    parser.add_argument("--request-log", metavar="FILE", help="append a JSON line per request to FILE")
    parser.add_argument("--threads", type=int, default=8, help="request threads (default 8)")
    parser.add_argument("--timing", action="store_true", help="write start-up timings to stderr")
    return parser.parse_args()


def remove_when_gone(folder: str):
    """Removes `folder` once this process has ended, even by SIGKILL: a forked child waits for
    the end of a pipe whose writing end only this process holds."""
    reader, writer = os.pipe()
    if os.fork() == 0:
        os.close(writer)
        os.setsid()
        null = os.open(os.devnull, os.O_RDWR)
        for fd in (0, 1, 2):
            os.dup2(null, fd)
        try:
            while os.read(reader, 1):
                pass
        except OSError:
            pass
        shutil.rmtree(folder, ignore_errors=True)
        os._exit(0)
    os.close(reader)
    return writer  # kept open for the process's lifetime


class LazyApplication:
    """The WSGI application, set once Django is ready (the server listens before that)."""

    application = None

    def __call__(self, environ, start_response):
        return self.application(environ, start_response)


def main():
    options = parse_arguments()
    timings = []

    def mark(what):
        timings.append((what, time.monotonic() - STARTED))

    data_dir = tempfile.mkdtemp(prefix="oauth-server-")
    keep_open = remove_when_gone(data_dir)  # noqa: F841

    from waitress.server import create_server

    app = LazyApplication()
    # Listening from here on: a client that connects early waits in the backlog.
    server = create_server(
        app,
        host="127.0.0.1",
        port=0,
        threads=options.threads,
        ident="oauth-server",
        channel_timeout=60,
        expose_tracebacks=False,
    )
    port = server.effective_port
    origin = f"http://127.0.0.1:{port}"
    mark("listening")

    import django
    from django.conf import settings

    from oauth_server import settings as server_settings

    settings.configure(**server_settings.build(origin=origin, data_dir=data_dir, options=options))
    django.setup()
    mark("django.setup")

    from oauth_server import database

    database.create()
    mark("database")
    database.populate(options, CLIENTS, REDIRECT_URIS)
    mark("users and clients")

    from django.core.wsgi import get_wsgi_application

    app.application = get_wsgi_application()
    # Import the views now rather than in the first request.
    from django.urls import resolve

    resolve("/o/token/")
    mark("ready")
    if options.timing:
        print(" ".join(f"{what}={seconds:.3f}s" for what, seconds in timings), file=sys.stderr, flush=True)

    print(f"port {port}", flush=True)
    try:
        server.run()
    except KeyboardInterrupt:
        pass


if __name__ == "__main__":
    main()
