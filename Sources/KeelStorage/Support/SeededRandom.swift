/// A small, fast, seedable random generator (SplitMix64). Randomised tests and the crash
/// simulator use it so every run is reproducible from the seed it prints.
public struct SeededRandom: RandomNumberGenerator, Sendable {
    public private(set) var state: UInt64
    public let seed: UInt64

    public init(seed: UInt64) {
        self.seed = seed
        self.state = seed
    }

    /// A seed from the environment variable `KEEL_SEED` when set (to replay a failure), otherwise
    /// a fresh random one.
    public static func seedFromEnvironment(_ name: String = "KEEL_SEED") -> UInt64 {
        if let text = getEnvironment(name), let value = UInt64(text) { return value }
        return UInt64.random(in: 1...UInt64.max)
    }

    public mutating func next() -> UInt64 {
        state &+= 0x9E37_79B9_7F4A_7C15
        var z = state
        z = (z ^ (z >> 30)) &* 0xBF58_476D_1CE4_E5B9
        z = (z ^ (z >> 27)) &* 0x94D0_49BB_1331_11EB
        return z ^ (z >> 31)
    }
}

#if canImport(Glibc)
    import Glibc
#elseif canImport(Darwin)
    import Darwin
#endif

func getEnvironment(_ name: String) -> String? {
    guard let value = getenv(name) else { return nil }
    return String(cString: value)
}

/// Seconds since 1970, for informational timestamps.
func currentUnixTime() -> Int {
    var ts = timespec()
    clock_gettime(CLOCK_REALTIME, &ts)
    return ts.tv_sec
}
