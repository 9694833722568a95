import Foundation
import GatehouseTestSupport
import NIOConcurrencyHelpers

/// A real S3-compatible server for the blob store's tests: moto's server mode (`pip install
/// 'moto[server]'`, which scripts/test.sh puts in the test environment), one per test process,
/// started on first use on 127.0.0.1 and a free port, stopped when the process exits.
enum MotoServer {
    struct Failure: Error, CustomStringConvertible { let description: String }

    private static let started: Result<Int, Failure> = {
        let port = LocalPorts.free()
        let process = Process()
        process.executableURL = URL(fileURLWithPath: "/usr/bin/env")
        // moto ends with this process: at exit, and (a crash, a kill) when its parent is gone.
        let script = ChildProcesses.pythonWatch + """
        from moto.server import main
        main(["-H", "127.0.0.1", "-p", sys.argv[1]])
        """
        process.arguments = ["python3", "-c", script, String(port)]
        process.standardOutput = FileHandle.nullDevice
        process.standardError = FileHandle.nullDevice
        do { try ChildProcesses.run(process) } catch { return .failure(Failure(description: "moto: \(error)")) }
        let deadline = Date().addingTimeInterval(30)
        while Date() < deadline {
            if !process.isRunning {
                return .failure(Failure(description: "moto_server exited (is moto[server] installed? run scripts/test.sh)"))
            }
            if LocalPorts.answers(port: port) { return .success(port) }
            usleep(50_000)
        }
        return .failure(Failure(description: "moto_server did not answer within 30 s"))
    }()

    /// The endpoint of the running server (started on first call, off the cooperative pool).
    static func endpoint() async throws -> String {
        "http://127.0.0.1:\(try await blocking { try started.get() })"
    }
}

/// Runs `botocore`'s own SigV4 signer (installed with moto) on a request, for checking ours
/// against an independent implementation.
enum BotocoreSigner {
    static func authorization(method: String, url: String, body: String, payloadSHA256: String, amzDate: String,
                              accessKey: String, secretKey: String, region: String) throws -> String {
        let script = """
        import sys, datetime
        from unittest import mock
        from botocore.auth import S3SigV4Auth
        from botocore.awsrequest import AWSRequest
        from botocore.credentials import Credentials
        method, url, payload, amz, ak, sk, region, body = sys.argv[1:9]
        request = AWSRequest(method=method, url=url, data=body.encode(), headers={"x-amz-content-sha256": payload})
        signer = S3SigV4Auth(Credentials(ak, sk), "s3", region)
        fixed = datetime.datetime.strptime(amz, "%Y%m%dT%H%M%SZ")
        with mock.patch("botocore.auth.get_current_datetime", return_value=fixed):
            signer.add_auth(request)
        print(request.headers["Authorization"])
        """
        let process = Process()
        process.executableURL = URL(fileURLWithPath: "/usr/bin/env")
        process.arguments = ["python3", "-c", script, method, url, payloadSHA256, amzDate, accessKey, secretKey, region, body]
        let output = Pipe()
        process.standardOutput = output
        try process.run()
        let data = output.fileHandleForReading.readDataToEndOfFile()
        let deadline = Date().addingTimeInterval(30)
        while process.isRunning, Date() < deadline { usleep(10_000) }
        guard process.terminationStatus == 0 else { throw MotoServer.Failure(description: "botocore signer failed") }
        return String(decoding: data, as: UTF8.self).trimmingCharacters(in: .whitespacesAndNewlines)
    }
}
