import Foundation

/// Every process a test starts (a Python peer, a `gatehouse` binary, a checker script), so that none
/// outlives the test run: `stop` asks it to end and kills it if it lingers, and whatever is still
/// running when the test process exits is killed then. CI checks at its end that nothing of the run
/// is left (`.ci/run`).
///
/// A child can inherit a signal mask with SIGTERM blocked (Foundation spawns it from whichever
/// thread asked, and some of those block signals): it then ignores a polite stop for ever, which
/// is why `stop` ends with SIGKILL and why the Python peers unblock their signals first
/// (`pythonPeerPrelude`).
public enum ChildProcesses {
    /// Starts `process` and tracks it until `stop` or its exit is seen.
    public static func run(_ process: Process) throws {
        installExitHandler
        try process.run()
        lock.withLock { running[ObjectIdentifier(process)] = process }
    }

    /// SIGTERM, then SIGKILL after `grace` seconds, waited for on a thread of its own (not one of
    /// Swift's cooperative pool, of which a two-core machine has two).
    public static func stop(_ process: Process, grace: TimeInterval = 3) {
        let pid = process.processIdentifier
        guard pid > 0 else { return }
        if process.isRunning { kill(pid, SIGTERM) }
        Thread.detachNewThread {
            let deadline = Date().addingTimeInterval(grace)
            while process.isRunning, Date() < deadline { usleep(20_000) }
            if process.isRunning { kill(pid, SIGKILL) }
            exited(process)
        }
    }

    /// Forgets a child that exited by itself (a script run to its end).
    public static func exited(_ process: Process) {
        lock.withLock { _ = running.removeValue(forKey: ObjectIdentifier(process)) }
    }

    /// The start of a long-lived Python child (`python3 -c pythonWatch + …`): its signals unblocked, so SIGTERM
    /// stops it, and a watch that ends it once its parent, the test process, is gone (a crash or a kill, when no
    /// exit handler runs).
    public static let pythonWatch = """
        import os, runpy, signal, sys, threading, time
        signal.pthread_sigmask(signal.SIG_UNBLOCK, {signal.SIGTERM, signal.SIGINT})
        parent = os.getppid()
        def watch():
            while os.getppid() == parent:
                time.sleep(0.5)
            os._exit(0)
        threading.Thread(target=watch, daemon=True).start()

        """

    /// `python3 -c pythonPeerPrelude SCRIPT ARGS…` runs a peer's script under `pythonWatch`.
    public static let pythonPeerPrelude = pythonWatch + """
        sys.argv = sys.argv[1:]
        sys.path.insert(0, os.path.dirname(os.path.abspath(sys.argv[0])))
        runpy.run_path(sys.argv[0], run_name="__main__")
        """

    private static let lock = NSLock()
    /// The processes themselves, not their ids: one that exited unseen is skipped at exit rather than its id,
    /// which another process may have by then, killed.
    nonisolated(unsafe) private static var running: [ObjectIdentifier: Process] = [:]
    private static let installExitHandler: Void = {
        atexit {
            ChildProcesses.lock.withLock {
                for process in ChildProcesses.running.values where process.isRunning { kill(process.processIdentifier, SIGKILL) }
                ChildProcesses.running.removeAll()
            }
        }
    }()
}
