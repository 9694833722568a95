"""A software WebAuthn authenticator and client for the passkey tests: what a phone's platform does
with the server's options, written with python-fido2 (its option parsing, CBOR and COSE keys) and
cryptography (the P-256 key and its signatures).

    python3 webauthn_authenticator.py create OPTIONS.json ORIGIN [FLAGS.json]
    python3 webauthn_authenticator.py get OPTIONS.json ORIGIN STATE.json [FLAGS.json]

OPTIONS.json is the server's answer (PublicKeyCredentialCreationOptionsJSON or
...RequestOptionsJSON), parsed by fido2's `from_dict` as a browser's parse...FromJSON would.
Prints one JSON object: `credential` (RegistrationResponseJSON or AuthenticationResponseJSON, as
`toJSON()` writes them) and `state` (the key, the credential id, the counter), which the test
hands back to the next `get`. FLAGS may say: "uv": false (no user verification), "packed": true
(packed self-attestation), "counter": N (the counter to send), "rpId": "other" (hash another RP
id), "badSignature": true (flip a bit of the signature), "backupEligible": true.
"""

import hashlib
import json
import os
import struct
import sys

from cryptography.hazmat.primitives import hashes, serialization
from cryptography.hazmat.primitives.asymmetric import ec
from fido2 import cbor
from fido2.cose import ES256
from fido2.utils import websafe_decode, websafe_encode
from fido2.webauthn import PublicKeyCredentialCreationOptions, PublicKeyCredentialRequestOptions


def b64(data):
    return websafe_encode(data)


def flag_byte(flags, attested):
    value = 0x01  # UP
    if flags.get("uv", True):
        value |= 0x04
    if flags.get("backupEligible", False):
        value |= 0x08
    if attested:
        value |= 0x40
    return bytes([value])


def client_data(kind, challenge, origin):
    return json.dumps({"type": kind, "challenge": b64(challenge), "origin": origin, "crossOrigin": False}).encode()


def create(options, origin, flags):
    parsed = PublicKeyCredentialCreationOptions.from_dict(options)
    if not any(p.alg == -7 for p in parsed.pub_key_cred_params):
        raise SystemExit("ES256 not offered")
    key = ec.generate_private_key(ec.SECP256R1())
    credential_id = os.urandom(32)
    rp_id = flags.get("rpId", parsed.rp.id)
    cose = cbor.encode(ES256.from_cryptography_key(key.public_key()))
    auth_data = (hashlib.sha256(rp_id.encode()).digest() + flag_byte(flags, True) + struct.pack(">I", 0)
                 + b"\0" * 16 + struct.pack(">H", len(credential_id)) + credential_id + cose)
    data = client_data("webauthn.create", parsed.challenge, origin)
    if flags.get("packed"):
        signature = key.sign(auth_data + hashlib.sha256(data).digest(), ec.ECDSA(hashes.SHA256()))
        statement = {"alg": -7, "sig": signature}
        fmt = "packed"
    else:
        statement, fmt = {}, "none"
    attestation = cbor.encode({"fmt": fmt, "attStmt": statement, "authData": auth_data})
    state = {
        "key": key.private_bytes(serialization.Encoding.PEM, serialization.PrivateFormat.PKCS8, serialization.NoEncryption()).decode(),
        "credentialId": b64(credential_id), "counter": 0, "rpId": parsed.rp.id, "userHandle": b64(parsed.user.id),
    }
    credential = {
        "id": b64(credential_id), "rawId": b64(credential_id), "type": "public-key",
        "response": {"clientDataJSON": b64(data), "attestationObject": b64(attestation), "transports": ["internal"]},
        "authenticatorAttachment": "platform", "clientExtensionResults": {},
    }
    return {"credential": credential, "state": state}


def get(options, origin, state, flags):
    parsed = PublicKeyCredentialRequestOptions.from_dict(options)
    credential_id = websafe_decode(state["credentialId"])
    allowed = [c.id for c in (parsed.allow_credentials or [])]
    if allowed and credential_id not in allowed:
        raise SystemExit("this credential is not allowed")
    if parsed.rp_id != state["rpId"]:
        raise SystemExit("another relying party")
    counter = flags.get("counter", state["counter"] + 1)
    rp_id = flags.get("rpId", state["rpId"])
    auth_data = hashlib.sha256(rp_id.encode()).digest() + flag_byte(flags, False) + struct.pack(">I", counter)
    data = client_data("webauthn.get", parsed.challenge, origin)
    key = serialization.load_pem_private_key(state["key"].encode(), password=None)
    signature = bytearray(key.sign(auth_data + hashlib.sha256(data).digest(), ec.ECDSA(hashes.SHA256())))
    if flags.get("badSignature"):
        signature[-1] ^= 0x01
    state = dict(state, counter=max(counter, state["counter"]))
    credential = {
        "id": state["credentialId"], "rawId": state["credentialId"], "type": "public-key",
        "response": {"clientDataJSON": b64(data), "authenticatorData": b64(auth_data), "signature": b64(bytes(signature)),
                     "userHandle": state["userHandle"]},
        "authenticatorAttachment": "platform", "clientExtensionResults": {},
    }
    return {"credential": credential, "state": state}


def main():
    command = sys.argv[1]
    options = json.load(open(sys.argv[2]))
    origin = open(sys.argv[3]).read()
    if command == "create":
        flags = json.load(open(sys.argv[4])) if len(sys.argv) > 4 else {}
        print(json.dumps(create(options, origin, flags)))
    else:
        state = json.load(open(sys.argv[4]))
        flags = json.load(open(sys.argv[5])) if len(sys.argv) > 5 else {}
        print(json.dumps(get(options, origin, state, flags)))


if __name__ == "__main__":
    main()
