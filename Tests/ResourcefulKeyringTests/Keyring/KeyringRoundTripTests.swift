import Foundation
import ResourcefulKeyring
import Testing

@Suite struct KeyringRoundTripTests {
    @Test func storeLookUpOverwriteDeleteAndDeleteAgain() async throws {
        let keyring = try PrivateSession.keyring()
        let service = PrivateSession.uniqueService()
        #expect(try await keyring.lookup(service: service, account: "ada") == nil)
        try await keyring.store("first-value", service: service, account: "ada")
        #expect(try await keyring.lookup(service: service, account: "ada") == "first-value")
        try await keyring.store("second-value", service: service, account: "ada")
        #expect(try await keyring.lookup(service: service, account: "ada") == "second-value")
        #expect(try await keyring.lookup(service: service, account: "grace") == nil)
        #expect(try await keyring.delete(service: service, account: "ada"))
        #expect(try await keyring.lookup(service: service, account: "ada") == nil)
        #expect(try await keyring.delete(service: service, account: "ada") == false)
    }

    @Test func nonASCIIAndLargeValues() async throws {
        let keyring = try PrivateSession.keyring()
        let service = PrivateSession.uniqueService()
        let unicode = "pässwörd-🔑-密码-end"
        try await keyring.store(unicode, service: service, account: "ü-account")
        #expect(try await keyring.lookup(service: service, account: "ü-account") == unicode)
        let large = String((0..<(64 * 1024)).map { Character(UnicodeScalar(UInt8(33 + $0 % 90))) })
        try await keyring.store(large, service: service, account: "big")
        let found = try await keyring.lookup(service: service, account: "big")
        #expect(found?.utf8.count == 64 * 1024)
        #expect(found == large)
        try await keyring.delete(service: service, account: "big")
        try await keyring.delete(service: service, account: "ü-account")
    }

    struct Mismatch: Error { var task: Int; var step: Int }

    @Test func eightTasksOfAHundredMixedOperations() async throws {
        let keyring = try PrivateSession.keyring()
        let service = PrivateSession.uniqueService()
        let checked = try await withThrowingTaskGroup(of: Int.self) { group in
            for task in 0..<8 {
                group.addTask {
                    var checked = 0
                    let account = "account-\(task)"
                    for step in 0..<100 {
                        switch step % 4 {
                        case 0:
                            try await keyring.store("value-\(task)-\(step)", service: service, account: account)
                        case 1:
                            guard try await keyring.lookup(service: service, account: account) == "value-\(task)-\(step - 1)" else {
                                throw Mismatch(task: task, step: step)
                            }
                            checked += 1
                        case 2:
                            guard try await keyring.delete(service: service, account: account) else { throw Mismatch(task: task, step: step) }
                        default:
                            guard try await keyring.lookup(service: service, account: account) == nil else { throw Mismatch(task: task, step: step) }
                            checked += 1
                        }
                    }
                    return checked
                }
            }
            var total = 0
            for try await count in group { total += count }
            return total
        }
        #expect(checked == 8 * 50)
    }
}
