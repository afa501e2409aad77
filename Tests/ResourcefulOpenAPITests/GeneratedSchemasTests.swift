import Foundation
import OpenAPIGolden
import Testing

/// The golden `Shapes` schemas decode and encode what their schemas allow: a discriminated
/// `oneOf`, merged `allOf`, enums with an unknown value, `anyOf`, dictionaries, free-form JSON,
/// recursion and wire names that are not Swift names.
@Suite struct GeneratedSchemasTests {
    private func decode<T: Decodable>(_ type: T.Type, _ json: String) throws -> T {
        let decoder = JSONDecoder()
        decoder.dateDecodingStrategy = .iso8601
        return try decoder.decode(type, from: Data(json.utf8))
    }

    private func roundTrip<T: Codable & Equatable>(_ value: T) throws -> T {
        try JSONDecoder().decode(T.self, from: JSONEncoder().encode(value))
    }

    @Test func theDiscriminatorPicksTheAlternativeByItsMapping() throws {
        let id = "1F0C6C5E-8B5E-4B8A-9C1D-2E3F4A5B6C7D"
        let circle = try decode(Shapes.Shape.self, #"{"kind": "circle", "id": "\#(id)", "radius": 2}"#)
        let rectangle = try decode(Shapes.Shape.self, #"{"kind": "rect", "id": "\#(id)", "width": 3, "height": 4, "label": null}"#)
        guard case .circle(let c) = circle, case .rectangle(let r) = rectangle else {
            Issue.record("wrong alternatives: \(circle), \(rectangle)")
            return
        }
        #expect(c.radius == 2 && c.id == UUID(uuidString: id))
        #expect(r.width == 3 && r.height == 4 && r.label == nil)
        #expect(try roundTrip(circle) == circle)
        #expect(throws: DecodingError.self) { try decode(Shapes.Shape.self, #"{"kind": "hexagon", "id": "\#(id)"}"#) }
    }

    @Test func aValueTheDocumentDoesNotListDecodesAsUnknown() throws {
        #expect(try decode([Shapes.Colour].self, #"["red", "light-blue", "default", "ultraviolet"]"#) == [.red, .lightBlue, .default, .unknown("ultraviolet")])
        #expect(try decode([Shapes.Priority].self, "[1, 3, 99]") == [._1, ._3, .unknown(99)])
        #expect(String(decoding: try JSONEncoder().encode([Shapes.Colour.lightBlue, .unknown("x")]), as: UTF8.self) == #"["light-blue","x"]"#)
        #expect(Shapes.Colour(rawValue: "green") == .green)
    }

    @Test func anyOfTakesTheFirstAlternativeThatDecodes() throws {
        #expect(try decode([Shapes.Value].self, #"["a", 2.5]"#) == [.string("a"), .number(2.5)])
        #expect(throws: DecodingError.self) { try decode(Shapes.Value.self, "true") }
    }

    @Test func wireNamesKeywordsDictionariesAndFreeFormJSON() throws {
        let json = #"{"default": true, "self": "me", "user-name": "ada", "2fa": false, "colour": "green", "nested": {"level": "high"}, "extra": [1, "x", null, {"a": true}], "metadata": {"k": 1}}"#
        let settings = try decode(Shapes.Settings.self, json)
        #expect(settings.default == true && settings.`self` == "me" && settings.userName == "ada" && settings._2fa == false)
        #expect(settings.nested?.level == .high)
        #expect(settings.extra == .array([.number(1), .string("x"), .null, .object(["a": .bool(true)])]))
        #expect(settings.metadata == ["k": .number(1)])
        #expect(try roundTrip(settings) == settings)
        let labels: Shapes.Labels = try decode(Shapes.Labels.self, #"{"a": "b"}"#)
        #expect(labels == ["a": "b"])
    }

    @Test func recursiveSchemasNestAsDeepAsTheDataGoes() throws {
        let employee = try decode(Shapes.Employee.self, #"{"name": "a", "manager": {"name": "b", "manager": {"name": "c"}}}"#)
        #expect(employee.manager?.manager?.name == "c")
        #expect(try roundTrip(employee) == employee)
        let tree = try decode(Shapes.TreeNode.self, #"{"value": 1, "children": [{"value": 2, "children": []}]}"#)
        #expect(tree.children.first?.value == 2)
    }

    @Test func allOfMergesThePartsPropertiesAndRequirements() throws {
        #expect(throws: DecodingError.self) { try decode(Shapes.Circle.self, #"{"kind": "circle", "id": "1F0C6C5E-8B5E-4B8A-9C1D-2E3F4A5B6C7D"}"#) }
        let circle = Shapes.Circle(kind: "circle", id: UUID(), radius: 1)
        #expect(circle.label == nil)
    }
}
