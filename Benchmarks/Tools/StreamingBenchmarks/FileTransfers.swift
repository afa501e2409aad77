import Foundation
import Resourceful

/// Downloads `url` to `file` with `api.download` and prints the bytes and the seconds it took.
func timedDownload(_ url: String, to file: String) async throws {
    let api = streamingAPI(url)
    let start = ContinuousClock.now
    let result = try await api.download(GetFile(path: lastComponent(url)), to: URL(fileURLWithPath: file))
    printTransfer(bytes: result.bytes, since: start)
}

/// Sends `file` to `url` as the body of a PUT (`FileUpload`) and prints the bytes and the seconds.
func timedUpload(_ file: String, to url: String) async throws {
    let api = streamingAPI(url)
    let bytes = try FileManager.default.attributesOfItem(atPath: file)[.size] as? Int ?? 0
    let start = ContinuousClock.now
    _ = try await api.call(PutFile(path: lastComponent(url), parameters: FileUpload(URL(fileURLWithPath: file))))
    printTransfer(bytes: bytes, since: start)
}

private func printTransfer(bytes: Int, since start: ContinuousClock.Instant) {
    let seconds = (ContinuousClock.now - start) / .seconds(1)
    print(#"{"bytes":\#(bytes),"seconds":\#(seconds)}"#)
}
