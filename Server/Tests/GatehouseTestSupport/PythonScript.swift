import Foundation

/// Runs `python3 script arguments…` (the first `python3` on PATH: `scripts/test.sh` puts its
/// virtual environment first) and answers its exit status and everything it printed.
///
/// Reads and waits on a thread of its own: blocking one of the few threads of Swift's cooperative
/// pool (two on a two-core machine) would stall the in-process servers meanwhile.
public func runPythonScript(_ script: String, _ arguments: [String]) async throws -> (status: Int32, output: String) {
    let process = Process()
    process.executableURL = URL(fileURLWithPath: "/usr/bin/env")
    process.arguments = ["python3", script] + arguments
    let output = Pipe()
    process.standardOutput = output
    process.standardError = output
    try ChildProcesses.run(process)
    let data: Data = await withCheckedContinuation { continuation in
        Thread {
            let data = output.fileHandleForReading.readDataToEndOfFile()
            process.waitUntilExit()
            ChildProcesses.exited(process)
            continuation.resume(returning: data)
        }.start()
    }
    return (process.terminationStatus, String(decoding: data, as: UTF8.self))
}
