#!/usr/bin/env python3
"""Checks the SDK guide, in English (docs/sdk.md) and in Russian (docs/sdk.ru.md), as a newcomer uses it: every Swift
sample compiles with the products the guide names, the manifests it shows load, and both quick starts run against a
live server.

    python3 scripts/check-sdk-guide.py --write-samples Server/SDKGuideSamples
        checks the texts and writes the samples as sources of the server package's guide targets (Server/Package.swift
        declares them when the folder exists, so the server's one build compiles them: scripts/test.sh does this);
    python3 scripts/check-sdk-guide.py --run-quick-starts BIN --server http://127.0.0.1:8080
        runs the built quick starts (SDKGuideQuickStart, SDKGuideQuickStartRu in BIN) against that server.

What is written, from each ```swift block of a guide:
- a block whose first line is `// Package.swift` is a manifest fragment: it is made a whole
  manifest (the repository's URL replaced by its path) and SwiftPM must read it, products included;
- a block whose first line is `// main.swift` is the quick start: an executable of its own;
- a block whose first line starts `// Not compiled here` (`// Здесь не компилируется`) needs UIKit
  (Apple platforms only) and is skipped, the only blocks that are;
- any other block is compiled: declarations at file scope, statements inside a function of their
  own. The names a sample takes from its surroundings (`phone`, `showBanner`, a view's bounds) are
  declared once in Examples/SDKGuide/Context.swift.
Before that, every public method of every client (`*Client.swift`, and `*Client+*.swift` extending one, of GatehouseKit and
GatehouseDevSupport, the core `GatehouseClient` aside) must be named in each guide's tables, every
`(#anchor)` link of a guide must name one of its own headings, and the two guides must keep the
same sections: the same headings at the same levels in the same order, and in each section the same
samples, whose code (comments aside) is the same in both.
"""
import argparse
import os
import re
import shutil
import subprocess
import sys
import tempfile

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
GUIDES = [("docs/sdk.md", ""), ("docs/sdk.ru.md", "Ru")]   # (the guide, what its generated names carry)
NOT_COMPILED = ("// Not compiled here", "// Здесь не компилируется")
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
                # A client's file, or one extending it (`AccountsClient+Identities.swift`).
                if not re.search(r"Client(\+\w+)?\.swift$", name) or name == "GatehouseClient.swift":
                    continue
                text = open(os.path.join(directory, name), encoding="utf-8").read()
                for method in dict.fromkeys(re.findall(r"^    public (?:nonisolated )?func (\w+)\(", text, re.M)):
                    if f"`{method}(" not in guide:
                        missing.append(f"{name[:-6].split('+')[0]}.{method}")
    return missing


def slug(heading):
    """The anchor GitHub gives a heading: lower-cased, punctuation dropped, spaces made hyphens."""
    return re.sub(r"[^\w\- ]", "", heading.strip().lower()).replace(" ", "-")


def without_comments(code):
    """The code's lines with `//` comments (outside string literals) and blank lines dropped."""
    kept = []
    for line in code.splitlines():
        in_string, cut = False, len(line)
        for i, ch in enumerate(line):
            if ch == '"' and (i == 0 or line[i - 1] != "\\"):
                in_string = not in_string
            elif not in_string and line.startswith("//", i):
                cut = i
                break
        line = line[:cut].rstrip()
        if line:
            kept.append(line)
    return kept


def outline(text):
    """[(heading level, [headings text, sample code without comments, ...])] in the guide's order:
    the part before the first heading is level 0."""
    sections = [(0, "the introduction", [])]
    fence, code = None, []
    for line in text.splitlines():
        if fence is None and line.startswith("```"):
            fence, code = line[3:].strip(), []
        elif fence is not None and line.startswith("```"):
            if fence == "swift":
                sections[-1][2].append(without_comments("\n".join(code)))
            fence = None
        elif fence is not None:
            code.append(line)
        elif re.match(r"^#{1,6} ", line):
            sections.append((len(line) - len(line.lstrip("#")), line, []))
    return sections


