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
            code = line.split("//")[0]
            if re.match(r"^(?:@\w+ )*import (FluentKit|FluentSQL|SQLKit|FluentPostgresDriver|FluentSQLiteDriver)\b", line) \
                    or re.search(r"\bdatabase\.(db|sql)\b|\.query\(on:", code) \
                    or re.search(r"\b(DatabaseProvider|GatehouseDatabase|[A-Z]\w*Store)\b", code):
                failures.append(f"{os.path.relpath(path, ROOT)}:{number} reaches the database: {line.strip()[:80]}")
# The typed database (docs/architecture.md, "Data access"): every handle the server's code gets is a
# `GatehouseDatabase`, Fluent's and SQLKit's at once, so nothing casts one to the other. The one conversion of a
# driver's handle is `DeadlineDatabase.sqlView(of:)`.
ONE_CONVERSION = os.path.join("Server", "Sources", "GatehouseFoundation", "Persistence", "DeadlineDatabase.swift")
conversions = 0
for top in ("Sources", "Tests"):
    for directory, _, files in os.walk(os.path.join(ROOT, "Server", top)):
        for file in files:
            if not file.endswith(".swift"):
                continue
            path = os.path.join(directory, file)
            for number, line in enumerate(open(path, encoding="utf-8"), 1):
                if re.search(r"\bas[!?]\s*(any\s+)?SQLDatabase\b", line.split("//")[0]):
                    if os.path.relpath(path, ROOT) == ONE_CONVERSION:
                        conversions += 1
                    else:
                        failures.append(f"{os.path.relpath(path, ROOT)}:{number} casts a database to SQLKit's: take a GatehouseDatabase")
if conversions != 1:
    failures.append(f"{ONE_CONVERSION}: {conversions} conversions of a driver's handle to SQLKit's (one is the rule)")
# Folders (docs/architecture.md, "Folders"): inside a target, a folder uses only the folders of the layers below its
# own (for the targets listed in FOLDER_LAYERS, bottom layer first; `.` is the target's own top level), and in every
# target the folders form no cycle. A use is a type, or a member an extension declares, that only one folder declares.
FOLDER_LAYERS = {
    "Server/Sources/GatehouseAccounts": [{".", "Rules", "Models"}, {"Verification", "Sessions", "Push", "Operators"}, {"Clients", "Tokens"}, {"Accounts"}, {"OpenID", "SocialLogin"}],
    "Server/Sources/GatehouseSurfaces": [{"HTTP"}, {"V1", "Web", "CustomerGateway", "Realtime", "Dev"},
                                         {"Admin", "Console", "Health", "Payments", "PhoneAccounts", "SignToLogin", "Tokens", "OpenID"}, {"Operator"}, {"OpenAPI"}],
    "Server/Sources/GatehouseWallet": [{"."}, {"TopUps"}, {"Module"}],
    "Sources/GatehouseKit": [{"."}, {"Messenger", "SignToLogin", "Wallet"}],
    "Sources/GatehouseScreens": [{"."}, {"Account"}, {"AccountEntry"}, {"Messenger", "PhoneAccounts", "SignToLogin", "Wallet", "WebSocketLogin"}],
}


def swift_code(text):
    """The text without comments and string literals (what names a type in code)."""
    text = re.sub(r'"""[\s\S]*?"""', '""', text)
    text = re.sub(r'"(?:\\.|[^"\\\n])*"', '""', text)
    text = re.sub(r"/\*[\s\S]*?\*/", "", text)
    return "\n".join(line.split("//")[0] for line in text.split("\n"))


def folder_uses(target):
    """{folder: {used folder: {names}}} for the Swift files under `target`."""
    files = {}
    for directory, _, names in os.walk(target):
        for name in names:
            if name.endswith(".swift"):
                path = os.path.join(directory, name)
                relative = os.path.relpath(path, target)
                files[path] = (relative.split(os.sep)[0] if os.sep in relative else ".", swift_code(open(path, encoding="utf-8").read()))
    declared, members, extension_members = {}, {}, {}
    for folder, code in files.values():
        for m in re.finditer(r"^\s*(?:@\w+(?:\([^)]*\))?\s+)*(?:(?:public|package|internal|private|fileprivate|final|nonisolated|indirect)\s+)*"
                             r"(?:class|struct|enum|protocol|actor|typealias)\s+([A-Z]\w*)", code, re.M):
            declared.setdefault(m.group(1), set()).add(folder)
        for m in re.finditer(r"\b(?:func|var|let|case)\s+([a-z_]\w*)", code):
            members[m.group(1)] = members.get(m.group(1), 0) + 1
        depth, in_extension = 0, False
        for line in code.split("\n"):
            if depth == 0:
                in_extension = bool(re.match(r"\s*(?:(?:public|package|internal)\s+)?extension\b", line))
            elif depth == 1 and in_extension:
                m = re.match(r"\s*(?:@\w+\s+)*(?:(?:public|package|internal|static|nonisolated|mutating)\s+)*(?:func|var)\s+([a-z_]\w*)", line)
                if m:
                    extension_members.setdefault(m.group(1), folder)
            depth += line.count("{") - line.count("}")
    type_owner = {name: next(iter(folders)) for name, folders in declared.items() if len(folders) == 1}
    member_owner = {name: folder for name, folder in extension_members.items() if members.get(name) == 1 and len(name) > 3}
    uses = {}
    for folder, code in files.values():
        for name in set(re.findall(r"\b[A-Z]\w*\b", code)):
            owner = type_owner.get(name)
            if owner and owner != folder:
                uses.setdefault(folder, {}).setdefault(owner, set()).add(name)
        for name in set(re.findall(r"\.([a-z_]\w*)\b", code)):
            owner = member_owner.get(name)
            if owner and owner != folder:
                uses.setdefault(folder, {}).setdefault(owner, set()).add("." + name)
    return uses


