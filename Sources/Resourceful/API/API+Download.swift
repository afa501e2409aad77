public import Foundation
public import HTTPTypes
import Crypto
import NIOCore

extension API {
    /// Calls `request` and writes its response body to the file at `destination`, in bounded
    /// memory whatever its size, and returns once the whole body is on disk.
    ///
    /// The body goes into a temporary file beside `destination`, is checked against its
    /// `Content-Length`, flushed to disk (`fsync`) and renamed into place only when complete:
    /// `destination` never holds part of a body, and is replaced whole; only a regular file (or
    /// a symbolic link to one) is replaced, keeping its permission bits but never its
    /// set-user-ID, set-group-ID or sticky bit. When the connection drops, the download resumes
    /// where it stopped — `Range` with `If-Range` (the server's strong `ETag`, or a
    /// `Last-Modified` at least a second before its `Date`), a `206` continuing the file to its
    /// end — and starts again from the beginning when the server answers `200` instead, named
    /// neither, or gave no `Content-Length` (as for a body decompressed on its way in: the
    /// download asks for `Accept-Encoding: identity`); at most
    /// ``APIConfig/RetryPolicy/maxAttempts`` connections in all, none again when
    /// ``RequestOptions/allowsRetries`` is `false` (for a `POST` or `PATCH`, unless it carries an
    /// `Idempotency-Key` or chose retries; all its connections then send the same key), and no
    /// wait between them past the deadline.
    ///
    /// ```swift
    /// let result = try await api.download(ReleaseAsset(id: 42), to: URL(filePath: "release.tar.gz", directoryHint: .notDirectory)) { progress in
    ///     print(progress.bytesWritten, "of", progress.totalBytes ?? -1)
    /// }
    /// ```
    ///
    /// ``RequestOptions/timeout`` bounds the wait for each head, each silence of the server and
    /// each call to the destination's file system; ``RequestOptions/streamTimeout`` (none by
    /// default) the whole download.
    ///
    /// - Parameter progress: Called as the file grows: after each head and each part written.
    /// - Throws: ``APIError``: as ``call(_:)`` for the request and its status;
    ///   ``APIError/Kind/file`` naming `destination` when it exists and is not a regular file
    ///   (a folder, a device, a FIFO, a socket, a link to one), before anything is sent, or when
    ///   its folder cannot be written, the disk is full, or its file system has less room than
    ///   the body's `Content-Length` (refused before a byte is written); ``APIError/Kind/transport`` when the
    ///   body ended early on the last connection allowed, runs past the end its
    ///   `Content-Length` or `Content-Range` gave (at the first byte too many), or a `206` does
    ///   not continue the file (another range, or another version: its `ETag` or `Last-Modified`
    ///   changed, or it lacks the one `If-Range` sent);
    ///   ``APIError/Kind/timeout`` when ``RequestOptions/streamTimeout`` passes, waiting to
    ///   resume or for the destination's file system included, or when that file system does not
    ///   answer one call within ``RequestOptions/timeout`` (one that does not answer holds a
    ///   thread of the download's own, never the caller's nor one other downloads need, and the
    ///   download returns by its deadline, or at once when its task is cancelled). The temporary
    ///   file is removed whatever the error, cancellation too.
    public func download<Request: ResourceRequest>(
        _ request: Request,
        to destination: URL,
        progress: (@Sendable (DownloadProgress) -> Void)? = nil
    ) async throws(APIError) -> DownloadResult {
        try await download(request, to: destination, options: DownloadOptions(), progress: progress)
    }