def broken_anchors(text):
    """The `(#anchor)` links of a guide that name none of its headings."""
    headings = {slug(re.sub(r"[`*]", "", line.lstrip("#"))) for level, line, _ in outline(text) if level}
    return sorted({a for a in re.findall(r"\]\(#([^)]+)\)", text) if a not in headings})


def structure_problems(english, russian):
    """Where the Russian guide's sections or samples part from the English one's."""
    en, ru = outline(english), outline(russian)
    if [level for level, _, _ in en] != [level for level, _, _ in ru]:
        return [f"the headings differ: levels {[l for l, _, _ in en[1:]]} in English, {[l for l, _, _ in ru[1:]]} in Russian"]
    problems = []
    for (_, where, en_code), (_, ru_where, ru_code) in zip(en, ru):
        if len(en_code) != len(ru_code):
            problems.append(f"{where} / {ru_where}: {len(en_code)} samples in English, {len(ru_code)} in Russian")
            continue
        for number, (a, b) in enumerate(zip(en_code, ru_code), 1):
            if a != b:
                first = next((f"{x!r} / {y!r}" for x, y in zip(a + [""], b + [""]) if x != y), "")
                problems.append(f"{where} / {ru_where}: sample {number} differs beyond its comments: {first}")
    return problems


WRITTEN = set()


def put(path, text):
    """Writes `text` to `path` unless it holds it already: an unchanged sample keeps its time, so a warm build does
    not compile it again."""
    WRITTEN.add(os.path.abspath(path))
    if os.path.exists(path) and open(path, encoding="utf-8").read() == text:
        return
    with open(path, "w", encoding="utf-8") as f:
        f.write(text)


def remove_stale(folder):
    """Removes the files of `folder` this run did not write (a sample the guide no longer has)."""
    for directory, _, files in os.walk(folder):
        for name in files:
            if os.path.abspath(os.path.join(directory, name)) not in WRITTEN:
                os.remove(os.path.join(directory, name))


def write_samples(path, tag, sources, quick):
    """Writes the guide's samples into the scratch package; answers (compiled, skipped, manifests, quick starts)."""
    compiled = skipped = 0
    manifests, quick_starts = [], []
    for line, code in blocks(open(os.path.join(ROOT, path), encoding="utf-8").read()):
        first = code.splitlines()[0] if code.strip() else ""
        if first.startswith(NOT_COMPILED):
            skipped += 1
            continue
        if first.startswith("// Package.swift"):
            manifests.append((line, code))
            continue
        imports, body = split_imports(code)
        if first.startswith("// main.swift"):
            quick_starts.append(line)
            os.makedirs(quick, exist_ok=True)
            put(os.path.join(quick, "main.swift"), f"// {path}, line {line}\n" + code)
            continue
        header = "".join(f"import {name}\n" for name in dict.fromkeys(PRELUDE + imports))
        is_declaration = any(DECLARATION.match(l) for l in body.splitlines() if l.strip() and not l.startswith("//"))
        if is_declaration:
            if tag:   # the same declarations as the English guide's: one copy compiles, this one is compared above
                continue
            text = f"{header}\n// {path}, line {line}\n{body}\n"
        else:
            indented = "\n".join(("    " + l) if l else l for l in body.splitlines())
            text = (f"{header}\n// {path}, line {line}\n@MainActor\nfunc sample{tag}{line}() async throws {{\n"
                    f"{indented}\n}}\n")
        put(os.path.join(sources, f"Sample{tag}{line}.swift"), text)
        compiled += 1
    if len(manifests) != 1 or len(quick_starts) != 1:
        sys.exit(f"check-sdk-guide: {path} needs one `// Package.swift` block and one `// main.swift` block, "
                 f"found {len(manifests)} and {len(quick_starts)}")
    return compiled, skipped, manifests[0], quick_starts[0]


