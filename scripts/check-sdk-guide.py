#!/usr/bin/env python3
"""Compiles every Swift sample of docs/sdk.md as an app would, and runs its quick start against a
live server: what a newcomer copies from the guide must build with the products the guide names.

Each ```swift block of the guide becomes a file of a scratch package that depends on this
repository's SDK by path, as an app does:
- a block whose first line is `// Package.swift` is a manifest fragment: it is made a whole
  manifest (the repository's URL replaced by its path) and SwiftPM must read it, products included;
- a block whose first line is `// main.swift` is the quick start: the package's executable;
- a block whose first line starts `// Not compiled here` needs UIKit (Apple platforms only) and is
  skipped, the only blocks that are;
- any other block is compiled: declarations at file scope, statements inside a function of their
  own. The names a sample takes from its surroundings (`phone`, `showBanner`, a view's bounds) are
  declared once in Examples/SDKGuide/Context.swift.
Then the scratch package is built, and with --server URL its quick start runs against that server.
Before that, every public method of every client (`*Client.swift` of GatehouseKit and
GatehouseDevSupport, the core `GatehouseClient` aside) must be named in the guide's tables.

    python3 scripts/check-sdk-guide.py [--server http://127.0.0.1:8080] [--work DIR]
"""
import argparse
import os
import re
import shutil
import subprocess
import sys
import tempfile

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
GUIDE = os.path.join(ROOT, "docs", "sdk.md")
CONTEXT = os.path.join(ROOT, "Examples", "SDKGuide", "Context.swift")
PRELUDE = ["Foundation", "GatehouseKit", "GatehouseScreens", "GatehouseSignature", "GatehouseDevSupport", "Crypto"]
DECLARATION = re.compile(r"^(?:@\w+\s+)*(?:public\s+|private\s+|final\s+)*(?:extension|struct|final class|class|enum|protocol|func|actor)\b")


def blocks(text):
    """[(line number, code)] of every ```swift block."""
    found = []
    for match in re.finditer(r"^```swift\n(.*?)^```", text, re.S | re.M):
        found.append((text.count("\n", 0, match.start()) + 1, match.group(1)))
    return found


def split_imports(code):
    imports, rest = [], []
    for line in code.splitlines():
        m = re.match(r"^import (\w+)\s*(//.*)?$", line)
        if m:
            imports.append(m.group(1))
        else:
            rest.append(line)
    return imports, "\n".join(rest)


def manifest(fragment):
    """The guide's dependencies/targets fragment as a whole manifest, the URL made this repository's path."""
    body = re.sub(r'\.package\(url: "[^"]+", branch: "main"\)', f'.package(name: "gatehouse", path: "{ROOT}")', fragment)
    lines = [line for line in body.splitlines() if not line.startswith("// Package.swift")]
    return ("// swift-tools-version:6.1\nimport PackageDescription\n\nlet package = Package(\n"
            '    name: "MyApp",\n    platforms: [.macOS(.v14), .iOS(.v15)],\n'
            + "\n".join("    " + line for line in lines) + "\n)\n")


