import NIOCore
import NIOPosix

public enum GatehouseRuntime {
    public static func runConcurrencyOnEventLoops() {
        _ = NIOSingletons.unsafeTryInstallSingletonPosixEventLoopGroupAsConcurrencyGlobalExecutor()
    }
}
