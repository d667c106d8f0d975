import Testing

@testable import KeelModel

@Suite("SHA-256")
struct SHA256Tests {
    @Test(
        "matches the NIST FIPS 180-4 example vectors",
        arguments: [
            ("", "e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855"),
            ("abc", "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad"),
            ("abcdbcdecdefdefgefghfghighijhijkijkljklmklmnlmnomnopnopq", "248d6a61d20638b8e5c026930c3e6039a33ce45964ff2167f6ecedd419db06c1"),
            ("abcdefghbcdefghicdefghijdefghijkefghijklfghijklmghijklmnhijklmnoijklmnopjklmnopqklmnopqrlmnopqrsmnopqrstnopqrstu", "cf5b16a778af8380036ce59e7b0492370b249b11e8f07a51afac45037afee9d1"),
        ])
    func vectors(_ message: String, _ digest: String) {
        #expect(SHA256.hex(of: message.utf8) == digest)
    }

    @Test("one million 'a' (NIST long message), fed in uneven pieces")
    func million() {
        var hasher = SHA256()
        var left = 1_000_000
        var piece = 1
        while left > 0 {
            let n = min(piece, left)
            hasher.update(repeatElement(UInt8(ascii: "a"), count: n))
            left -= n
            piece = piece * 3 % 997 + 1
        }
        let hex = hasher.finalize().map { ($0 < 16 ? "0" : "") + String($0, radix: 16) }.joined()
        #expect(hex == "cdc76e5c9914fb9281a1c7e284d73e67f1809a48a497200e046d39ccc7112cd0")
    }

    @Test("padding boundaries: 55, 56, 63, 64 and 65 bytes differ and are stable")
    func boundaries() {
        let digests = [55, 56, 63, 64, 65].map { SHA256.hex(of: repeatElement(UInt8(0x61), count: $0)) }
        #expect(Set(digests).count == 5)
        #expect(digests[1] == "b35439a4ac6f0948b6d6f9e3c6af0f5f590ce20f1bde7090ef7970686ec6738a")
    }
}
