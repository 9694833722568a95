"""An SMTP server (plain, no TLS, no AUTH) that misbehaves on a seeded quarter of its connections.

Per connection, with probability `fault_rate`, one fault is picked; the kinds are taken in turn
from a seeded shuffle of KINDS, so that every kind shows up in a run of a few dozen connections:

  reject-greeting  answers `421` instead of the `220` greeting, then closes
  drop-greeting    closes the connection without a greeting
  stall-greeting   says nothing until the client gives up (exercises SMTP_TIMEOUT_SECONDS)
  drop-rcpt        closes the connection when `RCPT TO` arrives (mid-transaction)
  reject-body      takes the whole message, then answers `451` (temporary refusal: not accepted)
  drop-quit        accepts the message (`250`), then drops the connection at `QUIT`
  lost-ack         receives the whole message, keeps it, and drops the connection before the
                   `250`: the server has the mail but the client cannot know (the classic SMTP
                   duplicate window, RFC 1047); a retry delivers it a second time

A message counts as received when the server answered `250` to it, or, for `lost-ack`, when its
final dot arrived.
"""
from __future__ import annotations

import asyncio
import base64
import email
import random
import re
from dataclasses import dataclass, field

KINDS = ("reject-greeting", "drop-greeting", "stall-greeting", "drop-rcpt", "reject-body", "drop-quit", "lost-ack")


@dataclass
class Received:
    connection: int
    recipients: list
    text: str            # the decoded text/plain body
    message_id: str
    acknowledged: bool   # False for lost-ack: the client never saw the 250


@dataclass
class Connection:
    number: int
    fault: str | None
    recipients: list = field(default_factory=list)


class FaultySMTPServer:
    def __init__(self, port: int, seed: int, fault_rate: float = 0.25, kinds=KINDS):
        self.port = port
        self.rng = random.Random(seed)
        self.fault_rate = fault_rate
        self.kinds = list(kinds)
        self._cycle: list[str] = []
        self.connections: list[Connection] = []
        self.received: list[Received] = []
        self.server: asyncio.AbstractServer | None = None

    def _next_fault(self) -> str | None:
        if self.rng.random() >= self.fault_rate:
            return None
        if not self._cycle:
            self._cycle = self.kinds[:]
            self.rng.shuffle(self._cycle)
        return self._cycle.pop()

    async def start(self) -> None:
        self.server = await asyncio.start_server(self._handle, "127.0.0.1", self.port)

    async def stop(self) -> None:
        if self.server:
            self.server.close()
            await self.server.wait_closed()

    def fault_counts(self) -> dict:
        counts = {kind: 0 for kind in self.kinds}
        for c in self.connections:
            if c.fault:
                counts[c.fault] += 1
        return counts

    async def _handle(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        connection = Connection(len(self.connections) + 1, self._next_fault())
        self.connections.append(connection)
        fault = connection.fault

        async def send(line: str) -> None:
            writer.write(line.encode() + b"\r\n")
            await writer.drain()

        try:
            if fault == "drop-greeting":
                return
            if fault == "reject-greeting":
                await send("421 4.3.2 faults.test busy, try again later")
                return
            if fault == "stall-greeting":
                try:   # until the client hangs up (its SMTP timeout), at most 60 s
                    await asyncio.wait_for(reader.read(), 60)
                except asyncio.TimeoutError:
                    pass
                return
            await send("220 faults.test ESMTP fault injector")
            sender = None
            while True:
                raw = await asyncio.wait_for(reader.readline(), 30)
                if not raw:
                    return
                line = raw.decode(errors="replace").rstrip("\r\n")
                verb = line.split(" ", 1)[0].upper()
                if verb == "EHLO":
                    await send("250-faults.test")
                    await send("250-8BITMIME")
                    await send("250 SMTPUTF8")
                elif verb == "HELO":
                    await send("250 faults.test")
                elif verb == "MAIL":
                    sender = line
                    connection.recipients = []
                    await send("250 2.1.0 ok")
                elif verb == "RCPT":
                    if fault == "drop-rcpt":
                        return
                    match = re.search(r"<([^>]*)>", line)
                    connection.recipients.append((match.group(1) if match else line[8:]).lower())
                    await send("250 2.1.5 ok")
                elif verb == "DATA":
                    if sender is None or not connection.recipients:
                        await send("503 5.5.1 need MAIL and RCPT")
                        continue
                    await send("354 end data with <CR><LF>.<CR><LF>")
                    lines = []
                    while True:
                        data = await asyncio.wait_for(reader.readline(), 30)
                        if not data:
                            return
                        data = data.rstrip(b"\r\n")
                        if data == b".":
                            break
                        lines.append(data[1:] if data.startswith(b"..") else data)
                    message = b"\r\n".join(lines)
                    if fault == "reject-body":
                        await send("451 4.3.0 temporary failure, message not accepted")
                        continue
                    self._keep(connection, message, acknowledged=fault != "lost-ack")
                    if fault == "lost-ack":
                        return
                    await send("250 2.0.0 queued")
                elif verb == "RSET":
                    sender = None
                    connection.recipients = []
                    await send("250 2.0.0 ok")
                elif verb == "NOOP":
                    await send("250 2.0.0 ok")
                elif verb == "QUIT":
                    if fault == "drop-quit":
                        return
                    await send("221 2.0.0 bye")
                    return
                else:
                    await send("500 5.5.2 unknown command")
        except (ConnectionError, asyncio.TimeoutError, asyncio.IncompleteReadError):
            return
        finally:
            try:
                writer.close()
            except Exception:
                pass

    def _keep(self, connection: Connection, raw: bytes, acknowledged: bool) -> None:
        parsed = email.message_from_bytes(raw)
        payload = parsed.get_payload()
        text = payload if isinstance(payload, str) else ""
        if (parsed.get("Content-Transfer-Encoding") or "").lower() == "base64":
            text = base64.b64decode("".join(text.split())).decode("utf-8", errors="replace")
        self.received.append(Received(connection.number, list(connection.recipients), text,
                                      parsed.get("Message-ID", ""), acknowledged))
