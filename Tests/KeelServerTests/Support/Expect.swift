// Small helpers for reading replies in tests.

import KeelModel
import KeelTestSupport
import Testing

extension LineClient {
    /// Sends a request that must succeed; returns its OK payload.
    @discardableResult
    func ok(_ line: String, sourceLocation: SourceLocation = #_sourceLocation) throws -> JSON? {
        let response = try request(line)
        #expect(response.isOK, "\(line) → \(response.finalLine)", sourceLocation: sourceLocation)
        return response.payload
    }

    /// Sends a request that must fail with `code`; returns the whole final line.
    @discardableResult
    func fails(_ line: String, _ code: String, sourceLocation: SourceLocation = #_sourceLocation) throws -> Response {
        let response = try request(line)
        #expect(response.errorCode == code, "\(line) → \(response.finalLine)", sourceLocation: sourceLocation)
        return response
    }
}