    /// Calls `request` and writes its response body to the file at `destination` as
    /// ``download(_:to:progress:)`` does, within `options`: a cap on the body's size
    /// (``DownloadOptions/maxBytes``), and a part kept for the next run to resume when the
    /// download stops before its end (``DownloadOptions/keepsPartialFile``, curl's `-C -`).
    ///
    /// Whatever the cap, a body whose `Content-Length` (or the rest of it, when resuming) is
    /// larger than the space free on the destination's file system is refused before a byte is
    /// written.
    ///
    /// - Throws: as ``download(_:to:progress:)``; ``APIError/Kind/responseTooLarge`` when the
    ///   body is larger than ``DownloadOptions/maxBytes``; ``APIError/Kind/file`` when it does
    ///   not fit on the file system, or another download writes the same kept part. What was
    ///   written is removed, unless ``DownloadOptions/keepsPartialFile`` keeps it for a resume
    ///   (cancelled, timed out, the connection lost, a server error, the local disk full or
    ///   failing: the error's detail then names the part kept).
    public func download<Request: ResourceRequest>(
        _ request: Request,
        to destination: URL,
        options downloadOptions: DownloadOptions,
        progress: (@Sendable (DownloadProgress) -> Void)? = nil
    ) async throws(APIError) -> DownloadResult {
        let options = defaultOptions.applying(request)
        let method = request.verb.method(update: options.updateMethod)
        let path = maskedPath(request.path)
        let deadline = API.streamDeadline(from: .now, options: options)
        if let maxBytes = downloadOptions.maxBytes, maxBytes < 0 {
            throw Refusal.negativeLimit(maxBytes).apiError(status: nil).with(method: method, path: path)
        }
        let file: PartialFile
        let resume: PartialFile.ResumeState?
        let identity = downloadIdentity(method: method, request: request)
        do throws(APIError) {
            if downloadOptions.keepsPartialFile {
                (file, resume) = try await PartialFile.resumable(for: destination, request: identity, until: deadline, step: options.timeout)
            } else {
                (file, resume) = (try await PartialFile.create(for: destination, until: deadline, step: options.timeout), nil)
            }
        } catch {
            throw error.with(method: method, path: path)
        }
        do throws(APIError) {
            let (result, deadline) = try await fill(
                file, from: request, options: options, limits: downloadOptions, resume: resume, identity: identity, deadline: deadline, progress: progress
            )
            try await file.commit(until: deadline, bytes: result.bytes)
            return result
        } catch {
            var error = error
            if Self.keepsPart(after: error) {
                // A local failure (a full disk, a file system that does not answer) stops a
                // download the user asked to resume: what is on disk stays for the next run.
                if await file.keep(), error.kind == .file {
                    error.detail = (error.detail.map { $0 + "; " } ?? "") + "the part is kept in \(file.temporary) for a resume"
                }
            } else {
                await file.discard()
            }
            throw error.with(method: method, path: path)
        }
    }

    /// What names a download's request in a kept part's state: a SHA-256 digest of the base URL,
    /// the method and the path with its query (which may hold a secret, so never in clear).
    private func downloadIdentity<Request: ResourceRequest>(method: HTTPRequest.Method, request: Request) -> String {
        let text = config.baseURL.absoluteString + "\n" + method.rawValue + "\n" + request.path.encoded
        return SHA256.hash(data: Data(text.utf8)).map { String(format: "%02x", $0) }.joined()
    }

    /// Whether a part is worth keeping after `error`: the download was stopped (cancelled, timed
    /// out, the connection lost, a server error or throttled, the local disk full or failing),
    /// not refused (too large, a `206` that does not continue it, another status).
    private static func keepsPart(after error: APIError) -> Bool {
        switch error.kind {
        case .cancelled, .timeout, .file: true
        case .transport: error.status == nil
        case .unacceptableStatus: error.status.map { $0.kind == .serverError || $0 == .tooManyRequests } ?? false
        default: false
        }
    }