def undocumented_methods(guide):
    """`Client.method` for every public method of a client the guide does not name as `` `method( ``."""
    missing = []
    for folder in ("Sources/GatehouseKit", "Sources/GatehouseDevSupport"):
        for directory, _, files in os.walk(os.path.join(ROOT, folder)):
            for name in files:
                if not name.endswith("Client.swift") or name == "GatehouseClient.swift":
                    continue
                text = open(os.path.join(directory, name), encoding="utf-8").read()
                for method in dict.fromkeys(re.findall(r"^    public (?:nonisolated )?func (\w+)\(", text, re.M)):
                    if f"`{method}(" not in guide:
                        missing.append(f"{name[:-6]}.{method}")
    return missing


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--server", help="run the quick start against this server")
    parser.add_argument("--work", help="the scratch package's folder (kept; a temporary one otherwise)")
    args = parser.parse_args()
    work = args.work or tempfile.mkdtemp(prefix="sdk-guide-")
    sources = os.path.join(work, "Sources", "Guide")
    quick = os.path.join(work, "Sources", "QuickStart")
    shutil.rmtree(os.path.join(work, "Sources"), ignore_errors=True)
    os.makedirs(sources)
    os.makedirs(quick)
    shutil.copy(CONTEXT, os.path.join(sources, "Context.swift"))

    guide = open(GUIDE, encoding="utf-8").read()
    missing = undocumented_methods(guide)
    if missing:
        sys.exit("check-sdk-guide: docs/sdk.md names no table row for: " + ", ".join(missing))

    compiled = skipped = 0
    manifests, quick_starts = [], []
    for line, code in blocks(open(GUIDE, encoding="utf-8").read()):
        first = code.splitlines()[0] if code.strip() else ""
        if first.startswith("// Not compiled here"):
            skipped += 1
            continue
        if first.startswith("// Package.swift"):
            manifests.append((line, code))
            continue
        imports, body = split_imports(code)
        if first.startswith("// main.swift"):
            quick_starts.append(line)
            with open(os.path.join(quick, "main.swift"), "w", encoding="utf-8") as f:
                f.write(f"// docs/sdk.md, line {line}\n" + code)
            continue
        header = "".join(f"import {name}\n" for name in dict.fromkeys(PRELUDE + imports))
        is_declaration = any(DECLARATION.match(l) for l in body.splitlines() if l.strip() and not l.startswith("//"))
        if is_declaration:
            text = f"{header}\n// docs/sdk.md, line {line}\n{body}\n"
        else:
            indented = "\n".join(("    " + l) if l else l for l in body.splitlines())
            text = (f"{header}\n// docs/sdk.md, line {line}\n@MainActor\nfunc sample{line}() async throws {{\n"
                    f"{indented}\n}}\n")
        with open(os.path.join(sources, f"Sample{line}.swift"), "w", encoding="utf-8") as f:
            f.write(text)
        compiled += 1

    if len(manifests) != 1 or len(quick_starts) != 1:
        sys.exit(f"check-sdk-guide: the guide needs one `// Package.swift` block and one `// main.swift` block, "
                 f"found {len(manifests)} and {len(quick_starts)}")

    # The manifest fragment, made whole, must be read by SwiftPM with the products it names.
    app = os.path.join(work, "app-manifest")
    os.makedirs(os.path.join(app, "Sources", "MyApp"), exist_ok=True)
    os.makedirs(os.path.join(app, "Tests", "MyAppTests"), exist_ok=True)
    open(os.path.join(app, "Sources", "MyApp", "App.swift"), "w").write("import GatehouseKit\n")
    open(os.path.join(app, "Tests", "MyAppTests", "AppTests.swift"), "w").write("import GatehouseDevSupport\n")
    open(os.path.join(app, "Package.swift"), "w").write(manifest(manifests[0][1]))
    # `describe` resolves the graph: an unknown product name fails here.
    dump = subprocess.run(["swift", "package", "--package-path", app, "describe"], capture_output=True, text=True)
    if dump.returncode != 0:
        sys.exit(f"check-sdk-guide: the manifest of docs/sdk.md line {manifests[0][0]} does not load:\n{dump.stderr}")

    with open(os.path.join(work, "Package.swift"), "w") as f:
        f.write(f"""// swift-tools-version:6.1
import PackageDescription

let package = Package(
    name: "SDKGuide",
    platforms: [.macOS(.v14), .iOS(.v15)],
    dependencies: [
        .package(name: "gatehouse", path: "{ROOT}"),
        .package(url: "https://github.com/apple/swift-crypto.git", from: "3.12.3"),
    ],
    targets: [
        .target(name: "Guide", dependencies: [
            .product(name: "GatehouseKit", package: "gatehouse"),
            .product(name: "GatehouseScreens", package: "gatehouse"),
            .product(name: "GatehouseSignature", package: "gatehouse"),
            .product(name: "GatehouseDevSupport", package: "gatehouse"),
            .product(name: "Crypto", package: "swift-crypto"),
        ]),
        .executableTarget(name: "QuickStart", dependencies: [
            .product(name: "GatehouseKit", package: "gatehouse"),
            .product(name: "GatehouseDevSupport", package: "gatehouse"),
        ]),
    ]
)
""")
    build = subprocess.run(["swift", "build", "--package-path", work], capture_output=True, text=True)
    if build.returncode != 0:
        sys.stderr.write(build.stdout[-12000:] + build.stderr[-4000:])
        sys.exit(f"check-sdk-guide: the guide's samples do not compile (scratch package: {work})")
    print(f"check-sdk-guide: {compiled} samples and the quick start compile; the manifest loads; "
          f"{skipped} UIKit blocks skipped")

    if args.server:
        binary = subprocess.run(["swift", "build", "--package-path", work, "--show-bin-path"], capture_output=True, text=True).stdout.strip()
        run = subprocess.run([os.path.join(binary, "QuickStart"), args.server], capture_output=True, text=True, timeout=120)
        sys.stdout.write(run.stdout)
        if run.returncode != 0:
            sys.stderr.write(run.stderr)
            sys.exit("check-sdk-guide: the quick start failed against " + args.server)
    if not args.work:
        shutil.rmtree(work, ignore_errors=True)


if __name__ == "__main__":
    main()