def check_manifest(path, work, tag, manifest_block):
    """The manifest fragment, made whole, must be read by SwiftPM with the products it names."""
    line, fragment = manifest_block
    app = os.path.join(work, f"app-manifest{tag}")
    os.makedirs(os.path.join(app, "Sources", "MyApp"), exist_ok=True)
    os.makedirs(os.path.join(app, "Tests", "MyAppTests"), exist_ok=True)
    open(os.path.join(app, "Sources", "MyApp", "App.swift"), "w").write("import GatehouseKit\n")
    open(os.path.join(app, "Tests", "MyAppTests", "AppTests.swift"), "w").write("import GatehouseDevSupport\n")
    open(os.path.join(app, "Package.swift"), "w").write(manifest(fragment))
    # `describe` resolves the graph: an unknown product name fails here.
    dump = subprocess.run(["swift", "package", "--package-path", app, "describe"], capture_output=True, text=True)
    if dump.returncode != 0:
        sys.exit(f"check-sdk-guide: the manifest of {path} line {line} does not load:\n{dump.stderr}")


def write(folder, manifests_work):
    """Checks the texts and the manifests, and writes the samples into `folder` (Guide/, QuickStart/, QuickStartRu/)."""
    sources = os.path.join(folder, "Guide")
    os.makedirs(sources, exist_ok=True)
    put(os.path.join(sources, "Context.swift"), open(CONTEXT, encoding="utf-8").read())

    texts = {path: open(os.path.join(ROOT, path), encoding="utf-8").read() for path, _ in GUIDES}
    for path, text in texts.items():
        missing = undocumented_methods(text)
        if missing:
            sys.exit(f"check-sdk-guide: {path} names no table row for: " + ", ".join(missing))
        broken = broken_anchors(text)
        if broken:
            sys.exit(f"check-sdk-guide: {path} links to headings it does not have: " + ", ".join(broken))
    problems = structure_problems(texts[GUIDES[0][0]], texts[GUIDES[1][0]])
    if problems:
        sys.exit("check-sdk-guide: docs/sdk.ru.md does not keep docs/sdk.md's sections:\n  " + "\n  ".join(problems))

    compiled = skipped = 0
    for path, tag in GUIDES:
        count, skips, manifest_block, _ = write_samples(path, tag, sources, os.path.join(folder, f"QuickStart{tag}"))
        compiled, skipped = compiled + count, skipped + skips
        check_manifest(path, manifests_work, tag, manifest_block)
    remove_stale(folder)
    print(f"check-sdk-guide: {compiled} samples and the quick starts of both guides written to {folder} (the server package's "
          f"SDKGuideSamples, SDKGuideQuickStart and SDKGuideQuickStartRu); the manifests load; {skipped} UIKit blocks skipped; "
          f"the Russian guide keeps the English one's sections and samples")


def run_quick_starts(binary, server):
    for path, tag in GUIDES:
        executable = os.path.join(binary, f"SDKGuideQuickStart{tag}")
        if not os.path.exists(executable):
            sys.exit(f"check-sdk-guide: {executable} is not built: write the samples (--write-samples Server/SDKGuideSamples), then build the server package")
        run = subprocess.run([executable, server], capture_output=True, text=True, timeout=120)
        sys.stdout.write(f"{path}: {run.stdout}")
        if run.returncode != 0:
            sys.stderr.write(run.stderr)
            sys.exit(f"check-sdk-guide: the quick start of {path} failed against " + server)


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--write-samples", metavar="FOLDER", help="check the guides and write their samples here")
    parser.add_argument("--run-quick-starts", metavar="BIN", help="run the built quick starts of this folder")
    parser.add_argument("--server", default="http://127.0.0.1:8080", help="the server the quick starts talk to")
    args = parser.parse_args()
    if not args.write_samples and not args.run_quick_starts:
        parser.error("--write-samples FOLDER or --run-quick-starts BIN")
    if args.write_samples:
        manifests_work = tempfile.mkdtemp(prefix="sdk-guide-manifests-")
        try:
            write(os.path.abspath(args.write_samples), manifests_work)
        finally:
            shutil.rmtree(manifests_work, ignore_errors=True)
    if args.run_quick_starts:
        run_quick_starts(args.run_quick_starts, args.server)


if __name__ == "__main__":
    main()
