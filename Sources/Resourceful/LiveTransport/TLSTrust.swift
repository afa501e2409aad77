import Foundation
import NIOSSL

#if canImport(Glibc)
import CDispatch
import CoreFoundation
import Glibc
#elseif canImport(Musl)
import Musl
#elseif canImport(Darwin)
import Darwin
#endif

/// The live client's TLS configuration, from ``APIConfig/HTTPSettings``: which roots are trusted,
/// the oldest version accepted, and whether certificates are verified at all.
enum TLSTrust {
    /// The largest CA file read: the system's whole bundle is about 200 KB.
    static let maximumFileBytes = 16 << 20

    /// The longest ``configuration(for:environment:fileWait:)`` waits for the files it reads by
    /// default: a transport is made synchronously (its `init`), so a file on a file system that
    /// does not answer (a hung network mount) costs the caller's thread this long at most.
    static let fileWait: Duration = .seconds(10)

    /// The file being read, for the error that names it when its file system does not answer.
    final class Reading: Sendable {
        let current = Locked<(key: String, path: String)?>(nil)

        /// The file a reading thread is at; noted by the functions that read one.
        @TaskLocal static var active: Reading?

        /// Notes that `path` (configured as `key`) is read now.
        static func note(_ key: String, _ path: String) {
            active?.current.withLock { $0 = (key, path) }
        }
    }

    /// The configuration for `settings`, or `nil` when it is AsyncHTTPClient's own default (the
    /// system's roots, TLS 1.2 or later, no client certificate), which the client then makes only
    /// for the connections that need it; `environment` holds `SSL_CERT_FILE` and `SSL_CERT_DIR`.
    ///
    /// The files are read on a thread of their own, waited for at most `fileWait` (the caller's
    /// thread blocks that long at most: a transport's `init` is synchronous); a file on a file
    /// system that does not answer leaves that thread waiting, not the caller.
    ///
    /// - Throws: ``TransportError/invalidConfiguration(_:underlying:)`` naming the key and the path when a
    ///   configured file or directory cannot be read or holds no certificate, or when its file
    ///   system did not answer within `fileWait`.
    static func configuration(
        for settings: APIConfig.HTTPSettings, environment: [String: String], fileWait: Duration = fileWait
    ) throws(TransportError) -> TLSConfiguration? {
        let reading = Reading()
        let finished = DispatchSemaphore(value: 0)
        let outcome = Locked<Result<TLSConfiguration?, TransportError>?>(nil)
        Thread.detachNewThread {
            let result = Reading.$active.withValue(reading) {
                Result { () throws(TransportError) in try readConfiguration(for: settings, environment: environment) }
            }
            outcome.withLock { $0 = result }
            finished.signal()
        }
        let nanoseconds = Int(OffPoolWork.nanoseconds(fileWait))
        guard finished.wait(timeout: .now() + .nanoseconds(nanoseconds)) == .success, let result = outcome.value else {
            let (key, path) = reading.current.value ?? ("http.tls", "a file it names")
            throw problem(key, path, "did not answer within \(fileWait) (a file system that does not answer, such as a hung network mount)")
        }
        return try result.get()
    }

    /// The configuration for `settings` (as ``configuration(for:environment:fileWait:)``), read
    /// on the calling thread, which blocks as long as the file system does: for a thread of its
    /// own (``ClientCertificateReloader``'s look at the files).
    static func readConfiguration(for settings: APIConfig.HTTPSettings, environment: [String: String]) throws(TransportError) -> TLSConfiguration? {
        let configuration = try makeConfiguration(for: settings, environment: environment)
        if let configuration, settings.tls.clientCertificateFile != nil, settings.tls.clientKeyFile != nil {
            // A certificate and a key that are not a pair (one file rotated, the other not yet)
            // are refused here, not at each handshake: BoringSSL checks them when a context is made.
            do {
                _ = try NIOSSLContext(configuration: configuration)
            } catch {
                throw TransportError.invalidConfiguration("http.tls.clientCertificateFile and http.tls.clientKeyFile are not a certificate and its key")
            }
        }
        return configuration
    }