    /// Writes the body of `request` into `file`, resuming after dropped connections (and from
    /// `resume`, a part a download before this one kept); returns the result and the download's
    /// deadline (which the middlewares may have set).
    private func fill<Request: ResourceRequest>(
        _ file: PartialFile,
        from request: Request,
        options: RequestOptions,
        limits: DownloadOptions,
        resume: PartialFile.ResumeState?,
        identity: String,
        deadline: ContinuousClock.Instant,
        progress: (@Sendable (DownloadProgress) -> Void)?
    ) async throws(APIError) -> (DownloadResult, ContinuousClock.Instant) {
        var written = resume?.written ?? 0
        var validator = resume?.validator
        var total = resume?.total
        var connections = 1
        /// Whether a part kept by another run is still to be confirmed by the server: a `416`
        /// then means it no longer fits the body, which starts again (once).
        var fromKeptPart = resume != nil
        // The first connection lets the middlewares set the download's deadline
        // (``RequestOptions/streamTimeout``); the later ones keep it.
        var deadline = deadline
        var deadlineFromSteps = false
        let maxConnections = options.allowsRetries ? max(options.retryPolicy.maxAttempts, 1) : 1
        // A POST that chose retries sends one key on every connection: a resumption is the same
        // request sent again.
        let idempotencyKey = RetryMiddleware.keyForConnections(
            method: request.verb.method(update: options.updateMethod),
            options: options,
            headers: request.headers
        )
        while true {
            // The bytes as they are: a body the transport decompressed has offsets of its own,
            // which a range of the encoded one would not continue.
            var fields: HTTPFields = [.acceptEncoding: "identity"]
            if let idempotencyKey { fields[.idempotencyKey] = idempotencyKey }
            if written > 0, let validator, total != nil {
                fields[.range] = "bytes=\(written)-"
                fields[.ifRange] = validator
            } else if written > 0 {
                // Nothing tells this body from a changed one, or its size is unknown (a body
                // decoded on its way in has no Content-Length): the whole body again.
                try await file.truncate(to: 0, until: deadline)
                written = 0
            }
            let response: StreamedResponse
            do throws(APIError) {
                response = try await openStream(request, extraFields: fields, deadline: deadlineFromSteps ? deadline : nil)
            } catch where fromKeptPart && error.status == .rangeNotSatisfiable {
                // The kept part is as long as the body or longer (the file changed in a way its
                // validator missed, or the part was whole): the whole body again.
                fromKeptPart = false
                try await file.saveState(nil, request: identity, until: deadline)
                try await file.truncate(to: 0, until: deadline)
                (written, validator, total) = (0, nil, nil)
                continue
            }
            let confirmingKeptPart = fromKeptPart
            fromKeptPart = false
            if !deadlineFromSteps {
                deadline = response.deadline
                deadlineFromSteps = true
            }
            /// Where this response's bytes must end: its range's end, or the whole body's size.
            let end: Int?
            if response.status == .partialContent {
                guard let range = Self.continuation(response, written: written, total: total, validator: validator) else {
                    if confirmingKeptPart {
                        // A part kept by another run that the server's 206 does not continue (its
                        // size or version changed in a way If-Range missed): the whole body
                        // again, as after a 416, rather than lose the download.
                        try await file.saveState(nil, request: identity, until: deadline)
                        try await file.truncate(to: 0, until: deadline)
                        (written, validator, total) = (0, nil, nil)
                        continue
                    }
                    throw Refusal.discontinuity(Self.discontinuity(response, written: written, total: total, validator: validator)).apiError(status: response.status)
                }
                end = range.last + 1
            } else {
                if written > 0 {
                    // The server sent the whole body (it changed, or ignores ranges): from the start.
                    try await file.truncate(to: 0, until: deadline)
                    written = 0
                }
                total = response.body.expectedLength
                validator = Self.rangeValidator(response.headerFields)
                end = total
                // A kept part's state names this version before a byte of it is written: a part
                // and its state never disagree, whenever the process ends.
                if file.keepsPart {
                    let state = validator.flatMap { validator in total.map { PartialFile.ResumeState(validator: validator, total: $0, written: 0) } }
                    try await file.saveState(state, request: identity, until: deadline)
                }
            }
            if let end {
                try await Self.checkRoom(for: end - written, total: end, in: file, limits: limits, status: response.status, until: deadline)
            }
            progress?(DownloadProgress(bytesWritten: written, totalBytes: total, connections: connections))
            // Parts are written to disk in pieces of up to 1 MiB: fewer trips to the download's own
            // thread than one per network read, in bounded memory. What arrived before a break is
            // written before the download resumes.
            var piece = ByteBuffer()
            do {
                for try await var chunk in response.body {
                    // A body longer than it said fails at the first byte too many, before it is
                    // written: a hostile 206 cannot fill the disk; nor can one without a length
                    // pass the download's cap.
                    if let end, chunk.readableBytes > end - written - piece.readableBytes {
                        throw Refusal.overrun(end: end)
                    }
                    if let maxBytes = limits.maxBytes, chunk.readableBytes > maxBytes - written - piece.readableBytes {
                        throw Refusal.overLimit(maxBytes).apiError(status: response.status)
                    }
                    piece.writeBuffer(&chunk)
                    if piece.readableBytes >= (file.keepsPart ? Self.keptWritePiece : Self.writePiece) {
                        try await file.write(piece, at: written, until: deadline)
                        written += piece.readableBytes
                        piece.clear()
                        progress?(DownloadProgress(bytesWritten: written, totalBytes: total, connections: connections))
                    }
                }
                if piece.readableBytes > 0 {
                    try await file.write(piece, at: written, until: deadline)
                    written += piece.readableBytes
                    progress?(DownloadProgress(bytesWritten: written, totalBytes: total, connections: connections))
                }
                if let total, written != total {
                    // Thrown as an APIError here, so that the catch below resumes it as a broken connection.
                    throw Refusal.shortBody(written: written, total: total).apiError(status: nil)
                }
                let result = DownloadResult(
                    file: URL(fileURLWithPath: file.destination, isDirectory: false),
                    bytes: written,
                    status: response.status,
                    headerFields: response.headerFields,
                    connections: connections
                )
                return (result, deadline)
            } catch let refusal as Refusal {
                throw refusal.apiError(status: response.status)
            } catch let error as APIError where Self.resumable(error, deadline: deadline) && connections < maxConnections {
                if piece.readableBytes > 0 {
                    try await file.write(piece, at: written, until: deadline)
                    written += piece.readableBytes
                }
                connections += 1
                // The wait is within the download's deadline: one that would end past it fails
                // now, as the deadline would.
                let wake = ContinuousClock.now + RetryMiddleware.backoff(attempt: connections - 1, policy: options.retryPolicy)
                guard wake < deadline else {
                    throw APIError.timedOut("the download's deadline comes before it could resume")
                }
                do {
                    try await Task.sleep(until: wake, clock: .continuous)
                } catch {
                    throw APIError.cancelled("while waiting to resume the download")
                }
            } catch let error as APIError {
                // What arrived before the break is kept with the part, for the next run.
                if file.keepsPart, piece.readableBytes > 0, piece.readableBytes <= (end ?? Int.max) - written {
                    try? await file.write(piece, at: written, until: deadline, finishing: true)
                }
                throw error
            } catch {
                let error = APIError.classifying(error, deadline: deadline)
                if file.keepsPart, piece.readableBytes > 0, piece.readableBytes <= (end ?? Int.max) - written {
                    try? await file.write(piece, at: written, until: deadline, finishing: true)
                }
                throw error
            }
        }
    }

