public import Foundation
public import Logging
public import Resourceful

/// When a cassette uses the network.
public enum CassetteMode: String, Sendable, CaseIterable {
    /// Always the network; the file is written anew with this run's exchanges.
    case record
    /// Never the network: a request with no recording fails with ``CassetteError``.
    case replay
    /// Records when the file is missing, else replays: record once, replay in CI.
    case once
    /// Replays what matches and records the rest, appended to the file.
    case newEpisodes
}

/// A HAR file that a test's transport records to or replays from, by its ``CassetteMode``.
///
/// ```swift
/// let cassette = Cassette(URL(fileURLWithPath: "Tests/Cassettes/users.har", isDirectory: false), mode: .once)
/// let transport = try cassette.transport(network: AsyncHTTPClientTransport())
/// let api = API(dependencies: APIDependencies(apiConfig: config, authenticationStorage: storage, transport: transport))
/// ```
public struct Cassette: Sendable {
    /// The HAR file.
    public var file: URL
    /// When the network is used.
    public var mode: CassetteMode
    /// How requests are matched to recordings.
    public var matching: RequestMatching
    /// What is masked before anything is written (and so matches any value when replayed).
    public var masking: APIConfig.LogSettings
    /// Where entries a replay leaves out are reported.
    public var logger: Logger

    /// Creates a cassette.
    public init(
        _ file: URL,
        mode: CassetteMode = .once,
        matching: RequestMatching = RequestMatching(),
        masking: APIConfig.LogSettings = APIConfig.LogSettings(),
        logger: Logger = Logger(label: "resourceful.cassette")
    ) {
        self.file = file
        self.mode = mode
        self.matching = matching
        self.masking = masking
        self.logger = logger
    }

    /// Whether this cassette, as things stand, will send requests over the network.
    public var usesNetwork: Bool {
        switch mode {
        case .record, .newEpisodes: true
        case .replay: false
        case .once: !FileManager.default.fileExists(atPath: file.path)
        }
    }

    /// The transport to give ``APIDependencies``: `network` (made only when the mode may use it)
    /// wrapped to record, or a replay, or both for ``CassetteMode/newEpisodes``.
    ///
    /// - Throws: ``CassetteError`` when the file must be read but cannot be, or must be written
    ///   but cannot be; in ``CassetteMode/replay``, when it is missing.
    public func transport(network: @autoclosure () -> any HTTPTransport) throws(CassetteError) -> any HTTPTransport {
        let exists = FileManager.default.fileExists(atPath: file.path)
        switch mode {
        case .record:
            return try RecordingTransport(network(), file: file, masking: masking, appending: false)
        case .replay:
            return try ReplayingTransport(file: file, matching: matching, masking: masking, logger: logger)
        case .once:
            if exists { return try ReplayingTransport(file: file, matching: matching, masking: masking, logger: logger) }
            return try RecordingTransport(network(), file: file, masking: masking, appending: false)
        case .newEpisodes:
            guard exists else { return try RecordingTransport(network(), file: file, masking: masking, appending: false) }
            let recorder = try RecordingTransport(network(), file: file, masking: masking, appending: true)
            return try ReplayingTransport(file: file, matching: matching, masking: masking, logger: logger, fallback: recorder)
        }
    }
}
