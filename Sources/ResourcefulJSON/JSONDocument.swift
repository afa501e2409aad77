/// A scanned JSON document: its bytes and a flat "tape" describing its structure.
///
/// Each value takes two words of the tape:
///
/// | value | word 0 | word 1 |
/// | --- | --- | --- |
/// | string, number | kind, flags, byte offset of the contents | byte length |
/// | `null`, `true`, `false` | kind | 0 |
/// | array, object | kind, number of elements or members | tape index just past the contents |
///
/// An object's members follow it as key (a string) then value. Scanning checks the structure only;
/// the contents of strings and numbers are checked when they are decoded, as Foundation's
/// `JSONDecoder` does, so both accept and refuse the same documents.
final class JSONDocument {
    enum Kind: Int {
        case null = 1, `true`, `false`, number, string, array, object
    }

    /// String flags: no escape and no control character.
    static let plain = 1
    /// String flags: every byte is ASCII.
    static let ascii = 2
    /// Number flags: has an exponent.
    static let exponent = 1
    /// Number flags: has neither a fraction nor an exponent.
    static let integral = 2

    /// The document's bytes: the caller's, read in place (see ``init(borrowing:)``), or the
    /// document's own copy after ``ownBytes()``.
    private(set) var bytes: UnsafeBufferPointer<UInt8>
    private var ownsBytes = false
    /// Whether stage one found the whole document valid UTF-8 (then so is every string in it).
    var isValidUTF8 = false
    /// Whether the scan found every member key plain and ASCII (then each is valid, and its
    /// bytes are its value).
    var keysArePlainASCII = false
    private(set) var tape: UnsafeMutablePointer<Int>
    /// A `null` after the document's own values: what a missing value reads as (`superDecoder`).
    private(set) var nullIndex = 0
    private(set) var tapeCount = 0
    private var tapeCapacity: Int

    /// Reads `source` where it is, without a copy; the tape is filled by ``JSONScanner``.
    ///
    /// The caller keeps `source` alive and unchanged while it uses the document, and calls
    /// ``ownBytes()`` before giving `source` up if anything else may still hold the document.
    init(borrowing source: UnsafeRawBufferPointer) {
        if source.baseAddress != nil, source.count > 0 {
            bytes = source.bindMemory(to: UInt8.self)
        } else {
            // An empty document still needs an address: one byte of its own.
            let storage = UnsafeMutablePointer<UInt8>.allocate(capacity: 1)
            storage.initialize(to: 0)
            bytes = UnsafeBufferPointer(start: storage, count: 0)
            ownsBytes = true
        }
        // Small documents (one object) rarely need more than a word per four bytes.
        tapeCapacity = max(16, source.count / 2)
        tape = .allocate(capacity: tapeCapacity)
    }

    /// Copies the bytes the document reads into storage of its own, so that it outlives the
    /// caller's buffer (a `Decoder` that `init(from:)` kept, for one). The tape holds offsets,
    /// so it reads the copy as it read the original.
    func ownBytes() {
        guard !ownsBytes else { return }
        let storage = UnsafeMutablePointer<UInt8>.allocate(capacity: max(bytes.count, 1))
        storage.initialize(from: bytes.baseAddress!, count: bytes.count)
        bytes = UnsafeBufferPointer(start: storage, count: bytes.count)
        ownsBytes = true
    }

    deinit {
        if ownsBytes { UnsafeMutablePointer(mutating: bytes.baseAddress!).deallocate() }
        tape.deallocate()
    }

    /// The tape's storage and capacity, for ``JSONScanner`` to fill; it gives them back with
    /// ``adoptTape(_:count:capacity:)``.
    func takeTape() -> (UnsafeMutablePointer<Int>, Int) {
        (tape, tapeCapacity)
    }

    /// The tape ``JSONScanner`` filled (the storage ``takeTape()`` gave, or its replacement).
    func adoptTape(_ tape: UnsafeMutablePointer<Int>, count: Int, capacity: Int) {
        self.tape = tape
        tapeCount = count
        tapeCapacity = capacity
    }

    // MARK: Building

    @inline(__always)
    func append(_ word0: Int, _ word1: Int) {
        if tapeCount + 2 > tapeCapacity { grow() }
        tape[tapeCount] = word0
        tape[tapeCount + 1] = word1
        tapeCount += 2
    }

    /// Appends the `null` that ``nullIndex`` points at; called once, after scanning.
    func finish() {
        nullIndex = tapeCount
        append(Kind.null.rawValue, 0)
    }

    private func grow() {
        (tape, tapeCapacity) = tape.doubled(count: tapeCount, capacity: tapeCapacity)
    }

    // MARK: Reading

    @inline(__always)
    func kind(_ index: Int) -> Kind {
        // Every word 0 on the tape was written from a `Kind`, so the raw value is always valid.
        Kind(rawValue: tape[index] & 0xF).unsafelyUnwrapped
    }

    @inline(__always)
    func flags(_ index: Int) -> Int { (tape[index] >> 4) & 0xF }

    /// A string's or number's contents.
    @inline(__always)
    func contents(_ index: Int) -> UnsafeBufferPointer<UInt8> {
        UnsafeBufferPointer(start: bytes.baseAddress! + (tape[index] >> 8), count: tape[index + 1])
    }

    /// The byte offset of a string's or number's contents.
    @inline(__always)
    func offset(_ index: Int) -> Int { tape[index] >> 8 }

    /// The number of elements of an array or members of an object.
    @inline(__always)
    func count(_ index: Int) -> Int { tape[index] >> 8 }

    /// The tape index of the value after the one at `index`.
    @inline(__always)
    func next(_ index: Int) -> Int {
        tape[index] & 0xF >= Kind.array.rawValue ? tape[index + 1] : index + 2
    }

    /// How a value is named in a type-mismatch error, as Foundation's decoder names it.
    func typeDescription(_ index: Int) -> String {
        switch kind(index) {
        case .null: "null"
        case .true, .false: "bool"
        case .number: "number"
        case .string: "a string"
        case .array: "an array"
        case .object: "a dictionary"
        }
    }
}