    private static func makeConfiguration(for settings: APIConfig.HTTPSettings, environment: [String: String]) throws(TransportError) -> TLSConfiguration? {
        let readsOpenSSLVariables = !openSSLVariables(trustedUnder: settings, environment: environment).isEmpty
        if settings.tls == APIConfig.TLSSettings(), !settings.dangerouslyDisableCertificateVerification, !readsOpenSSLVariables {
            return nil
        }
        var tls = TLSConfiguration.makeClientConfiguration()
        tls.minimumTLSVersion = settings.tls.minimumVersion == .v1_3 ? .tlsv13 : .tlsv12
        if let certificateFile = settings.tls.clientCertificateFile, let keyFile = settings.tls.clientKeyFile {
            let chain = try certificates(inFile: certificateFile, key: "http.tls.clientCertificateFile")
            tls.certificateChain = chain.map { .certificate($0) }
            tls.privateKey = .privateKey(try privateKey(inFile: keyFile))
        }
        if settings.dangerouslyDisableCertificateVerification {
            tls.certificateVerification = .none
            return tls
        }
        // Host names are checked whenever certificates are.
        tls.certificateVerification = .fullVerification
        var configured: [NIOSSLCertificate] = []
        if let file = settings.tls.caFile { configured += try certificates(inFile: file, key: "http.tls.caFile") }
        if let directory = settings.tls.caDirectory {
            configured += try certificates(inDirectory: directory, key: "http.tls.caDirectory")
        }
        if settings.tls.caFile == nil, settings.tls.caDirectory == nil {
            try trustOpenSSLVariables(environment, in: &tls)
            return tls
        }
        if settings.tls.trustSystemRoots {
            tls.trustRoots = .default
            tls.additionalTrustRoots = [.certificates(configured)]
        } else {
            tls.trustRoots = .certificates(configured)
        }
        return tls
    }

    /// The OpenSSL variables (`SSL_CERT_FILE`, `SSL_CERT_DIR`) whose certificates take the place
    /// of the system's roots under `settings`: those set and not empty, when certificates are
    /// verified and neither `http.tls.caFile` nor `http.tls.caDirectory` is configured. The
    /// configuration's check of variables over a file's credentials asks this too.
    static func openSSLVariables(trustedUnder settings: APIConfig.HTTPSettings, environment: [String: String]) -> [String] {
        guard !settings.dangerouslyDisableCertificateVerification, settings.tls.caFile == nil, settings.tls.caDirectory == nil else { return [] }
        return ["SSL_CERT_FILE", "SSL_CERT_DIR"].filter { !(environment[$0] ?? "").isEmpty }
    }

    /// Trusts what OpenSSL's variables name, when nothing is configured: the certificates of
    /// `SSL_CERT_FILE` and of the files in each directory of `SSL_CERT_DIR` take the place of the
    /// system's roots.
    ///
    /// They are read once per process for each pair of values, as Go reads its system roots:
    /// `SSL_CERT_DIR` is often `/etc/ssl/certs`, hundreds of files, and a server app or its tests
    /// may make many transports.
    private static func trustOpenSSLVariables(_ environment: [String: String], in tls: inout TLSConfiguration) throws(TransportError) {
        let file = environment["SSL_CERT_FILE"] ?? "", directories = environment["SSL_CERT_DIR"] ?? ""
        let cacheKey = file + "\0" + directories
        // Another transport's reading, under the lock, may wait on the same files.
        Reading.note(file.isEmpty ? "SSL_CERT_DIR" : "SSL_CERT_FILE", file.isEmpty ? directories : file)
        // Read under the lock, so that transports made at once wait for one reading instead of each
        // making its own.
        let read = environmentRoots.withLock { cache in
            if let roots = cache[cacheKey] { return Result<[NIOSSLCertificate], TransportError>.success(roots) }
            return Result { () throws(TransportError) in
                let roots = try readRoots(file: file, directories: directories)
                cache[cacheKey] = roots
                return roots
            }
        }
        let roots = try read.get()
        if !roots.isEmpty { tls.trustRoots = .certificates(roots) }
    }

    /// The certificates of `file` and of the files in each of `directories`, each once.
    private static func readRoots(file: String, directories: String) throws(TransportError) -> [NIOSSLCertificate] {
        var roots: [NIOSSLCertificate] = []
        if !file.isEmpty { roots += try certificates(inFile: file, key: "SSL_CERT_FILE") }
        for directory in directories.split(separator: ":") {
            roots += try certificates(inDirectory: String(directory), key: "SSL_CERT_DIR")
        }
        // `/etc/ssl/certs` holds each certificate under two names, and the bundle as well.
        var seen = Set<NIOSSLCertificate>()
        return roots.filter { seen.insert($0).inserted }
    }

    /// The roots read for each pair of `SSL_CERT_FILE` and `SSL_CERT_DIR` values.
    private static let environmentRoots = Locked<[String: [NIOSSLCertificate]]>([:])

    /// Every certificate of the PEM file at `path`.
    static func certificates(inFile path: String, key: String) throws(TransportError) -> [NIOSSLCertificate] {
        let certificates = try pemCertificates(at: path, key: key)
        guard !certificates.isEmpty else { throw problem(key, path, "holds no PEM certificate") }
        return certificates
    }

    /// The largest client key file read: a PEM key is a few kilobytes.
    static let maximumKeyBytes = 1 << 20

