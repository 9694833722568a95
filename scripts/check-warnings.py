#!/usr/bin/env python3
"""Fails when a build log holds a compiler warning about the repository's own code (the server, the SDK, their tests
and tools), naming each once; warnings about the dependencies' code (under .build/) are theirs. CI runs it on the log
of its one build, which compiles everything from nothing, so every warning of ours is in it.

  python3 scripts/check-warnings.py .build/ci-build.log
"""
import os
import re
import sys

ROOT = os.path.realpath(os.path.join(os.path.dirname(os.path.abspath(__file__)), ".."))
WARNING = re.compile(r"^(/[^:\s]+):(\d+):(\d+): warning: (.*)$")
# A warning inside a macro's expansion (`#expect`…) is printed without the file: only the project's tests use them.
MACRO = re.compile(r"^macro expansion (#\w+):(\d+):(\d+): warning: (.*)$")
# SwiftPM's own warnings about a package (a file no target claims…), named by the package's identity: ours are the
# server's folder and the root's (a clone's folder name).
PACKAGE = re.compile(r"^warning: '([^']+)': (.*)$")
OUR_PACKAGES = {"server", "gatehouse", "gatehouse-server", os.path.basename(ROOT).lower()}


def main() -> int:
    if len(sys.argv) != 2:
        sys.exit(__doc__)
    ours = {}
    with open(sys.argv[1], encoding="utf-8", errors="replace") as log:
        for line in log:
            macro = MACRO.match(line.strip())
            if macro:
                ours.setdefault(f"in an expansion of {macro.group(1)}: {macro.group(4)}", "")
                continue
            package = PACKAGE.match(line.strip())
            if package:
                if package.group(1) in OUR_PACKAGES:
                    ours.setdefault(f"package {package.group(1)}: {package.group(2)}", "")
                continue
            match = WARNING.match(line.strip())
            if not match:
                continue
            path = os.path.realpath(match.group(1))
            if not path.startswith(ROOT + os.sep) or f"{os.sep}.build{os.sep}" in path:
                continue
            site = f"{os.path.relpath(path, ROOT)}:{match.group(2)}:{match.group(3)}"
            ours.setdefault(site, match.group(4))
    for site, message in sorted(ours.items()):
        print(f"{site}: warning: {message}" if message else site)
    if ours:
        print(f"check-warnings: {len(ours)} warning(s) in the repository's own code; fix them (a warning ignored "
              "today hides the one that matters tomorrow)", file=sys.stderr)
        return 1
    print("check-warnings: no warning in the repository's own code")
    return 0


if __name__ == "__main__":
    sys.exit(main())