    /// Refuses a body of `total` bytes that would pass the download's cap, or whose `remaining`
    /// bytes would not fit in the space free on the file system of `file`, before a byte is
    /// written.
    private static func checkRoom(
        for remaining: Int, total: Int, in file: PartialFile, limits: DownloadOptions, status: HTTPResponse.Status, until deadline: ContinuousClock.Instant
    ) async throws(APIError) {
        if let maxBytes = limits.maxBytes, total > maxBytes {
            throw Refusal.announcedOverLimit(total: total, limit: maxBytes).apiError(status: status)
        }
        if remaining > 0, let free = try await file.freeBytes(until: deadline), remaining > free {
            throw Refusal.noRoom(remaining: remaining, free: free, destination: file.destination).apiError(status: status)
        }
    }

    /// The range of a `206` that continues the file at byte `written` to its end (`total`), of the
    /// version `validator` names; `nil` when it does not (``discontinuity(_:written:total:validator:)`` says why).
    private static func continuation(_ response: StreamedResponse, written: Int, total: Int?, validator: String?) -> ContentRange? {
        guard written > 0, let total, let range = ContentRange(single(.contentRange, of: response.headerFields)), range.first == written,
            range.last == total - 1, range.total == nil || range.total == total
        else { return nil }
        if let length = response.body.expectedLength, length != range.last - range.first + 1 { return nil }
        // A part of another version (a cache or proxy that ignored If-Range) is refused, and so
        // is one that does not name the version it is of (RFC 9110 §15.3.7: a 206 to an If-Range
        // carries the validator it was asked for), or names more than one.
        if let validator, validator.hasPrefix("\""), single(.eTag, of: response.headerFields) != validator { return nil }
        if let validator, !validator.hasPrefix("\""), single(.lastModified, of: response.headerFields) != validator { return nil }
        return range
    }

