import Foundation
import Resourceful
import Testing

#if canImport(Glibc)
import Glibc
#endif

/// The storage reading the process's own environment, changed while the process runs. `setenv`
/// is not safe beside other threads reading the environment (a process being started, a
/// transport reading proxy variables): `make test` runs this suite in a step of its own.
@Suite struct ProcessEnvironmentTests {
    @Test func theProcessEnvironmentIsReadAtEachCall() async throws {
        let service = "env-live-\(UInt32.random(in: 0 ... .max))"
        let variable = EnvironmentAuthenticationStorage.variableName(prefix: "RESOURCEFUL_AUTH", service: service, suffix: "TOKEN")
        let storage = EnvironmentAuthenticationStorage()
        #expect(try await storage.authenticationHeader(for: service) == nil)
        setenv(variable, "rotated-1", 1)
        defer { unsetenv(variable) }
        #expect(try await storage.authenticationHeader(for: service) == "Bearer rotated-1")
    }
}
