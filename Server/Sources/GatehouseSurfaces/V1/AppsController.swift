import Foundation
import GatehouseAPI
import GatehouseFoundation
import GatehousePlatform
import GatehouseSignToLogin
import Hummingbird
import NIOCore

/// `/v1/apps`: the signed-in account's apps of the Sign To Login service, as `V1.Apps`
/// declares them; another account's app answers 404 like one that does not exist.
package struct AppsController: Sendable {
    package let apps: AppsService
    package let limits: GatehouseConfiguration.Limits
    package let signature: GatehouseConfiguration.Signature


    package func addRoutes(to v1: some RouterMethods<GatehouseRequestContext>) {
        typealias E = V1.Apps
        v1.on(E.list, limits: limits, use: list)
        v1.on(E.create, limits: limits, use: create)
        v1.on(E.app, limits: limits, use: app)
        v1.on(E.update, limits: limits, use: update)
        v1.on(E.rotateKey, limits: limits, use: rotateKey)
        v1.on(E.uploadIcon, raw: uploadIcon)
        v1.on(E.icon, raw: icon)
    }

    private func mine(_ context: GatehouseRequestContext) async throws -> AppRecord {
        let owner = try context.requireSession().accountID
        let id = try context.id()
        return try await apps.app(id, owner: owner)
    }

    @Sendable package func list(_ input: NoContent, _ request: Request, context: GatehouseRequestContext) async throws -> AppList {
        AppList(items: try await apps.list(owner: context.requireSession().accountID).map(apps.view))
    }

    @Sendable package func create(_ input: NewApp, _ request: Request, context: GatehouseRequestContext) async throws -> AppWithKey {
        let (row, key) = try await apps.create(input, owner: context.requireSession().accountID, by: .account(context.requireSession().accountID))
        return AppWithKey(app: apps.view(row), apiKey: key)
    }

    @Sendable package func app(_ input: NoContent, _ request: Request, context: GatehouseRequestContext) async throws -> DeveloperApp {
        apps.view(try await mine(context))
    }

    @Sendable package func update(_ input: AppUpdate, _ request: Request, context: GatehouseRequestContext) async throws -> DeveloperApp {
        apps.view(try await apps.update(mine(context), input, by: .account(context.requireSession().accountID)))
    }

    @Sendable package func rotateKey(_ input: NoContent, _ request: Request, context: GatehouseRequestContext) async throws -> AppWithKey {
        let (row, key) = try await apps.rotateKey(mine(context), by: .account(context.requireSession().accountID))
        return AppWithKey(app: apps.view(row), apiKey: key)
    }

    @Sendable package func uploadIcon(_ request: Request, context: GatehouseRequestContext) async throws -> Response {
        let row = try await mine(context)
        let buffer = try await request.collectBody(upTo: signature.appIconMaxBytes)
        let updated = try await apps.setIcon(row, contentType: request.headers[.contentType], bytes: Data(buffer.readableBytesView))
        return try JSONResponse.make(apps.view(updated), status: .init(code: V1.Apps.uploadIcon.successStatus))
    }

    @Sendable package func icon(_ request: Request, context: GatehouseRequestContext) async throws -> Response {
        let id = try context.id()
        guard let icon = try await apps.icon(appID: id) else {
            throw GatehouseError(.notFound, .notFound, LocalizedText("error.notFound"))
        }
        return Response(
            status: .ok,
            headers: [
                .contentType: icon.contentType,
                .eTag: "\"\(icon.etag)\"",
                .cacheControl: "public, max-age=300",
                .init("X-Content-Type-Options")!: "nosniff",
                .contentSecurityPolicy: "default-src 'none'; sandbox; frame-ancestors 'none'",
            ],
            body: .init(byteBuffer: ByteBuffer(data: icon.bytes))
        )
    }

    package init(apps: AppsService, limits: GatehouseConfiguration.Limits, signature: GatehouseConfiguration.Signature) {
        self.apps = apps
        self.limits = limits
        self.signature = signature
    }
}
