import Foundation
import Yams

/// `/docs`: the OpenAPI document as a page a person reads, rendered here once at start-up
/// (no script, no CDN, nothing fetched by the browser): operations grouped by tag with their
/// parameters, request bodies and answers, then every schema with its properties.
package enum APIReferencePage {
    package static let methods = ["get", "post", "put", "patch", "delete", "head", "options"]

    package static func render(_ document: Node) -> String {
        let title = document["info"]?["title"]?.string ?? "API"
        let version = document["info"]?["version"]?.string ?? ""
        var operationsByTag: [(String, [(String, String, Node)])] = []
        func add(_ tag: String, _ operation: (String, String, Node)) {
            if let index = operationsByTag.firstIndex(where: { $0.0 == tag }) {
                operationsByTag[index].1.append(operation)
            } else {
                operationsByTag.append((tag, [operation]))
            }
        }
        for tag in document["tags"]?.elements ?? [] {
            if let name = tag["name"]?.string { operationsByTag.append((name, [])) }
        }
        for (path, item) in document["paths"]?.members ?? [] {
            for method in methods {
                guard let operation = item[method] else { continue }
                add(operation["tags"]?.elements.first?.string ?? "Other", (method, path, operation))
            }
        }

        var html = """
        <!doctype html>
        <html lang="en"><head><meta charset="utf-8"><meta name="viewport" content="width=device-width, initial-scale=1">
        <title>\(escape(title)) API reference</title>
        <style>
        body{font:15px/1.5 system-ui,-apple-system,"Segoe UI",sans-serif;margin:0;color:#1d1d1f;background:#fafafa}
        main{max-width:980px;margin:0 auto;padding:24px}
        nav a{margin-right:12px} h1{margin-bottom:4px} h2{margin-top:40px;border-bottom:1px solid #ddd;padding-bottom:4px}
        section.op{background:#fff;border:1px solid #e2e2e2;border-radius:8px;padding:12px 16px;margin:14px 0}
        .m{display:inline-block;min-width:64px;font:600 12px ui-monospace,monospace;text-transform:uppercase;padding:2px 6px;border-radius:4px;color:#fff;text-align:center}
        .get{background:#2f7bd8}.post{background:#2c9a5b}.put{background:#b0721b}.patch{background:#8a5cc4}.delete{background:#c8433b}
        code,.path{font-family:ui-monospace,SFMono-Regular,Menlo,monospace} .path{font-weight:600;margin-left:8px}
        table{border-collapse:collapse;width:100%;margin:6px 0} td,th{border-top:1px solid #eee;padding:4px 6px;text-align:left;vertical-align:top}
        th{font-weight:600;color:#555} .muted{color:#666} .req{color:#c8433b}
        </style></head><body><main>
        <h1>\(escape(title)) <span class="muted">\(escape(version))</span></h1>
        <p>\(inline(document["info"]?["description"]?.string ?? ""))</p>
        <p class="muted">The machine-readable document: <a href="/openapi.json">/openapi.json</a> · <a href="/openapi.yaml">/openapi.yaml</a></p>
        <nav>
        """
        for (tag, operations) in operationsByTag where !operations.isEmpty {
            html += "<a href=\"#\(anchor(tag))\">\(escape(tag))</a>"
        }
        html += "<a href=\"#schemas\">Schemas</a></nav>\n"
        for (tag, operations) in operationsByTag where !operations.isEmpty {
            html += "<h2 id=\"\(anchor(tag))\">\(escape(tag))</h2>\n"
            if let description = (document["tags"]?.elements.first { $0["name"]?.string == tag })?["description"]?.string {
                html += "<p>\(inline(description))</p>\n"
            }
            for (method, path, operation) in operations {
                html += operationSection(method: method, path: path, operation, in: document)
            }
        }
        html += "<h2 id=\"schemas\">Schemas</h2>\n"
        for (name, schema) in document["components"]?["schemas"]?.members ?? [] {
            html += "<section class=\"op\" id=\"schema-\(anchor(name))\"><h3><code>\(escape(name))</code></h3>"
            if let description = schema["description"]?.string { html += "<p>\(inline(description))</p>" }
            let required = Set((schema["required"]?.elements ?? []).compactMap(\.string))
            let properties = schema["properties"]?.members ?? []
            if !properties.isEmpty {
                html += "<table><tr><th>property</th><th>type</th><th>description</th></tr>"
                for (property, value) in properties {
                    html += "<tr><td><code>\(escape(property))</code>\(required.contains(property) ? " <span class=\"req\">required</span>" : "")</td>"
                    html += "<td>\(typeName(value))</td><td>\(inline(value["description"]?.string ?? ""))</td></tr>"
                }
                html += "</table>"
            } else {
                html += "<p class=\"muted\">\(typeName(schema))</p>"
            }
            html += "</section>\n"
        }
        html += "</main></body></html>\n"
        return html
    }

    /// What a `$ref` points at in the document (`#/components/...`), or the value itself.
    package static func resolved(_ value: Node, in document: Node) -> Node {
        guard let reference = value["$ref"]?.string, reference.hasPrefix("#/") else { return value }
        var target: Node? = document
        for part in reference.dropFirst(2).split(separator: "/") { target = target?[String(part)] }
        return target ?? value
    }

    private static func operationSection(method: String, path: String, _ operation: Node, in document: Node) -> String {
        var html = "<section class=\"op\" id=\"\(anchor(operation["operationId"]?.string ?? method + path))\">"
        html += "<div><span class=\"m \(method)\">\(method)</span><span class=\"path\">\(escape(path))</span></div>"
        if let summary = operation["summary"]?.string { html += "<p><strong>\(escape(summary))</strong></p>" }
        if let description = operation["description"]?.string { html += "<p>\(inline(description))</p>" }
        let parameters = operation["parameters"]?.elements ?? []
        if !parameters.isEmpty {
            html += "<table><tr><th>parameter</th><th>in</th><th>type</th><th>description</th></tr>"
            for parameter in parameters {
                let required = parameter["required"]?.bool == true ? " <span class=\"req\">required</span>" : ""
                html += "<tr><td><code>\(escape(parameter["name"]?.string ?? ""))</code>\(required)</td>"
                html += "<td>\(escape(parameter["in"]?.string ?? ""))</td><td>\(parameter["schema"].map(typeName) ?? "")</td>"
                html += "<td>\(inline(parameter["description"]?.string ?? ""))</td></tr>"
            }
            html += "</table>"
        }
        if let body = operation["requestBody"] {
            html += "<p class=\"muted\">Request body:"
            for (type, content) in body["content"]?.members ?? [] {
                html += " <code>\(escape(type))</code> \(content["schema"].map(typeName) ?? "")"
            }
            html += "</p>"
        }
        let responses = operation["responses"]?.members ?? []
        if !responses.isEmpty {
            html += "<table><tr><th>answer</th><th>description</th><th>body</th></tr>"
            for (status, reference) in responses {
                let response = resolved(reference, in: document)
                let bodies = (response["content"]?.members ?? []).map { "<code>\(escape($0.0))</code> \($0.1["schema"].map(typeName) ?? "")" }
                html += "<tr><td><code>\(escape(status))</code></td><td>\(inline(response["description"]?.string ?? ""))</td>"
                html += "<td>\(bodies.joined(separator: "<br>"))</td></tr>"
            }
            html += "</table>"
        }
        return html + "</section>\n"
    }

    /// A schema in a few words: a link for a reference, the type (and item type, enum) otherwise.
    package static func typeName(_ schema: Node) -> String {
        if let reference = schema["$ref"]?.string, let name = reference.split(separator: "/").last {
            return "<a href=\"#schema-\(anchor(String(name)))\">\(escape(String(name)))</a>"
        }
        if let options = schema["oneOf"] ?? schema["anyOf"] {
            return options.elements.map(typeName).joined(separator: " | ")
        }
        let names: [String] = if let name = schema["type"]?.string { [name] } else {
            schema["type"].map { $0.elements.compactMap(\.string) } ?? ["any"]
        }
        var type = escape(names.joined(separator: " | "))
        if names.contains("array"), let items = schema["items"] { type += " of " + typeName(items) }
        if let format = schema["format"]?.string { type += " (\(escape(format)))" }
        if let values = schema["enum"]?.elements, !values.isEmpty {
            type += ": " + values.map { "<code>\(escape($0.string ?? ""))</code>" }.joined(separator: ", ")
        }
        return type
    }

    package static func escape(_ text: String) -> String {
        var out = ""
        for character in text {
            switch character {
            case "&": out += "&amp;"
            case "<": out += "&lt;"
            case ">": out += "&gt;"
            case "\"": out += "&quot;"
            case "'": out += "&#39;"
            default: out.append(character)
            }
        }
        return out
    }

    /// Escaped text with `code` spans for the document's backquotes.
    package static func inline(_ text: String) -> String {
        let parts = escape(text).split(separator: "`", omittingEmptySubsequences: false)
        return parts.enumerated().map { $0.offset % 2 == 1 ? "<code>\($0.element)</code>" : String($0.element) }.joined()
    }

    package static func anchor(_ text: String) -> String {
        String(text.lowercased().map { $0.isLetter || $0.isNumber ? $0 : "-" })
    }
}
