"""TCP relay that drops its first connections part-way through the response.

    python cutting_relay.py --upstream-port U --cut-after BYTES --cuts N [--verbose]

Listens on 127.0.0.1 on a free port and prints ``port P`` as its first stdout
line. Each accepted connection is relayed to 127.0.0.1:U in both directions.
For the first N connections, once BYTES bytes of the upstream's output
(status line and headers included, counted across every response on that
connection) have been relayed to the client, both sockets are closed at once,
so the client sees its connection end mid-body. With BYTES = 0 the cut happens
when the upstream first sends anything, and the client receives nothing.
Later connections are relayed in full. Uses only the standard library.
"""

import argparse
import asyncio
import itertools
import socket
import struct
import sys

CHUNK = 64 * 1024


def log(args: argparse.Namespace, message: str) -> None:
    if args.verbose:
        print(message, file=sys.stderr, flush=True)


def close_abruptly(writer: asyncio.StreamWriter, reset: bool) -> None:
    """Close a socket without a graceful shutdown (RST instead of FIN if `reset`)."""
    if reset:
        sock = writer.get_extra_info("socket")
        if sock is not None:
            # SO_LINGER with a zero timeout makes close() send a TCP RST.
            sock.setsockopt(socket.SOL_SOCKET, socket.SO_LINGER, struct.pack("ii", 1, 0))
    writer.transport.abort()


async def pump(reader: asyncio.StreamReader, writer: asyncio.StreamWriter, limit: int | None) -> bool:
    """Copy reader to writer until EOF, or until `limit` bytes have been copied.

    drain() after each write keeps the buffering bounded by the peer's pace.
    Returns True if the limit was reached (the connection should be cut).
    """
    remaining = limit
    while True:
        data = await reader.read(CHUNK)
        if not data:
            # Pass a half-close on (e.g. client done sending its request).
            if writer.can_write_eof():
                writer.write_eof()
            return False
        if remaining is not None:
            data = data[:remaining]
            remaining -= len(data)
        if data:
            writer.write(data)
            await writer.drain()
        if remaining == 0:
            return True


async def handle(args, counter, client_reader, client_writer) -> None:
    number = next(counter)
    cut = number <= args.cuts
    try:
        upstream_reader, upstream_writer = await asyncio.open_connection("127.0.0.1", args.upstream_port)
    except OSError as error:
        log(args, f"connection {number}: upstream connect failed: {error}")
        client_writer.transport.abort()
        return

    log(args, f"connection {number}: {'cut after ' + str(args.cut_after) + ' bytes' if cut else 'relayed in full'}")
    if cut:
        # Make drain() wait until everything written has reached the kernel,
        # so the client gets exactly `cut_after` bytes before the close.
        client_writer.transport.set_write_buffer_limits(high=0)
    upload = asyncio.create_task(pump(client_reader, upstream_writer, None))
    download = asyncio.create_task(pump(upstream_reader, client_writer, args.cut_after if cut else None))
    try:
        # Finish when both directions reach EOF, or as soon as one fails or
        # the download reaches its cut point.
        pending = {upload, download}
        while pending:
            done, pending = await asyncio.wait(pending, return_when=asyncio.FIRST_COMPLETED)
            if any(task.exception() is not None for task in done):
                break
            if download in done and download.result():
                log(args, f"connection {number}: cut")
                break
    finally:
        for task in (upload, download):
            task.cancel()
        await asyncio.gather(upload, download, return_exceptions=True)
        close_abruptly(client_writer, args.reset)
        close_abruptly(upstream_writer, args.reset)


async def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--upstream-port", type=int, required=True)
    parser.add_argument("--cut-after", type=int, required=True, help="bytes of upstream output to relay before cutting")
    parser.add_argument("--cuts", type=int, default=1, help="how many connections (the first ones) to cut")
    parser.add_argument("--reset", action="store_true", help="cut with a TCP RST instead of a FIN")
    parser.add_argument("--verbose", action="store_true", help="log each connection to stderr")
    args = parser.parse_args()

    counter = itertools.count(1)
    server = await asyncio.start_server(
        lambda r, w: handle(args, counter, r, w), "127.0.0.1", 0, backlog=256
    )
    port = server.sockets[0].getsockname()[1]
    print(f"port {port}", flush=True)
    async with server:
        await server.serve_forever()


if __name__ == "__main__":
    try:
        asyncio.run(main())
    except KeyboardInterrupt:
        pass
