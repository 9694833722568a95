import ArgumentParser
import Foundation
import GatehouseServer

if ProcessInfo.processInfo.environment["GATEHOUSE_NIO_EXECUTOR"] == "1" { GatehouseRuntime.runConcurrencyOnEventLoops() }

func start<Command: AsyncParsableCommand>(_: Command.Type) async { await Command.main() }
await start(Gatehouse.self)
