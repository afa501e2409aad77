import Foundation
import Resourceful

/// What a successful call prints on standard output.
enum CallOutput {
    /// Makes the call and prints its answer: JSON pretty-printed, nothing for an empty body.
    static func call(_ api: API, _ request: ToolRequest) async -> Result<Void, APIError> {
        let value: JSONValue
        do throws(APIError) {
            value = try await api.call(request)
        } catch {
            return .failure(error)
        }
        switch value {
        case .null:
            return .success(())
        default:
            guard let text = try? value.prettyPrinted() else {
                return .failure(APIError(kind: .decodingFailed, detail: "the answer could not be printed as JSON"))
            }
            print(text)
            return .success(())
        }
    }
}
