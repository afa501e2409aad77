internal import OpenAPIKit

extension OperationTranslator {
    /// The `ResourceType` of the success response, and how the request is called: JSON is
    /// decoded by `api.call`; `text/event-stream` is read by `api.events`, its type that of each
    /// event's data; JSON Lines and JSON text sequences by `api.lines`, its type that of each
    /// value; any other body (bytes, text) is written to a file by `api.download`. Nil for a
    /// response without a body or one that is not decoded (`Empty`).
    mutating func successType(
        _ either: Either<OpenAPI.Reference<OpenAPI.Response>, OpenAPI.Response>,
        at pointer: JSONPointer,
        into context: inout Context
    ) -> SwiftType? {
        guard let response = try? document.components.lookup(either) else {
            schemas.report(pointer, "the response's reference does not resolve; its body is not decoded")
            return nil
        }
        let components = document.components
        if response.content.isEmpty || MediaTypes.firstJSON(response.content, in: components) != nil {
            return responseType(response, name: "Response", at: pointer, into: &context)
        }
        if let (key, content) = MediaTypes.first(of: .eventStream, in: response.content, components: components) {
            context.request.call = .events
            return eventType(content, at: pointer.appending("content").appending(key.rawValue), into: &context)
        }
        if let (key, content) = MediaTypes.first(of: .jsonLines, in: response.content, components: components) {
            context.request.call = .lines
            return lineType(content, at: pointer.appending("content").appending(key.rawValue), into: &context)
        }
        context.request.call = .download
        if MediaTypes.first(of: .binary, in: response.content, components: components) == nil {
            let types = response.content.pairs.map(\.key.rawValue).joined(separator: ", ")
            schemas.report(pointer.appending("content"), "a body that is not JSON (\(types)) is not decoded; `api.download` writes it to a file")
        }
        return nil
    }

    /// The type of each event's data: the data of the events `itemSchema` describes (OpenAPI
    /// 3.2: objects of `data`, `event`, `id` and `retry`), else `itemSchema` or `schema` as the
    /// data itself. Text, or no schema at all, is `String`: the data as it is.
    private mutating func eventType(_ content: OpenAPI.Content, at pointer: JSONPointer, into context: inout Context) -> SwiftType {
        let (given, place) = content.itemSchema.map { ($0, pointer.appending("itemSchema")) }
            ?? content.schema.map { ($0, pointer.appending("schema")) }
            ?? (nil, pointer)
        guard let given else { return .string }
        var schema = given
        var schemaPlace = place
        if let events = eventShapes(given, at: place) {
            let data = events.compactMap(\.self)
            guard let first = data.first else { return .string }
            if data.allSatisfy({ isText(shape(of: $0.schema)) }) { return .string }
            guard data.allSatisfy({ $0.schema == first.schema }) else {
                schemas.report(place, "the events' data differ by event type; each event's data is JSONValue")
                return schemas.jsonValue()
            }
            (schema, schemaPlace) = (first.schema, first.pointer)
        }
        if isText(shape(of: schema)) { return .string }
        return elementType(schema, name: nestedName("Event", in: &context), documentation: Documentation(["An event's data."]), at: schemaPlace, into: &context)
    }

    /// The type of each value: `itemSchema`, else `schema` (its `items` when it is an array);
    /// `JSONValue` without either.
    private mutating func lineType(_ content: OpenAPI.Content, at pointer: JSONPointer, into context: inout Context) -> SwiftType {
        var schema: JSONSchema
        var place: JSONPointer
        if let item = content.itemSchema {
            (schema, place) = (item, pointer.appending("itemSchema"))
        } else if let whole = content.schema {
            (schema, place) = (whole, pointer.appending("schema"))
            if case .array(_, let array) = shape(of: whole).value, let items = array.items {
                (schema, place) = (items, place.appending("items"))
            }
        } else {
            return schemas.jsonValue()
        }
        return elementType(schema, name: nestedName("Item", in: &context), documentation: Documentation(["One value of the stream."]), at: place, into: &context)
    }

    /// The `data` of each event `schema` describes, when it describes whole events: an object
    /// whose properties are among `data`, `event`, `id` and `retry`, or `oneOf`/`anyOf` of them.
    /// An event without `data` is nil; nil when `schema` is not events.
    private func eventShapes(_ schema: JSONSchema, at pointer: JSONPointer) -> [(schema: JSONSchema, pointer: JSONPointer)?]? {
        func data(of event: JSONSchema, at pointer: JSONPointer) -> (schema: JSONSchema, pointer: JSONPointer)?? {
            guard case .object(_, let object) = shape(of: event).value, !object.properties.isEmpty,
                  Set(object.properties.keys).isSubset(of: ["data", "event", "id", "retry"])
            else { return .none }
            return .some(object.properties["data"].map { ($0, pointer.appending("properties").appending("data")) })
        }
        let alternatives: [JSONSchema]
        let keyword: String
        switch shape(of: schema).value {
        case .one(let all, _): (alternatives, keyword) = (all, "oneOf")
        case .any(let all, _): (alternatives, keyword) = (all, "anyOf")
        default: return data(of: schema, at: pointer).map { [$0] }
        }
        var events: [(schema: JSONSchema, pointer: JSONPointer)?] = []
        for (index, alternative) in alternatives.enumerated() {
            guard let event = data(of: alternative, at: pointer.appending(keyword).appending(index)) else { return nil }
            events.append(event)
        }
        return events
    }

    /// Whether a value of `schema` is text the data is taken as: a string that is not bytes.
    private func isText(_ schema: JSONSchema) -> Bool {
        guard case .string = schema.value else { return false }
        return !MediaTypes.isBinary(schema, components: document.components)
    }
}