    /// The PEM private key at `path`, read as PEM whatever the file's name (NIOSSL would take a
    /// `.key` file for DER).
    ///
    /// Read as ssh reads a key (``PrivateFile``): a regular file of this user's (or root's),
    /// neither readable nor writable by group or others, opened once and checked on the
    /// descriptor. The one link followed is an orchestrator's that stays in the key's folder (a
    /// Kubernetes Secret's `tls.key` → `..data/tls.key`): its target is read under the same rule.
    static func privateKey(inFile path: String) throws(TransportError) -> NIOSSLPrivateKey {
        let key = "http.tls.clientKeyFile"
        Reading.note(key, path)
        let bytes: [UInt8]
        do {
            bytes = try PrivateFile.contents(of: linkTargetInsideFolder(of: path) ?? path, maximumBytes: maximumKeyBytes)
        } catch {
            throw problem(key, path, error.reason)
        }
        do {
            return try NIOSSLPrivateKey(bytes: bytes, format: .pem)
        } catch {
            // Not the error's text: it may quote the file.
            throw problem(key, path, "is not a PEM private key without a passphrase")
        }
    }

    /// Every certificate of the regular files in `directory`: hidden files, subdirectories (such
    /// as Kubernetes' `..data`) and files without a PEM certificate are passed over.
    static func certificates(inDirectory directory: String, key: String) throws(TransportError) -> [NIOSSLCertificate] {
        let names: [String]
        Reading.note(key, directory)
        do {
            names = try FileManager.default.contentsOfDirectory(atPath: directory).filter { !$0.hasPrefix(".") }.sorted()
        } catch {
            throw problem(key, directory, "is not a readable directory")
        }
        var certificates: [NIOSSLCertificate] = []
        for name in names {
            let path = directory + "/" + name
            Reading.note(key, path)
            guard isRegularFile(path) else { continue }
            certificates += try pemCertificates(at: path, key: key, skippingOtherFiles: true)
        }
        guard !certificates.isEmpty else { throw problem(key, directory, "holds no PEM certificate") }
        return certificates
    }

    /// The certificates of one file, checked to be a regular file of bounded size before it is
    /// read (a FIFO would block the read for ever).
    /// `skippingOtherFiles` passes over a file without a PEM certificate in it (a key, a
    /// README), as a directory of certificates may hold.
    private static func pemCertificates(at path: String, key: String, skippingOtherFiles: Bool = false) throws(TransportError) -> [NIOSSLCertificate] {
        let data = try contents(of: path, key: key)
        if skippingOtherFiles, data.range(of: Data("-----BEGIN CERTIFICATE-----".utf8)) == nil { return [] }
        do {
            return try NIOSSLCertificate.fromPEMBytes(Array(data))
        } catch {
            throw problem(key, path, "is not PEM text of certificates")
        }
    }

    /// The bytes of the regular file at `path`, checked on the descriptor it is read from (a FIFO
    /// would block the read for ever, a device never end it).
    private static func contents(of path: String, key: String) throws(TransportError) -> Data {
        Reading.note(key, path)
        do {
            return Data(try RegularFile.contents(of: path, maximumBytes: maximumFileBytes).bytes)
        } catch {
            switch error.reason {
            case .system(ENOENT), .system(ENOTDIR): throw problem(key, path, "does not exist")
            case .system(EACCES), .system(EPERM): throw problem(key, path, "cannot be read: permission denied")
            case .system: throw problem(key, path, "cannot be read")
            case .notRegularFile, .tooLarge: throw problem(key, path, "is not a regular file of at most \(maximumFileBytes >> 20) MiB")
            case .changed: throw problem(key, path, "changed while it was read")
            }
        }
    }

    /// The target of `path`, all links resolved, when `path` is a symbolic link whose target
    /// stays inside the folder `path` names (resolved too); `nil` otherwise, so that a link
    /// elsewhere is refused as a link.
    private static func linkTargetInsideFolder(of path: String) -> String? {
        var status = stat()
        guard lstat(path, &status) == 0, status.st_mode & S_IFMT == S_IFLNK else { return nil }
        let folderPath = path.lastIndex(of: "/").map { String(path[..<$0]) } ?? "."
        guard let target = realpath(path, nil) else { return nil }
        defer { free(target) }
        guard let folder = realpath(folderPath.isEmpty ? "/" : folderPath, nil) else { return nil }
        defer { free(folder) }
        let resolvedFolder = String(cString: folder)
        let resolvedTarget = String(cString: target)
        return resolvedTarget.hasPrefix(resolvedFolder == "/" ? "/" : resolvedFolder + "/") ? resolvedTarget : nil
    }

    private static func isRegularFile(_ path: String) -> Bool {
        var status = stat()
        return stat(path, &status) == 0 && status.st_mode & S_IFMT == S_IFREG
    }

    private static func problem(_ key: String, _ path: String, _ what: String) -> TransportError {
        .invalidConfiguration("\(key): \(path) \(what)")
    }
}