def cycles(uses):
    """The folders that reach one another (strongly connected components of more than one)."""
    index, low, stack, on_stack, found = {}, {}, [], set(), []

    def visit(v):
        index[v] = low[v] = len(index)
        stack.append(v)
        on_stack.add(v)
        for w in uses.get(v, {}):
            if w not in index:
                visit(w)
                low[v] = min(low[v], low[w])
            elif w in on_stack:
                low[v] = min(low[v], index[w])
        if low[v] == index[v]:
            component = []
            while True:
                w = stack.pop()
                on_stack.discard(w)
                component.append(w)
                if w == v:
                    break
            if len(component) > 1:
                found.append(sorted(component))

    for v in sorted(set(uses) | {w for used in uses.values() for w in used}):
        if v not in index:
            visit(v)
    return found


folder_targets = [os.path.join("Server", "Sources", t) for t in sorted(os.listdir(os.path.join(ROOT, "Server", "Sources")))] + \
                 [os.path.join("Sources", t) for t in sorted(os.listdir(os.path.join(ROOT, "Sources")))]
folder_count = 0
for target in folder_targets:
    if not os.path.isdir(os.path.join(ROOT, target)):
        continue
    uses = folder_uses(os.path.join(ROOT, target))
    for component in cycles(uses):
        failures.append(f"{target}: the folders {', '.join(component)} use one another (a cycle)")
    layers = FOLDER_LAYERS.get(target)
    if layers is None:
        continue
    layer_of = {folder: n for n, layer in enumerate(layers) for folder in layer}
    present = {entry for entry in os.listdir(os.path.join(ROOT, target)) if os.path.isdir(os.path.join(ROOT, target, entry))
               and not entry.endswith(".docc") and entry != "Resources"}
    present |= {"."} if any(f.endswith(".swift") for f in os.listdir(os.path.join(ROOT, target))) else set()
    for folder in sorted(present - set(layer_of)):
        failures.append(f"{target}/{folder}: a folder without a layer in scripts/check-layers.py's FOLDER_LAYERS")
    folder_count += len(present)
    for folder, used in sorted(uses.items()):
        for other, names in sorted(used.items()):
            if folder in layer_of and other in layer_of and layer_of[other] >= layer_of[folder]:
                failures.append(f"{target}/{folder} uses {other} ({', '.join(sorted(names)[:4])}), which is not below it")
# Queries live in stores (docs/architecture.md, "Data access"): an SQL statement (`.raw(…)`) is written only in a
# store (`…Store.swift`, `…Store+….swift`), a migration (`…Migrations.swift`, `M0….swift`) or one of the data-access
# pieces below, each the one writer of its tables. Services ask those.
STORAGE = {
    "GatehouseFoundation/Persistence/", "GatehouseFoundation/RateLimiting/RateLimiter.swift",
    "GatehouseFoundation/Delivery/Outbox.swift", "GatehouseFoundation/Delivery/OutboxDeliverer.swift",
    "GatehousePlatform/Audit/AuditLog.swift", "GatehousePlatform/Events/EventLog.swift", "GatehousePlatform/Events/PushQueue.swift",
    "GatehousePlatform/Realtime/PostgresEventBus.swift", "GatehousePlatform/Storage/BlobMaintenance.swift",
    "GatehouseAccounts/Push/PushDevices.swift", "GatehouseMessenger/MessageReader.swift", "GatehouseMessenger/PersonLoader.swift",
    "GatehouseMessenger/PeopleIndex.swift", "GatehouseWallet/Ledger.swift", "GatehouseWallet/IdempotencyKeys.swift",
    "GatehouseServer/Commands/BackupCommands.swift",
}
sources = os.path.join(ROOT, "Server", "Sources")
for directory, _, files in os.walk(sources):
    for file in files:
        if not file.endswith(".swift"):
            continue
        path = os.path.join(directory, file)
        relative = os.path.relpath(path, sources)
        if not re.search(r"(?<!reader)\.raw\(", swift_code(open(path, encoding="utf-8").read())):
            continue
        if re.search(r"Store(\+\w+)?\.swift$|Migrations\.swift$|^M0\d+\w*\.swift$", file) \
                or any(relative == entry or (entry.endswith("/") and relative.startswith(entry)) for entry in STORAGE):
            continue
        failures.append(f"Server/Sources/{relative} writes SQL: its statements belong in its domain's store")
if failures:
    sys.exit("layers broken:\n  " + "\n  ".join(failures))
print(f"layers: {len(ALLOWED)} server targets import only what docs/architecture.md allows; no folder cycle in "
      f"{len(folder_targets)} targets, {folder_count} folders of {len(FOLDER_LAYERS)} of them in their layers; no database cast; "
      f"SQL only in stores, migrations and {len(STORAGE)} data-access pieces")
