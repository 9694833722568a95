/// The version of Gatehouse, the server and the SDK together (they are released as one, and
/// CHANGELOG.md records what each version changed on the wire). It follows semantic versioning:
/// a minor version adds, a major version may change or remove what clients speak.
public enum GatehouseVersion {
    /// This build's version, e.g. `1.1.0`.
    public static let current = "1.1.0"
}
