#!/usr/bin/env python3
"""The server's layers (docs/architecture.md, "The server's targets"): each target of the server package may import only
the targets listed for it here, in its manifest and in its sources. SwiftPM already refuses a cycle; this also refuses
an edge that would be no cycle but breaks a rule (an app importing another app, a domain importing a surface, a
lower target importing a module it does not declare)."""
import json, os, re, subprocess, sys

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
F, P, A, M, W, S = ("GatehouseFoundation", "GatehousePlatform", "GatehouseAccounts", "GatehouseMessenger",
                    "GatehouseWallet", "GatehouseSignToLogin")
ALLOWED = {
    F: set(),
    P: {F},
    A: {F, P},
    M: {F, P, A},
    W: {F, P, A, M},
    S: {F, P, A, "GatehouseVerifier"},
    "GatehouseSurfaces": {F, P, A, M, W, S, "GatehouseVerifier"},
}
SDK = {"GatehouseAPI"}  # every server target may use the wire contract

if os.path.isdir("/opt/swift/usr/bin"):
    os.environ["PATH"] = "/opt/swift/usr/bin:" + os.environ.get("PATH", "")
description = json.loads(subprocess.run(["swift", "package", "--package-path", os.path.join(ROOT, "Server"), "describe",
                                         "--type", "json"], check=True, capture_output=True, text=True).stdout)
failures = []
for target in description["targets"]:
    name = target["name"]
    if name not in ALLOWED:
        continue
    declared = set(target.get("target_dependencies") or []) | {p for p in target.get("product_dependencies") or [] if p.startswith("Gatehouse")}
    for extra in sorted(declared - ALLOWED[name] - SDK):
        failures.append(f"{name} declares {extra}")
    folder = os.path.join(ROOT, "Server", target["path"])
    for directory, _, files in os.walk(folder):
        for file in files:
            if not file.endswith(".swift"):
                continue
            path = os.path.join(directory, file)
            for line in open(path, encoding="utf-8"):
                match = re.match(r"^(?:@\w+ )*import (Gatehouse\w*)", line)
                if match and match.group(1) not in ALLOWED[name] | SDK:
                    failures.append(f"{os.path.relpath(path, ROOT)} imports {match.group(1)}")
# Data access (docs/architecture.md, "Data access"): a surface translates wire formats and calls services; it never
# reaches a table, so it imports no database library and takes no database handle.
surfaces = os.path.join(ROOT, "Server", "Sources", "GatehouseSurfaces")
for directory, _, files in os.walk(surfaces):
    for file in files:
        if not file.endswith(".swift"):
            continue
        path = os.path.join(directory, file)
        for number, line in enumerate(open(path, encoding="utf-8"), 1):
            if re.match(r"^(?:@\w+ )*import (FluentKit|FluentSQL|SQLKit|FluentPostgresDriver|FluentSQLiteDriver)\b", line) \
                    or re.search(r"\bdatabase\.(db|sql)\b|\.query\(on:", line):
                failures.append(f"{os.path.relpath(path, ROOT)}:{number} reaches the database: {line.strip()[:80]}")
if failures:
    sys.exit("layers broken:\n  " + "\n  ".join(failures))
print(f"layers: {len(ALLOWED)} server targets import only what docs/architecture.md allows")
