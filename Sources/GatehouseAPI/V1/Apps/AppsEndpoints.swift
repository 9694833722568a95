import Foundation

extension V1 {
    /// The apps a developer registers for the Sign To Login service (the Sign To Login spec,
    /// "Создание и регистрация iOS приложения"): each gets an API key its SDK sends as `apikey`.
    /// Every operation is on the signed-in account's own apps; another's app is 404.
    public enum Apps {
        /// My apps, newest first.
        public static let list = Endpoint<NoContent, AppList>(.get, "/v1/apps")
            .operation("listApps", "My apps", tags: "Apps")
            .shared(.unauthorized, .unexpectedProblem)
        /// Registers an app; the answer carries its API key, shown this once.
        public static let create = Endpoint<NewApp, AppWithKey>(.post, "/v1/apps", success: 201)
            .operation("createApp", "Register an app", tags: "Apps")
            .errors([400: [.missingParameter, .fieldTooLong, .invalidBundleId, .invalidEmail, .invalidURL, .malformedBody], 409: [.tooManyApps]])
            .shared(.unauthorized, .unexpectedProblem)
        /// One of my apps.
        public static let app = Endpoint<NoContent, DeveloperApp>(.get, "/v1/apps/{id}")
            .operation("getApp", "One of my apps", tags: "Apps")
            .errors([404: [.appNotFound]])
            .shared(.unauthorized, .unexpectedProblem)
            .uuid(notFound: .appNotFound)
        /// Changes an app's details, or disables and enables it.
        public static let update = Endpoint<AppUpdate, DeveloperApp>(.patch, "/v1/apps/{id}")
            .operation("updateApp", "Change, disable or enable an app", tags: "Apps")
            .errors([400: [.fieldTooLong, .invalidEmail, .invalidURL, .malformedBody], 404: [.appNotFound]])
            .shared(.unauthorized, .unexpectedProblem)
            .uuid(notFound: .appNotFound)
        /// Replaces the app's API key: the old one stops working at once; the new one is shown this once.
        public static let rotateKey = Endpoint<NoContent, AppWithKey>(.post, "/v1/apps/{id}/key")
            .operation("rotateAppKey", "Give an app a new API key", tags: "Apps")
            .errors([404: [.appNotFound]])
            .shared(.unauthorized, .unexpectedProblem)
            .uuid(notFound: .appNotFound)
        /// Sets the app's icon (a PNG, JPEG or WebP body).
        public static let uploadIcon = Endpoint<RawBody, DeveloperApp>(.put, "/v1/apps/{id}/icon")
            .operation("uploadAppIcon", "Set an app's icon", tags: "Apps")
            .errors([400: [.invalidImage], 404: [.appNotFound]])
            .shared(.unauthorized, .payloadTooLarge, .unsupportedMediaType, .unexpectedProblem)
            .uuid(notFound: .appNotFound)
        /// An app's icon (public: the history page shows it).
        public static let icon = Endpoint<NoContent, RawBody>(.get, "/v1/app-icons/{id}", access: .anyone)
            .operation("getAppIcon", "An app's icon", tags: "Apps")
            .errors([404: [.notFound]])
            .shared(.unexpectedProblem)
            .uuid(notFound: .notFound)

        /// Every operation above (the tests check it against the router and the OpenAPI document).
        public static let all: [any EndpointDeclaration] = [list, create, app, update, rotateKey, uploadIcon, icon]
    }
}
