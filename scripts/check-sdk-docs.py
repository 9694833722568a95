#!/usr/bin/env python3
"""Every public declaration of the SDK's modules has a documentation comment (`///` or `/** */`).

The SDK is what an iOS team reads in Xcode's Quick Help and in the DocC archives
(scripts/build-sdk-docs.sh), so a public type, member, enum case or protocol requirement without a
comment is a page with nothing on it. This check reads the sources of GatehouseAPI, GatehouseKit,
GatehouseScreens and GatehouseSignature (fast enough for every CI run, where DocC is not), prints each
module's count, lists every undocumented declaration as `file:line: declaration`, and exits 1 when
there is one.

What counts as public: a declaration marked `public` or `open`; a member of a `public extension`;
a requirement of a public protocol; a case of a public enum. Not counted: what is inside a function
or property body, and the witnesses of the standard library's protocols whose meaning is the
protocol's (`init(from:)`, `encode(to:)`, `==`, `<`, `hash(into:)`, `description`, `CodingKeys`):
DocC shows the protocol's documentation for them.

    python3 scripts/check-sdk-docs.py [--list] [MODULE ...]
"""
import os
import re
import sys

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
MODULES = ["GatehouseAPI", "GatehouseKit", "GatehouseScreens", "GatehouseSignature"]

DECL = re.compile(r"^(?:(?:public|open|package|internal|private|fileprivate|static|class|final|override|mutating|nonisolated|"
                  r"required|convenience|indirect|lazy|weak|unowned|dynamic|optional|@\w+(?:\([^)]*\))?)\s+)*"
                  r"(func|var|let|init\??|init!|subscript|case|typealias|associatedtype|struct|enum|class|actor|protocol|extension|deinit)\b")
WITNESSES = re.compile(r"\b(init\(from decoder|func encode\(to encoder|static func (==|<|!=)|func hash\(into|var (description|debugDescription|hashValue)\b|"
                       r"enum CodingKeys|struct CodingKeys|init\?\(stringValue|init\?\(intValue|var (stringValue|intValue)\b)")


def code_only(lines):
    """The lines with string literals' and comments' contents blanked (braces in them must not count);
    a `///` line stays recognisable as `///`."""
    out = []
    in_block = False
    in_multi = False
    for line in lines:
        stripped = line.strip()
        if not in_block and not in_multi and stripped.startswith("///"):
            out.append("///")
            continue
        result = []
        i = 0
        in_string = False
        while i < len(line):
            c = line[i]
            if in_block:
                if line.startswith("*/", i):
                    in_block = False
                    i += 2
                    continue
                i += 1
                continue
            if in_multi:
                if line.startswith('"""', i):
                    in_multi = False
                    result.append('""')
                    i += 3
                    continue
                i += 1
                continue
            if in_string:
                if c == "\\":
                    i += 2
                    continue
                if c == '"':
                    in_string = False
                    result.append('"')
                i += 1
                continue
            if line.startswith("//", i):
                break
            if line.startswith("/*", i):
                in_block = True
                i += 2
                continue
            if line.startswith('"""', i):
                in_multi = True
                i += 3
                continue
            if c == '"':
                in_string = True
                result.append('"')
                i += 1
                continue
            result.append(c)
            i += 1
        out.append("".join(result))
    return out


def documented(raw, index):
    """Whether the declaration at `index` has a doc comment above it (attributes may come between)."""
    j = index - 1
    while j >= 0 and raw[j].strip().startswith("@") and not raw[j].strip().startswith("@Test"):
        j -= 1
    if j < 0:
        return False
    above = raw[j].strip()
    return above.startswith("///") or (above.endswith("*/") and "/**" in "".join(raw[max(0, j - 40):j + 1]))


def scan(path):
    """(public declarations, undocumented ones) of one file."""
    raw = open(path, encoding="utf-8").read().split("\n")
    code = code_only(raw)
    # A stack of scopes: each is (kind, public) where kind is "type", "enum", "protocol", "extension" or "body".
    stack = []
    total, missing = [], []
    pending = None  # the scope the next "{" opens
    for index, line in enumerate(code):
        text = line.strip()
        in_body = any(kind == "body" for kind, _ in stack)
        if text and text != "///" and not in_body:
            match = DECL.match(text)
            if match:
                keyword = match.group(1)
                words = set(re.findall(r"\b\w+\b", text.split("(")[0].split("=")[0].split("{")[0]))
                scope_kind, scope_public = stack[-1] if stack else ("file", False)
                explicit = "public" in words or "open" in words
                hidden = bool(words & {"private", "fileprivate", "internal", "package"})
                is_public = explicit or (not hidden and scope_public and scope_kind in ("protocol", "extension")) \
                    or (keyword == "case" and scope_kind == "enum" and scope_public)
                if keyword == "case" and scope_kind != "enum":
                    is_public = False  # a `case` of a switch
                if is_public and keyword != "extension" and not WITNESSES.search(raw[index]):
                    total.append(index)
                    if not documented(raw, index):
                        missing.append((index + 1, raw[index].strip()))
                    if keyword == "enum" and re.search(r"\{\s*case\b", text):
                        # Cases on the enum's own line: DocC counts each, and none can have a comment there.
                        total.append(index)
                        missing.append((index + 1, "its cases, on the enum's line: one per line, each documented"))
                if keyword in ("struct", "class", "actor", "enum", "protocol", "extension"):
                    own_public = is_public or (keyword == "extension" and explicit)
                    pending = ("enum" if keyword == "enum" else "protocol" if keyword == "protocol" else
                               "extension" if keyword == "extension" else "type", own_public)
                elif keyword in ("func", "init", "init?", "init!", "subscript", "deinit", "var", "let"):
                    pending = ("body", False)
        for c in line:
            if c == "{":
                stack.append(pending or ("body", False))
                pending = None
            elif c == "}":
                if stack:
                    stack.pop()
        # A declaration with no body after all: a property without one, a protocol requirement, or the last line of a
        # signature that ran over several lines.
        if pending and pending[0] == "body" and text and "{" not in line and not text.endswith((",", "(", "->")) \
                and not text.startswith(("where", "throws", "async")) and (DECL.match(text) is None or text.count("(") == text.count(")")):
            pending = None
    return total, missing


def main(argv):
    show = "--list" in argv
    modules = [a for a in argv if not a.startswith("--")] or MODULES
    failed = False
    summary = []
    for module in modules:
        count, undocumented = 0, []
        folder = os.path.join(ROOT, "Sources", module)
        for dirpath, _, files in sorted(os.walk(folder)):
            for name in sorted(files):
                if not name.endswith(".swift"):
                    continue
                path = os.path.join(dirpath, name)
                total, missing = scan(path)
                count += len(total)
                undocumented += [(os.path.relpath(path, ROOT), line, text) for line, text in missing]
        summary.append(f"{module} {count - len(undocumented)} of {count}")
        if undocumented:
            failed = True
            for path, line, text in undocumented if show or len(undocumented) <= 40 else undocumented[:40]:
                print(f"{path}:{line}: {text}")
            if not show and len(undocumented) > 40:
                print(f"... and {len(undocumented) - 40} more in {module} (--list shows them all)")
    print("check-sdk-docs: public declarations documented: " + "; ".join(summary))
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
