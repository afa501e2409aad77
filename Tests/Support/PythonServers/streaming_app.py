"""Streaming test server for the HTTP client's streaming tests.

Run with the project's virtualenv:

    .build/python/bin/python Tests/Support/PythonServers/streaming_app.py

It binds 127.0.0.1 on a free port, prints ``port N`` as its first stdout line
and serves until it is terminated. Requires fastapi, uvicorn, sse-starlette and
python-multipart.
"""

import asyncio
import hashlib
import json
import socket

import uvicorn
from fastapi import FastAPI, Query, Request
from fastapi.responses import JSONResponse, StreamingResponse
from sse_starlette import EventSourceResponse, ServerSentEvent
from starlette.datastructures import UploadFile

app = FastAPI()

# Last-Event-ID header of every /events connection, in arrival order
# (None where the header was absent).
seen_last_event_ids: list[str | None] = []

LINE_MEDIA_TYPES = {"ndjson": "application/x-ndjson", "jsonl": "application/jsonl"}
LINE_TYPE_PATTERN = "^(ndjson|jsonl)$"
READ_CHUNK = 64 * 1024


def json_line(n: int) -> bytes:
    """One newline-terminated JSON line for the line-oriented endpoints."""
    return (json.dumps({"n": n, "text": f"line {n}"}) + "\n").encode()


async def paced(chunks):
    """Yield each chunk, then let the event loop run.

    Without the pause a fast generator never gives uvicorn a chance to notice
    a dropped client, and keeps writing into the dead socket.
    """
    for chunk in chunks:
        yield chunk
        await asyncio.sleep(0)


# --- Server-sent events --------------------------------------------------------


@app.get("/events")
async def events(
    request: Request,
    count: int = Query(10, ge=0),
    per_connection: int | None = Query(None, ge=1),
    retry: int = Query(50, ge=0),
    interval_ms: int = Query(0, ge=0),
):
    """Events 1..count; each connection sends at most `per_connection` of them.

    A `Last-Event-ID` header resumes after that id (a non-numeric value
    starts again at 1).
    """
    last_event_id = request.headers.get("last-event-id")
    seen_last_event_ids.append(last_event_id)

    first = 1
    if last_event_id is not None and last_event_id.strip().isdigit():
        first = int(last_event_id) + 1
    limit = per_connection if per_connection is not None else count

    async def stream():
        sent = 0
        for n in range(first, count + 1):
            if sent == limit:
                break  # ends the response; the client must reconnect
            if sent > 0:
                # Even with no interval, sleep(0) lets the server notice a
                # dropped client (see paced()).
                await asyncio.sleep(interval_ms / 1000)
                # A comment line between events, which clients must ignore.
                yield ServerSentEvent(comment="keep-alive")
            yield ServerSentEvent(
                data=json.dumps({"n": n, "text": f"tick {n}"}),
                event="tick",
                id=str(n),
                retry=retry if sent == 0 else None,  # only on a connection's first event
            )
            sent += 1

    # ping=0: no timed pings, so the byte stream is deterministic.
    return EventSourceResponse(stream(), ping=0)


@app.get("/events/seen")
async def events_seen():
    return seen_last_event_ids


@app.post("/events/reset")
async def events_reset():
    seen_last_event_ids.clear()
    return {"ok": True}


@app.get("/events/multiline")
async def events_multiline():
    """One event whose data spans three `data:` lines, then the end."""

    async def stream():
        yield ServerSentEvent(data="a\nb\nc", event="multi", id="m1")

    return EventSourceResponse(stream(), ping=0)


# --- Line-delimited JSON ---------------------------------------------------------


@app.get("/lines")
async def lines(
    count: int = Query(3, ge=0),
    kind: str = Query("ndjson", alias="type", pattern=LINE_TYPE_PATTERN),
):
    """`count` JSON lines, each sent as its own chunk."""
    chunks = (json_line(n) for n in range(1, count + 1))
    return StreamingResponse(paced(chunks), media_type=LINE_MEDIA_TYPES[kind])


@app.get("/lines/bad")
async def lines_bad(
    at: int = Query(2, ge=1),
    count: int = Query(3, ge=0),
    kind: str = Query("ndjson", alias="type", pattern=LINE_TYPE_PATTERN),
):
    """Like /lines, but line `at` (1-based) is not JSON."""

    chunks = (b"this is not json\n" if n == at else json_line(n) for n in range(1, count + 1))
    return StreamingResponse(paced(chunks), media_type=LINE_MEDIA_TYPES[kind])


