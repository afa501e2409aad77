/// Makes the keyed containers of one key type, kept by ``JSONDecoding`` for the document.
///
/// `KeyedDecodingContainer(JSONKeyedContainer<Key>(…))` written in generic code looks the
/// metadata of `JSONKeyedContainer<Key>` up in the runtime's cache on every call (hundreds of
/// instructions, for every object decoded). A maker is made once per key type and document, and
/// has the container's type as its own generic argument, which its methods read from the
/// instance, so making a container looks up only what the standard library's box needs.
final class KeyedContainerMaker<Container: DocumentKeyedContainer> {
    func make(_ decoding: JSONDecoding, index: Int, path: DecodingPathNode?) throws -> KeyedDecodingContainer<Container.Key> {
        KeyedDecodingContainer(try Container(decoding: decoding, index: index, path: path))
    }
}

/// A keyed container made on an object of a document: ``JSONKeyedContainer``.
protocol DocumentKeyedContainer: KeyedDecodingContainerProtocol {
    init(decoding: JSONDecoding, index: Int, path: DecodingPathNode?) throws
}

extension JSONKeyedContainer: DocumentKeyedContainer {}

extension JSONDecoding {
    /// A keyed container for `Key` on the object at `index`.
    @inline(__always)
    func keyedContainer<Key: CodingKey>(_ type: Key.Type, index: Int, path: DecodingPathNode?) throws -> KeyedDecodingContainer<Key> {
        // The static type, not the metatype passed: for a class of keys a subclass's metatype may
        // come as `Key.Type`, and the maker must be the one made for `Key`.
        let id = ObjectIdentifier(Key.self)
        for (known, maker) in containerMakers where known == id {
            // The maker stored under `Key`'s identifier was made for `Key`, just below.
            return try unsafeDowncast(maker, to: KeyedContainerMaker<JSONKeyedContainer<Key>>.self).make(self, index: index, path: path)
        }
        let maker = KeyedContainerMaker<JSONKeyedContainer<Key>>()
        if containerMakers.count < 64 { containerMakers.append((id, maker)) }
        return try maker.make(self, index: index, path: path)
    }
}