    /// Why a `206` does not continue the file (``continuation(_:written:total:validator:)``).
    private static func discontinuity(_ response: StreamedResponse, written: Int, total: Int?, validator: String?) -> String {
        guard written > 0, let total, let range = ContentRange(single(.contentRange, of: response.headerFields)), range.first == written,
            range.last == total - 1, range.total == nil || range.total == total
        else { return "the 206's Content-Range does not continue the file at byte \(written)" }
        if let length = response.body.expectedLength, length != range.last - range.first + 1 {
            return "the 206's Content-Length does not match its Content-Range"
        }
        if let validator, validator.hasPrefix("\"") {
            return "the 206 is of another version of the file (its ETag changed or is missing)"
        }
        return "the 206 is of another version of the file (its Last-Modified changed or is missing)"
    }

    /// What a download refuses of its own, made an ``APIError`` in this one place.
    private enum Refusal: Error {
        /// The download's `maxBytes` is negative.
        case negativeLimit(Int)
        /// A `206` that does not continue the part (the text says how).
        case discontinuity(String)
        /// The body grew past the download's `maxBytes`.
        case overLimit(Int)
        /// The body's announced length is past the download's `maxBytes`.
        case announcedOverLimit(total: Int, limit: Int)
        /// The body does not fit in the room left on the destination's file system.
        case noRoom(remaining: Int, free: Int, destination: String)
        /// The body ended before its announced length.
        case shortBody(written: Int, total: Int)
        /// The body went on past the byte where its `Content-Length` or `Content-Range` said it ends.
        case overrun(end: Int)

        func apiError(status: HTTPResponse.Status?) -> APIError {
            let (kind, detail): (APIError.Kind, String) =
                switch self {
                case .negativeLimit(let maxBytes): (.invalidRequest, "the download's maxBytes is \(maxBytes), less than 0")
                case .discontinuity(let why): (.transport, why)
                case .overLimit(let maxBytes): (.responseTooLarge, "the body is larger than the download's limit of \(maxBytes) bytes")
                case .announcedOverLimit(let total, let maxBytes):
                    (.responseTooLarge, "the body's \(total) bytes are more than the download's limit of \(maxBytes) bytes")
                case .noRoom(let remaining, let free, let destination):
                    (.file, "the body's \(remaining) bytes do not fit in the \(free) bytes free on the file system of \(destination)")
                case .shortBody(let written, let total): (.transport, "the body ended after \(written) of its \(total) bytes")
                case .overrun(let end): (.transport, "the body runs past byte \(end), where it said it ends")
                }
            return APIError(kind: kind, status: status, detail: detail)
        }
    }

    /// The size of the pieces a download writes to disk.
    static let writePiece = 1 << 20
    /// The size of the pieces a download that keeps its part writes: smaller, so that a process
    /// killed outright loses little of what arrived.
    static let keptWritePiece = 64 << 10

    /// Whether a download that failed with `error` while reading the body may resume: the
    /// connection broke, or the server fell silent, before the download's own deadline.
    private static func resumable(_ error: APIError, deadline: ContinuousClock.Instant) -> Bool {
        (error.kind == .transport || error.kind == .timeout) && ContinuousClock.now < deadline
    }

