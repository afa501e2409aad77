extension APIConfig {
    /// Which certificates the live client trusts, and how (the `http.tls.*` keys). Host names are
    /// always verified when certificates are.
    public struct TLSSettings: Sendable, Equatable {
        /// A PEM file of CA certificates to trust (`http.tls.caFile`), such as a company CA bundle
        /// mounted from a Kubernetes ConfigMap.
        public var caFile: String?
        /// A directory of PEM files, one or more CA certificates each (`http.tls.caDirectory`),
        /// read when the client is made; hidden entries, subdirectories and files without a
        /// certificate (a key, a README) are passed over.
        public var caDirectory: String?
        /// Whether the system's roots are trusted besides ``caFile`` and ``caDirectory``
        /// (`http.tls.trustSystemRoots`, default true). With neither configured, `SSL_CERT_FILE`
        /// and `SSL_CERT_DIR` replace the system roots when set, as in OpenSSL; they are read
        /// once per process.
        public var trustSystemRoots: Bool
        /// The oldest TLS version accepted (`http.tls.minimumVersion`: `1.2` or `1.3`).
        public var minimumVersion: TLSVersion
        /// The client certificate presented to servers that ask for one (mutual TLS), a PEM file
        /// whatever its name (`tls.crt` from cert-manager), with its chain after it
        /// (`http.tls.clientCertificateFile`); set with ``clientKeyFile``.
        public var clientCertificateFile: String?
        /// The client certificate's private key, a PEM file whatever its name (`tls.key`)
        /// (`http.tls.clientKeyFile`). Read as ssh reads a key: a regular file of your own (or
        /// root's), readable by you alone (`chmod 600`), not a symbolic link (except a link that
        /// stays in its folder, as a Kubernetes Secret's `tls.key` → `..data/tls.key`); anything
        /// else is ``APIError/Kind/invalidConfiguration`` saying what is wrong.
        public var clientKeyFile: String?

        /// Creates settings: the system's roots and TLS 1.2 or later.
        public init(
            caFile: String? = nil,
            caDirectory: String? = nil,
            trustSystemRoots: Bool = true,
            minimumVersion: TLSVersion = .v1_2,
            clientCertificateFile: String? = nil,
            clientKeyFile: String? = nil
        ) {
            self.clientCertificateFile = clientCertificateFile
            self.clientKeyFile = clientKeyFile
            self.caFile = caFile
            self.caDirectory = caDirectory
            self.trustSystemRoots = trustSystemRoots
            self.minimumVersion = minimumVersion
        }
    }

    /// A TLS protocol version.
    public enum TLSVersion: String, Sendable, Equatable, CaseIterable {
        /// TLS 1.2.
        case v1_2 = "1.2"
        /// TLS 1.3.
        case v1_3 = "1.3"
    }
}
