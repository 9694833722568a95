import Foundation
import GatehouseAPI
import GatehouseFoundation
import GatehousePlatform
import GatehouseSignToLogin
import HTTPTypes
import Hummingbird
import NIOCore

/// `/v1/me/signature-profile` (docs/sign-to-login.md, "The profile"): the person reads, edits and
/// deletes their Sign To Login profile with their session, as `V1.Signatures` declares it.
package struct SignatureProfileController: Sendable {
    package let profiles: SignatureProfiles
    package let limits: GatehouseConfiguration.Limits
    package let signature: GatehouseConfiguration.Signature
    package let edge: SurfaceEdge


    package func addRoutes(to v1: some RouterMethods<GatehouseRequestContext>) {
        typealias E = V1.Signatures
        v1.on(E.profile, limits: limits, use: profile)
        v1.on(E.updateProfile, limits: limits, use: update)
        v1.on(E.deleteProfile, limits: limits, use: delete)
        v1.on(E.photo, raw: photo)
        v1.on(E.setPhoto, raw: setPhoto)
        v1.on(E.deletePhoto, limits: limits, use: deletePhoto)
    }

    private func origin(_ request: Request, _ context: GatehouseRequestContext) -> AuditOrigin {
        AuditOrigin(ip: request.clientIP(context: context, trustForwardedFor: edge.trustForwardedFor),
                    device: request.headers[.userAgent].map { String($0.prefix(200)) }, requestID: context.requestID)
    }

    @Sendable package func profile(_ input: NoContent, _ request: Request, context: GatehouseRequestContext) async throws -> SignatureProfile {
        try await profiles.profile(of: context.requireSession().accountID)
    }

    @Sendable package func update(_ input: SignatureProfileUpdate, _ request: Request, context: GatehouseRequestContext) async throws -> SignatureProfile {
        let account = try context.requireSession().accountID
        return try await profiles.update(account, input, by: .account(account), origin: origin(request, context))
    }

    @Sendable package func delete(_ input: NoContent, _ request: Request, context: GatehouseRequestContext) async throws -> NoContent {
        let account = try context.requireSession().accountID
        try await profiles.erase(account, by: .account(account), origin: origin(request, context))
        return NoContent()
    }

    @Sendable package func photo(_ request: Request, context: GatehouseRequestContext) async throws -> Response {
        guard let photo = try await profiles.photo(of: context.requireSession().accountID) else { throw SignatureProfiles.notFound }
        return Self.image(photo.bytes, contentType: photo.contentType)
    }

    @Sendable package func setPhoto(_ request: Request, context: GatehouseRequestContext) async throws -> Response {
        let account = try context.requireSession().accountID
        let buffer = try await request.collectBody(upTo: signature.photoMaxBytes)
        let profile = try await profiles.setPhoto(account, Data(buffer.readableBytesView), by: .account(account), origin: origin(request, context))
        return try JSONResponse.make(profile)
    }

    @Sendable package func deletePhoto(_ input: NoContent, _ request: Request, context: GatehouseRequestContext) async throws -> SignatureProfile {
        let account = try context.requireSession().accountID
        return try await profiles.setPhoto(account, nil, by: .account(account), origin: origin(request, context))
    }

    /// An image answered as an image and nothing else: no script, no framing, never cached elsewhere.
    package static func image(_ bytes: Data, contentType: String) -> Response {
        Response(status: .ok, headers: [
            .contentType: contentType,
            .cacheControl: "private, no-store",
            .init("X-Content-Type-Options")!: "nosniff",
            .contentDisposition: "inline; filename=\"photo.\(contentType.split(separator: "/").last ?? "img")\"",
            .contentSecurityPolicy: "default-src 'none'; sandbox; frame-ancestors 'none'",
        ], body: .init(byteBuffer: ByteBuffer(data: bytes)))
    }

    package init(profiles: SignatureProfiles, limits: GatehouseConfiguration.Limits, signature: GatehouseConfiguration.Signature, edge: SurfaceEdge) {
        self.profiles = profiles
        self.limits = limits
        self.signature = signature
        self.edge = edge
    }
}