    /// What `If-Range` may carry for these response fields (RFC 9110 §13.1.5): a strong `ETag`
    /// (a weak one cannot be used with ranges), else a `Last-Modified` that is a strong
    /// validator, at least a second before the response's `Date` (§8.8.2.2: a file changed twice
    /// within its second would keep its date), only when there is no `ETag` at all (a client
    /// with an entity tag sends no date); `nil` otherwise. A field repeated, or an `ETag` holding
    /// a list, names no one version: no validator (the download then starts again from the first
    /// byte rather than resume), never a combination of them.
    static func rangeValidator(_ fields: HTTPFields) -> String? {
        if fields[values: .eTag].count > 1 { return nil }
        if let tag = single(.eTag, of: fields) {
            return isStrongEntityTag(tag) ? tag : nil
        }
        if let text = single(.lastModified, of: fields), let modified = HTTPDate.parse(text),
            let sent = single(.date, of: fields).flatMap(HTTPDate.parse), sent.timeIntervalSince(modified) >= 1
        {
            return text
        }
        return nil
    }

    /// The value of the field `name` when the response has exactly one; `nil` when none or more.
    static func single(_ name: HTTPField.Name, of fields: HTTPFields) -> String? {
        let values = fields[values: name]
        return values.count == 1 ? values[0] : nil
    }

    /// Whether `tag` is one strong entity tag (RFC 9110 §8.8.3): `"`, visible characters other
    /// than `"` (or obs-text), `"` — not a list, not weak, nothing around it.
    static func isStrongEntityTag(_ tag: String) -> Bool {
        let bytes = Array(tag.utf8)
        guard bytes.count >= 2, bytes.first == UInt8(ascii: "\""), bytes.last == UInt8(ascii: "\"") else { return false }
        return bytes.dropFirst().dropLast().allSatisfy { $0 == 0x21 || (0x23...0x7E).contains($0) || $0 >= 0x80 }
    }

    /// Whether `value` may be sent as `If-Range`: one strong entity tag, or an HTTP date.
    static func isRangeValidator(_ value: String) -> Bool {
        isStrongEntityTag(value) || (HTTPDate.parse(value) != nil && !value.contains(where: { $0.isNewline }))
    }
}

/// How far a download has come (``API/download(_:to:progress:)``).
public struct DownloadProgress: Sendable, Hashable {
    /// The bytes in the file so far.
    public let bytesWritten: Int
    /// The whole body's size, when the server said it.
    public let totalBytes: Int?
    /// The connections used so far: more than one after the download resumed.
    public let connections: Int

    /// The share done, 0 to 1, when the size is known.
    public var fractionCompleted: Double? {
        guard let totalBytes, totalBytes > 0 else { return nil }
        return Swift.min(Swift.max(Double(bytesWritten) / Double(totalBytes), 0), 1)
    }
}

/// A finished download (``API/download(_:to:progress:)``).
public struct DownloadResult: Sendable {
    /// The file the body was written to.
    public let file: URL
    /// The body's size.
    public let bytes: Int
    /// The status of the last response: `200`, or `206` after a resume.
    public let status: HTTPResponse.Status
    /// The header fields of the last response.
    public let headerFields: HTTPFields
    /// The connections it took: more than one when it resumed.
    public let connections: Int
}

/// A `Content-Range: bytes FIRST-LAST/TOTAL` value (`TOTAL` may be `*`).
struct ContentRange: Equatable {
    var first: Int
    var last: Int
    var total: Int?

    init?(_ value: String?) {
        guard let value, value.hasPrefix("bytes ") else { return nil }
        let parts = value.dropFirst(6).split(separator: "/", maxSplits: 1)
        guard parts.count == 2 else { return nil }
        let bounds = parts[0].split(separator: "-", maxSplits: 1)
        guard bounds.count == 2, let first = Int(bounds[0]), let last = Int(bounds[1]), first >= 0, last >= first else { return nil }
        self.first = first
        self.last = last
        if parts[1] == "*" {
            total = nil
        } else {
            guard let total = Int(parts[1]), total > last else { return nil }
            self.total = total
        }
    }
}
