import GatehouseAPI
import Yams

/// A declared ``MemberRule`` and the schema of the document it goes on.
package struct RulePlacement: Sendable {
    /// A step down the document: a mapping's member, or the parameter of a list by its name and place.
    package enum Step: Sendable, Equatable {
        case key(String)
        case parameter(name: String, in: String)
    }

    package let path: [Step]
    package let rule: MemberRule

    /// The rule as JSON Schema keywords, in the order the document writes them.
    var keywords: [(String, Node)] {
        func number(_ value: Double) -> Node {
            value.rounded() == value && abs(value) < 1e15 ? Node(String(Int(value)), Tag(.int)) : Node(String(value), Tag(.float))
        }
        var found: [(String, Node)] = []
        if let format = rule.format { found.append(("format", Node(format, Tag(.str)))) }
        if let minLength = rule.minLength { found.append(("minLength", Node(String(minLength), Tag(.int)))) }
        if let maxLength = rule.maxLength { found.append(("maxLength", Node(String(maxLength), Tag(.int)))) }
        if let pattern = rule.pattern { found.append(("pattern", Node(pattern, Tag(.str)))) }
        if let minimum = rule.minimum { found.append(("minimum", number(minimum))) }
        if let maximum = rule.maximum { found.append(("maximum", number(maximum))) }
        if let allowed = rule.allowed { found.append(("enum", Node(allowed.map { Node($0, Tag(.str)) }))) }
        if let constant = rule.constant { found.append(("const", Node(constant, Tag(.str)))) }
        return found
    }

    /// `node` with the rule's keywords on the schema at `path`: a keyword the schema already has
    /// must have the same value (a rule cannot contradict a member's type).
    func apply(to node: Node) throws -> Node {
        try apply(to: node, steps: path[...], at: [])
    }

    private func apply(to node: Node, steps: ArraySlice<Step>, at place: [String]) throws -> Node {
        let location = "/" + place.joined(separator: "/")
        guard let step = steps.first else {
            guard case .mapping(var mapping) = node else { throw OpenAPIGenerator.Failure(description: "\(location): a rule on something that is not a schema") }
            for (keyword, value) in keywords {
                if let index = mapping.firstIndex(where: { $0.key.string == keyword }) {
                    guard Self.text(of: mapping[index].value) == Self.text(of: value) else {
                        throw OpenAPIGenerator.Failure(description: "\(location): the rule's \(keyword) contradicts its type's")
                    }
                } else {
                    mapping[Node(keyword, Tag(.str))] = value
                }
            }
            return .mapping(mapping)
        }
        switch (step, node) {
        case (.key(let name), .mapping(var mapping)):
            guard let index = mapping.firstIndex(where: { $0.key.string == name }) else {
                throw OpenAPIGenerator.Failure(description: "\(location): no \(name) for a rule to go on")
            }
            let key = mapping[index].key
            mapping[key] = try apply(to: mapping[index].value, steps: steps.dropFirst(), at: place + [name])
            return .mapping(mapping)
        case (.parameter(let name, let kind), .sequence(var sequence)):
            guard let index = sequence.firstIndex(where: { $0["name"]?.string == name && $0["in"]?.string == kind }) else {
                throw OpenAPIGenerator.Failure(description: "\(location): no \(kind) parameter \(name) for a rule to go on")
            }
            sequence[index] = try apply(to: sequence[index], steps: steps.dropFirst(), at: place + [name])
            return .sequence(sequence)
        default:
            throw OpenAPIGenerator.Failure(description: "\(location): the document has no place for a rule here")
        }
    }

    /// A keyword's value as text (a list's, joined), to compare a rule's with a type's.
    private static func text(of node: Node) -> String {
        if let items = node.sequence { return items.map { $0.string ?? "" }.joined(separator: "\n") }
        return node.string ?? ""
    }
}
