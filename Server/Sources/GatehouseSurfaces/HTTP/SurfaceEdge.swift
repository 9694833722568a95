import GatehouseFoundation

/// What every surface takes from the deployment to read a request and write an answer, and
/// nothing else of its configuration: whether a trusted load balancer's `X-Forwarded-For` names
/// the client, the public URL links are made of, and whether cookies must be `Secure` (everywhere
/// but development, which may run on plain HTTP). Each surface is given this and its own slice.
package struct SurfaceEdge: Sendable {
    package let trustForwardedFor: Bool
    package let publicURL: String
    package let secureCookies: Bool

    package init(trustForwardedFor: Bool, publicURL: String, secureCookies: Bool) {
        self.trustForwardedFor = trustForwardedFor
        self.publicURL = publicURL
        self.secureCookies = secureCookies
    }

    package init(_ configuration: GatehouseConfiguration) {
        self.init(trustForwardedFor: configuration.trustForwardedFor, publicURL: configuration.publicURL,
                  secureCookies: configuration.environment != .development)
    }
}
