import Foundation
import ResourcefulTesting

/// JSON documents shaped like real APIs' list answers, made from a seed so that tests and
/// benchmarks decode the same bytes: GitHub's issue list and Stripe's list of charges, with
/// every key those APIs send (the models leave some out, as apps do).
enum RealisticPayloads {
    /// Thirty issues (GitHub's default page), about 110 KB.
    static let gitHubIssues = gitHubIssues(count: 30, seed: 1)
    /// Fifty charges, about 95 KB.
    static let stripeCharges = stripeCharges(count: 50, seed: 2)

    static func gitHubIssues(count: Int, seed: UInt64) -> Data {
        var random = SeededRandomNumberGenerator(seed: seed)
        return Data(("[" + (0..<count).map { gitHubIssue(1347 - $0, &random) }.joined(separator: ",") + "]").utf8)
    }

    static func stripeCharges(count: Int, seed: UInt64) -> Data {
        var random = SeededRandomNumberGenerator(seed: seed)
        let charges = (0..<count).map { stripeCharge($0, &random) }.joined(separator: ",")
        return Data(#"{"object":"list","data":[\#(charges)],"has_more":true,"url":"/v1/charges"}"#.utf8)
    }

    // MARK: GitHub

    private static func gitHubIssue(_ number: Int, _ random: inout SeededRandomNumberGenerator) -> String {
        let api = "https://api.github.com/repos/acme/widgets"
        let closed = Int.random(in: 0..<4, using: &random) == 0
        let author = gitHubUser(&random)
        let assignees = (0..<Int.random(in: 0...2, using: &random)).map { _ in gitHubUser(&random) }
        let labels = (0..<Int.random(in: 0...3, using: &random)).map { _ in gitHubLabel(&random) }
        let milestone = Bool.random(using: &random) ? gitHubMilestone(&random) : "null"
        let created = timestamp(&random, fraction: false, offset: false)
        let reactions = (0..<4).map { _ in Int.random(in: 0...12, using: &random) }
        let body = Bool.random(using: &random) || number % 7 == 0 ? "null" : quoted(issueBody(number, &random))
        return """
        {"url":"\(api)/issues/\(number)","repository_url":"\(api)","labels_url":"\(api)/issues/\(number)/labels{/name}",\
        "comments_url":"\(api)/issues/\(number)/comments","events_url":"\(api)/issues/\(number)/events",\
        "html_url":"https://github.com/acme/widgets/issues/\(number)","id":\(2_600_000_000 + number * 7919),\
        "node_id":"I_kwDOA\(nodeSuffix(&random))","number":\(number),"title":\(quoted(title(&random))),"user":\(author),\
        "labels":[\(labels.joined(separator: ","))],"state":"\(closed ? "closed" : "open")","locked":\(number % 11 == 0),\
        "assignee":\(assignees.first ?? "null"),"assignees":[\(assignees.joined(separator: ","))],"milestone":\(milestone),\
        "comments":\(Int.random(in: 0...40, using: &random)),"created_at":"\(created)",\
        "updated_at":"\(timestamp(&random, fraction: false, offset: false))",\
        "closed_at":\(closed ? "\"\(timestamp(&random, fraction: false, offset: false))\"" : "null"),\
        "author_association":"\(["OWNER", "MEMBER", "COLLABORATOR", "CONTRIBUTOR", "NONE"][number % 5])",\
        "active_lock_reason":null,"body":\(body),"reactions":{"url":"\(api)/issues/\(number)/reactions",\
        "total_count":\(reactions.reduce(0, +)),"+1":\(reactions[0]),"-1":\(reactions[1]),"laugh":0,"hooray":0,\
        "confused":0,"heart":\(reactions[2]),"rocket":\(reactions[3]),"eyes":0},\
        "timeline_url":"\(api)/issues/\(number)/timeline","performed_via_github_app":null,\
        "state_reason":\(closed ? "\"completed\"" : "null")}
        """
    }

    private static func gitHubUser(_ random: inout SeededRandomNumberGenerator) -> String {
        let login = ["octocat", "mona-lisa", "hubot", "defunkt", "ada-l", "grace-h", "linus-t", "zoë-k"][Int.random(in: 0..<8, using: &random)]
        let id = Int.random(in: 1_000...180_000_000, using: &random)
        let api = "https://api.github.com/users/\(login)"
        return """
        {"login":"\(login)","id":\(id),"node_id":"MDQ6VXNlcj\(nodeSuffix(&random))",\
        "avatar_url":"https://avatars.githubusercontent.com/u/\(id)?v=4","gravatar_id":"","url":"\(api)",\
        "html_url":"https://github.com/\(login)","followers_url":"\(api)/followers",\
        "following_url":"\(api)/following{/other_user}","gists_url":"\(api)/gists{/gist_id}",\
        "starred_url":"\(api)/starred{/owner}{/repo}","subscriptions_url":"\(api)/subscriptions",\
        "organizations_url":"\(api)/orgs","repos_url":"\(api)/repos","events_url":"\(api)/events{/privacy}",\
        "received_events_url":"\(api)/received_events","type":"User","user_view_type":"public","site_admin":false}
        """
    }

    private static func gitHubLabel(_ random: inout SeededRandomNumberGenerator) -> String {
        let labels = [("bug", "d73a4a", "Something isn't working"), ("enhancement", "a2eeef", "New feature or request"),
                      ("good first issue", "7057ff", "Good for newcomers"), ("performance", "fbca04", nil),
                      ("needs triage", "ededed", nil)]
        let (name, color, description) = labels[Int.random(in: 0..<labels.count, using: &random)]
        return """
        {"id":\(Int.random(in: 100_000_000...6_000_000_000, using: &random)),"node_id":"LA_kwDOA\(nodeSuffix(&random))",\
        "url":"https://api.github.com/repos/acme/widgets/labels/\(name.replacingOccurrences(of: " ", with: "%20"))",\
        "name":"\(name)","color":"\(color)","default":\(description != nil),\
        "description":\(description.map(quoted) ?? "null")}
        """
    }

    private static func gitHubMilestone(_ random: inout SeededRandomNumberGenerator) -> String {
        let number = Int.random(in: 1...40, using: &random)
        let api = "https://api.github.com/repos/acme/widgets/milestones/\(number)"
        let due = Bool.random(using: &random) ? "\"\(timestamp(&random, fraction: false, offset: false))\"" : "null"
        return """
        {"url":"\(api)","html_url":"https://github.com/acme/widgets/milestone/\(number)","labels_url":"\(api)/labels",\
        "id":\(Int.random(in: 1_000_000...12_000_000, using: &random)),"node_id":"MI_kwDOA\(nodeSuffix(&random))",\
        "number":\(number),"title":"v\(number / 10).\(number % 10)","description":"Release \(number)",\
        "creator":\(gitHubUser(&random)),"open_issues":\(Int.random(in: 0...90, using: &random)),\
        "closed_issues":\(Int.random(in: 0...300, using: &random)),"state":"open",\
        "created_at":"\(timestamp(&random, fraction: false, offset: false))",\
        "updated_at":"\(timestamp(&random, fraction: false, offset: false))","due_on":\(due),"closed_at":null}
        """
    }

    private static func title(_ random: inout SeededRandomNumberGenerator) -> String {
        let titles = ["Crash when the list is empty", "Support \"dark mode\" in the settings", "Slow start-up on Linux",
                      "Docs: the example in README doesn't compile", "Add retry with back-off", "Ünicode names are cut off"]
        return titles[Int.random(in: 0..<titles.count, using: &random)]
    }

    private static func issueBody(_ number: Int, _ random: inout SeededRandomNumberGenerator) -> String {
        let paragraphs = [
            "### Steps to reproduce\r\n\r\n1. Open the app\r\n2. Tap **Sync**\r\n3. See the error",
            "```swift\r\nlet items = try await api.call(ListItems())\r\n```\r\nfails with `keyNotFound(\"id\")`.",
            "Expected: the list loads.\r\nActual: it spins forever — see the log below.",
            "Happens on v2.\(number % 10).1 and on `main`. Tested on Ubuntu 24.04 and macOS 15 🚀",
            "> It's the same as #\(number - 3), isn't it?\r\n\r\nNot quite: that one was about \"pagination\".",
        ]
        return (0..<Int.random(in: 1...4, using: &random)).map { _ in paragraphs[Int.random(in: 0..<paragraphs.count, using: &random)] }
            .joined(separator: "\r\n\r\n")
    }

    // MARK: Stripe

    private static func stripeCharge(_ index: Int, _ random: inout SeededRandomNumberGenerator) -> String {
        let id = "ch_3P\(nodeSuffix(&random))\(index)"
        let amount = Int.random(in: 50...2_500_000, using: &random)
        let refunded = Int.random(in: 0..<10, using: &random) == 0
        let status = ["succeeded", "succeeded", "succeeded", "pending", "failed"][Int.random(in: 0..<5, using: &random)]
        let brand = ["visa", "mastercard", "amex"][Int.random(in: 0..<3, using: &random)]
        let country = ["US", "DE", "FR", "GB", "JP"][Int.random(in: 0..<5, using: &random)]
        let hasCustomer = Bool.random(using: &random)
        let metadata = (0..<Int.random(in: 0...3, using: &random)).map { "\"order_\($0)\":\"\(Int.random(in: 1000...99_999, using: &random))\"" }
        let fee = Double(Int.random(in: 140...360, using: &random)) / 10_000
        let cvc = ["pass", "fail", "unavailable"][Int.random(in: 0..<3, using: &random)]
        return """
        {"id":"\(id)","object":"charge","amount":\(amount),"amount_captured":\(status == "succeeded" ? amount : 0),\
        "amount_refunded":\(refunded ? amount : 0),"application":null,"application_fee":null,\
        "application_fee_amount":\(Bool.random(using: &random) ? String(amount / 20) : "null"),\
        "balance_transaction":\(status == "succeeded" ? "\"txn_3P\(nodeSuffix(&random))\"" : "null"),\
        "billing_details":{"address":{"city":\(Bool.random(using: &random) ? "\"Berlin\"" : "null"),"country":"\(country)",\
        "line1":"\(Int.random(in: 1...400, using: &random)) Main Street","line2":null,\
        "postal_code":"\(Int.random(in: 10_000...99_999, using: &random))","state":null},\
        "email":\(hasCustomer ? "\"customer\(index)@example.com\"" : "null"),"name":"Jenny Rosen","phone":null},\
        "calculated_statement_descriptor":"ACME WIDGETS","captured":\(status != "pending"),\
        "created":"\(timestamp(&random, fraction: true, offset: true))",\
        "captured_at":\(status == "pending" ? "null" : "\"\(timestamp(&random, fraction: true, offset: false))\""),\
        "currency":"\(country == "US" ? "usd" : "eur")","customer":\(hasCustomer ? "\"cus_\(nodeSuffix(&random))\"" : "null"),\
        "description":\(Bool.random(using: &random) ? "\"Order #\(10_000 + index)\"" : "null"),"disputed":false,\
        "failure_code":\(status == "failed" ? "\"card_declined\"" : "null"),\
        "failure_message":\(status == "failed" ? "\"Your card was declined.\"" : "null"),"fee_rate":\(fee),\
        "fraud_details":{},"livemode":false,"metadata":{\(metadata.joined(separator: ","))},\
        "outcome":{"network_status":"approved_by_network","reason":null,"risk_level":"normal",\
        "risk_score":\(Int.random(in: 0...99, using: &random)),"seller_message":"Payment complete.","type":"authorized"},\
        "paid":\(status == "succeeded"),"payment_intent":"pi_3P\(nodeSuffix(&random))",\
        "payment_method":"pm_1P\(nodeSuffix(&random))","payment_method_details":{"card":{"amount_authorized":\(amount),\
        "brand":"\(brand)","checks":{"address_line1_check":null,"address_postal_code_check":"pass","cvc_check":"\(cvc)"},\
        "country":"\(country)","exp_month":\(Int.random(in: 1...12, using: &random)),"exp_year":\(Int.random(in: 2025...2032, using: &random)),\
        "fingerprint":"\(nodeSuffix(&random))","funding":"credit","installments":null,"last4":"4242","mandate":null,\
        "network":"\(brand)","three_d_secure":null,"wallet":null},"type":"card"},"receipt_email":null,\
        "receipt_number":null,"receipt_url":"https://pay.stripe.com/receipts/payment/\(nodeSuffix(&random))",\
        "refunded":\(refunded),"review":null,"sequence":\(9_007_199_254_740_993 + index * 2),"shipping":null,\
        "source":null,"source_transfer":null,"statement_descriptor":null,"statement_descriptor_suffix":null,\
        "status":"\(status)","transfer_data":null,"transfer_group":null}
        """
    }

    // MARK: Pieces

    /// An RFC 3339 timestamp between 2019 and 2026: whole seconds and `Z` as GitHub writes them,
    /// or with milliseconds or microseconds and an offset.
    static func timestamp(_ random: inout SeededRandomNumberGenerator, fraction: Bool, offset: Bool) -> String {
        func two(_ value: Int) -> String { value < 10 ? "0\(value)" : "\(value)" }
        let month = Int.random(in: 1...12, using: &random)
        var text = "\(Int.random(in: 2019...2026, using: &random))-\(two(month))-\(two(Int.random(in: 1...28, using: &random)))"
            + "T\(two(Int.random(in: 0...23, using: &random))):\(two(Int.random(in: 0...59, using: &random))):\(two(Int.random(in: 0...59, using: &random)))"
        if fraction {
            let digits = Bool.random(using: &random) ? 3 : 6
            text += "." + String(String(Int.random(in: 0..<1_000_000, using: &random) + 1_000_000).suffix(digits))
        }
        if offset {
            let hours = [0, 1, 2, 5, 9][Int.random(in: 0..<5, using: &random)]
            text += hours == 0 ? "Z" : "\(Bool.random(using: &random) ? "+" : "-")\(two(hours)):\(hours == 5 ? "30" : "00")"
        } else {
            text += "Z"
        }
        return text
    }

    private static func nodeSuffix(_ random: inout SeededRandomNumberGenerator) -> String {
        let alphabet = Array("ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789")
        return String((0..<14).map { _ in alphabet[Int.random(in: 0..<alphabet.count, using: &random)] })
    }

    /// `text` as a JSON string.
    private static func quoted(_ text: String) -> String {
        var out = "\""
        for scalar in text.unicodeScalars {
            switch scalar {
            case "\"": out += "\\\""
            case "\\": out += "\\\\"
            case "\n": out += "\\n"
            case "\r": out += "\\r"
            case "\t": out += "\\t"
            case "\u{2014}": out += "\\u2014"
            default: out.unicodeScalars.append(scalar)
            }
        }
        return out + "\""
    }
}
