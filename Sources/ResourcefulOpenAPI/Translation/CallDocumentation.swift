/// How a request that `api.call` does not simply decode is called, for its comment: as a stream
/// of events or values, written to a file, or with a file as its body.
enum CallDocumentation {
    /// The paragraphs naming the call and showing it; none for a request `api.call` decodes
    /// from a body in memory.
    static func notes(for request: RequestDeclaration) -> [String] {
        let made = "\(request.name)(\(requiredArguments(of: request)))"
        var notes: [String] = []
        if request.upload != nil, request.call == .call {
            notes.append("""
                Its body is a file, read as it is sent:
                ```swift
                let result = try await api.call(\(made))
                ```
                """)
        } else if request.upload != nil {
            notes.append("Its body is a file, read as it is sent.")
        }
        switch request.call {
        case .call:
            break
        case .events:
            notes.append("""
                Its response is a stream of server-sent events, each event's data decoded as `\(request.resourceType.code)`:
                ```swift
                for try await event in api.events(\(made)) {
                    print(event.type, event.data)
                }
                ```
                """)
        case .lines:
            notes.append("""
                Its response is a stream of JSON values, each decoded as `\(request.resourceType.code)`:
                ```swift
                for try await item in api.lines(\(made)) {
                    print(item)
                }
                ```
                """)
        case .download:
            notes.append("""
                Its response body is not decoded: write it to a file.
                ```swift
                let result = try await api.download(\(made), to: file)
                ```
                """)
        }
        return notes
    }

    /// `id: id, file: file`: the arguments without a default, each passed a value of its name.
    private static func requiredArguments(of request: RequestDeclaration) -> String {
        var labels = request.arguments.filter { if case .path = $0.destination { true } else { false } }.map(\.label)
        if let upload = request.upload {
            labels.append(upload.fileLabel)
            if upload.defaultContentType == nil { labels.append(upload.contentTypeLabel) }
        } else if request.body != nil {
            labels.append("parameters")
        }
        labels += request.arguments.filter { argument in
            if case .path = argument.destination { return false }
            return !argument.type.isOptional
        }.map(\.label)
        return labels.map { "\($0): \($0)" }.joined(separator: ", ")
    }
}
