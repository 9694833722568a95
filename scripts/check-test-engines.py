#!/usr/bin/env python3
"""The engine rule of the tests (CONTRIBUTING.md, "Tests"): a test whose behaviour depends on the database carries the
`.engine` tag and runs on `TestEngine.all` (SQLite and PostgreSQL); every other database test runs on `TestEngine.once`.
The tag and the list must agree, so that the engine a test runs on is never an accident of copying a neighbour:
- a `@Test` with `arguments: TestEngine.all`, or whose body asks for PostgreSQL (`TestEngine.all.contains(.postgres)`),
  has `.tags(.engine)`;
- a `@Test` tagged `.engine` runs on every engine (`TestEngine.all`) or is about PostgreSQL alone;
- `TestEngine.once` is never tagged.
Prints each test that breaks the rule and exits 1."""
import os
import re
import sys

ROOT = os.path.join(os.path.dirname(os.path.dirname(os.path.abspath(__file__))), "Server", "Tests")
ATTRIBUTE = re.compile(r'@Test\((?:[^()"]|"(?:[^"\\]|\\.)*"|\((?:[^()"]|"(?:[^"\\]|\\.)*")*\))*\)', re.S)

failures = []
counts = {"all": 0, "once": 0}
for directory, _, files in os.walk(ROOT):
    for name in sorted(files):
        if not name.endswith(".swift"):
            continue
        path = os.path.join(directory, name)
        text = open(path, encoding="utf-8").read()
        matches = list(ATTRIBUTE.finditer(text))
        for index, match in enumerate(matches):
            attribute = match.group(0)
            # The test's body: up to the next test's attribute.
            body = text[match.end():matches[index + 1].start() if index + 1 < len(matches) else len(text)]
            tagged = ".tags(.engine)" in attribute
            every = "TestEngine.all" in attribute
            once = "TestEngine.once" in attribute
            postgres_only = "TestEngine.all.contains(.postgres)" in body
            title = re.match(r'@Test\("((?:[^"\\]|\\.)*)"', attribute)
            where = f"{os.path.relpath(path, ROOT)}:{text.count(chr(10), 0, match.start()) + 1} ({title.group(1)[:70] if title else '?'})"
            counts["all"] += every
            counts["once"] += once
            if (every or postgres_only) and not tagged:
                failures.append(f"{where}: runs on every engine but is not tagged .engine")
            if tagged and not (every or postgres_only):
                failures.append(f"{where}: tagged .engine but runs on one engine")
            if tagged and once:
                failures.append(f"{where}: tagged .engine but runs TestEngine.once")
        if "TestEngine.available" in text:
            failures.append(f"{os.path.relpath(path, ROOT)}: TestEngine.available is gone: TestEngine.all (tagged .engine) or TestEngine.once")

if failures:
    sys.exit("check-test-engines:\n  " + "\n  ".join(failures))
print(f"check-test-engines: {counts['all']} tests on every engine (tagged .engine), {counts['once']} on one")
