#if canImport(Glibc)
    import Glibc
#elseif canImport(Darwin)
    import Darwin
#endif

/// Nanoseconds on CLOCK_MONOTONIC: cheap enough to read around every commit.
@inline(__always)
func monotonicNanos() -> UInt64 {
    var ts = timespec()
    clock_gettime(CLOCK_MONOTONIC, &ts)
    return UInt64(ts.tv_sec) &* 1_000_000_000 &+ UInt64(ts.tv_nsec)
}

/// Runs `body` and returns its result with the seconds it took.
func timed<T>(_ body: () throws -> T) rethrows -> (T, Double) {
    let start = monotonicNanos()
    let result = try body()
    return (result, Double(monotonicNanos() - start) / 1e9)
}

/// Latency percentiles of a set of samples (nearest rank on the sorted samples).
struct Latency: Codable, Sendable {
    var samples: Int
    var p50Micros: Double
    var p99Micros: Double
    var maxMicros: Double

    init?(nanos: [UInt64]) {
        guard !nanos.isEmpty else { return nil }
        let sorted = nanos.sorted()
        func rank(_ q: Double) -> Double {
            let index = min(sorted.count - 1, max(0, Int((q * Double(sorted.count)).rounded(.up)) - 1))
            return Double(sorted[index]) / 1000
        }
        samples = sorted.count
        p50Micros = rank(0.50)
        p99Micros = rank(0.99)
        maxMicros = Double(sorted[sorted.count - 1]) / 1000
    }
}

/// One engine's result on one workload.
struct Measurement: Codable, Sendable {
    var ops: Int
    var seconds: Double
    var opsPerSecond: Double
    var latency: Latency?
    /// Anything else worth keeping (phase times, engine-reported sizes), by name.
    var details: [String: Double]

    init(ops: Int, seconds: Double, latency: Latency? = nil, details: [String: Double] = [:]) {
        self.ops = ops
        self.seconds = seconds
        self.opsPerSecond = seconds > 0 ? Double(ops) / seconds : 0
        self.latency = latency
        self.details = details
    }
}

// MARK: - Formatting

/// 1234567 → "1,234,567".
func grouped(_ n: Int) -> String {
    let digits = String(n.magnitude)
    var out = ""
    for (i, c) in digits.enumerated() {
        if i > 0 && (digits.count - i) % 3 == 0 { out.append(",") }
        out.append(c)
    }
    return n < 0 ? "-" + out : out
}

/// A fixed-point decimal with `places` digits after the point.
func fixed(_ x: Double, _ places: Int) -> String {
    guard x.isFinite else { return "\(x)" }
    var scale = 1.0
    for _ in 0..<places { scale *= 10 }
    let scaled = (abs(x) * scale).rounded()
    let whole = Int(scaled / scale)
    var text = String(whole)
    if places > 0 {
        let frac = Int(scaled - Double(whole) * scale)
        let fracText = String(frac)
        text += "." + String(repeating: "0", count: places - fracText.count) + fracText
    }
    return (x < 0 && scaled != 0 ? "-" : "") + text
}

/// Operations per second, grouped, without decimals (or with one below 100).
func rate(_ x: Double) -> String {
    x >= 100 ? grouped(Int(x.rounded())) : fixed(x, 1)
}

/// A latency in microseconds as "123 µs" or "1.23 ms" or "1.23 s".
func micros(_ us: Double) -> String {
    if us < 10 { return fixed(us, 1) + " µs" }
    if us < 1000 { return fixed(us, 0) + " µs" }
    if us < 1_000_000 { return fixed(us / 1000, us < 10_000 ? 2 : 1) + " ms" }
    return fixed(us / 1_000_000, 2) + " s"
}

/// A byte count in decimal units: "812 B", "232.0 kB", "2.82 MB", "1.23 GB".
func bytes(_ n: Int) -> String {
    let x = Double(n)
    if x < 1000 { return "\(n) B" }
    if x < 1e6 { return fixed(x / 1e3, 1) + " kB" }
    if x < 1e9 { return fixed(x / 1e6, x < 1e7 ? 2 : 1) + " MB" }
    return fixed(x / 1e9, 2) + " GB"
}

/// Seconds as "850 ms" or "12.3 s" or "2m05s".
func duration(_ seconds: Double) -> String {
    if seconds < 1 { return fixed(seconds * 1000, 0) + " ms" }
    if seconds < 100 { return fixed(seconds, seconds < 10 ? 2 : 1) + " s" }
    let s = Int(seconds.rounded())
    let rest = s % 60
    return "\(s / 60)m" + (rest < 10 ? "0" : "") + "\(rest)s"
}