@app.get("/lines/slow")
async def lines_slow(
    count: int = Query(3, ge=0),
    interval_ms: int = Query(100, ge=0),
    kind: str = Query("ndjson", alias="type", pattern=LINE_TYPE_PATTERN),
):
    """Like /lines, with `interval_ms` between lines (the first comes at once)."""

    async def stream():
        for n in range(1, count + 1):
            if n > 1:
                await asyncio.sleep(interval_ms / 1000)
            yield json_line(n)

    return StreamingResponse(stream(), media_type=LINE_MEDIA_TYPES[kind])


@app.get("/lines/long-then-short")
async def lines_long_then_short(
    long: int = Query(8 << 20, ge=1, le=64 << 20),
    chunks: int = Query(16, ge=0, le=1024),
    per_chunk: int = Query(16384, ge=1, le=1 << 20),
):
    """One value padded to `long` bytes (7 then spaces), then `chunks` chunks of `per_chunk` lines of 1."""

    def stream():
        yield b"7" + b" " * (long - 1) + b"\n"
        for _ in range(chunks):
            yield b"1\n" * per_chunk

    return StreamingResponse(paced(stream()), media_type="application/x-ndjson")


@app.get("/events/long-then-short")
async def events_long_then_short(
    long: int = Query(8 << 20, ge=1, le=64 << 20),
    chunks: int = Query(16, ge=0, le=1024),
    per_chunk: int = Query(4096, ge=1, le=1 << 20),
):
    """One event whose data is `long` x's, then `chunks` chunks of `per_chunk` events `1`, each
    event's lines split across two chunks."""

    def stream():
        yield b"data: " + b"x" * long + b"\n\n"
        for _ in range(chunks):
            yield b"da" + b"ta: 1\n\nda" * (per_chunk - 1)
            yield b"ta: 1\n\n"

    return StreamingResponse(paced(stream()), media_type="text/event-stream")


@app.get("/json-seq")
async def json_seq(count: int = Query(3, ge=0)):
    """RFC 7464 JSON text sequence: RS (0x1E) + JSON text + LF per element."""

    chunks = (b"\x1e" + json_line(n) for n in range(1, count + 1))
    return StreamingResponse(paced(chunks), media_type="application/json-seq")


# --- Uploads ------------------------------------------------------------------------


@app.api_route("/upload", methods=["PUT", "POST"])
async def upload(request: Request):
    """Hash the raw body as it streams in; it is never held whole in memory."""
    digest = hashlib.sha256()
    size = 0
    async for chunk in request.stream():
        digest.update(chunk)
        size += len(chunk)

    content_length = request.headers.get("content-length")
    transfer_encoding = request.headers.get("transfer-encoding", "")
    return {
        "bytes": size,
        "sha256": digest.hexdigest(),
        "content_length": int(content_length) if content_length and content_length.isdigit() else None,
        "chunked": "chunked" in transfer_encoding.lower(),
    }


@app.post("/upload/multipart")
async def upload_multipart(request: Request):
    """Describe each multipart/form-data part, in order.

    Every entry has the keys name, filename, content_type, bytes, sha256 and
    value. File parts (those with a filename) have value null; plain fields
    have filename and content_type null and value set to the field's text.
    """
    if not request.headers.get("content-type", "").lower().startswith("multipart/form-data"):
        return JSONResponse({"error": "expected multipart/form-data"}, status_code=415)

    parts = []
    # Starlette spools file parts to temporary files (in memory up to 1 MB).
    async with request.form() as form:
        for name, value in form.multi_items():
            digest = hashlib.sha256()
            size = 0
            if isinstance(value, UploadFile):
                while chunk := await value.read(READ_CHUNK):
                    digest.update(chunk)
                    size += len(chunk)
                parts.append({
                    "name": name,
                    "filename": value.filename,
                    "content_type": value.content_type,
                    "bytes": size,
                    "sha256": digest.hexdigest(),
                    "value": None,
                })
            else:
                data = value.encode()
                digest.update(data)
                parts.append({
                    "name": name,
                    "filename": None,
                    "content_type": None,
                    "bytes": len(data),
                    "sha256": digest.hexdigest(),
                    "value": value,
                })
    return parts


@app.get("/health")
async def health():
    return {"ok": True}


# --- Entry point ---------------------------------------------------------------------


def main() -> None:
    # Bind and listen before announcing the port, so a client that connects
    # right after reading it waits in the backlog instead of being refused.
    sock = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
    sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    sock.bind(("127.0.0.1", 0))
    sock.listen(128)

    config = uvicorn.Config(
        app,
        access_log=False,
        log_level="warning",
        timeout_graceful_shutdown=1,  # don't wait long for open streams on SIGTERM
    )
    server = uvicorn.Server(config)

    print(f"port {sock.getsockname()[1]}", flush=True)
    server.run(sockets=[sock])


if __name__ == "__main__":
    main()
