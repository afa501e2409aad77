import Hummingbird
import Resourceful

/// An invoice of the second upstream, the billing service.
struct Invoice: Codable, Equatable, Sendable {
    var id: String
    var amountCents: Int
}

/// `GET invoices?customer=<id>` on the billing service.
struct ListInvoices: ResourceRequest {
    typealias ResourceType = [Invoice]
    struct Parameters: Encodable, Sendable { var customer: Int }
    let verb = ResourceVerb.index
    let path: ResourcePath = "invoices"
    let parameters: Parameters
}

/// `/users/:id/invoices`: a user's invoices, from the billing service, a second upstream with a
/// configuration (`services.billing`) and a credential of its own.
struct InvoicesController<Context: RequestContext>: Sendable {
    let billing: API

    func addRoutes(to group: RouterGroup<Context>) {
        group.get(":id/invoices", use: index)
    }

    @Sendable func index(request: Request, context: Context) async throws -> [InvoiceResponse] {
        let id = try context.parameters.require("id", as: Int.self)
        return try await billing.forwarding(context) { try await $0.call(ListInvoices(parameters: .init(customer: id))) }
            .map { InvoiceResponse(id: $0.id, amount: Double($0.amountCents) / 100) }
    }
}

/// An invoice as this app shows it.
struct InvoiceResponse: ResponseCodable, Equatable {
    var id: String
    var amount: Double
}
