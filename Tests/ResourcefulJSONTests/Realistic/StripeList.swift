import Foundation

/// A list object as Stripe's API returns it (`GET /v1/charges`), decoded with the
/// `.convertFromSnakeCase` key strategy: nested objects several levels deep, a metadata
/// dictionary, optionals (often null), enums, amounts as integers, integers past 2^53, `Double`s,
/// and RFC 3339 dates with fractional seconds and offsets.
struct StripeList<Item: Codable & Equatable & Sendable>: Codable, Equatable, Sendable {
    var object: String
    var data: [Item]
    var hasMore: Bool
    var url: String
}

struct StripeCharge: Codable, Equatable, Sendable {
    enum Status: String, Codable, Sendable { case succeeded, pending, failed }

    var id: String
    var object: String
    var amount: Int
    var amountCaptured: Int
    var amountRefunded: Int
    var applicationFeeAmount: Int?
    var balanceTransaction: String?
    var billingDetails: BillingDetails
    var captured: Bool
    var created: Date
    var capturedAt: Date?
    var currency: String
    var customer: String?
    var description: String?
    var feeRate: Double
    var livemode: Bool
    var metadata: [String: String]
    var outcome: Outcome
    var paid: Bool
    var paymentMethodDetails: PaymentMethodDetails
    var receiptUrl: URL?
    var refunded: Bool
    var sequence: Int64
    var status: Status

    struct BillingDetails: Codable, Equatable, Sendable {
        var address: Address
        var email: String?
        var name: String?
        var phone: String?
    }

    struct Address: Codable, Equatable, Sendable {
        var city: String?
        var country: String
        var line1: String?
        var line2: String?
        var postalCode: String?
        var state: String?
    }

    struct Outcome: Codable, Equatable, Sendable {
        var networkStatus: String
        var riskLevel: String
        var riskScore: Int
        var sellerMessage: String
        var type: String
    }

    struct PaymentMethodDetails: Codable, Equatable, Sendable {
        var card: Card
        var type: String
    }

    struct Card: Codable, Equatable, Sendable {
        enum Brand: String, Codable, Sendable { case visa, mastercard, amex }
        enum Funding: String, Codable, Sendable { case credit, debit, prepaid }

        var brand: Brand
        var checks: [String: String?]
        var country: String
        var expMonth: Int
        var expYear: Int
        var fingerprint: String
        var funding: Funding
        var last4: String
        var network: String
    }
}
